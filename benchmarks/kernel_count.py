"""``python -m benchmarks.kernel_count``: how many fused and walking kernels the
conformance suite needs, and what a new one costs to compile, cold and from the cache.

Every conformance case with a message is evaluated as a one-row message table
and, per dialect, over one table of all that dialect's messages and over one
column of them encoded (as ``tests/test_arrow_table.py`` does); the distinct
kernel signatures requested (``modules.cached`` keys) are counted by kind. Then,
in fresh processes over an empty and then a filled kernel cache, the first
evaluation of filters with new signatures is timed, over a message table (fused
kernels) and over an encoded column (walking kernels; the walk itself is one C
function compiled once): numba's and filtex's shared code compiles once per
process, so the figures per filter are the later ones.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TEXTS = ["color = 'blue'", "h.priority > 4 AND p.subject = 'order.created'",
         "total > 100 AND region LIKE 'EU-%'", "a BETWEEN 1 AND 5 OR b IS NULL",
         "NOT (flag) AND n IN (1, 2, 3, 4, 5, 6)"]


def count() -> Counter:
    sys.path.insert(0, str(REPO / "tests"))
    sys.path.insert(0, str(REPO))
    import pyarrow as pa
    import filtex
    import filtex.arrow as fa
    from filtex.arrow import kernel
    from filtex.codegen import modules
    from conformance_cases import load_cases
    from test_conformance import compile_case
    keys: set = set()
    original = modules.cached

    def spy(key, text, function):
        keys.add(key)
        return original(key, text, function)
    kernel.cached = spy   # the name arrow.kernel calls
    import filtex.arrow.fused as fused
    import filtex.arrow.walk as walk
    fused.modules.cached = spy
    walk.modules.cached = spy
    cases = [c for _, c in load_cases() if "message" in c and c["expect"] != "invalid"]
    by_dialect: dict[str, list] = {}
    for case in cases:
        flt = compile_case(case)
        rc = case["message"].get("receiving-connection")
        fa.evaluate(flt, fa.message_table([case["message"]]), rc)
        by_dialect.setdefault(case["dialect"], []).append(case)
    one_row = len({k for k in keys if k[0] == "fused"})
    for group in by_dialect.values():
        table = fa.message_table([c["message"] for c in group])
        for case in group:
            fa.evaluate(compile_case(case), table, case["message"].get("receiving-connection"))
    from filtex.amqp.encode import encode_message
    for group in by_dialect.values():
        column = pa.array([bytes(encode_message(filtex.message_from_json(c["message"])))
                           for c in group], pa.binary())
        for case in group:
            fa.evaluate_encoded(compile_case(case), column,
                                case["message"].get("receiving-connection"))
    kinds = Counter(k[0] if isinstance(k, tuple) else k for k in keys)
    kinds["fused (one-row tables only)"] = one_row
    kinds["cases"] = len(cases)
    del filtex
    return kinds


def child(texts: list[str]) -> dict:
    start = time.perf_counter()
    import filtex
    import filtex.arrow as fa
    table = fa.message_table([{"header": {"priority": 5}, "properties": {"subject": "x"},
                               "application-properties": {"color": "red", "total": 5.5,
                                                          "region": "EU-DE", "a": 3, "n": 2,
                                                          "flag": True}}] * 1000)
    from filtex.amqp.encode import encode_message
    import pyarrow as pa
    message = filtex.message_from_json({"header": {"priority": 5}, "properties": {"subject": "x"},
                                        "application-properties": {
                                            "color": "red", "total": 5.5, "region": "EU-DE",
                                            "a": 3, "n": 2, "flag": True}})
    column = pa.array([bytes(encode_message(message))] * 1000, pa.binary())
    out = {"import": time.perf_counter() - start}
    for text in texts:
        flt = filtex.compile_sql(text)
        start = time.perf_counter()
        fa.evaluate(flt, table)
        out[text] = time.perf_counter() - start
    for text in texts:   # the walking kernels of the same filters (kept apart from the fused)
        flt = filtex.compile_sql(text)
        start = time.perf_counter()
        fa.evaluate_encoded(flt, column)
        out["walked: " + text] = time.perf_counter() - start
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(TEXTS)))
        return 0
    kinds = count()
    print("kernels the conformance suite asks for:", dict(kinds))
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, FILTEX_KERNEL_CACHE=cache, PYTHONPATH=str(REPO))
        for run in ("cold", "cached"):
            done = subprocess.run([sys.executable, "-m", "benchmarks.kernel_count", "--child"],
                                  cwd=REPO, env=env, capture_output=True, text=True, check=True)
            times = json.loads(done.stdout)
            print(f"{run}: " + ", ".join(f"{k}: {v:.2f} s" for k, v in times.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
