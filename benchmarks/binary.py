"""``python -m benchmarks.binary``: a binary column of N realistic AMQP-encoded
messages (1 KiB data bodies) to verdicts, with ``filtex.arrow.evaluate_encoded``.

The messages: a pool of ``--pool`` distinct orders (header, message
annotations, properties with message-id, subject, content-type and
creation-time, ten application properties of mixed types, a list-valued
``tags`` in 30% of them, and a 1 KiB data body), encoded once with
``filtex.amqp.encode_message``. The column of ``--rows`` messages is made
``--batch`` rows at a time by tiling the pool, each batch built directly as
Arrow buffers (no Python bytes objects) with every row's message-id rewritten
in place to its global row number, so all N messages are distinct and the
decoder interns N different message-ids, as it would on a real archive. One
batch is held at a time (10 million x ~1.3 KB would be ~13 GB at once); the
times are summed over the batches. Building a batch is not timed.

Per filter, in the same run and single-threaded (numba kernels are; pyarrow's
thread pool is set to one thread):

- ``evaluate_encoded(flt, column)`` per batch (warm: compiled first on a small
  column; walked on the bytes where the filter can be), messages/s, and the
  TRUE/FALSE/UNKNOWN counts and fallback rows;
- ``evaluate_encoded(flt, column, walk=False)``: decoded into columns, then the
  fused kernel (the path of the filters that are not walked), its verdicts
  equal to the walked ones batch by batch;
- the per-message engine ``flt.evaluate(bytes)`` on a ``--sample`` message
  sample (best of ``--rounds``), extrapolated to N.

``evaluate_encoded``'s verdicts on the sample must equal the per-message ones
row by row, and on the sample's rows inside the first batch too; a mismatch is
printed and the exit status is 1.

    python -m benchmarks.binary --rows 10000000
    python -m benchmarks.binary --rows 200000 --pool 20000 --batch 100000 --sample 5000
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
from proton import symbol, ulong  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow  # noqa: E402
from benchmarks.suite import print_header  # noqa: E402
from filtex.amqp.encode import encode_message  # noqa: E402
from filtex.arrow.binary import keys_read  # noqa: E402

FILTERS = {
    "rabbitmq-complex": (
        "order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
        "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
        "p.creation_time >= 1750772279000 AND NOT cancelled"),
    "two-properties": "region = 'EU' AND total > 100",
    "header+properties": "p.subject = 'order.created' AND h.priority > 4",
    "arithmetic": "quantity * price - discount > 1000",
}

BASE_TIME_MS = 1_750_772_279_000      # the RabbitMQ filter's constant
TIME_SPREAD_MS = 200 * 86_400_000     # creation times within +/- 200 days
ID_DIGITS = 12
ID_PREFIX = b"order-"


def _pick(rng: random.Random, pairs):
    return rng.choices([v for v, _ in pairs], [w for _, w in pairs])[0]


def make_message(i: int, rng: random.Random) -> filtex.Message:
    """One order: typed header and properties, ten application properties whose
    types vary as producers' do (a long or a double amount, now and then a
    string; absent and null values), a 1 KiB data body."""
    app: dict = {}
    kind = rng.random()
    if kind < 0.94:
        app["order_type"] = _pick(rng, (("standard", 50), ("express", 20), ("premium", 15),
                                        ("economy", 10), ("bulk", 5)))
    elif kind < 0.99:
        pass                                   # absent
    else:
        app["order_type"] = None
    kind = rng.random()
    if kind < 0.82:
        app["total_amount"] = int(np.exp(rng.gauss(6.5, 1.6))) + 1
    elif kind < 0.94:
        app["total_amount"] = round(rng.uniform(1.0, 9000.0), 2)
    elif kind < 0.995:
        pass
    else:
        app["total_amount"] = rng.choice(("250.00", "1200", "n/a"))
    if rng.random() < 0.97:
        app["customer_region"] = _pick(rng, (("EU-DE", 22), ("EU-FR", 14), ("EU-IT", 8),
                                             ("EU-ES", 6), ("eu-es", 2), ("US-CA", 18),
                                             ("US-NY", 14), ("APAC-JP", 9), ("LATAM-BR", 5)))
    kind = rng.random()
    if kind < 0.90:
        app["cancelled"] = rng.random() < 0.1
    elif kind < 0.99:
        pass
    else:
        app["cancelled"] = None
    app["customer"] = f"customer-{rng.randrange(40_000)}"
    if rng.random() < 0.95:
        app["region"] = _pick(rng, (("EU", 40), ("US", 32), ("APAC", 20), ("LATAM", 8)))
    app["total"] = round(rng.uniform(1, 300), 2) if rng.random() < 0.75 else rng.randrange(1, 300)
    app["quantity"] = min(int(rng.expovariate(0.3)) + 1, 40)
    app["price"] = round(float(np.exp(rng.gauss(3.5, 1.2))), 2) if rng.random() < 0.9 \
        else rng.randrange(1, 2000)
    app["discount"] = rng.choice((0, 5, 10, 20, 50)) if rng.random() < 0.6 \
        else round(rng.uniform(0, 80), 2)
    if rng.random() < 0.3:
        app["tags"] = rng.choice((["gift"], ["gift", "fragile"], ["b2b"]))
    header = {"durable": True}
    if rng.random() < 0.9:
        header["priority"] = rng.randrange(10)
    properties = {
        "message-id": (ID_PREFIX + b"%0*d" % (ID_DIGITS, i)).decode(),
        "subject": _pick(rng, (("order.created", 35), ("order.paid", 25),
                               ("order.shipped", 18), ("order.delivered", 12),
                               ("order.cancelled", 6), ("order.refunded", 4))),
        "content-type": symbol("application/json"),
        "creation-time": BASE_TIME_MS + rng.randrange(-TIME_SPREAD_MS, TIME_SPREAD_MS),
    }
    return filtex.Message(header=header, properties=properties,
                          message_annotations={symbol("x-opt-offset"): ulong(i)},
                          application_properties=app,
                          body=filtex.Body.data(rng.randbytes(1024)))


class Pool:
    """The encoded pool as one byte buffer, its offsets, and where each
    message's message-id digits are."""

    def __init__(self, count: int, seed: int) -> None:
        rng = random.Random(seed)
        cells = [encode_message(make_message(i, rng)) for i in range(count)]
        self.count = count
        self.lengths = np.array([len(c) for c in cells], np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])
        self.data = np.frombuffer(b"".join(cells), np.uint8)
        digits = []
        for i, cell in enumerate(cells):
            where = cell.find(ID_PREFIX + b"%0*d" % (ID_DIGITS, i))
            if where < 0:
                raise AssertionError(f"message-id of pool message {i} not found")
            digits.append(where + len(ID_PREFIX))
        self.id_at = np.array(digits, np.int64)

    def batch(self, start: int, n: int) -> pa.BinaryArray:
        """Rows ``start .. start+n`` of the tiled column: pool message
        ``row % count`` with message-id ``order-<row>``."""
        pieces, lengths, id_at = [], [], []
        row, end = start, start + n
        while row < end:
            first = row % self.count
            last = min(self.count, first + (end - row))
            pieces.append(self.data[self.offsets[first]:self.offsets[last]])
            lengths.append(self.lengths[first:last])
            id_at.append(self.id_at[first:last])
            row += last - first
        data = np.concatenate(pieces)
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(np.concatenate(lengths), out=offsets[1:])
        if offsets[-1] >= 1 << 31:
            raise ValueError("a batch over 2 GiB: give a smaller --batch")
        at = offsets[:-1] + np.concatenate(id_at)
        number = np.arange(start, end, dtype=np.int64)
        for k in range(ID_DIGITS - 1, -1, -1):   # the global row number, in place
            data[at + k] = 48 + number % 10
            number //= 10
        return pa.BinaryArray.from_buffers(pa.binary(), n, [
            None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])


