"""filtex.spark: the same verdicts on Spark DataFrames.

Every conformance case's filter over all the messages of its dialect in one
DataFrame (the message table in Spark's types), many filters as columns of
one select; flat DataFrames; ``where``; a Parquet file written for Spark.
"""
from __future__ import annotations

import functools
import json

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402

from conformance_cases import load_cases  # noqa: E402
from stopping import two_at_a_time  # noqa: E402
from test_conformance import compile_case  # noqa: E402

pytestmark = pytest.mark.spark

CASES = [c for _, c in load_cases() if "message" in c and c["expect"] != "invalid"]
DIALECTS = sorted({c["dialect"] for c in CASES})
COLUMNS_A_SELECT = 40


def receiver(case):
    return case["message"].get("receiving-connection")


def _residual_rows(table):
    """Which rows hold a residual entry (those take the Arrow UDF on Spark)."""
    import functools
    import pyarrow.compute as pc
    rest = [table.column(n).is_valid() for n in table.column_names if n.endswith("_rest")]
    return functools.reduce(pc.or_, rest).to_pylist()


def _distinct(cases):
    """One (filter, a case) per distinct filter and receiving connection."""
    out = {}
    for case in cases:
        key = (json.dumps(case["filter"], sort_keys=True), repr(receiver(case)))
        out.setdefault(key, (compile_case(case), case))
    return list(out.values())


def _check(df, rows, messages, pairs):
    """Each filter's ``column`` and native TRUE set over ``df`` (one select)."""
    n = len(pairs)
    columns = [fs.column(f, df, receiving_connection=receiver(c)).alias(f"c{i}")
               for i, (f, c) in enumerate(pairs)]
    columns += [_native_matches(f, df, receiver(c)).alias(f"m{i}")
                for i, (f, c) in enumerate(pairs)]
    got = df.select(*columns).collect()
    for i, (flt, case) in enumerate(pairs):
        want = [flt.evaluate(messages[r], receiver(case)) for r in rows]
        assert [row[i] for row in got] == want, case["id"]
        kept = [row[n + i] for row in got]
        assert [k for k in kept if k is not None] == \
            [w is True for w, k in zip(want, kept) if k is not None], case["id"]


SHARDS = range(4)
"""The distinct filters in four shards, each over every message (the test workers share
the shards out)."""


@pytest.mark.slow
@pytest.mark.parametrize("shard", SHARDS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_conformance_filter_over_its_dialects_messages(interpreted, dialect, shard):
    """Rows without residual entries form one DataFrame (no residual columns:
    native expressions, and the UDF only for what they cannot answer), the few
    with them another (their rows take the UDF). Each distinct filter gives its
    three-valued ``column`` and its ``matches`` (the rows ``where`` keeps) over
    every message of its dialect; two selects run at a time."""
    cases = [c for c in CASES if c["dialect"] == dialect]
    table = fa.message_table([c["message"] for c in cases])
    residual = _residual_rows(table)
    parts = []
    for wanted in (False, True):
        rows = [i for i, r in enumerate(residual) if r is wanted]
        if rows:
            part = fs.to_spark(table.take(rows))
            assert any(n.endswith("_rest") for n in part.column_names) is wanted
            parts.append((interpreted.createDataFrame(part).cache(), rows))
    messages = [filtex.message_from_json(c["message"]) for c in cases]
    filters = _distinct(cases)[shard::len(SHARDS)]
    two_at_a_time(interpreted, [
        functools.partial(_check, df, rows, messages, filters[start:start + COLUMNS_A_SELECT])
        for start in range(0, len(filters), COLUMNS_A_SELECT) for df, rows in parts])


def _native_matches(flt, df, rc):
    """``matches`` of the rows the native expressions answer (null on the Arrow
    UDF's rows: ``column`` checks those, and ``matches`` only adds a coalesce)."""
    from pyspark.sql import functions as F
    t = fs._prepare(flt, df, "amqp", None, "absent", rc, "auto").translation
    if t is None:
        return F.lit(None).cast("boolean")
    matched = F.coalesce(F.expr(t.matched), F.lit(False))
    return matched if t.back is None else F.when(~F.expr(t.back), matched)


def test_flat_dataframes_and_where(spark, tmp_path):
    events = pa.table({"region": ["EU", "US", None, "EU"], "total": [150, 300, 90, None],
                       "prio": pa.array([7, 1, 9, 5], pa.int16())})
    df = spark.createDataFrame(events)
    eu_big = filtex.compile_sql("region = 'EU' AND total > 100")
    assert [r[0] for r in df.select(fs.column(eu_big, df)).collect()] == \
        eu_big.evaluate_batch(events).to_pylist() == [True, False, False, None]
    assert fs.where(df, "region = 'EU' AND total > 100").count() == 1
    urgent = filtex.compile_sql("h.priority > 4 AND region IS NOT NULL")
    mapping = {"prio": ("header", "priority"), "region": "region"}
    got = [r[0] for r in df.select(fs.column(urgent, df, mapping=mapping)).collect()]
    assert got == urgent.evaluate_batch(events, mapping=mapping).to_pylist()
    assert "Arrow UDF" in fs.explain(urgent, df, mapping=mapping)


def test_a_parquet_file_written_for_spark(spark, tmp_path):
    import pyarrow.parquet as pq
    from proton import ubyte, ulong
    messages = [filtex.Message(header={"priority": ubyte(i % 10)},
                               application_properties={"u": ulong(2**64 - 1 - i), "s": f"v{i % 3}"})
                for i in range(50)]
    pq.write_table(fs.to_spark(fa.message_table(messages)), tmp_path / "m.parquet")
    df = spark.read.parquet(str(tmp_path / "m.parquet"))
    flt = filtex.compile_sql("u > 18446744073709551600 AND (h.priority > 3 OR s = 'v1')")
    got = [r[0] for r in df.select(fs.column(flt, df)).collect()]
    assert got == [flt.evaluate(m) for m in messages]
    assert fs.where(df, flt).count() == [flt.evaluate(m) for m in messages].count(True)
