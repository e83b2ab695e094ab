"""filtex demo and throughput check: SQL subscriptions over an order-event stream.

Run from the repository root::

    python tools/filter_messages.py                   # 100,000 messages, seed 42
    python tools/filter_messages.py --count 20000 --seed 7
    python tools/filter_messages.py --filter "h.priority >= 8 AND customer IS NULL"

What it demonstrates:

1. A realistic, reproducible stream of AMQP order events (``order.created``,
   ``order.shipped``, ...) built as ``filtex.Message`` objects with AMQP-typed
   values, the way python-qpid-proton hands them over: a header (``priority``
   as ``ubyte``, ``ttl`` and ``delivery-count`` as ``uint``), properties
   (``message-id`` as ``str`` or ``uuid.UUID``, ``content-type`` as ``symbol``,
   ``creation-time`` as ``timestamp``), application properties (amounts as
   ``float`` or ``decimal.Decimal``, ``quantity`` as ``uint``, optional
   ``tags`` lists, now and then a property missing) and message annotations
   with ``symbol`` keys (``x-opt-partition`` as ``int32``, ``x-opt-order`` a
   map holding a list of order lines).
2. Subscriptions written in the AMQP Filter Expressions SQL dialect, compiled
   once with ``filtex.compile_sql``: section qualifiers (``h.``, ``p.``,
   ``m.``, ``a.``), delimited identifiers (``[x-opt-order]``), map and
   positional references (``.lines[0].sku``), LIKE / IN / BETWEEN / EXISTS,
   arithmetic across integer, float and decimal values, and functions
   (``UPPER``, ``DATE``).
3. Three-valued logic: a message whose filter evaluates to *unknown* (a
   missing property, say) is not delivered; the table counts those apart.
4. Throughput: only the ``flt.matches(msg)`` pass is timed (``perf_counter``);
   counting unknowns with ``flt.evaluate(msg)`` is a separate, untimed pass.
"""
from __future__ import annotations

import argparse
import bisect
import decimal
import gc
import itertools
import random
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from proton import int32, symbol, timestamp, ubyte, uint

REPO_ROOT = Path(__file__).resolve().parents[1]
try:
    import filtex
except ModuleNotFoundError as missing:  # not installed: use the source checkout
    if missing.name != "filtex":
        raise
    sys.path.insert(0, str(REPO_ROOT))
    import filtex

# --- the subscriptions ------------------------------------------------------------

SUBSCRIPTIONS: tuple[str, ...] = (
    # RabbitMQ's SQL filter example for streams.
    "order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000"
    " AND (customer_region LIKE 'EU-%' OR customer_region = 'US-CA')"
    " AND p.creation_time >= 1750772279000 AND NOT cancelled",
    # Urgent messages only.
    "h.priority > 6",
    # Big orders, whatever the event.
    "p.subject LIKE 'order.%' AND quantity * total_amount > 10000",
    # Orders whose first line is the best seller.
    "m.[x-opt-order].lines[0].sku = 'SKU-1001'",
    # Tagged orders of customers whose name starts with an A.
    "EXISTS(tags) AND UPPER(customer) LIKE 'A%'",
    # JSON events outside New York.
    "p.content_type = 'application/json' AND a.customer_region NOT IN ('US-NY')",
    # One consumer per half of the EU partitions.
    "p.[to] = '/orders/eu' AND m.[x-opt-partition] < 4",
    # Redeliveries of events created before 13:30 UTC.
    "h.delivery_count > 0 AND p.creation_time < DATE('2025-06-24T13:30:00Z')",
)

# --- the order-event stream -------------------------------------------------------


class Weighted:
    """Values drawn with relative weights (cumulative weights computed once)."""

    def __init__(self, weights: dict[Any, int]) -> None:
        self.values = tuple(weights)
        self.cumulative = list(itertools.accumulate(weights.values()))

    def draw(self, rng: random.Random) -> Any:
        return self.values[bisect.bisect(self.cumulative, rng.random() * self.cumulative[-1])]


BASE_TIME_MS = 1_750_772_279_000          # 2025-06-24T13:37:59Z
STREAM_SPAN_MS = 60 * 60 * 1000           # one hour of events centred on BASE_TIME_MS

SUBJECTS = Weighted({"order.created": 34, "order.paid": 24, "order.shipped": 19,
                     "order.delivered": 12, "order.cancelled": 5, "refund.issued": 3,
                     "payment.failed": 3})
ORDER_TYPES = Weighted({"premium": 15, "express": 20, "standard": 45, "economy": 20})
REGIONS = Weighted({"EU-DE": 24, "EU-FR": 14, "EU-NL": 6, "US-CA": 16, "US-NY": 14,
                    "US-TX": 8, "APAC-JP": 12, "APAC-SG": 6})
CONTENT_TYPES = Weighted({"application/json": 85, "application/avro": 10, None: 5})
# SKU -> unit price, and how often each SKU is ordered (SKU-1001 is the best seller).
CATALOGUE = {"SKU-1001": 19.99, "SKU-1002": 249.00, "SKU-1003": 4.50,
             "SKU-2001": 89.90, "SKU-2002": 1299.00, "SKU-3001": 35.00,
             "SKU-3002": 9.95, "SKU-4001": 499.00}
