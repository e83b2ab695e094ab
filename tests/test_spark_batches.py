"""The Arrow UDF under Spark's own batching, with many UDF columns in one job.

Spark cuts a partition into Arrow batches of
``spark.sql.execution.arrow.maxRecordsPerBatch`` rows and hands every UDF of a
select each batch in turn, in Python workers that compile and load kernels
concurrently. Issue 22 saw wrong verdicts only in such composite jobs (an
arithmetic predicate among many UDF columns). Here every filter of a set runs
as a UDF column of one select, with small odd batch sizes, over a message
table, a Kafka layout and a flat DataFrame, beside ``column`` (native where it
can be) and ``where``; all must equal the per-message engine row by row.
"""
from __future__ import annotations

import math
from functools import reduce

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from proton import ubyte, ulong  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402

from test_spark_connectors import (KAFKA_DECODERS, KAFKA_FILTERS, KAFKA_KEYS,  # noqa: E402
                                   KAFKA_SCHEMA, _expected, _kafka_records)

pytestmark = pytest.mark.spark

BATCH_SIZES = (13, 61)


@pytest.fixture(params=BATCH_SIZES, ids=lambda n: f"batch{n}")
def small_batches(request, spark):
    key = "spark.sql.execution.arrow.maxRecordsPerBatch"
    before = spark.conf.get(key, None)
    spark.conf.set(key, str(request.param))
    yield spark
    if before is None:
        spark.conf.unset(key)
    else:
        spark.conf.set(key, before)


VALUES = [0, 1, 2, 3, -1, 5, 2**31, 2**53, 2.0**53, -2**53, 2.5, -0.0, math.nan, math.inf,
          "EU", "US", "", True, False, None, ubyte(7), ulong(2**64 - 1)]
TEXTS = [
    "v % 2 = 0", "v * 2 > 3", "v + w > 3", "v - w = 0", "v = w", "v > 2.5", "v IN (1, 2, 3)",
    "v = 'EU'", "v LIKE 'E%'", "v IS NULL", "NOT v", "v / 2 > 1", "w % 3 = 1 OR v = 'US'",
    "(v > 1 AND w < 3) OR NOT (v = 'EU')", "h.priority > 4 AND v % 2 = 1",
    "p.subject LIKE 'o%' AND w * 2 >= 4",
]


def _messages():
    out = []
    for i in range(len(VALUES) * 9):
        v, w = VALUES[i % len(VALUES)], VALUES[(i * 7 + 3) % len(VALUES)]
        props = {"i": i}
        if (i // 3) % 5:
            props["v"] = v
        if (i // 2) % 4:
            props["w"] = w
        header = {"priority": ubyte(i % 10)} if i % 3 else {}
        properties = {"subject": "order" if i % 4 else "x"} if i % 5 else {}
        out.append(filtex.Message(header=header, properties=properties,
                                  application_properties=props))
    return out


def _all_ways(df, filters, order):
    """Per filter: the UDF column, ``column`` and the rows ``where`` keeps, each
    kind of column in one select (so one job holds every UDF column)."""
    udf = [fs.column(f, df, method="udf").alias(f"u{n}") for n, f in enumerate(filters)]
    auto = [fs.column(f, df).alias(f"c{n}") for n, f in enumerate(filters)]
    rows = {}
    for columns in (udf, auto):
        for row in df.select(order, *columns).collect():
            rows.setdefault(row[order], {}).update(row.asDict())
    return [rows[key] for key in sorted(rows)]


def _assert_verdicts(rows, filters, expected):
    """Each filter's UDF column (``u``) and ``column`` (``c``) equal ``expected(filter)``."""
    bad = []
    for n, flt in enumerate(filters):
        want = expected(flt)
        for kind in ("u", "c"):
            got = [r[f"{kind}{n}"] for r in rows]
            if got != want:
                bad.append((flt.text, kind, [(i, g, w) for i, (g, w) in
                                             enumerate(zip(got, want)) if g != w][:3]))
    assert not bad, bad[:5]


def test_many_udf_columns_over_small_batches_of_a_message_table(small_batches):
    spark = small_batches
    from pyspark.sql import functions as F
    messages = _messages()
    df = spark.createDataFrame(fs.to_spark(fa.message_table(messages))).repartition(3)
    df = df.withColumn("row", F.col("application_properties.i.i"))
    filters = [filtex.compile_sql(t, d) for d in ("amqp", "jms") for t in TEXTS
               if _compiles(t, d)]
    rows = _all_ways(df, filters, "row")
    _assert_verdicts(rows, filters, lambda flt: [flt.evaluate(m) for m in messages])
    parts = [fs.where(df, f).select(F.lit(n).alias("f"), "row") for n, f in enumerate(filters)]
    kept = reduce(lambda a, b: a.unionByName(b), parts).collect()
    for n, flt in enumerate(filters):
        want = [i for i, m in enumerate(messages) if flt.evaluate(m) is True]
        assert sorted(r["row"] for r in kept if r["f"] == n) == want, flt.text


def test_many_udf_columns_over_small_batches_of_a_kafka_layout(small_batches):
    spark = small_batches
    records = _kafka_records(20250611, 240)
    df = spark.createDataFrame([r for r, _, _ in records], KAFKA_SCHEMA).repartition(2)
    out = fs.from_kafka(df, keys=list(KAFKA_KEYS), decoders=KAFKA_DECODERS,
                                   keep=["offset"])
    messages = [filtex.Message(application_properties=p) for _, p, _ in records]
    filters = [filtex.compile_sql(t) for t in KAFKA_FILTERS if _compiles(t, "amqp")]
    rows = _all_ways(out, filters, "offset")
    _assert_verdicts(rows, filters, lambda flt: [
        _expected(flt, messages[i], records[i][2]) for i in range(len(records))])


def test_many_udf_columns_over_small_batches_of_a_flat_dataframe(small_batches):
    spark = small_batches
    rows = [(i, [0, 1, 2, 3, -5, 2**40, None][i % 7], [2.5, -0.0, math.nan, 4.0, None][i % 5],
             ["EU", "US", "", None][i % 4], [True, False, None][i % 3]) for i in range(300)]
    df = spark.createDataFrame(rows, "row long, a long, d double, s string, t boolean")
    texts = ["a % 2 = 0", "a * 2 > 3", "a + d > 1", "d > 2.5", "d = d", "s = 'EU'",
             "s LIKE 'E%' OR t", "NOT t AND a > 0", "a IS NULL", "a / 2 = 1"]
    filters = [filtex.compile_sql(t) for t in texts]
    messages = [filtex.Message(application_properties={
        k: v for k, v in zip(("a", "d", "s", "t"), r[1:]) if v is not None}) for r in rows]
    got = _all_ways(df, filters, "row")
    for n, flt in enumerate(filters):
        want = [flt.evaluate(m) for m in messages]
        assert [r[f"u{n}"] for r in got] == want, (flt.text, "udf")
        assert [r[f"c{n}"] for r in got] == want, (flt.text, "column")


def _compiles(text: str, dialect: str) -> bool:
    try:
        filtex.compile_sql(text, dialect)
        return True
    except filtex.FilterError:
        return False
