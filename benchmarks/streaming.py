"""``python -m benchmarks.streaming``: peak memory while streaming 10 and 50
million rows from Parquet stays bounded by the batch size, not the file.

For each ``--rows`` size, a Parquet order-message table
(``benchmarks/columnar_data.write_orders``, row groups of ``--row-group``
rows) is written to ``--data DIR`` (reused when already there; without
``--data``, a temporary directory removed at the end). Then, in a fresh
Python process per measurement, the file is streamed with
``filtex.arrow.read_batches`` (a row group at a time, in batches of 65,536
rows) and the filter evaluated on each batch with ``filtex.arrow.evaluate``,
summing the TRUE/FALSE/UNKNOWN counts. Each child reports its peak resident
set (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) after importing and
compiling (a warm-up evaluate on a 1,000-row table of the same schema) and at the
end, the time of the streaming pass and rows/s.

For contrast, ``--whole`` sizes (default: the smallest) are also measured
reading the whole file at once (``filtex.arrow.read``) and evaluating the
table: that peak grows with the file.

    python -m benchmarks.streaming --rows 1000000,10000000,50000000 --data /tmp/filtex-streaming
    python -m benchmarks.streaming --rows 100000,300000 --row-group 65536
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RABBITMQ = ("order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
            "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
            "p.creation_time >= 1750772279000 AND NOT cancelled")


def _peak_mb() -> float:
    import resource
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss   # KiB on Linux
    return kib * (1 if sys.platform != "darwin" else 1 / 1024) / 1024


def _hwm_mb() -> float | None:
    """VmHWM: this process's own peak (Linux). ru_maxrss also counts the peak
    of the process it was forked from, so the parent is kept small."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def child(path: str, text: str, mode: str) -> dict:
    """Runs in a fresh process: stream (or read whole) and evaluate; the result as a dict."""
    import filtex
    import filtex.arrow as fa
    start_peak = _peak_mb()
    import numpy as np
    from benchmarks.columnar_data import build_orders
    flt = filtex.compile_sql(text)
    fa.evaluate(flt, build_orders(1000, np.random.default_rng(1)))   # compile (or load) kernels
    warm_peak = _peak_mb()
    true = false = unknown = rows = fallback = batches = 0
    start = time.perf_counter()
    if mode == "stream":
        for batch in fa.read_batches(path):
            result = fa.evaluate(flt, batch)
            v = result.verdicts
            true, false, unknown = true + v.true_count, false + v.false_count, \
                unknown + v.null_count
            rows += batch.num_rows
            fallback += result.fallback_rows
            batches += 1
    else:
        table = fa.read(path)
        result = fa.evaluate(flt, table)
        v = result.verdicts
        true, false, unknown = v.true_count, v.false_count, v.null_count
        rows, fallback, batches = table.num_rows, result.fallback_rows, len(table.to_batches())
    seconds = time.perf_counter() - start
    return {"rows": rows, "true": true, "false": false, "unknown": unknown,
            "fallback": fallback, "batches": batches, "seconds": seconds,
            "import_peak_mb": start_peak, "warm_peak_mb": warm_peak, "peak_mb": _peak_mb(),
            "hwm_mb": _hwm_mb(), "pyarrow": __import__("pyarrow").__version__}


def measure(path: Path, text: str, mode: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "benchmarks.streaming", "--child", str(path),
                          "--mode", mode, "--filter", text],
                         cwd=ROOT, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"child for {path} ({mode}) failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def data_file(directory: Path, rows: int, row_group: int, seed: int) -> Path:
    """The Parquet file, written by a subprocess (this process stays small: its
    children's ru_maxrss would include its peak)."""
    path = directory / f"orders-{rows}-rg{row_group}-s{seed}.parquet"
    if path.exists():
        print(f"reusing {path} ({path.stat().st_size / 1e6:,.0f} MB)")
    else:
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "benchmarks.columnar_data", "--rows", str(rows),
                        "--seed", str(seed), "--row-group", str(row_group), "-o", str(path)],
                       cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
        print(f"wrote {path} ({path.stat().st_size / 1e6:,.0f} MB) in "
              f"{time.perf_counter() - start:.1f} s")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="1000000,10000000,50000000",
                        help="comma-separated table sizes")
    parser.add_argument("--data", help="directory for the Parquet files (kept and reused)")
    parser.add_argument("--row-group", type=int, default=1 << 20)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--filter", default=RABBITMQ)
    parser.add_argument("--whole", default=None,
                        help="comma-separated sizes also measured reading the whole file "
                             "(default: the smallest; 'none' for none)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.filter, args.mode)))
        return 0

    sizes = [int(s.replace("_", "")) for s in args.rows.split(",") if s]
    if args.whole is None:
        whole = {min(sizes)}
    elif args.whole == "none":
        whole = set()
    else:
        whole = {int(s.replace("_", "")) for s in args.whole.split(",") if s}
    directory = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="filtex-stream-"))
    directory.mkdir(parents=True, exist_ok=True)
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores; "
          f"filter: {args.filter}")
    try:
        paths = {rows: data_file(directory, rows, args.row_group, args.seed) for rows in sizes}
        print()
        results = []
        for rows in sizes:
            for mode in ("stream", "whole") if rows in whole else ("stream",):
                results.append((rows, mode, paths[rows].stat().st_size, measure(
                    paths[rows], args.filter, mode)))
    finally:
        if not args.data:
            shutil.rmtree(directory, ignore_errors=True)

    header = ("| rows        | how                  | file MB | after import MB | after warm-up MB "
              "| peak RSS MB | peak - warm-up MB | VmHWM MB | seconds | rows/s     | TRUE | FALSE | UNKNOWN "
              "| fallback rows |")
    from benchmarks.suite import print_header
    print_header(header)
    failed = False
    for rows, mode, size, r in results:
        how = "read_batches stream" if mode == "stream" else "read whole file"
        if r["rows"] != rows or r["true"] + r["false"] + r["unknown"] != rows:
            failed = True
            print(f"MISMATCH: {rows:,} rows, {mode}: counted {r['rows']:,}")
        print(f"| {rows:>11,} | {how:<20} | {size / 1e6:>7,.0f} | {r['import_peak_mb']:>15,.0f} "
              f"| {r['warm_peak_mb']:>16,.0f} | {r['peak_mb']:>11,.0f} "
              f"| {r['peak_mb'] - r['warm_peak_mb']:>17,.0f} | {r['hwm_mb'] or 0:>8,.0f} "
              f"| {r['seconds']:>7.1f} "
              f"| {rows / r['seconds']:>10,.0f} | {r['true']:,} | {r['false']:,} "
              f"| {r['unknown']:,} | {r['fallback']:,} |")
    streams = [r["peak_mb"] for _, mode, _, r in results if mode == "stream"]
    print(f"\npyarrow {results[0][3]['pyarrow']}; row groups of {args.row_group:,} rows; "
          f"one fresh process per line; peak RSS is the child's ru_maxrss (VmHWM: its own "
          f"peak from /proc). Streaming peaks: {min(streams):,.0f} - {max(streams):,.0f} MB for "
          f"{min(sizes):,} - {max(sizes):,} rows.")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
