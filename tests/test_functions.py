"""The function registry (``filtex/functions/``): one record per function,
read by the checker, the row engine, the plan and Spark.

Three things are checked: the registry and the dialects agree (every name a
dialect lists is a record, the checker types a call as the record says); a
function is one record (a new one, added to the registry and a dialect in a
test, works in every engine at once); and ``filtex:length``, the function
added this way, gives every engine's verdict the independent reference's
(``tests/reference.py``) on values of every type.
"""
from __future__ import annotations

import dataclasses

import pytest
from proton import char, symbol, ubyte, ulong

import filtex
from filtex import compiler, functions
from filtex.dialects import DIALECTS
from filtex.functions.record import Function
from filtex.runtime import ops
from filtex.tree import ast

from engines import ENGINES

from test_differential import reference_result


def test_every_function_a_dialect_names_is_a_record():
    for dialect in DIALECTS.values():
        for name in dialect.functions:
            assert name in functions.REGISTRY, (dialect.name, name)
            assert functions.canonical(name) == name
    assert set(functions.STANDARD) <= set(DIALECTS["amqp"].functions)
    assert DIALECTS["jms"].functions == () and DIALECTS["rabbitmq"].functions == ("UTC",)
    for function in functions.REGISTRY.values():
        assert function.ident.isidentifier()


@pytest.mark.parametrize("name", sorted(functions.REGISTRY))
def test_the_checker_types_a_call_as_its_record_says(name):
    function = functions.REGISTRY[name]
    args = ", ".join(["s", "1", "2"][:function.arity[0]])
    flt = filtex.compile_sql(f"{name}({args}) IS NULL")
    calls = [n for n in ast.walk(flt.tree) if isinstance(n, ast.Call)]
    assert [c.typ for c in calls] == [function.result]
    too_many = ", ".join(["s"] * (function.arity[1] + 1))
    with pytest.raises(filtex.FilterError, match="takes"):
        filtex.compile_sql(f"{name}({too_many}) IS NULL")


def test_a_vendor_name_is_read_case_insensitively_and_an_unknown_one_is_null():
    assert functions.canonical("Filtex:length") == "filtex:LENGTH"
    message = filtex.Message(application_properties={"s": "abc"})
    assert filtex.compile_sql("FILTEX:Length(s) = 3").evaluate(message) is True
    assert filtex.compile_sql("acme:length(s) IS NULL").evaluate(message) is True
    with pytest.raises(filtex.FilterError, match="vendor functions are not supported"):
        filtex.compile_sql("filtex:length(s) = 3", "jms")


def test_the_clock_is_volatile_and_never_folded():
    assert functions.REGISTRY["UTC"].volatile
    flt = filtex.compile_sql("UTC() > 0")
    assert any(isinstance(n, ast.Call) for n in ast.walk(flt.tree))
    folded = filtex.compile_sql("filtex:length('abc') = 3")
    assert not any(isinstance(n, ast.Call) for n in ast.walk(folded.tree))


# --- a function is one record ---------------------------------------------------------------

def _reverse(value):
    if value is None:
        return None
    return ops._string_arg(value, "filtex:reverse")[::-1]


REVERSE = Function("filtex:REVERSE", (1, 1), "string", _reverse,
                   inline=lambda subject, rest: f"{subject}[::-1]")


@pytest.fixture
def reverse_in_amqp(monkeypatch):
    """filtex:reverse, added as its record and one name in the amqp dialect."""
    monkeypatch.setitem(functions.REGISTRY, REVERSE.name, REVERSE)
    record = dataclasses.replace(DIALECTS["amqp"],
                                 functions=(*DIALECTS["amqp"].functions, REVERSE.name))
    monkeypatch.setitem(DIALECTS, "amqp", record)
    compiler.cache_clear()
    yield
    compiler.cache_clear()


VALUES = ["abc", "", "été😀", symbol("abc"), char("x"), 5, ulong(7), ubyte(1), 1.5, True,
          b"\x00", None, ["l"]]


