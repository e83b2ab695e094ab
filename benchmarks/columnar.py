"""``python -m benchmarks.columnar``: the benchmark filters over one large
message table, side by side in one run (best of interleaved rounds):

- filtex: ``filtex.arrow.evaluate(flt, table)``, the columnar engine (until it
  exists: the per-message engine over the whole table, once);
- per-message: ``filtex.table.rows.evaluate_rows`` (the row views and
  ``flt.evaluate``) on the first ``--sample`` rows, extrapolated;
- Polars, DuckDB and pyarrow.compute computing the same exact three-valued
  result (``benchmarks/columnar_reference/``).

Every engine's TRUE/FALSE/UNKNOWN counts must agree, and the per-message
verdicts must equal every engine's row by row on the sample; a mismatch is
printed loudly and the exit status is 1. ``--check`` first compares every
reference engine with filtex row by row (``columnar_reference.check``).

    python -m benchmarks.columnar --rows 1000000 --data /tmp/filtex-columnar --check

The data file (``benchmarks/columnar_data.py``) is written to ``--data`` on
first use and reused after. Shared machines are noisy: compare the ratios.
"""
from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow  # noqa: E402
from benchmarks.columnar_data import read_orders, write_orders  # noqa: E402
from benchmarks.columnar_reference import (ENGINES, EXCLUDED, FILTERS, NOTES, ORDER,  # noqa: E402
                                           NotExact, Runner, check, counts, disagreements,
                                           per_message)
from benchmarks.suite import print_header  # noqa: E402

ROW_PATH_LIMIT = 2_000_000
"""Without the columnar engine, the row path runs over the whole table only up
to this many rows (it goes at ~100-200k rows/s)."""


PREPARE = {"polars": "pl.from_arrow of the three struct columns",
           "duckdb": "register the Arrow table, plus a row number",
           "pyarrow": "combine_chunks"}


