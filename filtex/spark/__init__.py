"""filtex filters on Spark DataFrames (``pip install filtex[spark]``).

``column(filter, df)`` is a three-valued boolean ``Column`` (null = unknown);
``where(df, filter)`` keeps the rows whose verdict is true. A filter is a
``filtex.Filter`` (SQL in any dialect, described, group or set) or SQL text.

A DataFrame is either a message table in Spark's types (``layout.to_spark``
of a ``filtex.arrow`` table, or such a table written to Parquet) or a flat
DataFrame whose columns are application properties (or any field, by
``mapping``, as in ``filtex.arrow``).

This first part evaluates every filter through an Arrow UDF that runs
filtex's columnar engine (its numba kernels, and the per-message engine for
the rows they hand back) on the columns the filter reads: the same verdict
as every other engine, by construction, at about a fifth of Spark's native
speed (research, section 3.1). Native Column translation is the next part;
``explain`` says which path a filter takes.
"""
from __future__ import annotations

from typing import Any, Mapping

import filtex

from .layout import from_spark, spark_type, to_spark

_MESSAGE_COLUMNS = frozenset({"header", "properties", "amqp_value", "amqp_sequence"})


def _filter(flt: Any, dialect: str) -> Any:
    if isinstance(flt, str):
        return filtex.compile_sql(flt, dialect)
    if isinstance(flt, filtex.Filter):
        return flt
    return filtex.compile_filter(flt, dialect)


def _is_message_table(names: list[str]) -> bool:
    return _MESSAGE_COLUMNS <= set(names)


def _inputs(flt: Any, names: list[str], mapping: Mapping | None) -> list[str]:
    """The DataFrame columns the filter reads."""
    from ..arrow.engine import prepared
    read = prepared(flt).columns
    if _is_message_table(names):
        if read is None:
            return list(names)
        return [n for n in names if n in read] or ["header"]   # the rows, at least
    if mapping is not None:
        return [n for n in names if n in mapping]
    if read is None:
        return list(names)
    keys = read.get("application_properties") or set()
    wanted = [n for n in names if n in keys]
    return wanted or names[:1]   # a filter that reads no column still needs the rows


def column(flt: Any, df: Any, *, dialect: str = "amqp", mapping: Mapping | None = None,
           nulls: str = "absent", receiving_connection: Any = None) -> Any:
    """The filter's verdict per row of ``df``, as a boolean Column (null = unknown)."""
    import pyarrow as pa
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    flt = _filter(flt, dialect)
    names = list(df.columns)
    inputs = _inputs(flt, names, mapping)
    message_table = _is_message_table(names)
    options = {} if message_table else {"mapping": mapping or {n: n for n in inputs},
                                        "nulls": nulls}
    rc = receiving_connection

    def verdicts(*arrays):   # no annotations: the eval type is given below
        from filtex.arrow import evaluate
        if message_table:
            batch = from_spark(arrays, inputs)
        else:
            batch = pa.RecordBatch.from_arrays(list(arrays), names=inputs)
        return evaluate(flt, batch, rc, **options).verdicts

    import warnings
    with warnings.catch_warnings():   # "type hints preferred": none can describe *arrays
        warnings.simplefilter("ignore", UserWarning)
        udf = F.arrow_udf(verdicts, BooleanType(), F.ArrowUDFType.SCALAR)
    return udf(*[F.col(f"`{name}`") for name in inputs])


def where(df: Any, flt: Any, **options: Any) -> Any:
    """The rows of ``df`` the filter matches (true; false and unknown are dropped)."""
    from pyspark.sql import functions as F
    return df.where(F.coalesce(column(flt, df, **options), F.lit(False)))


def explain(flt: Any, df: Any, *, dialect: str = "amqp", mapping: Mapping | None = None) -> str:
    """How ``flt`` runs on ``df``: which columns it reads and through which path."""
    from ..arrow.engine import prepared
    flt = _filter(flt, dialect)
    inputs = _inputs(flt, list(df.columns), mapping)
    plan = prepared(flt).plan
    engine = ("numba kernels" if plan.shape is not None
              else f"the per-message engine ({plan.reason})")
    return (f"Arrow UDF over {', '.join(inputs)}: filtex's columnar engine, {engine}; "
            "native Spark translation: not built yet (every filter takes the UDF)")


__all__ = ["column", "explain", "from_spark", "spark_type", "to_spark", "where"]
