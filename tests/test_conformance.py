"""Every conformance case, shared and own, as one parametrized test each.

Cases that need capabilities of later issues are expected to fail by a rule
on their dialect or filter kind (``pending``), never one by one; the rule
raises ``NotImplementedError`` so an expected failure can only be that, and the
marks are strict, so a case that starts passing makes the rule fail loudly.
"""
from __future__ import annotations

import pytest

import filtex
from filtex.sql.dialects import DIALECTS

from conformance_cases import load_cases

EXPECTED = {"true": True, "false": False, "unknown": None}


def pending(case: dict) -> str | None:
    """Why a case cannot pass yet, by rule."""
    if case["dialect"] not in DIALECTS:
        return f"the {case['dialect']} dialect: issue 4"
    return None


def _params():
    for name, case in load_cases():
        reason = pending(case)
        marks = [pytest.mark.xfail(raises=NotImplementedError, strict=True,
                                   reason=reason)] if reason else []
        yield pytest.param(case, id=name, marks=marks)


def compile_case(case: dict) -> filtex.Filter:
    reason = pending(case)
    if reason:
        raise NotImplementedError(reason)
    spec, dialect = case["filter"], case["dialect"]
    if "sql" in spec:
        return filtex.compile_sql(spec["sql"], dialect)
    if "set" in spec:
        return filtex.compile_filter_set(spec["set"], dialect)
    return filtex.compile_filter(spec, dialect)


@pytest.mark.parametrize("case", list(_params()))
def test_case(case: dict) -> None:
    if case["expect"] == "invalid":
        with pytest.raises(filtex.FilterError) as raised:
            compile_case(case)
        error = raised.value
        assert error.condition in ("amqp:invalid-field", "amqp:not-implemented")
        assert error.line >= 1 and error.column >= 1
        assert f"line {error.line}, column {error.column}" in str(error)
        return
    flt = compile_case(case)
    message = filtex.message_from_json(case["message"])
    receiver = case["message"].get("receiving-connection")
    expected = EXPECTED[case["expect"]]
    outcome = flt.outcome(message, receiver)
    assert outcome.result is expected, outcome.reason
    assert flt.evaluate(message, receiving_connection=receiver) is expected
    assert flt.matches(message, receiving_connection=receiver) is (expected is True)
    assert outcome.reason is None or not outcome.reason.startswith("malformed message"), \
        outcome.reason
