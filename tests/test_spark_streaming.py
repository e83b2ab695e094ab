"""filtex.spark on Structured Streaming: a file-source stream of Parquet files.

A directory of message-table Parquet files (each file its own inferred
layout, so Spark merges their schemas) is read as a stream, filtered by
``filtex.spark.where`` into a memory sink with ``availableNow``, and must
keep exactly the rows the same filter keeps in a batch read of the same
files and the messages the per-message engine matches. Each streaming
query costs seconds, so one query unions several filters' ``where``.
"""
from __future__ import annotations

import random
from functools import reduce

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402
from proton import Described, short, symbol, ubyte, ulong  # noqa: E402

pytestmark = pytest.mark.spark

FILES, PER_FILE = 4, 15
ABSENT = object()


def _message(rng: random.Random, n: int, with_properties: bool) -> filtex.Message:
    """A message of mixed types: a key may be absent, null, a string, a number..."""
    header = {}
    priority = rng.choice([ABSENT, ubyte(0), ubyte(4), ubyte(5), ubyte(9)])
    if priority is not ABSENT:
        header["priority"] = priority
    properties = {"message-id": f"m{n}"}
    subject = rng.choice([ABSENT, "order.created", "order.shipped", "order.new"])
    if subject is not ABSENT:
        properties["subject"] = subject
    app = {}
    if with_properties:
        for key, choices in (
                ("region", [ABSENT, None, "EU", "US", "APAC", 7]),
                ("total", [ABSENT, None, 150, 20, 2.5, 300.0, float("nan"), "12",
                           ulong(2**64 - 1)]),
                ("color", [ABSENT, "blue", symbol("blue"), "black", "red"])):
            value = rng.choice(choices)
            if value is not ABSENT:
                app[key] = value
    return filtex.Message(header=header, properties=properties, application_properties=app)


def _ids(df):
    """The message ids of a message-table DataFrame's rows, as a sorted list."""
    return sorted(r[0] for r in df.select("properties.`message-id`.s").collect())


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """Parquet files of message tables, one layout each (the last file has no
    application properties at all), and the messages they hold."""
    rng = random.Random(12)
    root = tmp_path_factory.mktemp("archive")
    messages = []
    for i in range(FILES):
        chunk = [_message(rng, i * PER_FILE + j, with_properties=i < FILES - 1)
                 for j in range(PER_FILE)]
        pq.write_table(fs.to_spark(fa.message_table(chunk)), root / f"part-{i}.parquet")
        messages.extend(chunk)
    return root, messages


def _run_stream(spark, stream, name: str, checkpoint) -> list:
    """Every row ``stream`` yields for the files present now (availableNow)."""
    query = (stream.writeStream.format("memory").queryName(name).outputMode("append")
             .option("checkpointLocation", str(checkpoint)).trigger(availableNow=True).start())
    try:
        query.awaitTermination(120)
        assert query.exception() is None
        return spark.table(name).collect()
    finally:
        query.stop()
        spark.catalog.dropTempView(name)


def _streamed(spark, source, schema, branches, name, checkpoint, select) -> dict:
    """One streaming query over the union of ``where(stream, flt, **options)`` per
    branch; the kept ids by branch."""
    stream = (spark.readStream.schema(schema).option("maxFilesPerTrigger", 2)
              .parquet(str(source)))
    from pyspark.sql import functions as F
    parts = [select(fs.where(stream, flt, **options)).withColumn("branch", F.lit(i))
             for i, (flt, options) in enumerate(branches)]
    rows = _run_stream(spark, reduce(lambda a, b: a.unionByName(b), parts), name, checkpoint)
    kept = {i: [] for i in range(len(branches))}
    for row in rows:
        kept[row["branch"]].append(row["id"])
    return {i: sorted(ids) for i, ids in kept.items()}


MESSAGE_FILTERS = [
    ("region = 'EU' AND total > 100", {}),
    ("JMSPriority > 4 AND (color LIKE 'bl%' OR total BETWEEN 10 AND 200)", {"dialect": "jms"}),
    (filtex.compile_sql("header.priority >= 5 OR region IN ('US', 'APAC')",
                        dialect="rabbitmq"), {}),
    (filtex.compile_sql("NOT EXISTS(region) OR region IS NULL OR p.subject LIKE 'order.%ed'"),
     {}),
    (filtex.compile_filter(Described(symbol("amqp:application-properties-filter"),
                                     {"color": "blue"})), {}),
]


def _compiled(flt, options):
    if isinstance(flt, filtex.Filter):
        return flt
    return filtex.compile_sql(flt, options.get("dialect", "amqp"))


