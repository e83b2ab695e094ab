"""Generate realistic AMQP message sets: order events, device telemetry, or both.

    python tools/make_messages.py --count 100000 --kind orders --format amqp -o orders.amqp
    python tools/make_messages.py --count 50 --kind telemetry --format jsonl -o t.jsonl --seed 7

Each message has a typed header (``durable``, ``priority`` as ubyte), properties
(message-id, subject, content-type, creation-time, correlation-id and group-id
where natural), ``x-opt-*`` message annotations, 8 to 15 application properties of
mixed types (strings, longs, doubles, booleans, a uint and a timestamp) and a body:
an amqp-value map for an order, a ~1 KiB data section of packed samples for a
telemetry reading. The same seed gives the same bytes.

``--format amqp`` writes size-prefixed encoded messages (``filtex.files``);
``jsonl`` one typed-JSON message a line. ``--jobs`` processes share the work
(the output is the same for any number).
"""
from __future__ import annotations

import argparse
import io
import json
import os
import struct
import sys
import time
import uuid
from bisect import bisect
from concurrent.futures import ProcessPoolExecutor
from itertools import accumulate
from pathlib import Path
from random import Random
from typing import IO, Any, Callable, Iterator

from proton import int32, symbol, timestamp, ubyte, uint

try:
    import filtex
except ModuleNotFoundError as missing:   # not installed: use the source checkout
    if missing.name != "filtex":
        raise
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import filtex
from filtex.amqp.encode import encode_message
from filtex.files import write_record
from filtex.message import Body, Message
from filtex.typed_json import message_to_json

BASE_TIME_MS = 1_750_772_279_000          # 2025-06-24T13:37:59Z
SPAN_MS = 6 * 60 * 60 * 1000              # the stream covers six hours


class Weighted:
    """Values drawn with relative weights (cumulative weights computed once)."""

    def __init__(self, weights: dict[Any, float]) -> None:
        self.values = tuple(weights)
        self.cumulative = tuple(accumulate(weights.values()))
        self.total = self.cumulative[-1]

    def draw(self, rng: Random) -> Any:
        return self.values[bisect(self.cumulative, rng.random() * self.total)]


# --- orders ------------------------------------------------------------------------

ORDER_SUBJECTS = Weighted({"order.created": 35, "order.paid": 25, "order.shipped": 18,
                           "order.delivered": 12, "order.cancelled": 6, "order.refunded": 4})
REGIONS = Weighted({"EU": 40, "US": 32, "APAC": 20, "LATAM": 8})
COUNTRIES = {"EU": ("DE", "FR", "NL", "ES", "IT", "PL"), "US": ("US",),
             "APAC": ("JP", "SG", "AU", "IN"), "LATAM": ("BR", "MX", "AR")}
CURRENCIES = {"EU": "EUR", "US": "USD", "APAC": "USD", "LATAM": "USD"}
CHANNELS = Weighted({"web": 50, "mobile": 30, "store": 12, "partner": 8})
PAYMENTS = Weighted({"card": 60, "paypal": 18, "bank-transfer": 10, "klarna": 8,
                     "gift-card": 4})
TIERS = Weighted({"none": 50, "silver": 25, "gold": 17, "platinum": 8})
CATALOGUE = (("SKU-1001", "USB-C cable", 9.99), ("SKU-1002", "Wireless mouse", 24.50),
             ("SKU-1003", "Mechanical keyboard", 119.00), ("SKU-2001", "27in monitor", 289.00),
             ("SKU-2002", "Laptop stand", 39.90), ("SKU-3001", "Noise-cancelling headset",
                                                    199.00),
             ("SKU-3002", "Webcam 4K", 129.00), ("SKU-4001", "Docking station", 179.00),
             ("SKU-4002", "Desk lamp", 34.95), ("SKU-5001", "Office chair", 349.00))
CARRIERS = ("DHL", "UPS", "FedEx", "PostNL", "La Poste", "Yamato")
COUPONS = ("WELCOME10", "SPRING25", "VIP15", "FREESHIP")
ORDER_CONTENT = symbol("application/json")