def best_of(fn: Callable[[], Any], seconds: list[float]) -> Any:
    """Run ``fn`` once, append its wall time to ``seconds``, return its result."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    seconds.append(time.perf_counter() - start)
    return result


def versions() -> str:
    import duckdb
    import polars as pl
    parts = [f"Python {platform.python_version()}", f"numpy {np.__version__}",
             f"pyarrow {pa.__version__}", f"polars {pl.__version__}",
             f"duckdb {duckdb.__version__}", f"filtex {filtex.__version__}"]
    try:
        import numba
        parts.append(f"numba {numba.__version__}")
    except ImportError:
        pass
    return ", ".join(parts)


def threads() -> str:
    import duckdb
    import polars as pl
    with duckdb.connect() as con:
        duck = con.execute("SELECT current_setting('threads')").fetchone()[0]
    return f"{os.cpu_count()} CPUs; Polars {pl.thread_pool_size()} threads, DuckDB {duck}"


def data_file(directory: Path, rows: int, seed: int) -> Path:
    path = directory / f"orders-{rows}-seed{seed}.parquet"
    if not path.exists():
        start = time.perf_counter()
        write_orders(path, rows, seed)
        print(f"wrote {path} ({path.stat().st_size / 1e6:.1f} MB) in "
              f"{time.perf_counter() - start:.1f} s")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--data", type=Path,
                        default=Path(tempfile.gettempdir()) / "filtex-columnar",
                        help="directory of the generated Parquet files (default: %(default)s)")
    parser.add_argument("--check", action="store_true",
                        help="first compare every reference engine with filtex row by row")
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (best kept)")
    parser.add_argument("--sample", type=int, default=200_000,
                        help="rows for the per-message engine (extrapolated)")
    parser.add_argument("--full-fallback", action="store_true",
                        help="run filtex over the whole table even when most rows fall back "
                             "to the row path (default: extrapolate from the sample)")
    parser.add_argument("--duckdb-threads", type=int,
                        help="SET threads for DuckDB (default: DuckDB's own)")
    parser.add_argument("--threads", type=int, default=1,
                        help="filtex: split a batch among this many threads (default 1)")
    parser.add_argument("--filters", help="comma-separated subset of: " + ", ".join(ORDER))
    args = parser.parse_args(argv)
    names = ORDER if not args.filters else tuple(args.filters.split(","))
    unknown = [n for n in names if n not in FILTERS]
    if unknown:
        parser.error(f"unknown filters {unknown}")

    print(versions())
    print(threads() + (f" (benchmark: SET threads = {args.duckdb_threads})"
                       if args.duckdb_threads else ""))
    if args.check:
        print("\n## Reference engines against filtex, row by row")
        if check(min(args.sample, 200_000)):
            print("\n**MISMATCH: a reference engine disagrees with filtex; not benchmarking.**")
            return 1

    path = data_file(args.data, args.rows, args.seed)
    start = time.perf_counter()
    table = read_orders(path)
    print(f"\n{table.num_rows:,} rows from {path} ({table.nbytes / 1e6:,.0f} MB in Arrow), "
          f"read + combine_chunks in {time.perf_counter() - start:.1f} s")
    sample = table.slice(0, min(args.sample, table.num_rows))
    columnar = getattr(filtex.arrow, "evaluate", None)
    if columnar is not None and args.threads > 1:
        import functools
        columnar = functools.partial(columnar, threads=args.threads)
        print(f"filtex: batches split among {args.threads} threads")
    if columnar is None:
        print("filtex.arrow.evaluate does not exist yet: the filtex column is "
              + ("the per-message engine over the whole table, once"
                 if table.num_rows <= ROW_PATH_LIMIT else
                 "not measured (row path over this many rows is too slow)"))
    runners: dict[str, Runner] = {}
    for engine in ENGINES:
        start = time.perf_counter()
        runners[engine] = Runner(engine, table, args.duckdb_threads)
        print(f"{engine}: prepared in {time.perf_counter() - start:.2f} s ({PREPARE[engine]})")
    print(f"best of {args.repeat} interleaved rounds; per-message on {sample.num_rows:,} rows, "
          "extrapolated\n")

    results: dict[str, dict[str, Any]] = {}
    failed = False
    for name in names:
        flt = filtex.compile_sql(FILTERS[name])
        res: dict[str, Any] = {"ms": {}, "verdicts": {}, "notes": [], "first_ms": None,
                               "fallback": None}
        results[name] = res
        # the per-message engine on the sample
        start = time.perf_counter()
        truth = per_message(flt, sample)
        res["ms"]["per-message"] = ((time.perf_counter() - start) * 1000
                                    * table.num_rows / sample.num_rows)
        # compile what can be compiled; first calls (JIT, caches) are untimed warm-ups
        jobs: dict[str, Callable[[], Any]] = {}
        if columnar is not None:
            # first call (JIT compile, kernel cache) on the sample: it also tells
            # whether the filter mostly falls back to the row path
            start = time.perf_counter()
            try:
                first = columnar(flt, sample)
            except Exception as exc:   # the engine is young: report, go on with the others
                failed = True
                print(f"**FAILED: filtex.arrow.evaluate on {name}: {type(exc).__name__}: "
                      f"{exc}**")
                res["notes"].append(f"filtex: evaluate raised {type(exc).__name__}")
            else:
                res["first_ms"] = (time.perf_counter() - start) * 1000
                if disagreements(truth, first.verdicts).size:
                    failed = True
                    print(f"**MISMATCH in {name}: filtex.arrow.evaluate disagrees with the "
                          "per-message engine on the sample**")
                share = first.fallback_rows / max(sample.num_rows, 1)
                if share > 0.5 and sample.num_rows < table.num_rows and not args.full_fallback:
                    # mostly row by row: time the sample again and extrapolate
                    start = time.perf_counter()
                    again = columnar(flt, sample)
                    res["ms"]["filtex"] = ((time.perf_counter() - start) * 1000
                                           * table.num_rows / sample.num_rows)
                    res["fallback"] = "~{:,}".format(round(again.fallback_rows
                                                           * table.num_rows / sample.num_rows))
                    why = getattr(first, "reason", None) or "per-row fallback"
                    res["notes"].append(
                        f"filtex: {share:.0%} of the sample's rows go row by row ({why}): "
                        f"timed on the {sample.num_rows:,}-row sample and extrapolated, like "
                        "per-message (--full-fallback runs it over the whole table)")
                else:
                    jobs["filtex"] = lambda: columnar(flt, table)
        elif table.num_rows <= ROW_PATH_LIMIT:
            start = time.perf_counter()
            res["verdicts"]["filtex"] = per_message(flt, table)
            res["ms"]["filtex"] = (time.perf_counter() - start) * 1000
        for engine, runner in runners.items():
            try:
                compiled = runner.compile(name)
            except NotExact as exc:
                res["notes"].append(f"{engine}: not exact ({exc})")
                continue
            runner.run(compiled)
            jobs[engine] = (lambda r, c: lambda: r.run(c))(runner, compiled)
        seconds: dict[str, list[float]] = {engine: [] for engine in jobs}
        for _ in range(args.repeat):
            for engine, job in jobs.items():
                out = best_of(job, seconds[engine])
                if engine == "filtex":
                    res["fallback"] = out.fallback_rows
                    out = out.verdicts
                res["verdicts"][engine] = out
        for engine, times in seconds.items():
            res["ms"][engine] = min(times) * 1000
        # agreement: counts over the table, and row by row against per-message on the sample
        all_counts = {engine: counts(v) for engine, v in res["verdicts"].items()}
        res["counts"] = all_counts
        if len(set(all_counts.values())) > 1:
            failed = True
            print(f"**MISMATCH in {name}: TRUE/FALSE/UNKNOWN differ: {all_counts}**")
        for engine, verdicts in res["verdicts"].items():
            rows = disagreements(truth, verdicts.slice(0, sample.num_rows))
            if len(rows):
                failed = True
                print(f"**MISMATCH in {name}: {engine} disagrees with the per-message engine "
                      f"on {len(rows)} of the first {sample.num_rows:,} rows (first: row "
                      f"{int(rows[0])})**")
        if not res["verdicts"]:
            res["counts"] = {"per-message (sample)": counts(truth)}
        res["verdicts"] = None   # free memory
        print(f"{name}: done", file=sys.stderr)

    rows = table.num_rows
    columns = ("filtex", "per-message", *ENGINES)

    def ms(name: str, engine: str) -> str:
        value = results[name]["ms"].get(engine)
        return "n/a" if value is None else f"{value:,.1f}"

    def short(x: float) -> str:
        return f"{x:,.1f}" if x >= 10 else f"{x:.2f}" if x >= 0.1 else f"{x:.3f}"

    def rate(name: str, engine: str) -> str:
        value = results[name]["ms"].get(engine)
        return "n/a" if value is None else short(rows / value / 1000)

    def ratio(name: str, engine: str) -> str:
        base, other = results[name]["ms"].get("filtex"), results[name]["ms"].get(engine)
        return "n/a" if base is None or other is None else short(other / base) + "x"

    print(f"\n## Milliseconds for {rows:,} rows (per-message: extrapolated from "
          f"{sample.num_rows:,})\n")
    print_header("| filter             | " + " | ".join(f"{c:>11}" for c in columns) + " |")
    for name in names:
        print(f"| {name:<18} | " + " | ".join(f"{ms(name, c):>11}" for c in columns) + " |")
    print("\n## Million rows per second, and time relative to filtex\n")
    print_header("| filter             | " + " | ".join(f"{c:>11}" for c in columns)
                 + " | polars/filtex | per-message/filtex | duckdb/filtex | pyarrow/filtex |")
    for name in names:
        print(f"| {name:<18} | " + " | ".join(f"{rate(name, c):>11}" for c in columns)
              + f" | {ratio(name, 'polars'):>13} | {ratio(name, 'per-message'):>18} "
              f"| {ratio(name, 'duckdb'):>13} | {ratio(name, 'pyarrow'):>14} |")
    print("\n## Results (every engine agrees unless marked)\n")
    print_header("| filter             |       TRUE |      FALSE |    UNKNOWN | engines "
                 "| filtex first call ms (sample) | filtex fallback rows |")
    for name in names:
        res = results[name]
        distinct = set(res["counts"].values())
        t, f, u = next(iter(distinct))
        engines = ", ".join(res["counts"])
        if len(distinct) > 1:
            engines = "**DISAGREE** " + "; ".join(f"{e} {c}" for e, c in res["counts"].items())
        first = "n/a" if res["first_ms"] is None else f"{res['first_ms']:,.1f}"
        fallback = res["fallback"]
        fallback = "n/a" if fallback is None else \
            fallback if isinstance(fallback, str) else f"{fallback:,}"
        print(f"| {name:<18} | {t:>10,} | {f:>10,} | {u:>10,} | {engines} | {first:>29} "
              f"| {fallback:>20} |")
    notes = [f"- {name}: {note}" for name in names for note in results[name]["notes"]]
    notes += [f"- {engine}: {text}" for engine, text in NOTES.items()]
    notes += [f"- {name} (not benchmarked): {why}" for name, why in EXCLUDED.items()]
    print("\nNotes:\n" + "\n".join(notes))
    if failed:
        print("\n**MISMATCH: the engines do not agree (see above).**")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