def test_a_message_table_stream_keeps_what_batch_and_the_engine_keep(spark, archive, tmp_path):
    root, messages = archive
    batch = spark.read.option("mergeSchema", "true").parquet(str(root))
    assert "application_properties" in batch.columns   # merged over the files
    got = _streamed(spark, root, batch.schema, MESSAGE_FILTERS, "filtex_stream_messages",
                    tmp_path / "checkpoint",
                    lambda df: df.select(df["properties.`message-id`.s"].alias("id")))
    for i, (flt, options) in enumerate(MESSAGE_FILTERS):
        engine = sorted(m.properties["message-id"] for m in messages
                        if _compiled(flt, options).evaluate(m) is True)
        assert got[i] == _ids(fs.where(batch, flt, **options)) == engine, (i, flt)
    assert any(got.values()) and not all(len(v) == len(messages) for v in got.values())


def test_a_stream_without_the_column_a_filter_reads(spark, archive, tmp_path):
    """Keys no file has read as absent: IS NULL keeps every row, = keeps none."""
    root, messages = archive
    batch = spark.read.option("mergeSchema", "true").parquet(str(root))
    filters = [("nosuch IS NULL AND NOT EXISTS(a.[x-opt-none])", {}),
               ("nosuch = 1 OR region = 'EU'", {})]
    got = _streamed(spark, root, batch.schema, filters, "filtex_stream_absent",
                    tmp_path / "checkpoint",
                    lambda df: df.select(df["properties.`message-id`.s"].alias("id")))
    for i, (flt, options) in enumerate(filters):
        engine = sorted(m.properties["message-id"] for m in messages
                        if _compiled(flt, options).evaluate(m) is True)
        assert got[i] == _ids(fs.where(batch, flt, **options)) == engine
    assert len(got[0]) == len(messages)


FLAT_COLUMNS = {"id": pa.int64(), "region": pa.string(), "total": pa.int64(),
                "price": pa.float64(), "prio": pa.int16(), "flag": pa.bool_()}


def _flat_row(rng: random.Random, n: int, columns) -> dict:
    choices = {"region": ["EU", "US", None], "total": [5, 150, 300, None],
               "price": [1.5, 99.0, float("nan"), None], "prio": [0, 4, 5, 9, None],
               "flag": [True, False, None]}
    return {"id": n, **{c: rng.choice(choices[c]) for c in columns if c != "id"}}


def _flat_message(row: dict, mapping: dict | None) -> filtex.Message:
    """The message a flat row stands for (a null cell: the field is absent)."""
    kinds = {"prio": short}
    header, app = {}, {}
    for column, value in row.items():
        if value is None:
            continue
        target = (mapping or {column: column}).get(column)
        if target is None:
            continue
        if isinstance(target, tuple):
            header[target[1]] = ubyte(value)
        else:
            app[target] = kinds.get(column, lambda v: v)(value)
    return filtex.Message(header=header, application_properties=app)


def test_a_flat_stream(spark, tmp_path):
    """Plain columns (one file lacks some) as application properties, or mapped."""
    rng = random.Random(5)
    root = tmp_path / "flat"
    root.mkdir()
    rows = []
    for i in range(3):
        columns = list(FLAT_COLUMNS) if i != 1 else ["id", "region", "total"]
        chunk = [_flat_row(rng, i * 20 + j, columns) for j in range(20)]
        schema = pa.schema([(c, FLAT_COLUMNS[c]) for c in columns])
        pq.write_table(pa.Table.from_pylist(chunk, schema=schema), root / f"part-{i}.parquet")
        rows.extend({c: r.get(c) for c in FLAT_COLUMNS} for r in chunk)
    mapping = {"prio": ("header", "priority"), "region": "region", "price": "price"}
    filters = [("region = 'EU' AND total > 100", {}),
               (filtex.compile_sql("flag OR price > 50 OR prio >= 5", dialect="jms"), {}),
               ("h.priority > 4 AND (region IS NULL OR price < 2)", {"mapping": mapping}),
               ("colour IS NULL AND total BETWEEN 100 AND 400", {})]
    batch = spark.read.option("mergeSchema", "true").parquet(str(root))
    got = _streamed(spark, root, batch.schema, filters, "filtex_stream_flat",
                    tmp_path / "checkpoint", lambda df: df.select("id"))
    for i, (flt, options) in enumerate(filters):
        compiled = _compiled(flt, options)
        engine = sorted(r["id"] for r in rows
                        if compiled.evaluate(_flat_message(r, options.get("mapping"))) is True)
        in_batch = sorted(r[0] for r in fs.where(batch, flt, **options).select("id").collect())
        assert got[i] == in_batch == engine, (i, flt)
    assert all(got.values())
