"""A user's script over every name of ``filtex.__all__``: it must type-check
under ``mypy --strict`` and pyright's strict mode with no error, and each
``assert_type`` pins a public type (an ``Any`` would fail it). Checked by
tests/test_typing.py, which also runs it."""
from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any, Literal, assert_type

from proton import symbol

import filtex
from filtex import (DEFAULT_LIMITS, Body, Dialect, EvaluationFailure, Explanation, Filter,
                    FilterError, Limits, Message, MessageForm, NotAMessage, Outcome,
                    Subscriptions)
from filtex.amqp.encoded import EncodedMessage

version: str = filtex.__version__

dialect: Dialect = "jms"
limits = Limits(max_length=1024)
assert_type(DEFAULT_LIMITS.replace(max_tokens=500), Limits)

f = filtex.compile_sql("color = 'blue' AND h.priority > 4", dialect="amqp", limits=limits)
assert_type(f, Filter)
jms = filtex.compile_sql("JMSPriority > @p", dialect, parameters={"p": 4})
assert_type(jms.dialect, Dialect)
assert_type(f.source, str)

message = Message(header={"priority": 7}, application_properties={"color": "blue"},
                  body=Body.value(5))
assert_type(f.evaluate(message), bool | None)
assert_type(f.matches(message), bool)
assert_type(f.evaluate(b"\x00Sp\xc0\x01\x00", receiving_connection="c"), bool | None)
outcome = f.outcome(message)
assert_type(outcome, Outcome)
assert_type(outcome.result, bool | None)
assert_type(outcome.reason, str | None)
explanation = f.explain(message)
assert_type(explanation, Explanation)
assert_type(explanation.verdict, str)
assert_type(explanation.children, tuple[Explanation, ...])
assert_type(f.options, dict[str, Any])

described = filtex.compile_filter(("amqp:application-properties-filter", {"color": "blue"}))
assert_type(described, Filter)
filter_set = filtex.compile_filter_set({"f": ("amqp:sql-filter", "a = 1")}, "rabbitmq")
assert_type(filter_set, Filter)
assert_type(filtex.capabilities(), tuple[symbol, ...])

name = filtex.quote_identifier("my key", "amqp")
text = name + " = " + filtex.quote_string("O'Brien")
assert_type(text, str)

viewed = filtex.view(b"\x00Sp\xc0\x01\x00", connection="c")
assert_type(viewed, EncodedMessage)
assert_type(filtex.view(message), Message)
form: MessageForm = viewed

subscriptions = Subscriptions({"blue": "color = 'blue'"}, dialect="amqp", limits=None)
subscriptions.add("urgent", "JMSPriority > 8", "jms")
assert_type(subscriptions.match(message), list[str])
verdicts = subscriptions.evaluate_all(form)
assert_type(verdicts, dict[str, Literal[True] | None])
subscriptions.remove("urgent")
assert_type(subscriptions["blue"], Filter)
assert_type(list(subscriptions), list[str])

from_json = filtex.message_from_json({"application-properties": {"color": "blue"}})
assert_type(from_json, Message)
value = filtex.value_from_json({"@type": "ubyte", "value": 5})

lines = filtex.read_messages(io.BytesIO(b'{"application-properties": {"a": 1}}\n'), "jsonl")
assert_type(lines, Iterator[Message])
frames = filtex.read_messages(io.BytesIO(b""), "amqp")
assert_type(frames, Iterator[EncodedMessage])
either = filtex.read_messages(io.BytesIO(b""))
assert_type(either, Iterator[Message | EncodedMessage])
for read in lines:
    assert_type(f.evaluate(read), bool | None)

entries, size = filtex.cache_info()
assert_type(entries, int)
filtex.cache_clear()

try:
    filtex.compile_sql("a = ")
except FilterError as error:
    assert_type(error.problem, str)
    assert_type(error.line, int)
    assert_type(error.condition, str)
try:
    f.evaluate({"not": "a message"})  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]
except NotAMessage as wrong:
    assert isinstance(wrong, TypeError)
failure = EvaluationFailure("cannot compare")
assert_type(failure.reason, str)
