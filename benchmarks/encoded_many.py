"""``python -m benchmarks.encoded_many``: filters over one column of encoded
messages (``benchmarks/binary.py``'s realistic orders, 1 KiB bodies), one thread.

First, ``benchmarks/binary.py``'s filters with ``evaluate_encoded`` evaluated
while walking the bytes (the walking kernel, ``arrow/walk.py``) against decoded
into columns first (``walk=False``: the column decoder, then the fused kernel),
best of interleaved rounds, verdicts checked equal; and two filters on strings of
many distinct values. Then many subscriptions:
one decoder walk for all of them (``arrow.binary.decode_for``, then each
filter's fused kernel over the one table) against ``evaluate_encoded`` per
subscription (a walk each), in one run, one thread. The verdicts of both must
be equal for every subscription (else exit status 1).

    python -m benchmarks.encoded_many --rows 1000000 --subscriptions 100
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from benchmarks.binary import FILTERS, Pool  # noqa: E402
from filtex.arrow.binary import decode_for  # noqa: E402

SHAPES = ["order_type = '{s}' AND total_amount > {n}",
          "customer_region LIKE '{s}%' OR quantity >= {k}",
          "p.subject = 'order.{s}' AND h.priority > {k}",
          "total_amount BETWEEN {k} AND {n}",
          "NOT cancelled AND customer_region = '{s}'"]
UNIQUE = {"message-id (a distinct string a message)": "p.[message-id] LIKE 'order-0000001%'",
          "customer (10,000 distinct strings)":
              "customer = 'customer-17' OR customer LIKE 'customer-99%'"}
"""Filters on strings of many distinct values (ids, customers): what a decoder interns and a
string table answers per distinct value, the walk compares as bytes."""
WORDS = ["premium", "express", "EU-DE", "US-CA", "created", "paid", "standard", "EU-"]


def subscriptions(count: int) -> list[filtex.Filter]:
    out = []
    for i in range(count):
        text = SHAPES[i % len(SHAPES)].format(s=WORDS[i % len(WORDS)], n=100 + 37 * i,
                                              k=i % 9)
        out.append(filtex.compile_sql(text))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--subscriptions", type=int, default=100)
    parser.add_argument("--separately", type=int, default=10,
                        help="subscriptions timed with a walk each (the rest extrapolated)")
    args = parser.parse_args(argv)
    pa.set_cpu_count(1)
    column = Pool(20_000, 7).batch(0, args.rows)
    filters = subscriptions(args.subscriptions)
    four = filtex.compile_sql(FILTERS["rabbitmq-complex"])
    # warm-up: every kernel compiled before timing
    small = column.slice(0, 2000)
    decoded = decode_for(filters + [four], small)
    for flt in filters + [four]:
        fa.evaluate(flt, decoded.table)
        fa.evaluate_encoded(flt, small)
    print(f"{args.rows:,} messages ({column.nbytes / args.rows:.0f} bytes each), one thread; "
          "evaluate_encoded, best of 5 interleaved rounds:")
    print("| filter | walked (M msgs/s) | decoded, then fused (M msgs/s) | walked/decoded |")
    print("|---|---:|---:|---:|")
    failed = False
    for name, text in {**FILTERS, **UNIQUE}.items():
        flt = filtex.compile_sql(text)
        fa.evaluate_encoded(flt, small)
        fa.evaluate_encoded(flt, small, walk=False)
        best = {True: float("inf"), False: float("inf")}
        results = {}
        for _ in range(5):
            for walk in (True, False):
                start = time.perf_counter()
                results[walk] = fa.evaluate_encoded(flt, column, walk=walk).verdicts
                best[walk] = min(best[walk], time.perf_counter() - start)
        if not results[True].equals(results[False]):
            failed = True
            print(f"**MISMATCH {name}: the two paths differ**")
        walked = "" if fa.can_walk(flt) else " (not walkable: decoded)"
        print(f"| {name}{walked} | {args.rows / best[True] / 1e6:.2f} | "
              f"{args.rows / best[False] / 1e6:.2f} | {best[False] / best[True]:.2f}x |")
    start = time.perf_counter()
    decoded = decode_for(filters, column)
    walk = time.perf_counter() - start
    together = []
    for flt in filters:
        together.append(fa.evaluate(flt, decoded.table).verdicts)
    shared = time.perf_counter() - start
    start = time.perf_counter()
    apart = [fa.evaluate_encoded(flt, column).verdicts for flt in filters[:args.separately]]
    each = (time.perf_counter() - start) / args.separately
    wrong = [i for i, (a, b) in enumerate(zip(together, apart)) if not a.equals(b)]
    undecoded = int(decoded.undecoded.sum())
    rate = args.rows * args.subscriptions / shared / 1e6
    print(f"{args.subscriptions} subscriptions: one walk for all {shared:.2f} s (the walk "
          f"{walk:.2f} s, {undecoded} rows undecoded), {rate:.1f} M "
          f"subscription-evaluations/s; a walk each {each * args.subscriptions:.2f} s "
          f"(extrapolated from {args.separately}): {each * args.subscriptions / shared:.1f}x")
    if wrong or undecoded:
        print(f"**MISMATCH for subscriptions {wrong}**" if wrong else
              "(undecoded rows are left to the per-message engine by evaluate_encoded)")
    return 1 if wrong or failed else 0


if __name__ == "__main__":
    sys.exit(main())
