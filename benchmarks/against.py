"""``python -m benchmarks.against OLD_CHECKOUT``: the batch engine and the
encoded-column decoder of this checkout against another one, on the same data.

Each measurement runs in a fresh process of its own (numba kernels are compiled
per checkout and loaded from the disk cache), the two checkouts alternated
round by round; per filter the best of ``--repeat`` evaluations in a process,
then the time now / before per round. Verdict counts must agree; a difference
is printed loudly and the exit status is 1. Shared machines are noisy: read the
ratios, and more than one round.

- ``columnar``: ``filtex.arrow.evaluate`` over a ``--rows`` message table of
  ``benchmarks/columnar_data.py`` orders (Parquet, written once to ``--data``);
- ``binary``: ``filtex.arrow.evaluate_encoded`` over a column of
  ``--messages`` AMQP-encoded orders of ``benchmarks/binary.py``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]

CHILD = r"""
import gc, json, sys, time
checkout, mode, data = sys.argv[1:4]
messages, repeat = int(sys.argv[4]), int(sys.argv[5])
sys.path.insert(0, checkout)
import pyarrow as pa
pa.set_cpu_count(1)
import filtex, filtex.arrow
assert filtex.__file__.startswith(checkout), filtex.__file__
sys.path.insert(0, sys.argv[6])   # this checkout's benchmarks (filtex stays the one loaded)
out = {}
if mode == "columnar":
    from benchmarks.columnar_data import read_orders
    from benchmarks.columnar_reference import FILTERS, ORDER
    table, run, texts = read_orders(data), filtex.arrow.evaluate, [(n, FILTERS[n]) for n in ORDER]
else:
    from benchmarks.binary import FILTERS, Pool
    table = Pool(min(messages, 50_000), 7).batch(0, messages)
    run, texts = filtex.arrow.evaluate_encoded, list(FILTERS.items())
for name, text in texts:
    flt = filtex.compile_sql(text)
    run(flt, table.slice(0, 1000))   # compiles, or loads from the disk cache
    best = float("inf")
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        verdicts = run(flt, table).verdicts
        best = min(best, time.perf_counter() - start)
    out[name] = [best, verdicts.true_count, verdicts.null_count]
print(json.dumps(out))
"""


def measure(checkout: Path, mode: str, data: Path, messages: int, repeat: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(checkout), mode, str(data),
                           str(messages), str(repeat), str(HERE)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{mode} in {checkout} failed:\n{done.stderr[-2000:]}")
    result: dict = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path, help="another checkout of filtex")
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--messages", type=int, default=500_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path, default=Path(tempfile.gettempdir()) / "filtex-against")
    parser.add_argument("--modes", default="columnar,binary")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from benchmarks.columnar_data import write_orders
    args.data.mkdir(parents=True, exist_ok=True)
    data = args.data / f"orders-{args.rows}.parquet"
    if not data.exists():
        write_orders(data, args.rows, 42)
    checkouts = {"now": HERE, "before": args.before.resolve()}
    failed = False
    for mode in args.modes.split(","):
        ratios: dict[str, list[float]] = {}
        for round_ in range(args.rounds):
            order = ("now", "before") if round_ % 2 else ("before", "now")
            got = {who: measure(checkouts[who], mode, data, args.messages, args.repeat)
                   for who in order}
            for name, (seconds, true, null) in got["now"].items():
                old = got["before"][name]
                if [true, null] != old[1:]:
                    print(f"MISMATCH {mode} {name}: now TRUE/unknown {true}/{null}, "
                          f"before {old[1]}/{old[2]}")
                    failed = True
                ratios.setdefault(name, []).append(seconds / old[0])
        print(f"\n{mode}: time now / before, per round ({args.rounds} rounds, "
              f"alternated, best of {args.repeat} each)\n")
        print("| filter | now/before |\n|---|---|")
        for name, values in ratios.items():
            print(f"| {name} | {', '.join(f'{v:.2f}x' for v in values)} |")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
