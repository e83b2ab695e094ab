"""Lines a type checker must refuse: each one marked ``# expect-error`` must be
reported by both mypy and pyright, and no other line (tests/test_typing.py),
so the typing test cannot pass by checking nothing."""
from __future__ import annotations

import io

import filtex

f = filtex.compile_sql("a = 1")
message = filtex.Message(application_properties={"a": 1})

filtex.compile_sql("a = 1", dialect="sql92")  # expect-error: no such dialect
filtex.compile_sql(123)  # expect-error: text is a str
filtex.compile_sql("a = 1", limits="x")  # expect-error: limits are Limits
filtex.compile_sql("a = @p", parameters=[("p", 1)])  # expect-error: a mapping
filtex.compile_filter(("amqp:sql-filter", "a = 1"), "mysql")  # expect-error: no such dialect
filtex.quote_identifier("k", dialect="sql92")  # expect-error: no such dialect
filtex.Subscriptions(["a = 1"])  # expect-error: pairs, not strings
filtex.Subscriptions({"s": "a = 1"}, dialect="ansi")  # expect-error: no such dialect
filtex.Message(header=5)  # expect-error: a mapping
filtex.Limits(max_length="x")  # expect-error: an int
filtex.Body("text", ())  # expect-error: no such body kind
filtex.read_messages(io.BytesIO(b""), "xml")  # expect-error: no such format
f.evaluate("a = 1")  # expect-error: no message form
matched: bool = f.evaluate(message)  # expect-error: bool | None
reason: int = f.outcome(message).reason  # expect-error: str | None
explained: str = f.explain(message)  # expect-error: an Explanation
names: list[int] = filtex.Subscriptions().match(message)  # expect-error: names are str
verdicts: dict[str, bool] = filtex.Subscriptions().evaluate_all(message)  # expect-error: None
first: filtex.Message = next(filtex.read_messages("m.amqp", "amqp"))  # expect-error: encoded
