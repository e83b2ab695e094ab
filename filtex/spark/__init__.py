"""filtex filters on Spark DataFrames (``pip install filtex[spark]``).

``column(filter, df)`` is a three-valued boolean ``Column`` (null = unknown)
to compose with other Columns; ``where(df, filter)`` keeps the rows whose
verdict is true, on batch and streaming DataFrames; ``explain(filter, df)``
says which parts run natively and which through the fallback, and why. A
filter is a ``filtex.Filter`` (SQL in any dialect, described, group or set),
SQL text, or a described filter (with ``dialect``).

A DataFrame is a message table in Spark's types (``to_spark`` of a
``filtex.arrow`` table, Parquet written from one, ``from_amqp(df, column)`` of
a binary column of AMQP-encoded messages, ``connectors``' Kafka and Event Hubs
layouts) or a flat DataFrame whose columns are application properties (or any
field, by ``mapping``, as in ``filtex.arrow``).

Two paths give the same verdicts:

- native Spark expressions (``native.py``) wherever they are exact: the
  batch engine's plan of the filter, each predicate's answer per AMQP type
  learned from the per-message engine, written as Columns over the type tags
  and typed children; Catalyst optimises them and pushes the conditions a TRUE
  verdict implies into Parquet scans;
- an Arrow UDF running filtex's columnar engine (``udf.py``) for the rest:
  filters with no kernel form (two-field comparisons, arithmetic, division,
  ``JMSType``), values with no native form (decimals, uuids, lists, maps,
  functions of strings) and rows with residual entries.

``column`` composes the two in one Column. Spark evaluates a Python UDF for
every row that reaches it, so ``where`` splits instead: the rows only native
expressions need are filtered natively (with the implied conditions), and
only the rows that need the UDF reach it, in a second scan of the input
(``UNION ALL``); the input is read twice then, so it must be deterministic
(files and tables are).
"""
from __future__ import annotations

from typing import Any, Mapping, NamedTuple

from ..compiler import compile_filter, compile_sql
from ..filter import Filter

from ..spark_io.binary import from_amqp
from ..spark_io.connectors import from_event_hubs, from_kafka
from ..spark_io.layout import from_spark, spark_type, to_spark
from ..spark_io.workers import use_this_python

METHODS = ("auto", "native", "udf")


def _filter(flt: Any, dialect: str) -> Any:
    if isinstance(flt, str):
        return compile_sql(flt, dialect)
    if isinstance(flt, Filter):
        return flt
    return compile_filter(flt, dialect)


class _Prepared(NamedTuple):
    flt: Any
    translation: Any          # native.Translation, or None (no native form)
    udf: Any                  # a callable flag -> Column (the Arrow UDF)
    reasons: list[str]


def _prepare(flt: Any, df: Any, dialect: str, mapping: Mapping | None, nulls: str,
             rc: Any, method: str) -> _Prepared:
    from ..plan.prepared import prepared
    from . import fields, native, udf
    if method not in METHODS:
        raise ValueError(f"method is one of {', '.join(METHODS)}, not {method!r}")
    if nulls not in ("absent", "null"):
        raise ValueError(f"nulls is 'absent' or 'null', not {nulls!r}")
    flt = _filter(flt, dialect)
    use_this_python(df.sparkSession)
    schema, names = df.schema, list(df.columns)
    message_table = fields.is_message_table(names) and mapping is None
    ready = prepared(flt)
    if message_table:
        fields.ensure_case_sensitive(df.sparkSession, schema, list(ready.plan.fields))

        def field_of(ref: tuple) -> Any:
            return fields.message_field(schema, ref)
    else:
        targets = fields.flat_targets(names, mapping)

        def field_of(ref: tuple) -> Any:
            return fields.flat_field(schema, ref, targets, nulls)

    def udf_of(flag: Any = None) -> Any:
        return udf.udf_column(flt, names, message_table=message_table, mapping=mapping,
                              nulls=nulls, rc=rc, flag=flag, schema=schema)

    translation, reasons = None, []
    if method != "udf":
        translation = native.translate(ready, field_of, rc)
        if translation is None:
            reasons.append(ready.plan.reason or "arithmetic over several fields")
        else:
            reasons.extend(translation.notes)
    if method == "native" and (translation is None or translation.back is not None):
        raise ValueError("the filter is not native on this DataFrame: "
                         + "; ".join(reasons or ["some rows need the Arrow UDF "
                                                 "(residual entries or values of other types)"]))
    return _Prepared(flt, translation, udf_of, reasons)