def counts(verdicts: pa.BooleanArray) -> tuple[int, int, int]:
    return verdicts.true_count, verdicts.false_count, verdicts.null_count


def timed(fn, *args, **kwargs):
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    return time.perf_counter() - start, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--pool", type=int, default=100_000, help="distinct encoded messages")
    parser.add_argument("--batch", type=int, default=500_000, help="rows per column batch")
    parser.add_argument("--sample", type=int, default=20_000,
                        help="messages for the per-message engine and the row-by-row check")
    parser.add_argument("--rounds", type=int, default=3, help="per-message: best of")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--filters", default=",".join(FILTERS),
                        help=f"comma-separated, of {', '.join(FILTERS)}")
    args = parser.parse_args(argv)
    names = [n for n in args.filters.split(",") if n]
    unknown = [n for n in names if n not in FILTERS]
    if unknown:
        parser.error(f"unknown filters {unknown}")
    pa.set_cpu_count(1)
    import numba

    start = time.perf_counter()
    pool = Pool(args.pool, args.seed)
    built = time.perf_counter() - start
    mean = pool.offsets[-1] / pool.count
    print(f"pool: {pool.count:,} distinct encoded orders, {mean:.0f} bytes each on average "
          f"(encoded in {built:.1f} s); column: {args.rows:,} rows "
          f"({args.rows * mean / 1e9:.2f} GB) in batches of {args.batch:,}, "
          f"message-ids unique per row")
    print(f"Python {platform.python_version()}, pyarrow {pa.__version__}, "
          f"numba {numba.__version__}, {os.cpu_count()} cores; single-threaded\n")

    sample_column = pool.batch(0, min(args.sample, args.rows))
    sample = sample_column.to_pylist()
    flts = {name: filtex.compile_sql(FILTERS[name]) for name in names}
    plans = {name: keys_read(flt) for name, flt in flts.items()}
    failed = False
    per_message: dict[str, float] = {}
    for name, flt in flts.items():   # warm up, check row by row, time the per-message engine
        keys, fields, body = plans[name]
        small = sample_column.slice(0, 1000)
        seconds, _ = timed(filtex.arrow.evaluate_encoded, flt, small)
        filtex.arrow.evaluate_encoded(flt, small, walk=False)
        want = [flt.evaluate(cell) for cell in sample]
        got = filtex.arrow.evaluate_encoded(flt, sample_column)
        if not got.kernel:
            print(f"NOTE {name}: no kernel ({got.reason})")
        mismatches = [r for r, (g, w) in enumerate(zip(got.verdicts.to_pylist(), want))
                      if g is not w]
        if mismatches:
            failed = True
            r = mismatches[0]
            print(f"MISMATCH {name}: {len(mismatches)} of {len(sample)} sample rows differ "
                  f"from the per-message engine; row {r}: {got.verdicts[r].as_py()} "
                  f"!= {want[r]}")
        print(f"{name}: first evaluate_encoded (compiles) {seconds:.2f} s; sample check "
              f"{len(sample):,} rows {'FAILED' if mismatches else 'ok'}; "
              f"keys {keys}{' + body' if body else ''}")
        evaluate = flt.evaluate
        best = float("inf")
        for _ in range(args.rounds):
            gc.collect()
            t0 = time.perf_counter()
            for cell in sample:
                evaluate(cell)
            best = min(best, time.perf_counter() - t0)
        per_message[name] = best / len(sample)
        flts[name] = (flt, want)
    del sample
    print()

    totals = {name: {"eval": 0.0, "decode": 0.0, "fallback": 0, "counts": np.zeros(3, np.int64)}
              for name in names}
    batches = 0
    for first in range(0, args.rows, args.batch):
        column = pool.batch(first, min(args.batch, args.rows - first))
        batches += 1
        for name in names:
            flt, want = flts[name]
            keys, fields, body = plans[name]
            gc.collect()
            seconds, result = timed(filtex.arrow.evaluate_encoded, flt, column)
            total = totals[name]
            total["eval"] += seconds
            total["fallback"] += result.fallback_rows
            total["counts"] += counts(result.verdicts)
            if first == 0:   # the sample's rows are the first batch's first rows
                head = result.verdicts.slice(0, len(want)).to_pylist()
                if head != want:
                    failed = True
                    print(f"MISMATCH {name}: the first batch's verdicts differ from the "
                          "per-message engine's on the sample rows")
            gc.collect()   # the other path: decoded into columns, then the fused kernel
            seconds, decoded = timed(filtex.arrow.evaluate_encoded, flt, column, walk=False)
            total["decode"] += seconds
            if not decoded.verdicts.equals(result.verdicts):
                failed = True
                print(f"MISMATCH {name}: walked and decoded verdicts differ in batch {batches}")
            del result, decoded
        del column

    n = args.rows
    header = ("| filter            | evaluate_encoded s | msgs/s (1 core) | decoded path s "
              "| walked/decoded | per-message ns/msg | per-message msgs/s | speed-up "
              "| TRUE | FALSE | UNKNOWN | fallback rows |")
    print_header(header)
    for name in names:
        t = totals[name]
        true, false, unknown = (int(x) for x in t["counts"])
        if true + false + unknown != n:
            failed = True
            print(f"MISMATCH {name}: counts add up to {true + false + unknown:,}, not {n:,}")
        pm = per_message[name]
        print(f"| {name:<17} | {t['eval']:>18.2f} | {n / t['eval']:>15,.0f} "
              f"| {t['decode']:>14.2f} | {t['decode'] / t['eval']:>13.2f}x "
              f"| {pm * 1e9:>18,.0f} | {1 / pm:>18,.0f} | {pm * n / t['eval']:>7.1f}x "
              f"| {true:,} | {false:,} | {unknown:,} | {t['fallback']:,} |")
    print(f"\n{n:,} rows in {batches} batch(es); per-message: best of {args.rounds} rounds "
          f"over {min(args.sample, n):,} messages, extrapolated (speed-up = per-message time "
          f"for N / evaluate_encoded time). decoded path = evaluate_encoded(walk=False): "
          f"the column decoder, then the fused kernel (the path of filters not walked).")
    if failed:
        print("\nFAILED: evaluate_encoded disagrees with the per-message engine", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
