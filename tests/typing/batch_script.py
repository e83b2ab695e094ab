# pyright: strict, reportMissingTypeStubs=false, reportUnknownMemberType=false, reportUnknownVariableType=false, reportUnknownArgumentType=false
"""A user's script over the public entry points of ``filtex.arrow`` and
``filtex.spark``. pyarrow ships no type information (pyspark does), so the
checkers run it with pyarrow's types unknown (tests/test_typing.py: mypy
ignores the missing stubs, pyright's reports of unknown types are off for
this file only): what is pinned here is filtex's own part of each type.
Type-checked only; tests/test_arrow_*.py and tests/test_spark*.py run these
calls."""
from __future__ import annotations

from typing import assert_type

import pyarrow as pa
from pyspark.sql import DataFrame

import filtex
import filtex.arrow
import filtex.spark


def arrow_usage(flt: filtex.Filter) -> None:
    table = filtex.arrow.message_table(
        [{"application-properties": {"color": "blue"}, "header": {"priority": 7}}])
    result = filtex.arrow.evaluate(flt, table, threads=2)
    assert_type(result, filtex.arrow.BatchResult)
    assert_type(result.fallback_rows, int)
    assert_type(result.reason, str | None)
    assert_type(result.kernel, bool)
    verdicts: pa.BooleanArray = filtex.arrow.evaluate_batch(flt, table, "connection-1")
    kept: pa.Table = filtex.arrow.filter_table(flt, table, nulls="null")
    flat = pa.table({"color": ["blue", "red"]})
    by_mapping: pa.BooleanArray = flt.evaluate_batch(flat, mapping={"color": "color"})
    rows: pa.Table = flt.filter_table(flat, mapping={"p": ("header", "priority")}, threads=1)
    for row in filtex.arrow.messages(table):
        assert_type(flt.evaluate(row), bool | None)
    print(verdicts, kept, by_mapping, rows)


def spark_usage(flt: filtex.Filter, df: DataFrame) -> None:
    print(filtex.spark.column(flt, df), filtex.spark.matches("a = 1", df, dialect="jms"))
    print(filtex.spark.where(df, flt, method="native"))
    assert_type(filtex.spark.explain(flt, df), str)