SKUS = Weighted({"SKU-1001": 22, "SKU-1002": 9, "SKU-1003": 18, "SKU-2001": 12,
                 "SKU-2002": 3, "SKU-3001": 16, "SKU-3002": 15, "SKU-4001": 5})
CUSTOMERS = ("Alice Martin", "alan Turing", "Amélie Dubois", "Aiko Tanaka",
             "Bob Smith", "Björn Larsen", "Carla Rossi", "Chen Wei", "Diego Ruiz",
             "Emma Schmidt", "Fatima Khan", "Hans Müller", "Isabel García",
             "José Silva", "Kenji Sato", "Liam O'Brien", "Marie Curie",
             "Noah Williams", "Olivia Brown", "Priya Patel", "Sofia Novak",
             "Yuki Nakamura", "Zoe Clarke")
TAGS = ("gift", "fragile", "bulk", "b2b", "promo", "loyalty", "first-order")
PRIORITY_BY_ORDER_TYPE = {"premium": (6, 9), "express": (4, 8), "standard": (3, 5),
                          "economy": (0, 4)}
OPTIONAL_APP_PROPERTIES = ("cancelled", "customer", "total_amount", "customer_region")


def make_order_lines(rng: random.Random) -> list[dict[str, Any]]:
    """One to four order lines, each a map with ``sku`` and ``qty``."""
    return [{"sku": SKUS.draw(rng), "qty": uint(rng.choice((1, 1, 1, 2, 2, 3, 5, 10)))}
            for _ in range(rng.choice((1, 1, 2, 2, 3, 4)))]


def order_total(lines: list[dict[str, Any]], rng: random.Random) -> float | decimal.Decimal:
    """The order's total, as a float or (a quarter of the time) a Decimal."""
    total = sum(CATALOGUE[line["sku"]] * int(line["qty"]) for line in lines)
    total *= rng.uniform(0.9, 1.1)  # discounts, shipping, taxes
    if rng.random() < 0.25:
        return decimal.Decimal(f"{total:.2f}")
    return round(total, 2)


def make_header(rng: random.Random, order_type: str) -> dict[str, Any]:
    """Header: priority by order type, mostly durable, some TTLs and redeliveries."""
    low, high = PRIORITY_BY_ORDER_TYPE[order_type]
    header: dict[str, Any] = {"durable": rng.random() < 0.9,
                              "priority": ubyte(rng.randint(low, high))}
    if rng.random() < 0.6:
        header["ttl"] = uint(rng.choice((30_000, 60_000, 300_000)))
    if rng.random() < 0.15:
        header["delivery-count"] = uint(rng.randint(1, 3))
    elif rng.random() < 0.5:
        header["delivery-count"] = uint(0)  # else absent: reads as its default, 0
    return header


def make_properties(rng: random.Random, index: int, count: int, order_id: str,
                    subject: str, region: str, customer_id: str) -> dict[str, Any]:
    """Properties: ids, routing address, subject, content type, creation time."""
    message_id: str | uuid.UUID = (uuid.UUID(int=rng.getrandbits(128), version=4)
                                   if rng.random() < 0.5 else f"{order_id}:{index}")
    created = BASE_TIME_MS - STREAM_SPAN_MS // 2 + index * STREAM_SPAN_MS // max(count, 1)
    properties: dict[str, Any] = {
        "message-id": message_id,
        "to": f"/orders/{region.split('-')[0].lower()}",
        "subject": subject,
        "creation-time": timestamp(created + rng.randrange(1000)),
        "group-id": customer_id,
        "correlation-id": order_id,
    }
    content_type = CONTENT_TYPES.draw(rng)
    if content_type is not None:
        properties["content-type"] = symbol(content_type)
    if rng.random() < 0.3:
        properties["user-id"] = b"order-service"
    return properties


