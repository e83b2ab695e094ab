"""``python -m benchmarks.encoded``: a filter over messages in the forms users
hold them, side by side in one run (per message, best of interleaved rounds):

- (a) encoded bytes: ``f.evaluate(data)`` on the AMQP-encoded message, read in
  place (and (a') ``f.evaluate(filtex.view(data))``, the form ``filtex match``
  uses, without the first-read fallback that adapts raw bytes);
- (b) ``proton.Message.decode(data)`` then ``f.evaluate`` of the proton message;
- (c) ``proton.Message.decode(data)``, then building a ``filtex.Message`` from
  it (what a user would write), then ``f.evaluate``;
- (d) ``f.evaluate`` of a ready ``filtex.Message`` (nothing to decode).

Messages: 256 orders, each with header, properties, message annotations, 12
application properties and a 1 KiB data body. Filters: two application
properties (read at the 5th and 9th of the 12 entries), and the RabbitMQ PR's
complex example.
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import proton  # noqa: E402
from proton import symbol, ulong  # noqa: E402

import filtex  # noqa: E402
from benchmarks.suite import print_header  # noqa: E402
from filtex.proton_message import _header, _properties  # noqa: E402

FILTERS = {
    "two-properties": "region = 'EU' AND total > 100",
    "rabbitmq-complex": (
        "order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
        "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
        "p.creation_time >= 1750772279000 AND NOT cancelled"),
}


def make_orders(count: int = 256, seed: int = 7) -> list[bytes]:
    """Encoded orders with 12 application properties and a 1 KiB data body."""
    rng = random.Random(seed)
    encoded = []
    for i in range(count):
        props = {
            "order_type": rng.choice(["premium", "express", "standard"]),
            "customer": f"customer-{rng.randrange(10_000)}",
            "customer_region": rng.choice(["EU-DE", "EU-FR", "US-CA", "US-NY", "APAC"]),
            "channel": rng.choice(["web", "mobile", "store"]),
            "region": rng.choice(["EU", "US", "APAC"]),
            "total_amount": rng.randrange(10, 8000),
            "currency": rng.choice(["EUR", "USD"]),
            "items": rng.randrange(1, 12),
            "total": rng.randrange(1, 300),
            "discount": round(rng.random() * 20, 2),
            "cancelled": rng.random() < 0.1,
            "warehouse": f"wh-{rng.randrange(40)}",
        }
        message = proton.Message(
            durable=True, priority=rng.randrange(10), id=f"order-{i}", subject="order.created",
            content_type="application/json", creation_time=1750772279 + rng.randrange(-100, 100),
            annotations={symbol("x-opt-offset"): ulong(i)}, properties=props,
            body=bytes(rng.randrange(256) for _ in range(1024)), inferred=True)
        encoded.append(bytes(message.encode()))
    return encoded


def decoded(data: bytes) -> proton.Message:
    message = proton.Message()
    message.decode(data)
    return message


def to_filtex(message: proton.Message) -> filtex.Message:
    """A proton message as a filtex.Message, field by field."""
    return filtex.Message(header=_header(message), properties=_properties(message),
                          delivery_annotations=message.instructions,
                          message_annotations=message.annotations,
                          application_properties=message.properties)


def per_message(fn: Callable, items: list, loops: int) -> float:
    start = time.perf_counter_ns()
    for _ in range(loops):
        for item in items:
            fn(item)
    return (time.perf_counter_ns() - start) / (loops * len(items))


def measure(text: str, encoded: list[bytes], rounds: int, loops: int) -> dict[str, float]:
    f = filtex.compile_sql(text)
    evaluate, view = f.evaluate, filtex.view
    ready = [to_filtex(decoded(data)) for data in encoded]
    variants = {
        "a": (lambda data: evaluate(data), encoded),
        "a'": (lambda data: evaluate(view(data)), encoded),
        "b": (lambda data: evaluate(decoded(data)), encoded),
        "c": (lambda data: evaluate(to_filtex(decoded(data))), encoded),
        "d": (evaluate, ready),
    }
    verdicts = {name: [fn(item) for item in items] for name, (fn, items) in variants.items()}
    assert all(v == verdicts["d"] for v in verdicts.values()), "the forms disagree"
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, (fn, items) in variants.items():
            sweep = max(1, loops // 8) if name in ("b", "c") else loops
            best[name] = min(best[name], per_message(fn, items, sweep))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--loops", type=int, default=40)
    args = parser.parse_args(argv)
    encoded = make_orders()
    print(f"{len(encoded)} messages of {sum(map(len, encoded)) // len(encoded)} bytes, "
          f"best of {args.rounds} interleaved rounds\n")
    header = ("| filter           | (a) bytes ns | (a') view ns | (b) proton ns | "
              "(c) proton+Message ns | (d) Message ns | b/a | c/a | a/d |")
    print_header(header)
    for name, text in FILTERS.items():
        t = measure(text, encoded, args.rounds, args.loops)
        print(f"| {name:<16} | {t['a']:>12.0f} | {t[chr(97) + chr(39)]:>12.0f} "
              f"| {t['b']:>13.0f} | {t['c']:>21.0f} | {t['d']:>14.0f} "
              f"| {t['b'] / t['a']:.1f}x | {t['c'] / t['a']:.1f}x | {t['a'] / t['d']:.1f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
