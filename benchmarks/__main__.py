"""``python -m benchmarks``: per-message cost of each benchmark filter, three ways,
side by side in one run, printed as a table with ratios (shared machines are
noisy: compare ratios, not absolute times).

- compiled: ``filtex.compile_sql(text).evaluate`` (and for the jms and rabbitmq
  tables ``compile_sql(text, dialect)``)
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.cases import CASES, PROPERTY_CASES, make_messages  # noqa: E402
from benchmarks.dialect_cases import DIALECT_CASES, make_dialect_messages  # noqa: E402
from benchmarks.suite import (LONG_FILTER, compile_microseconds, measure_case,  # noqa: E402
                              measure_dialect_case, measure_property_case, print_header)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--loops", type=int, default=40)
    args = parser.parse_args(argv)
    messages = make_messages()
    print(f"{len(messages)} messages, best of {args.rounds} interleaved rounds\n")
    header = (f"| {'filter':<18} | {'compiled ns':>11} | {'hand ns':>8} | {'reference ns':>12} "
              f"| {'compiled/hand':>13} | {'reference/compiled':>18} |")
    print_header(header)
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
    print("\nProperty filters (filtex section 4) against the same selection as SQL:\n")
    header = (f"| {'filter':<18} | {'property ns':>11} | {'hand ns':>8} | {'SQL ns':>8} "
              f"| {'property/hand':>13} | {'SQL/property':>12} |")
    print_header(header)
    for case in PROPERTY_CASES:
        t = measure_property_case(case, messages, args.rounds, args.loops)
        print(f"| {case.name:<18} | {t['property']:>11.0f} | {t['hand']:>8.0f} "
              f"| {t['sql']:>8.0f} | {t['property'] / t['hand']:>12.2f}x "
              f"| {t['sql'] / t['property']:>11.1f}x |")
    print("\nThe peers' most complex expressions, in their dialects:\n")
    header = (f"| {'filter':<18} | {'dialect':<8} | {'compiled ns':>11} | {'hand ns':>8} "
              f"| {'compiled/hand':>13} |")
    print_header(header)
    for case in DIALECT_CASES:
        t = measure_dialect_case(case, make_dialect_messages(case), args.rounds, args.loops)
        print(f"| {case.name:<18} | {case.dialect:<8} | {t['compiled']:>11.0f} "
              f"| {t['hand']:>8.0f} | {t['compiled'] / t['hand']:>12.2f}x |")
    cold, hit = compile_microseconds()
    print(f"compile {len(LONG_FILTER)}-character filter: {cold:.0f} us cold, "
          f"{hit:.2f} us cache hit")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