def make_application_properties(rng: random.Random, order_type: str, subject: str,
                                region: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    """Application properties: the business fields subscriptions select on."""
    app: dict[str, Any] = {
        "order_type": order_type,
        "total_amount": order_total(lines, rng),
        "quantity": uint(sum(int(line["qty"]) for line in lines)),
        "customer_region": region,
        "cancelled": subject == "order.cancelled" or rng.random() < 0.02,
        "customer": rng.choice(CUSTOMERS),
    }
    if rng.random() < 0.35:
        app["tags"] = rng.sample(TAGS, rng.randint(1, 3))
    if rng.random() < 0.04:  # producers are not always complete
        del app[rng.choice(OPTIONAL_APP_PROPERTIES)]
    return app


def make_message_annotations(rng: random.Random, order_id: str,
                             lines: list[dict[str, Any]]) -> dict[symbol, Any]:
    """Message annotations: broker partition and (mostly) the order's lines."""
    annotations: dict[symbol, Any] = {
        symbol("x-opt-partition"): int32(int(order_id[4:]) % 8)}
    if rng.random() < 0.95:
        annotations[symbol("x-opt-order")] = {"id": order_id, "lines": lines}
    return annotations


def make_message(rng: random.Random, index: int, count: int) -> filtex.Message:
    """One order event."""
    order_id = f"ORD-{rng.randrange(1_000_000):06d}"
    customer_id = f"CUST-{rng.randrange(5000):04d}"
    order_type = ORDER_TYPES.draw(rng)
    subject = SUBJECTS.draw(rng)
    region = REGIONS.draw(rng)
    lines = make_order_lines(rng)
    return filtex.Message(
        header=make_header(rng, order_type),
        message_annotations=make_message_annotations(rng, order_id, lines),
        properties=make_properties(rng, index, count, order_id, subject, region, customer_id),
        application_properties=make_application_properties(rng, order_type, subject,
                                                            region, lines),
    )


def generate_messages(count: int, seed: int) -> list[filtex.Message]:
    """``count`` order events, the same ones for the same seed."""
    rng = random.Random(seed)
    gc.disable()  # millions of small objects: collecting them as they are made only costs time
    try:
        messages = [make_message(rng, index, count) for index in range(count)]
    finally:
        gc.enable()
    gc.freeze()  # and keep later collections (during the timed passes) off them
    return messages


# --- filtering and measuring ----------------------------------------------------------

@dataclass
class Result:
    text: str
    matched: int
    unknown: int
    seconds: float
    consistent: bool  # matches() agreed with evaluate() is True on every message


def run_subscription(flt: Any, text: str, messages: Sequence[filtex.Message]) -> Result:
    """Time the ``matches`` pass; count unknowns (and cross-check) untimed."""
    matches = flt.matches
    start = time.perf_counter()
    matched = sum(1 for message in messages if matches(message))
    seconds = time.perf_counter() - start
    outcomes = [flt.evaluate(message) for message in messages]
    unknown = sum(1 for outcome in outcomes if outcome is None)
    true = sum(1 for outcome in outcomes if outcome is True)
    return Result(text, matched, unknown, seconds, consistent=(true == matched))


def compile_all(texts: Sequence[str]) -> list[Any]:
    """Compile every subscription; a bad one stops the demo with its error."""
    compiled = []
    for text in texts:
        try:
            compiled.append(filtex.compile_sql(text))
        except ValueError as error:  # filtex.FilterError is a ValueError
            sys.exit(f"cannot compile {text!r}: {error}")
    return compiled


# --- output ---------------------------------------------------------------------------

def shorten(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters with an ellipsis."""
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def print_table(results: Sequence[Result], count: int, width: int = 58) -> None:
    """One row per subscription, then the total."""
    print(f"{'#':>2}  {'subscription':<{width}}  {'matched':>15}  {'unknown':>8}"
          f"  {'msg/s':>11}  {'ns/msg':>7}")
    for number, result in enumerate(results, 1):
        share = 100.0 * result.matched / count if count else 0.0
        rate = count / result.seconds if result.seconds else float("inf")
        ns = 1e9 * result.seconds / count if count else 0.0
        flag = "" if result.consistent else "  (!) matches() disagrees with evaluate()"
        print(f"{number:>2}  {shorten(result.text, width):<{width}}"
              f"  {result.matched:>7,} ({share:4.1f}%)  {result.unknown:>8,}"
              f"  {rate:>11,.0f}  {ns:>7,.0f}{flag}")
    evaluations = count * len(results)
    seconds = sum(result.seconds for result in results)
    if evaluations and seconds:
        print(f"\ntotal: {len(results)} subscriptions x {count:,} messages = {evaluations:,}"
              f" evaluations in {seconds:.3f} s ({evaluations / seconds:,.0f} msg/s,"
              f" {1e9 * seconds / evaluations:,.0f} ns/msg)")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Filter a generated order-event stream with filtex SQL subscriptions "
                    "and measure throughput.")
    parser.add_argument("--count", type=int, default=100_000,
                        help="messages to generate (default: 100000)")
    parser.add_argument("--seed", type=int, default=42,
                        help="random seed of the generator (default: 42)")
    parser.add_argument("--filter", dest="filters", action="append", default=[],
                        metavar="TEXT", help="add a subscription (repeatable)")
    args = parser.parse_args(argv)
    if args.count < 1:
        parser.error("--count must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    texts = list(SUBSCRIPTIONS) + args.filters

    start = time.perf_counter()
    filters = compile_all(texts)
    compile_seconds = time.perf_counter() - start

    start = time.perf_counter()
    messages = generate_messages(args.count, args.seed)
    generate_seconds = time.perf_counter() - start

    print(f"generated {args.count:,} order events (seed {args.seed}) in {generate_seconds:.2f} s;"
          f" compiled {len(texts)} subscriptions in {1000 * compile_seconds:.1f} ms\n")
    results = [run_subscription(flt, text, messages) for flt, text in zip(filters, texts)]
    print_table(results, args.count)
    return 0 if all(result.consistent for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
