"""``python -m benchmarks.new_filter``: a filter of a new shape on a warm machine.

The message table's fixed kernels are compiled (a first filter has run), and
the new filter's fused kernel is in no cache. The default (background) tier
answers at once with the per-message engine while the background compiler
compiles the kernel; the run evaluates the same batch of ``--rows`` orders
again and again and reports the first verdicts' latency, how long until a
batch is answered wholly by the kernel, and that batch's time; beside it, the
same filter with the kernel compiled in the foreground (``FILTEX_COMPILE=wait``,
what every call waited for before).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = r'''
import os, random, sys, time
sys.path.insert(0, sys.argv[2])
from make_messages import make_order
import filtex, filtex.arrow as fa
rows = int(sys.argv[1])
rng = random.Random(1)
table = fa.message_table([make_order(rng, i, rows) for i in range(rows)])
fa.evaluate(filtex.compile_sql("region = 'EU' AND total > 100"), table)   # the fixed kernels
flt = filtex.compile_sql(sys.argv[3])
started = time.perf_counter()
first = fa.evaluate(flt, table.slice(0, 1000))
first_at = time.perf_counter() - started
while True:
    batch = time.perf_counter()
    result = fa.evaluate(flt, table)
    if result.compiling_rows == 0:
        break
print(first_at, batch - started, time.perf_counter() - batch)
'''


def run(rows: int, wait: bool, text: str) -> tuple[float, float, float]:
    with tempfile.TemporaryDirectory(prefix="filtex-new-") as cache:
        env = dict(os.environ, FILTEX_KERNEL_CACHE=cache)
        env.pop("FILTEX_COMPILE", None)
        if wait:
            env["FILTEX_COMPILE"] = "wait"
        done = subprocess.run([sys.executable, "-c", CHILD, str(rows), str(REPO / "tools"), text],
                              env=env, capture_output=True, text=True, check=True)
        first, ready, kernel = map(float, done.stdout.split())
        return first, ready, kernel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--filter", default="(customer LIKE 'c1%' OR h.priority BETWEEN 3 AND 6) "
                        "AND NOT express AND item_count <> 2")
    args = parser.parse_args()
    for name, wait in (("foreground", True), ("background", False)):
        first, ready, kernel = run(args.rows, wait, args.filter)
        print(f"{name:<10}: first verdicts (1,000 rows) after {first * 1e3:8.1f} ms; "
              f"a batch wholly by the kernel after {ready:5.2f} s; that batch of "
              f"{args.rows:,} rows {kernel * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
