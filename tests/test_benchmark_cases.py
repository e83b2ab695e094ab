"""The benchmark compares equal work: every hand-written function returns what
the compiled filter and the reference evaluator return, on every benchmark message."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import filtex  # noqa: E402
from benchmarks.suite import reference_function  # noqa: E402
from benchmarks.cases import CASES, PROPERTY_CASES, make_messages  # noqa: E402

MESSAGES = make_messages()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hand_written_matches_compiled_and_reference(case):
    compiled = filtex.compile_sql(case.sql)
    ref = reference_function(case.sql)
    results = collections.Counter()
    for message in MESSAGES:
        expected = compiled.evaluate(message)
        assert case.hand(message) is expected, message
        assert ref(message) is expected, message
        results[expected] += 1
    # The messages exercise the filter: it matches some and rejects some.
    assert results[True] > 0 and results[False] + results[None] > 0, results


@pytest.mark.parametrize("case", PROPERTY_CASES, ids=[c.name for c in PROPERTY_CASES])
def test_property_cases_compare_equal_work(case):
    """The hand-written function returns what the property filter does; the SQL
    twin selects the same messages (it may say unknown where the filter says false)."""
    prop = filtex.compile_filter(case.filter)
    sql = filtex.compile_sql(case.sql)
    matched = 0
    for message in MESSAGES:
        expected = prop.evaluate(message)
        assert case.hand(message) is expected
        assert sql.matches(message) is expected
        matched += expected
    assert 0 < matched < len(MESSAGES)


from benchmarks.dialect_cases import DIALECT_CASES, make_dialect_messages  # noqa: E402


@pytest.mark.parametrize("case", DIALECT_CASES, ids=[c.name for c in DIALECT_CASES])
def test_dialect_cases_compare_equal_work(case):
    """The hand-written jms/rabbitmq functions return what the compiled filter
    returns on every benchmark message, and the messages reach every outcome."""
    compiled = filtex.compile_sql(case.sql, case.dialect)
    results = collections.Counter()
    for message in make_dialect_messages(case):
        expected = compiled.evaluate(message)
        assert case.hand(message) is expected, message
        results[expected] += 1
    assert results[True] > 0 and results[False] > 0 and results[None] > 0, results
