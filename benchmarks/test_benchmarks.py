"""pytest-benchmark suite: ``python -m pytest benchmarks -n 0 --benchmark-enable``.

Each filter is one group with three members (compiled, hand-written,
reference), so pytest-benchmark's group table shows them side by side; one
round evaluates the filter on every benchmark message.
"""
from __future__ import annotations

import pytest

import filtex
from benchmarks.cases import CASES, make_messages
from benchmarks.dialect_cases import DIALECT_CASES, make_dialect_messages
from benchmarks.suite import LONG_FILTER, reference_function
from filtex import compiler

MESSAGES = make_messages()


def _sweep(fn):
    def run():
        for message in MESSAGES:
            fn(message)
    return run


@pytest.mark.parametrize("variant", ["compiled", "hand", "reference"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_evaluate(benchmark, case, variant):
    fn = {"compiled": lambda: filtex.compile_sql(case.sql).evaluate,
          "hand": lambda: case.hand,
          "reference": lambda: reference_function(case.sql)}[variant]()
    benchmark.group = case.name
    benchmark.extra_info["messages"] = len(MESSAGES)
    benchmark(_sweep(fn))


@pytest.mark.parametrize("variant", ["compiled", "hand"])
@pytest.mark.parametrize("case", DIALECT_CASES, ids=[c.name for c in DIALECT_CASES])
def test_evaluate_dialect(benchmark, case, variant):
    messages = make_dialect_messages(case)
    fn = (filtex.compile_sql(case.sql, case.dialect).evaluate if variant == "compiled"
          else case.hand)
    benchmark.group = f"{case.dialect}:{case.name}"

    def run():
        for message in messages:
            fn(message)
    benchmark(run)


def test_compile_cold(benchmark):
    benchmark.group = "compile"
    benchmark(compiler._compile_sql, LONG_FILTER, "amqp", compiler.DEFAULT_LIMITS, None)


def test_compile_cache_hit(benchmark):
    benchmark.group = "compile"
    filtex.compile_sql(LONG_FILTER)
    benchmark(filtex.compile_sql, LONG_FILTER)


@pytest.mark.parametrize("kind", ["true", "unknown", "failing"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_failure_path(benchmark, case, kind):
    """``benchmarks/failure_path.py``'s messages: the filter true, unknown and
    failing (a value of the wrong type), side by side per filter."""
    from benchmarks.failure_path import messages_for
    flt = filtex.compile_sql(case.sql)
    message = messages_for(case.name)[kind]
    expected = {"true": True, "unknown": None, "failing": None}[kind]
    if case.name == "null-exists" and kind != "true":
        expected = False   # it can be neither: its false message
    assert flt.evaluate(message) is expected
    benchmark.group = f"failure-path:{case.name}"
    benchmark(flt.evaluate, message)