def make_order(rng: Random, index: int, count: int) -> Message:
    """One order event: its header, properties, annotations, 8-15 application
    properties and the order itself as an amqp-value map."""
    r = rng.random
    subject = ORDER_SUBJECTS.draw(rng)
    region = REGIONS.draw(rng)
    country = rng.choice(COUNTRIES[region])
    customer = f"C-{rng.randrange(1, 40_000):06d}"
    order_id = f"ORD-{2_000_000 + rng.randrange(0, 900_000)}"
    lines = [{"sku": sku, "name": name, "qty": qty, "unit_price": price}
             for sku, name, price in rng.sample(CATALOGUE, 1 + int(r() * r() * 4))
             for qty in (1 + int(r() * r() * 5),)]
    subtotal = sum(line["qty"] * line["unit_price"] for line in lines)
    express = r() < 0.22
    shipping = 0.0 if subtotal > 100 else (14.90 if express else 4.90)
    total = round(subtotal + shipping, 2)
    created = BASE_TIME_MS + index * SPAN_MS // max(count, 1) + int(r() * 1000)
    priority = 7 + int(r() * 3) if express else int(r() * 5)
    app: dict[str, Any] = {
        "order_id": order_id, "customer_id": customer, "region": region,
        "country": country, "currency": CURRENCIES[region], "total": total,
        "item_count": sum(line["qty"] for line in lines), "express": express,
        "warehouse": uint(1 + int(r() * 40)),
    }
    optional = (
        ("channel", CHANNELS.draw), ("payment_method", PAYMENTS.draw),
        ("loyalty_tier", TIERS.draw), ("first_order", lambda g: g.random() < 0.12),
        ("discount", lambda g: round(g.random() * 0.3 * total, 2)),
        ("weight_kg", lambda g: round(0.2 + g.random() * 12, 3)),
        ("promised_at", lambda g: timestamp(created + g.randrange(1, 5) * 86_400_000)))
    for name, draw in rng.sample(optional, int(r() * 5)):   # 9 to 15 in all
        app[name] = draw(rng)
    if subject == "order.shipped":
        app["carrier"] = rng.choice(CARRIERS)
    if r() < 0.15:
        app["coupon"] = rng.choice(COUPONS)
    body = {"order_id": order_id, "customer_id": customer, "lines": lines,
            "subtotal": round(subtotal, 2), "shipping": shipping, "total": total,
            "currency": CURRENCIES[region],
            "ship_to": {"country": country, "postcode": f"{rng.randrange(10000, 99999)}"}}
    return Message(
        header={"durable": True, "priority": ubyte(priority)},
        properties={"message-id": f"{order_id}-{index}", "subject": subject,
                    "content-type": ORDER_CONTENT, "creation-time": timestamp(created),
                    "correlation-id": order_id, "group-id": customer},
        message_annotations={symbol("x-opt-partition"): int32(int(order_id[4:]) % 16),
                             symbol("x-opt-source"): symbol(f"shop-{region.lower()}")},
        application_properties=app, body=Body.value(body))


# --- telemetry ---------------------------------------------------------------------

SENSORS = {"temperature": ("C", 21.0, 6.0), "humidity": ("%", 45.0, 15.0),
           "pressure": ("hPa", 1013.0, 12.0), "vibration": ("mm/s", 2.0, 1.5),
           "power": ("W", 350.0, 120.0)}
SENSOR_KINDS = Weighted({"temperature": 35, "humidity": 20, "pressure": 15,
                         "vibration": 20, "power": 10})
SITES = (("ams-1", "EU"), ("fra-2", "EU"), ("par-1", "EU"), ("nyc-3", "US"),
         ("sfo-1", "US"), ("sin-1", "APAC"), ("tyo-2", "APAC"), ("gru-1", "LATAM"))
FIRMWARE = Weighted({"4.2.1": 50, "4.2.0": 25, "4.1.7": 15, "3.9.9": 10})
TELEMETRY_CONTENT = symbol("application/octet-stream")
# A data body: a 16-byte block header (reading, sample rate in Hz, count) and 126
# normalised samples as big-endian doubles: 1 KiB. The sample blocks come from a
# fixed pool (made once, seeded) so a reading costs one pack, not 126 draws.
BLOCK_HEADER = struct.Struct(">dII")
SAMPLE_COUNT = 126
_POOL_RNG = Random(1)
SAMPLE_BLOCKS = tuple(struct.pack(f">{SAMPLE_COUNT}d", *(
    round(_POOL_RNG.gauss(0.0, 0.05), 6) for _ in range(SAMPLE_COUNT))) for _ in range(256))
DEVICE_TYPE = {kind: symbol(f"{kind}-sensor") for kind in SENSORS}


