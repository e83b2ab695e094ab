"""``python -m benchmarks.fused``: the columnar engines side by side on the
benchmark's orders (10 million by default), in one process, rounds interleaved:

- filtex's fused kernels (``filtex.arrow.evaluate``, the default engine) and
  the pass-per-atom engine they replaced (``engine="passes"``);
- Polars and DuckDB computing the same exact three-valued verdicts
  (``benchmarks/columnar_reference``), all engines on ``--threads`` threads
  (Polars' thread count is fixed when it is imported: this script sets
  ``POLARS_MAX_THREADS`` first; run it once per thread count).

Before any timing, every engine's TRUE/FALSE/UNKNOWN counts must be equal and
its verdicts equal the fused kernels' row by row (else exit status 1). For
each filter it also reports the bytes per row of the columns the filter
reads and the time reading them would take at this machine's memory
bandwidth, measured in the same run (numpy's sum over 1 GiB): the floor no
engine can beat.

    python -m benchmarks.fused --data /tmp/fx10m/orders-10000000.parquet --threads 1
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable


def _args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True,
                        help="orders Parquet file (python -m benchmarks.columnar_data)")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--filters", help="comma-separated subset")
    parser.add_argument("--engines", default="fused,passes,polars,duckdb")
    parser.add_argument("--json", type=Path, help="write the results here too")
    return parser.parse_args(argv)


def bandwidth() -> float:
    """Bytes a second one thread reads (numpy's sum over 1 GiB of float64), best of 3."""
    import numpy as np
    data = np.ones(1 << 27)
    best = min(_timed(lambda: data.sum()) for _ in range(3))
    return data.nbytes / best


def _timed(fn: Callable[[], Any]) -> float:
    gc.collect()
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def read_bytes(flt: Any, table: Any) -> int:
    """The bytes of the table's columns (and struct members) the filter reads."""
    from filtex.arrow.engine import _narrow
    from filtex.plan.prepared import prepared
    ready = prepared(flt)
    total = 0
    for batch in table.to_batches():
        narrow, _ = _narrow(batch, ready.columns)
        total += sum(column.nbytes for column in narrow.columns)
    return total


def main(argv: list[str] | None = None) -> int:
    args = _args(argv)
    os.environ["POLARS_MAX_THREADS"] = str(args.threads)   # before polars is imported
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import pyarrow as pa

    import filtex
    import filtex.arrow as fa
    from benchmarks.columnar_data import read_orders
    from benchmarks.columnar_reference import FILTERS, ORDER
    from benchmarks.columnar_reference.run import Runner, counts, disagreements
    from benchmarks.columnar import versions
    pa.set_cpu_count(max(args.threads, 1))
    print(versions())
    names = args.filters.split(",") if args.filters else list(ORDER)
    engines = args.engines.split(",")
    table = read_orders(args.data)
    n = table.num_rows
    speed = bandwidth()
    print(f"{n:,} rows; {args.threads} thread(s) for every engine; one-thread memory "
          f"bandwidth {speed / 1e9:.1f} GB/s (numpy sum over 1 GiB); load average "
          f"{os.getloadavg()[0]:.2f}")
    runners = {e: Runner(e, table, args.threads) for e in engines if e in ("polars", "duckdb")}
    results: dict[str, Any] = {}
    failed = False
    for name in names:
        flt = filtex.compile_sql(FILTERS[name])
        jobs: dict[str, Callable[[], Any]] = {}
        if "fused" in engines:
            jobs["fused"] = lambda f=flt: fa.evaluate(f, table, threads=args.threads).verdicts
        if "passes" in engines:
            jobs["passes"] = lambda f=flt: fa.evaluate(f, table, threads=args.threads,
                                                       engine="passes").verdicts
        for engine, runner in runners.items():
            compiled = runner.compile(name)
            jobs[engine] = lambda r=runner, c=compiled: r.run(c)
        first = {engine: job() for engine, job in jobs.items()}   # warm-up, and the check
        reference = first[next(iter(first))]
        for engine, verdicts in first.items():
            if counts(verdicts) != counts(reference) or disagreements(reference, verdicts).size:
                failed = True
                print(f"**MISMATCH in {name}: {engine} disagrees with {next(iter(first))}**")
        times: dict[str, list[float]] = {engine: [] for engine in jobs}
        for _ in range(args.rounds):
            for engine, job in jobs.items():
                times[engine].append(_timed(job))
        ms = {engine: statistics.median(t) * 1000 for engine, t in times.items()}
        best = {engine: min(t) * 1000 for engine, t in times.items()}
        per_row = read_bytes(flt, table) / n
        floor = per_row * n / speed * 1000 / args.threads
        results[name] = {"median_ms": ms, "min_ms": best, "counts": counts(reference),
                         "bytes_per_row": per_row, "floor_ms": floor}
        line = "  ".join(f"{e} {ms[e]:8.1f}" for e in jobs)
        print(f"{name:18s} {line}  | {per_row:5.1f} B/row, floor {floor:6.1f} ms", flush=True)
    print()
    header = ["filter"] + [f"{e} ms" for e in engines] + ["B/row", "floor ms"]
    if "fused" in engines:
        header += [f"{e} / fused" for e in engines if e != "fused"] + ["fused / floor"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    ratios: dict[str, list[float]] = {}
    for name, r in results.items():
        ms = r["median_ms"]
        cells = [name] + [f"{ms[e]:,.1f}" for e in engines] + [
            f"{r['bytes_per_row']:.1f}", f"{r['floor_ms']:.1f}"]
        if "fused" in engines:
            for e in engines:
                if e != "fused":
                    ratio = ms[e] / ms["fused"]
                    ratios.setdefault(e, []).append(ratio)
                    cells.append(f"{ratio:.2f}x")
            cells.append(f"{ms['fused'] / r['floor_ms']:.1f}x")
        print("| " + " | ".join(cells) + " |")
    for engine, values in ratios.items():
        print(f"{engine} / fused: median {statistics.median(values):.2f}x, "
              f"lowest {min(values):.2f}x")
    if args.json:
        args.json.write_text(json.dumps({"threads": args.threads, "rows": n,
                                         "bandwidth": speed, "results": results}, indent=1))
    if failed:
        print("**a reference engine disagreed: the figures above are not comparable**")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
