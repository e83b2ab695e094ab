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


class BatchEngine(RowEngine):
    """The columnar engine: each message becomes a one-row message table
    (``filtex.arrow``), evaluated by the filter's kernel (the per-message engine
    for rows the kernel hands back); encoded bytes become a one-cell binary
    column, decoded by the numba decoder (``evaluate_encoded``). A message the table cannot hold (a value of
    no exact AMQP class, bytes that do not decode) is refused by the builder with
    a ValueError or TypeError naming it; here that message is unknown, as it would never reach
    a table. The refusals are kept in ``refused`` so a test can look at them."""

    name = "batch"

    def __init__(self) -> None:
        import filtex.arrow  # noqa: F401  (needs pyarrow and numba)
        self.refused: list[str] = []

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        import pyarrow as pa

        import filtex.arrow as fa
        results = []
        for message in messages:
            if type(message) is bytes:   # raw messages: a binary column, decoded by numba
                column = pa.array([message], pa.binary())
                results.extend(fa.evaluate_encoded(flt, column).verdicts.to_pylist())
                continue
            try:
                table = fa.message_table([message])
            except (TypeError, ValueError) as problem:
                assert str(problem), "a refusal names its problem"
                self.refused.append(str(problem))
                results.append(None)
                continue
            results.extend(flt.evaluate_batch(table).to_pylist())
        return results


try:
    import numba  # noqa: F401
    import pyarrow  # noqa: F401
    ENGINES["batch"] = BatchEngine
except ImportError:   # the columnar extra is not installed: the row engine alone
    pass
