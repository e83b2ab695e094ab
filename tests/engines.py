"""The engines every hardening test runs on.

Each engine compiles a filter (SQL text or a described filter) and evaluates a
batch of messages, returning one result (True, False or None) per message. A
new engine (columnar batches, Spark) is added here, and every guarantee test
that takes the ``engine`` fixture runs on it too, instead of getting a copy.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import filtex


class RowEngine:
    """The per-message engine: one generated Python function per filter."""

    name = "row"

    def compile_sql(self, text: str, dialect: str = "amqp", **options: Any) -> filtex.Filter:
        return filtex.compile_sql(text, dialect, **options)

    def compile_filter(self, spec: Any, dialect: str = "amqp", **options: Any) -> filtex.Filter:
        return filtex.compile_filter(spec, dialect, **options)

    def compile_filter_set(self, spec: Any, dialect: str = "amqp",
                           **options: Any) -> filtex.Filter:
        return filtex.compile_filter_set(spec, dialect, **options)

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        return [flt.evaluate(message) for message in messages]

    def outcomes(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        return [flt.outcome(message) for message in messages]


ENGINES: dict[str, Callable[[], Any]] = {"row": RowEngine}
