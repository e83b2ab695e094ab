"""``python -m benchmarks.compile_against OLD_CHECKOUT``: compiling filters
(cache misses) in this checkout and another, side by side.

Each round runs one fresh process per checkout, alternated: 1,500 distinct SQL
filters (``compile_sql``: lexer, parser, checker, row generator, compile of the
generated source) and 500 distinct filter sets of an SQL member, a property
filter and a group of a JMS selector and an SQL filter
(``compile_filter_set``). Microseconds per filter or set; read the ratios.
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
filtex.compile_sql("a = 1")
texts = [f"color = 'c{i}' AND h.priority > {i % 9} OR LOWER(name) LIKE 'n{i}%'"
         for i in range(1500)]
sets = [{"s": ("amqp:sql-filter", f"a = {i} AND b LIKE 'x{i}%'"),
         "p": ("amqp:application-properties-filter", {"k": f"v{i}"}),
         "g": ("amqp:any-filter", [("apache.org:selector-filter:string", f"c > {i}"),
                                   ("amqp:sql-filter", f"d = 'x{i}'")])} for i in range(500)]
gc.disable()
t0 = time.perf_counter()
for t in texts:
    filtex.compile_sql(t)
sql = (time.perf_counter() - t0) / len(texts) * 1e6
t0 = time.perf_counter()
for s in sets:
    filtex.compile_filter_set(s)
print(sql, (time.perf_counter() - t0) / len(sets) * 1e6)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="another checkout of filtex")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    print("| round | sql now us | sql before us | now/before | set now us | set before us "
          "| now/before |\n|---|---|---|---|---|---|---|")
    for round_, (sql_now, set_now), (sql_before, set_before) in alternated(
            CHILD, args.before, args.rounds):
        print(f"| {round_} | {sql_now:.0f} | {sql_before:.0f} | {sql_now / sql_before:.2f}x "
              f"| {set_now:.0f} | {set_before:.0f} | {set_now / set_before:.2f}x |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