def column(flt: Any, df: Any, *, dialect: str = "amqp", mapping: Mapping | None = None,
           nulls: str = "absent", receiving_connection: Any = None,
           method: str = "auto") -> Any:
    """The filter's verdict per row of ``df``: a boolean Column, null = unknown.

    ``method``: ``auto`` (native expressions, the Arrow UDF for what they cannot
    answer), ``native`` (raise ``ValueError`` unless every row is native),
    ``udf`` (the Arrow UDF for every row)."""
    ready = _prepare(flt, df, dialect, mapping, nulls, receiving_connection, method)
    from pyspark.sql import functions as F
    t = ready.translation
    if t is None:
        return ready.udf()
    if t.back is None:
        return F.expr(t.verdict)
    back = F.expr(t.back)
    return F.when(back, ready.udf(back)).otherwise(F.expr(t.verdict))


def matches(flt: Any, df: Any, *, dialect: str = "amqp", mapping: Mapping | None = None,
            nulls: str = "absent", receiving_connection: Any = None,
            method: str = "auto") -> Any:
    """True where the filter's verdict is true, false otherwise (never null): the
    rows ``where`` keeps, as a Column to combine with other conditions. Natively
    this is the skeleton's TRUE set, simpler than the three-valued ``column``."""
    from pyspark.sql import functions as F
    ready = _prepare(flt, df, dialect, mapping, nulls, receiving_connection, method)
    t = ready.translation
    if t is None:
        return F.coalesce(ready.udf(), F.lit(False))
    matched = F.coalesce(F.expr(t.matched), F.lit(False))
    if t.back is None:
        return matched
    back = F.expr(t.back)
    return F.when(back, F.coalesce(ready.udf(back), F.lit(False))).otherwise(matched)


def where(df: Any, flt: Any, *, dialect: str = "amqp", mapping: Mapping | None = None,
          nulls: str = "absent", receiving_connection: Any = None,
          method: str = "auto") -> Any:
    """The rows of ``df`` the filter matches (true; false and unknown are dropped).

    With native expressions, conditions every matching row satisfies
    (``field IN (...)``, ranges, prefixes) are added, so Spark pushes them into
    Parquet scans (``PushedFilters`` in the plan)."""
    from pyspark.sql import functions as F
    ready = _prepare(flt, df, dialect, mapping, nulls, receiving_connection, method)
    t = ready.translation
    if t is None:
        return df.where(F.coalesce(ready.udf(), F.lit(False)))
    # where() drops null (unknown) rows as false ones; the implied conditions are
    # plain conjuncts, so Spark can push them into the scan
    condition = " AND ".join([t.matched] + t.implied)
    if t.back is None:
        return df.where(F.expr(condition))
    native_rows = df.where(F.expr(f"NOT ({t.back}) AND {condition}"))
    udf_rows = df.where(F.expr(t.back)).where(F.coalesce(ready.udf(), F.lit(False)))
    return native_rows.unionByName(udf_rows)


def explain(flt: Any, df: Any, *, dialect: str = "amqp", mapping: Mapping | None = None,
            nulls: str = "absent", receiving_connection: Any = None) -> str:
    """How ``flt`` runs on ``df``: native expressions, the Arrow UDF and why,
    and the conditions ``where`` adds for pushdown."""
    from . import udf
    ready = _prepare(flt, df, dialect, mapping, nulls, receiving_connection, "auto")
    t = ready.translation
    from .fields import is_message_table
    read = udf.inputs(ready.flt, list(df.columns),
                      is_message_table(list(df.columns)) and mapping is None, mapping)
    if t is None:
        return ("Arrow UDF for every row (filtex's columnar engine over "
                f"{', '.join(read)}): {'; '.join(ready.reasons)}")
    lines = ["native Spark expressions: " + str(t.verdict)]
    if t.back is None:
        lines.append("Arrow UDF: never (every row is answered natively)")
    else:
        lines.append(f"Arrow UDF (over {', '.join(read)}) for the rows where: {t.back}")
        lines.extend("  " + reason for reason in ready.reasons)
        lines.append("where(): native rows and UDF rows are filtered apart (UNION ALL)")
    lines.append("implied conditions (pushed down by where()): "
                 + ("; ".join(str(c) for c in t.implied) if t.implied else "none"))
    return "\n".join(lines)


__all__ = ["column", "explain", "from_amqp", "from_event_hubs", "from_kafka", "from_spark",
           "matches", "spark_type", "to_spark", "where"]
