"""Every conformance case, shared and own, as one parametrized test each.

All three dialects are implemented, so every case must pass: there is no
expected-failure rule and no deviation list (no case needed one).
"""
from __future__ import annotations

import pytest

import filtex

from conformance_cases import load_cases

EXPECTED = {"true": True, "false": False, "unknown": None}


def compile_case(case: dict) -> filtex.Filter:
    spec, dialect = case["filter"], case["dialect"]
    if "sql" in spec:
        return filtex.compile_sql(spec["sql"], dialect)
    if "set" in spec:
        return filtex.compile_filter_set(spec["set"], dialect)
    return filtex.compile_filter(spec, dialect)


@pytest.mark.parametrize("case", [pytest.param(case, id=name) for name, case in load_cases()])
def test_case(case: dict) -> None:
    if case["expect"] == "invalid":
        with pytest.raises(filtex.FilterError) as raised:
            compile_case(case)
        error = raised.value
        assert error.condition in ("amqp:invalid-field", "amqp:not-implemented",
                                   "amqp:resource-limit-exceeded")
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
    if case["dialect"] != "amqp":   # no failures outside amqp: unknown is plain NULL
        assert outcome.reason is None or outcome.reason.startswith("no value"), outcome.reason
    if expected is None:   # an unknown result always says why
        assert outcome.reason
        explanation = flt.explain(message, receiver)
        assert explanation.value is None and explanation.verdict in ("unknown", "failed",
                                                                     "not evaluated")
    else:
        explanation = flt.explain(message, receiver)
        assert explanation.evaluated and explanation.value is expected, explanation


@pytest.mark.slow
def test_every_case_in_compact_code(monkeypatch):
    """Past a budget of source the generator writes runtime calls instead of inline
    fast paths (huge filters): with the budget at zero, every case still passes."""
    from filtex.row import generator
    monkeypatch.setattr(generator, "INLINE_BUDGET", -1)
    filtex.cache_clear()
    failures = []
    cases = load_cases()
    for name, case in cases:
        try:
            flt = compile_case(case)
        except filtex.FilterError:
            if case["expect"] != "invalid":
                failures.append(name)
            continue
        if case["expect"] == "invalid":
            failures.append(name)
            continue
        if flt.kind == "sql":   # no inline typed branches: one runtime call an operation
            # (the error path's test of the message's own class is no operation's)
            assert not any(line.strip().startswith("if type(_")
                           for line in flt.source.splitlines()), flt.source
        message = filtex.message_from_json(case["message"])
        receiver = case["message"].get("receiving-connection")
        if flt.evaluate(message, receiving_connection=receiver) is not EXPECTED[case["expect"]]:
            failures.append(name)
    filtex.cache_clear()
    assert not failures, failures[:20]
    assert len(cases) > 2900


def encoded_form(case: dict):
    """The case's message as AMQP bytes (filtex's encoder over proton's), read in place."""
    from filtex.amqp.encode import encode_message
    from filtex.amqp.encoded import EncodedMessage
    message = filtex.message_from_json(case["message"])
    return EncodedMessage(encode_message(message), connection=message.connection)


@pytest.mark.parametrize("case", [pytest.param(case, id=name) for name, case in load_cases()
                                  if case["expect"] != "invalid"])
def test_case_on_its_encoded_form(case: dict) -> None:
    """The same verdict on the AMQP-encoded message as on the Message, in every dialect,
    and the same reason when evaluation fails."""
    flt = compile_case(case)
    receiver = case["message"].get("receiving-connection")
    on_message = flt.outcome(filtex.message_from_json(case["message"]), receiver)
    encoded = encoded_form(case)
    outcome = flt.outcome(encoded, receiver)
    assert outcome.result is EXPECTED[case["expect"]], outcome.reason
    assert outcome == on_message
    assert flt.evaluate(encoded.buffer, receiver) is EXPECTED[case["expect"]] or \
        case["message"].get("connection") is not None   # raw bytes carry no connection
