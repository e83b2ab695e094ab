"""``python -m benchmarks.shapes``: 10,000 subscriptions of a few shapes with
different constants on the batch engine, with an empty kernel cache.

A fused kernel is keyed by its filter's signature (the skeleton, the fields'
layouts, each atom's groups), never by a constant: constants, string tables
and intervals are its arguments. So 10,000 filters that differ only in
constants compile as many kernels as they have shapes. The run evaluates
every filter over one table of orders (``--rows``), kernels compiled in the
foreground (``FILTEX_COMPILE=wait``: every compile is counted and timed),
and reports the kernel modules the cache holds afterwards, the seconds
numba compiled (its ``numba:compile`` events) and the whole time; every
verdict is checked against the per-message engine on the first rows.
"""
from __future__ import annotations

import argparse
import io
import os
import random
import tempfile
import time


def filters(count: int, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    regions = ["EU", "US", "APAC", "LATAM"]
    out = []
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out.append(f"region = '{rng.choice(regions)}' AND total > {rng.randint(1, 900)}")
        elif kind == 1:
            out.append(f"customer = 'c{rng.randint(0, 5000)}' OR h.priority >= "
                       f"{rng.randint(0, 9)}")
        elif kind == 2:
            out.append(f"currency IN ('USD', '{rng.choice(['EUR', 'GBP', 'JPY'])}') AND "
                       f"item_count BETWEEN {rng.randint(0, 3)} AND {rng.randint(4, 9)}")
        else:
            out.append(f"p.subject LIKE 'order.{rng.choice(['pa', 'sh', 'ca'])}%' AND NOT "
                       f"express")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--filters", type=int, default=10_000)
    parser.add_argument("--rows", type=int, default=1_000)
    args = parser.parse_args()
    scratch = tempfile.mkdtemp(prefix="filtex-shapes-")
    os.environ["FILTEX_KERNEL_CACHE"] = scratch
    os.environ["FILTEX_COMPILE"] = "wait"
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from make_messages import make_order   # type: ignore[import-not-found]

    import filtex
    import filtex.arrow as fa
    from filtex.cli.common import CompileNotice
    rng = random.Random(1)
    messages = [make_order(rng, i, args.rows) for i in range(args.rows)]
    table = fa.message_table(messages)
    texts = filters(args.filters)
    started = time.perf_counter()
    compiling = CompileNotice(io.StringIO())   # times numba's compiles (nested ones once)
    with compiling:
        for i, text in enumerate(texts):
            flt = filtex.compile_sql(text)
            result = fa.evaluate(flt, table)
            if i < 40:   # the verdicts, against the per-message engine
                assert result.verdicts.to_pylist() == [flt.evaluate(m) for m in messages], text
    whole = time.perf_counter() - started
    kernels = len(list(Path(scratch).glob("filtex_kernel_*.py")))
    spent = compiling.seconds
    print(f"{len(texts):,} filters of 4 shapes over {args.rows:,} orders: {kernels} kernel "
          f"modules compiled, {spent:.1f} s compiling (the message table's fixed passes "
          f"included), {whole:.1f} s in all ({(whole - spent) / len(texts) * 1e3:.2f} ms "
          "a filter besides)")


if __name__ == "__main__":
    main()
