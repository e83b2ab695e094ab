"""The Spark translation on hostile DataFrames.

A message table in Spark's types can come from anyone (Parquet written by
another program): tags outside 0..25, a tag whose child is null, a composite
whose encoded bytes do not decode, a string tag with no string. Spark's native
expressions, the Arrow UDF and ``where`` must give every such row what the
batch engine gives it over the same table: unknown for a malformed row, never
TRUE or FALSE, and every other row its verdict.
"""
from __future__ import annotations

import random
import uuid

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402
from filtex.table.schema import DECIMAL32, DECIMAL64, DECIMAL128, UUID  # noqa: E402

pytestmark = pytest.mark.spark

TEXTS = ["x = 5", "x > 2", "EXISTS(x)", "x IS NULL", "x IS NOT NULL", "x LIKE 'E%'",
         "NOT (x = 5)", "x = 5 OR y = 1", "x % 2 = 0", "x IN (1, 2, 3)", "x = 'EU'",
         "x > 2.5 AND y < 3", "x BETWEEN 1 AND 9"]


def _hostile_table(seed: int = 23, n: int = 120):
    """A message table whose ``x`` column lies in every way the layout allows
    and Spark can hold (Spark has no dictionaries: strings are plain)."""
    rng = random.Random(seed)
    values = [5, 2, 9, 3.5, "EU", "US", [1, 2], True, None, uuid.UUID(int=7)]
    messages = [filtex.Message(application_properties={
        "x": values[i % len(values)], "y": rng.choice([0, 1, 2, 7])}) for i in range(n)]
    table = fa.message_table(messages)
    props = table.column("application_properties").combine_chunks()
    x = props.field("x")
    children = {x.type.field(i).name: x.field(i) for i in range(x.type.num_fields)}
    tags = children["t"].to_pylist()
    ints = children["i"].to_pylist()
    floats = children["f"].to_pylist()
    encoded = children["e"].to_pylist()
    fixed = children["x"].to_pylist()
    strings = children["s"].to_pylist()
    malformed = set()
    for row in range(n):
        kind = row % 11
        if kind == 1:
            tags[row] = rng.choice([26, 100, 127, -3, -128])   # no such tag
        elif kind == 3 and tags[row] == 10:
            ints[row] = None                                  # a long with no value
        elif kind == 4:
            tags[row], ints[row] = 12, None                   # a double with no value
            floats[row] = None
        elif kind == 6:
            tags[row], encoded[row] = 22, b"\xff\xff"         # a list that does not decode
        elif kind == 8 and strings[row] is None:
            tags[row] = 20                                    # a string with no string
        elif kind == 9:                                       # a uuid or decimal, bad width
            tags[row], fixed[row] = rng.choice([(UUID, b"\x01" * 3), (DECIMAL128, b""),
                                                (DECIMAL64, b"\x00" * 9), (DECIMAL32, b"\x07")])
        else:
            continue
        malformed.add(row)
    arrays = {**children, "t": pa.array(tags, pa.int8()), "i": pa.array(ints, pa.int64()),
              "f": pa.array(floats, pa.float64()), "e": pa.array(encoded, pa.binary()),
              "x": pa.array(fixed, pa.binary())}
    x = pa.StructArray.from_arrays(list(arrays.values()), names=list(arrays))
    props = pa.StructArray.from_arrays([x, props.field("y")], names=["x", "y"])
    return pa.Table.from_arrays([props if c == "application_properties" else table.column(c)
                                 for c in table.schema.names], schema=table.schema), malformed


def test_hostile_rows_get_the_batch_engines_verdicts_natively_and_by_udf(spark):
    table, malformed = _hostile_table()
    spark_table = fs.to_spark(table)
    row_ids = pa.array(range(table.num_rows), pa.int64())
    df = spark.createDataFrame(spark_table.append_column("row", row_ids))
    filters = [filtex.compile_sql(text) for text in TEXTS]
    columns = [fs.column(f, df).alias(f"c{n}") for n, f in enumerate(filters)]
    columns += [fs.column(f, df, method="udf").alias(f"u{n}") for n, f in enumerate(filters)]
    rows = sorted(df.select("row", *columns).collect(), key=lambda r: r["row"])
    bad = []
    for n, flt in enumerate(filters):
        want = fa.evaluate(flt, table).verdicts.to_pylist()
        for kind in ("c", "u"):
            got = [r[f"{kind}{n}"] for r in rows]
            if got != want:
                bad.append((flt.text, kind, [(i, g, w) for i, (g, w) in
                                             enumerate(zip(got, want)) if g != w][:4]))
        kept = sorted(r["row"] for r in fs.where(df, flt).select("row").collect())
        if kept != [i for i, v in enumerate(want) if v is True]:
            bad.append((flt.text, "where", kept[:10]))
    assert not bad, bad[:6]
    # the malformed rows are unknown for every filter that reads x
    for flt in filters:
        want = fa.evaluate(flt, table).verdicts.to_pylist()
        for row in sorted(malformed):
            if "y" not in flt.text:
                assert want[row] is None, (flt.text, row)
