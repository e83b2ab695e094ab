"""``python -m benchmarks``: per-message cost of each benchmark filter, three ways,
side by side in one run, printed as a table with ratios (shared machines are
noisy: compare ratios, not absolute times).

- compiled: ``filtex.compile_sql(text).evaluate``
- hand: the hand-written function of ``benchmarks/cases.py``
- reference: the tree-walking reference evaluator of ``tests/reference.py``

Variants are timed in interleaved rounds and the best round is kept, so a
burst of load on the machine hits all three alike. Also prints compile time
for a 200-character filter and the cost of a compile-cache hit.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import filtex  # noqa: E402
from filtex import compiler  # noqa: E402

from benchmarks.cases import CASES, make_messages  # noqa: E402

LONG_FILTER = ("order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 "
               "AND (customer_region LIKE 'EU-%' OR customer_region = 'US-CA') "
               "AND p.creation_time >= 1750772279000 AND NOT cancelled AND h.priority > 4")


def reference_function(text: str) -> Callable:
    import reference
    from filtex.sql.checker import Checker
    from filtex.sql.dialects import get_dialect
    from filtex.sql.parser import parse
    dialect = get_dialect("amqp")
    tree = Checker(dialect, fold=False).check(parse(text, dialect))
    return lambda message: reference.evaluate(tree, message)[0]


def time_per_message(fn: Callable, messages: list, loops: int) -> float:
    """Nanoseconds per message for one pass of ``loops`` sweeps."""
    start = time.perf_counter_ns()
    for _ in range(loops):
        for message in messages:
            fn(message)
    return (time.perf_counter_ns() - start) / (loops * len(messages))


def measure_case(case, messages, rounds: int, loops: int) -> dict[str, float]:
    variants = {"compiled": filtex.compile_sql(case.sql).evaluate, "hand": case.hand,
                "reference": reference_function(case.sql)}
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            sweep = max(1, loops // 20) if name == "reference" else loops
            best[name] = min(best[name], time_per_message(fn, messages, sweep))
    return best


def compile_microseconds(rounds: int = 200) -> tuple[float, float]:
    """(cold compile of LONG_FILTER, compile-cache hit), in microseconds."""
    cold = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        compiler._compile_sql_cached.__wrapped__(LONG_FILTER, "amqp")
        cold = min(cold, time.perf_counter_ns() - start)
    filtex.compile_sql(LONG_FILTER)
    hits = 100_000
    start = time.perf_counter_ns()
    for _ in range(hits):
        filtex.compile_sql(LONG_FILTER)
    return cold / 1000, (time.perf_counter_ns() - start) / hits / 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--loops", type=int, default=40)
    args = parser.parse_args(argv)
    messages = make_messages()
    print(f"{len(messages)} messages, best of {args.rounds} interleaved rounds\n")
    header = (f"| {'filter':<18} | {'compiled ns':>11} | {'hand ns':>8} | {'reference ns':>12} "
              f"| {'compiled/hand':>13} | {'reference/compiled':>18} |")
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    to_hand, speedups = [], []
    for case in CASES:
        t = measure_case(case, messages, args.rounds, args.loops)
        to_hand.append(t["compiled"] / t["hand"])
        speedups.append(t["reference"] / t["compiled"])
        print(f"| {case.name:<18} | {t['compiled']:>11.0f} | {t['hand']:>8.0f} "
              f"| {t['reference']:>12.0f} | {to_hand[-1]:>12.2f}x | {speedups[-1]:>17.1f}x |")
    print(f"\nsuite median: compiled/hand {statistics.median(to_hand):.2f}x, "
          f"reference/compiled {statistics.median(speedups):.1f}x "
          f"(worst compiled/hand {max(to_hand):.2f}x)")
    cold, hit = compile_microseconds()
    print(f"compile {len(LONG_FILTER)}-character filter: {cold:.0f} us cold, "
          f"{hit:.2f} us cache hit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
