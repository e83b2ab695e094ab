"""``python -m benchmarks.plan_against OLD_CHECKOUT``: preparing filters for the
batch engines (the plan's per-tag decisions) in this checkout and another,
side by side.

A filter's first batch pays for its plan: the skeleton, the compiled atoms,
and for each atom the decision of every type tag its column can hold
(``plan/prepared.prepared`` and ``tag_plan``). Each round runs one fresh
process per checkout, alternated, and prepares distinct filters of four
families for every tag (so every numeric, string and opaque decision is
made): comparisons of a number with integer and approximate constants,
BETWEEN, a 1,000-item IN list of integers with one decimal, and string and
mixed predicates. Microseconds per filter; read the ratios.
"""
from __future__ import annotations

import argparse
from pathlib import Path

from benchmarks.alternate import alternated


CHILD = r"""
import gc, sys, time
sys.path.insert(0, sys.argv[1])
import filtex
assert filtex.__file__.startswith(sys.argv[1]), filtex.__file__
from filtex.plan.prepared import prepared
TAGS = frozenset(range(26))
families = {
    "compare": [f"x > {i} AND y <= {i}.5E0 AND z <> {i * 7919}" for i in range(300)],
    "between": [f"x BETWEEN {i} AND {i + 100} OR y NOT BETWEEN -{i}.25 AND {i}.75"
                for i in range(300)],
    "in-1000": ["x IN (" + ", ".join(str(i * 1000 + k) for k in range(999)) + f", {i}.5)"
                for i in range(20)],
    "mixed": [f"s = 'v{i}' AND x <> 'w{i}' OR t LIKE 'p{i}%' OR u IS NULL" for i in range(300)],
}
out = []
for name, texts in families.items():
    filters = [filtex.compile_sql(t) for t in texts]
    gc.disable()
    t0 = time.perf_counter()
    for flt in filters:
        ready = prepared(flt)
        for i in range(len(ready.plan.atoms)):
            ready.tag_plan(i, TAGS, None)
    out.append((time.perf_counter() - t0) / len(filters) * 1e6)
    gc.enable()
print(*out)
"""
FAMILIES = ("compare", "between", "in-1000", "mixed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="another checkout of filtex")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("| round | family | now us | before us | now/before |\n|---|---|---|---|---|")
    for round_, nows, befores in alternated(CHILD, args.before, args.rounds):
        for family, now, before in zip(FAMILIES, nows, befores):
            print(f"| {round_} | {family} | {now:.0f} | {before:.0f} | {now / before:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
