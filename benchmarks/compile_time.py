"""``python -m benchmarks.compile_time``: the batch engine's kernel compile
time, cold and cached, in fresh processes.

For each filter shape (one atom; the RabbitMQ complex filter; an arithmetic
filter), with a fresh temporary cache directory (``FILTEX_KERNEL_CACHE`` for
the generated kernel modules, ``NUMBA_CACHE_DIR`` for numba's compiled code,
so ``filtex/arrow/scan.py``'s small passes start cold too):

- cold: a fresh process times ``import filtex, filtex.arrow``, ``import
  numba``, ``filtex.compile_sql`` and the first ``filtex.arrow.evaluate`` on a
  1,000-row message table (atom pass, combining kernel and any arithmetic pass
  compiled by numba and written to the cache), then a second evaluate;
- cached: another fresh process, the SAME cache directory, the same steps
  (numba loads the compiled code from disk).

Also: ``import numba`` alone in a fresh process (the floor of any process's
first evaluate); all the filters one after another in one process (cold,
then cached); and two filters differing only in a constant (``customer_id =
17``, ``customer_id = 4711``) in one process: the second has the first's
shape and reuses its kernels (no file added to the cache, time of its first
evaluate).

    python -m benchmarks.compile_time
    python -m benchmarks.compile_time --repeat 3
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
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FILTERS = {
    "one atom": "order_type = 'premium'",
    "rabbitmq-complex": (
        "order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
        "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
        "p.creation_time >= 1750772279000 AND NOT cancelled"),
    "arithmetic": "quantity * price - discount > 1000",
}
CONSTANTS = ("customer_id = 17", "customer_id = 4711")
ROWS = 1000


def _messages(rows: int) -> list[dict]:
    """Order messages as plain dicts (filtex.view reads them), types mixed."""
    import random
    rng = random.Random(5)
    out = []
    for i in range(rows):
        app = {"order_type": rng.choice(["premium", "express", "standard"]),
               "total_amount": rng.choice([rng.randrange(10, 8000),
                                           round(rng.uniform(1, 9000), 2)]),
               "customer_region": rng.choice(["EU-DE", "EU-FR", "US-CA", "US-NY", "APAC"]),
               "cancelled": rng.random() < 0.1, "customer_id": rng.randrange(10_000),
               "quantity": rng.randrange(1, 40),
               "price": rng.choice([round(rng.uniform(1, 500), 2), rng.randrange(1, 500)]),
               "discount": rng.choice([0, 5, 10, 12.5])}
        if rng.random() < 0.05:
            del app["total_amount"]
        out.append(filtex_message(app, 1_750_772_279_000 + rng.randrange(-10**9, 10**9)))
    return out


def filtex_message(app: dict, created: int):
    import filtex
    from proton import timestamp   # a plain int would be a long: the residual, not the column
    return filtex.Message(header={"durable": True}, properties={
        "subject": "order.created", "creation-time": timestamp(created)},
        application_properties=app)


def _cache_files() -> int:
    """Files in the kernel cache and numba's cache directory."""
    return sum(1 for name in ("FILTEX_KERNEL_CACHE", "NUMBA_CACHE_DIR")
               for p in Path(os.environ[name]).rglob("*") if p.is_file())


def child(texts: list[str]) -> dict:
    """Runs in a fresh process; the step times in seconds, as a dict."""
    clock = time.perf_counter
    t0 = clock()
    import filtex
    import filtex.arrow as fa
    t_import = clock() - t0
    table = fa.message_table(_messages(ROWS))    # untimed
    t0 = clock()
    import numba  # noqa: F401
    t_numba = clock() - t0
    steps = []
    for text in texts:
        files = _cache_files()
        t0 = clock()
        flt = filtex.compile_sql(text)
        t_compile = clock() - t0
        t0 = clock()
        result = fa.evaluate(flt, table)
        t_first = clock() - t0
        t0 = clock()
        fa.evaluate(flt, table)
        t_second = clock() - t0
        steps.append({"compile_sql": t_compile, "first": t_first, "second": t_second,
                      "kernel": result.kernel, "reason": result.reason,
                      "true": result.verdicts.true_count, "fallback": result.fallback_rows,
                      "new_files": _cache_files() - files})
    return {"import": t_import, "numba": t_numba, "steps": steps}