def _messages():
    out = [filtex.Message()]
    out += [filtex.Message(application_properties={"s": v}) for v in VALUES]
    out.append(filtex.Message(properties={"subject": "abc"}))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("engine", sorted(ENGINES))
def test_a_new_function_record_works_in_every_engine(reverse_in_amqp, engine):
    """No engine names the function: the checker, the row engine's fast path and
    runtime call, the batch engine's plan and the index all read the record."""
    runner = ENGINES[engine]()
    texts = ["filtex:reverse(s) = 'cba'", "filtex:reverse(s) LIKE '😀%'",
             "filtex:reverse(p.subject) = 'cba' OR filtex:reverse(s) IS NULL"]
    for text in texts:
        flt = runner.compile_sql(text)
        assert "_fn_filtex_REVERSE" in flt.source and "[::-1]" in flt.source
        messages = [m for m in _messages() if runner.comparable(m)]
        got = runner.evaluate(flt, messages)
        want = [flt.evaluate(runner.reference(m)) for m in messages]
        assert got == want, (engine, text)
    flt = filtex.compile_sql(texts[0])
    verdicts = [flt.evaluate(m) for m in _messages()]
    assert verdicts[:5] == [None, True, False, False, True]   # absent, abc, '', été, symbol


WIDTH = Function("WIDTH", (1, 1), "int", ops.length, inline=lambda subject, rest: f"len({subject})")


def test_a_function_of_another_result_type_is_not_compared_as_text(monkeypatch):
    """``LOWER(s) = 'a'`` is generated as one test of the inline result; a function
    whose result is no string (here a test-only, unprefixed ``WIDTH`` with an
    inline ``len()``) must not be: an integer compared with a string fails in
    amqp, it is not FALSE."""
    monkeypatch.setitem(functions.REGISTRY, WIDTH.name, WIDTH)
    record = dataclasses.replace(DIALECTS["amqp"],
                                 functions=(*DIALECTS["amqp"].functions, WIDTH.name))
    monkeypatch.setitem(DIALECTS, "amqp", record)
    compiler.cache_clear()
    try:
        message = filtex.Message(application_properties={"s": "abc"})
        for text in ("WIDTH(s) = 'abc'", "filtex:length(s) = 'abc'"):
            flt = filtex.compile_sql(text)
            outcome = flt.outcome(message)
            assert outcome.result is None and "cannot compare" in outcome.reason, text
        assert filtex.compile_sql("WIDTH(s) = 3").evaluate(message) is True
    finally:
        compiler.cache_clear()


# --- filtex:length, everywhere ---------------------------------------------------------------

LENGTH_FILTERS = ["filtex:length(s) = 3", "filtex:length(s) > 0", "filtex:length(s) IS NULL",
                  "filtex:length(s) BETWEEN 1 AND 4", "filtex:length(s) IN (0, 1, 5)",
                  "NOT filtex:length(s) < 2", "filtex:length(s) + 1 = filtex:length(p.subject)",
                  "filtex:length(LOWER(s)) = 3", "filtex:length(s) = 3 OR TRUE"]


@pytest.mark.parametrize("engine", sorted(ENGINES))
@pytest.mark.parametrize("text", LENGTH_FILTERS)
def test_length_agrees_with_the_reference_in_every_engine(engine, text):
    runner = ENGINES[engine]()
    flt = runner.compile_sql(text)
    messages = [m for m in _messages() if runner.comparable(m)]
    got = runner.evaluate(flt, messages)
    assert got == [flt.evaluate(runner.reference(m)) for m in messages], text
    # and the row engine's verdicts are the independent reference's
    assert [flt.evaluate(m) for m in messages] == \
        [reference_result(text, m)[0] for m in messages], text


def test_length_counts_code_points_and_fails_on_other_types():
    flt = filtex.compile_sql("filtex:length(s) = 1")
    assert flt.evaluate(filtex.Message(application_properties={"s": "😀"})) is True
    outcome = flt.outcome(filtex.Message(application_properties={"s": 12}))
    assert outcome.result is None and "filtex:length needs a string" in outcome.reason
