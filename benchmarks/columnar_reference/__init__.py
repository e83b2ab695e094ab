"""The benchmark filters written by hand for Polars, DuckDB and pyarrow.compute,
each computing the exact three-valued result of filtex's amqp dialect over a
message table (``docs/message-table.md``), so ``benchmarks/columnar.py`` times
equal work.

    python -m benchmarks.columnar_reference --check        # row by row against filtex
    python -m benchmarks.columnar_reference --show-sql rabbitmq-complex

Exact means what filtex's per-message engine over the row views answers
(``filtex.table.rows.evaluate_rows``), row by row: true, false or null (unknown).

- Every value is read through its type tag ``t``, never a child's validity:
  tag 0 (absent) and 1 (null) are NULL, and only the child the tag names holds
  the value.
- **The amqp failure rule.** A value of a type an operation refuses (a string
  compared with a number, a long compared with a string, a string under NOT,
  a double under ``%``) is an evaluation failure, and a failure anywhere makes
  the *whole* filter unknown for that row, even where AND or OR would have
  decided it. Each predicate below yields (value, fail); the filter's result
  is ``CASE WHEN any fail THEN NULL ELSE value END``.
- NaN: any comparison with NaN is NULL (also against a string constant, which
  is then *not* a failure); LIKE and functions of a NaN fail.
- Header fields read their AMQP defaults when absent (priority 4, durable
  false); properties fields are typed, absent is NULL; timestamps compare
  with integers as milliseconds.
- Arithmetic: integers widen freely (int128 here), and a result outside
  [-2^63, 2^64-1] is NaN; a double that overflows to infinity from finite
  operands is NaN; NULL on either side is NULL before any type check.

The semantics are written once (``Semantics``) over a small set of engine
primitives; each engine (``PolarsEngine``, ``DuckDBEngine``,
``ArrowEngine``, and ``SparkEngine`` for ``benchmarks/spark.py``) implements
the primitives natively: Polars expressions, DuckDB SQL text, eager
pyarrow.compute calls (string predicates on the dictionary, then ``take``),
Spark SQL text. Each filter is a short recipe over ``Semantics``.
What an engine cannot compute exactly raises ``NotExact`` with the reason;
``--check`` reports those, and the per-engine notes (``LOWER``, integer
overflow) are in ``NOTES``.
"""
from __future__ import annotations

from .run import Runner, check, counts, disagreements, main, per_message
from .semantics import (ALL_ENGINES, ENGINES, EXCLUDED, FILTERS, NOTES, ORDER, SPARK_ENGINES,
                        SPARK_NOTES, NotExact)

__all__ = ["ALL_ENGINES", "ENGINES", "EXCLUDED", "FILTERS", "NOTES", "ORDER", "NotExact",
           "Runner", "SPARK_ENGINES", "SPARK_NOTES", "check", "counts", "disagreements",
           "main", "per_message"]