def run_child(texts: list[str], cache: Path) -> dict:
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(cache / "kernels"),
               NUMBA_CACHE_DIR=str(cache / "numba"))
    out = subprocess.run([sys.executable, "-m", "benchmarks.compile_time", "--child",
                          json.dumps(texts)], cwd=ROOT, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"child failed for {texts}:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def import_numba_alone() -> float:
    code = ("import time; t = time.perf_counter(); import numba; "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return float(out.stdout.strip())


def cold_and_cached(texts: list[str], repeat: int) -> tuple[dict, dict]:
    """(cold, cached) runs, the repeat with the smallest cold total kept."""
    best = None
    for _ in range(repeat):
        directory = Path(tempfile.mkdtemp(prefix="filtex-compile-"))
        try:
            cold = run_child(texts, directory)
            cached = run_child(texts, directory)
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        if best is None or total(cold) < total(best[0]):
            best = (cold, cached)
    return best


def total(run: dict) -> float:
    return run["import"] + run["numba"] + sum(s["compile_sql"] + s["first"]
                                              for s in run["steps"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1,
                        help="fresh cache directories per measurement (best kept)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return 0

    from benchmarks.suite import print_header
    import numba
    print(f"Python {platform.python_version()}, numba {numba.__version__}, "
          f"{os.cpu_count()} cores; a {ROWS:,}-row message table; one fresh process per "
          f"line, best of {args.repeat}\n")
    numba_alone = min(import_numba_alone() for _ in range(max(1, args.repeat)))
    header = ("| filter                  | cache  | import filtex.arrow s | import numba s "
              "| compile_sql ms | first evaluate s | total s | second evaluate ms "
              "| files added to the caches | fallback rows | kernel |")
    print_header(header)
    failed = False

    def line(name: str, state: str, run: dict, step: dict, first_of_process: bool) -> None:
        imp = f"{run['import']:.2f}" if first_of_process else "-"
        nb = f"{run['numba']:.2f}" if first_of_process else "-"
        tot = (run["import"] + run["numba"] if first_of_process else 0) \
            + step["compile_sql"] + step["first"]
        kernel = "yes" if step["kernel"] else f"no ({step['reason']})"
        print(f"| {name:<23} | {state:<6} | {imp:>21} | {nb:>14} "
              f"| {step['compile_sql'] * 1e3:>14.2f} | {step['first']:>16.3f} "
              f"| {tot:>7.2f} | {step['second'] * 1e3:>18.2f} "
              f"| {step['new_files']:>26} | {step['fallback']:>13} | {kernel} |")

    for name, text in FILTERS.items():
        cold, cached = cold_and_cached([text], args.repeat)
        line(name, "cold", cold, cold["steps"][0], True)
        line(name, "cached", cached, cached["steps"][0], True)
        failed |= cold["steps"][0]["true"] != cached["steps"][0]["true"]
    cold, cached = cold_and_cached(list(FILTERS.values()), args.repeat)
    for state, run in (("cold", cold), ("cached", cached)):
        for i, (name, step) in enumerate(zip(FILTERS, run["steps"])):
            line(f"all 3: {name}" if i == 0 else f"  then {name}", state, run, step, i == 0)
        print(f"| {'all 3, one process':<23} | {state:<6} | | | | | {total(run):>7.2f} "
              "| | | | |")
    constants, _ = cold_and_cached(list(CONSTANTS), 1)
    for i, (text, step) in enumerate(zip(CONSTANTS, constants["steps"])):
        line(text, "cold", constants, step, i == 0)
    second = constants["steps"][1]
    print(f"\n`import numba` alone in a fresh process: {numba_alone:.2f} s (in the table, "
          "numpy and pyarrow are already imported).")
    print(f"'{CONSTANTS[1]}' after '{CONSTANTS[0]}' in one cold process: first evaluate "
          f"{second['first'] * 1e3:.1f} ms, {second['new_files']} files added to the caches "
          f"(the first: {constants['steps'][0]['first']:.2f} s, "
          f"{constants['steps'][0]['new_files']} files).")
    if second["new_files"]:
        print("NOTE: the second constant compiled something", file=sys.stderr)
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
