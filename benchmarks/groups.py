"""Group filters, filter sets and the SQL suite, side by side with another
checkout of filtex in the same run:
``python -m benchmarks.groups --against /path/to/old/checkout``.

The other checkout's ``filtex`` package is copied under the name
``filtex_before`` (its imports are all relative) and both are timed in
interleaved rounds on the same messages; without ``--against`` only this
checkout is timed. Compare the ratio: the machines are shared and noisy.
"""
from __future__ import annotations

import argparse
import importlib
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import filtex  # noqa: E402
from benchmarks.cases import CASES as SQL_CASES, make_messages  # noqa: E402
from benchmarks.suite import print_header, time_per_message  # noqa: E402

GROUP = ("amqp:all-filter", [
    ("amqp:sql-filter", "order_type IN ('premium', 'express')"),
    ("amqp:sql-filter", "total_amount BETWEEN 100 AND 5000"),
    ("amqp:sql-filter", "customer_region LIKE 'EU-%' OR customer_region = 'US-CA'")])
FILTER_SET = {"sql": ("amqp:sql-filter", "total_amount > 500"),
              "props": ("amqp:application-properties-filter", {"order_type": "premium"})}
CASES = {"group-3-sql": lambda pkg: pkg.compile_filter(GROUP),
         "set-sql-property": lambda pkg: pkg.compile_filter_set(FILTER_SET),
         **{case.name: (lambda pkg, sql=case.sql: pkg.compile_sql(sql)) for case in SQL_CASES}}


def load_other(checkout: Path):
    """The other checkout's package, imported as ``filtex_before``."""
    target = Path(tempfile.mkdtemp()) / "filtex_before"
    shutil.copytree(checkout / "filtex", target)
    sys.path.insert(0, str(target.parent))
    return importlib.import_module("filtex_before")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout of filtex")
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--loops", type=int, default=40)
    args = parser.parse_args(argv)
    packages = {"now": filtex}
    if args.against:
        packages["before"] = load_other(args.against)
    messages = make_messages()
    print(f"{len(messages)} messages, best of {args.rounds} interleaved rounds\n")
    names = list(packages)
    header = "| filter | " + " | ".join(f"{n} ns" for n in names) + \
        (" | now/before |" if "before" in packages else " |")
    print_header(header)
    for case, build in CASES.items():
        filters = {name: build(pkg).evaluate for name, pkg in packages.items()}
        expected = [filters["now"](m) for m in messages]
        for name, fn in filters.items():   # the same verdicts before and after
            assert [fn(m) for m in messages] == expected, (case, name)
        best = {name: float("inf") for name in filters}
        for _ in range(args.rounds):
            for name, fn in filters.items():
                best[name] = min(best[name], time_per_message(fn, messages, args.loops))
        cells = " | ".join(f"{best[n]:.0f}" for n in names)
        ratio = f" | {best['now'] / best['before']:.2f}x |" if "before" in best else " |"
        print(f"| {case} | {cells}{ratio}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