def make_telemetry(rng: Random, index: int, count: int) -> Message:
    """One telemetry reading: device and reading as application properties,
    a block of samples (1 KiB) as a data body."""
    r = rng.random
    kind = SENSOR_KINDS.draw(rng)
    unit, mean, spread = SENSORS[kind]
    site, region = rng.choice(SITES)
    device = rng.randrange(1, 2000)
    reading = round(mean + (r() + r() + r() - 1.5) * spread, 2)
    alarm = abs(reading - mean) > 0.9 * spread
    sequence = index // len(SITES)
    created = BASE_TIME_MS + index * SPAN_MS // max(count, 1) + int(r() * 1000)
    app: dict[str, Any] = {
        "device_id": f"dev-{site}-{device:04d}", "site": site, "region": region,
        "sensor": kind, "reading": reading, "unit": unit, "alarm": alarm,
        "seq": uint(sequence),
    }
    optional = (
        ("battery", lambda g: round(g.random(), 3)), ("rssi", lambda g: -g.randrange(30, 95)),
        ("firmware", FIRMWARE.draw), ("sampled_at", lambda g: timestamp(created - 250)),
        ("calibrated", lambda g: g.random() < 0.9),
        ("floor", lambda g: g.randrange(0, 12)), ("uptime_s", lambda g: g.randrange(0, 10**7)))
    for name, draw in rng.sample(optional, int(r() * 8)):   # 8 to 15 in all
        app[name] = draw(rng)
    samples = (BLOCK_HEADER.pack(reading, 100, SAMPLE_COUNT)
               + SAMPLE_BLOCKS[int(r() * len(SAMPLE_BLOCKS))])
    return Message(
        header={"durable": alarm, "priority": ubyte(8 if alarm else 3)},
        properties={"message-id": uuid.UUID(int=rng.getrandbits(128), version=4),
                    "subject": f"telemetry.{kind}", "content-type": TELEMETRY_CONTENT,
                    "creation-time": timestamp(created), "group-id": app["device_id"]},
        message_annotations={symbol("x-opt-partition"): int32(device % 16),
                             symbol("x-opt-device-type"): DEVICE_TYPE[kind]},
        application_properties=app, body=Body.data(samples))


MAKERS: dict[str, Callable[[Random, int, int], Message]] = {
    "orders": make_order, "telemetry": make_telemetry}
BATCH = 2_000
"""Messages a batch: each batch has its own seed, so the output does not depend
on how many processes made it."""


def generate(count: int, kind: str = "orders", seed: int = 42, start: int = 0,
             stop: int | None = None) -> Iterator[Message]:
    """Messages ``start`` to ``stop`` (default: the end) of a set of ``count``
    messages of ``kind`` (``orders``, ``telemetry`` or ``mixed``: three orders
    to two readings): the same messages for the same seed, whatever the range."""
    stop = count if stop is None else min(stop, count)
    for first in range(start - start % BATCH, stop, BATCH):
        rng = Random(f"{seed}/{kind}/{first}")
        for index in range(first, min(first + BATCH, stop)):
            make = MAKERS.get(kind) or (make_order if rng.random() < 0.6 else make_telemetry)
            message = make(rng, index, count)
            if index >= start:
                yield message


def encoded(message: Message, format: str) -> bytes:
    """A message as the raw record of ``format``: encoded bytes or a JSON line."""
    if format == "amqp":
        return encode_message(message)
    return json.dumps(message_to_json(message), ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def _batch(job: tuple[int, int, str, int, str]) -> bytes:
    """One batch of messages, written out in ``format``."""
    first, count, kind, seed, format = job
    out = io.BytesIO()
    for message in generate(count, kind, seed, first, first + BATCH):
        write_record(out, encoded(message, format), format)
    return out.getvalue()


def write_messages(out: IO[bytes], count: int, kind: str, seed: int, format: str,
                   jobs: int = 1) -> None:
    """``count`` messages to ``out`` in ``format``; batches made by ``jobs``
    processes (proton encodes a value in a microsecond or two, and an order
    has about ninety: the work is the encoder's, and it parallelises)."""
    work = [(first, count, kind, seed, format) for first in range(0, count, BATCH)]
    if jobs <= 1 or len(work) <= 1:
        for job in work:
            out.write(_batch(job))
        return
    with ProcessPoolExecutor(min(jobs, len(work))) as pool:
        for blob in pool.map(_batch, work):
            out.write(blob)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=f"filtex {filtex.__version__}")
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--kind", choices=("orders", "telemetry", "mixed"), default="orders")
    parser.add_argument("--format", choices=("amqp", "jsonl"), default="amqp")
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                        help="processes (default: one a CPU); the output is the same")
    parser.add_argument("-o", "--output", required=True, help="file to write ('-': stdout)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    if args.output == "-":
        write_messages(sys.stdout.buffer, args.count, args.kind, args.seed, args.format,
                       args.jobs)
        sys.stdout.buffer.flush()
    else:
        with open(args.output, "wb") as out:
            write_messages(out, args.count, args.kind, args.seed, args.format, args.jobs)
    seconds = time.perf_counter() - start
    print(f"{args.count:,} {args.kind} messages ({args.format}) in {seconds:.2f} s "
          f"({args.count / seconds:,.0f}/s, {args.jobs} jobs)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
