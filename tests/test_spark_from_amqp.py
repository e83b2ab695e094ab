"""filtex.spark.from_amqp: a binary column of AMQP-encoded messages as a message table.

Every conformance message of a dialect is encoded into one binary column and
laid out by ``from_amqp`` (the keys found first); every case's filter, once per
distinct filter, is a column of a select of about sixty and must give, row by
row, the per-message engine's verdict on the bytes, on its cases' own messages
and a sample of the others. Cells the decoder and the builder cannot read
(garbage, truncated, trailing bytes, a null cell, an undecodable value, body
or message-id) are mixed among a sample of each dialect's messages under a
tenth of its filters. Explicit keys (listed ones as VALUE structs, the others
in the residuals), the marks of what could not be read, timestamps Spark
cannot hold, a stream of Parquet files and the arguments are checked on their
own. The cost is Spark's, per filter column (parsing and planning its
expressions), not the rows': two selects run at a time, interpreted.
"""
from __future__ import annotations

import functools
import json
import random

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("numba")

from proton import int32, symbol, timestamp, ubyte, ulong  # noqa: E402

import filtex  # noqa: E402
import filtex.spark as fs  # noqa: E402
from filtex.amqp import decode_value, encode_message  # noqa: E402
from filtex.table.build import encode_exact  # noqa: E402
from filtex.plan.skeleton import fields_read  # noqa: E402
from filtex.spark_io.binary import UNREADABLE, UNREADABLE_SECTION  # noqa: E402

from conformance_cases import load_cases  # noqa: E402
from stopping import two_at_a_time  # noqa: E402
from test_conformance import compile_case  # noqa: E402

pytestmark = pytest.mark.spark

CASES = [c for _, c in load_cases() if "message" in c and c["expect"] != "invalid"]
DIALECTS = sorted({c["dialect"] for c in CASES})
COLUMNS_A_SELECT = 60
SAMPLE = 40   # other messages each filter is checked on, besides its own and the bad cells


def receiver(case):
    return case["message"].get("receiving-connection")


def encoded(case):
    return bytes(encode_message(filtex.message_from_json(case["message"])))


def _replaced(raw, old, new):
    at = raw.index(old)
    return raw[:at] + new + raw[at + len(old):]


GOOD = bytes(encode_message(filtex.Message(
    properties={"subject": "s", "message-id": "id-1"},
    application_properties={"a": 1, "b": "x", "c": 2}, body="hello")))
BAD = [   # (label, cell): what the decoder and the builder cannot read
    ("garbage", b"garbage"),
    ("truncated", GOOD[:-3]),
    ("trailing bytes", GOOD + b"\x00"),
    ("null", None),
    ("undecodable value", _replaced(GOOD, b"\xa1\x01x", b"\xa1\x01\xff")),
    ("undecodable body", _replaced(GOOD, b"\xa1\x05hello", b"\xa1\x05\xffello")),
    ("undecodable message-id", _replaced(GOOD, b"\xa1\x04id-1", b"\xa1\x04\xffd-1")),
]
FAULTS = {BAD[4][1]: ("application_properties", "b"), BAD[5][1]: ("body", "amqp_value"),
          BAD[6][1]: ("properties", "message-id")}
"""The partly readable cells, and the one read that fails in each."""
UNREADABLE_BYTES = b"garbage"


def reads_a_field(flt):
    return flt.tree is None or any(section != "connection"
                                   for section, _ in fields_read(flt.tree))


def expected(flt, raw, rc):
    """The per-message engine on the bytes. A null cell is no message: it is laid
    out as bytes whose sections cannot be found (unknown for every filter reading
    a field, as ``evaluate_encoded`` says of a null cell)."""
    if raw is None:
        want = flt.evaluate(UNREADABLE_BYTES, rc)
        assert want is None or not reads_a_field(flt)
        return want
    return flt.evaluate(raw, rc)


def _dataframe(spark, raws):
    table = pa.table({"id": pa.array(range(len(raws)), pa.int32()),
                      "payload": pa.array(raws, pa.binary())})
    return spark.createDataFrame(table)


def _may_be_unknown(flt, raw, faults):
    """True when ``raw`` is a partly readable message of ``BAD`` and the filter
    reads what ``from_amqp`` could not place: unknown is then exact, or the
    per-message engine stopped before the failing read (a described filter's
    first unmatched entry decides) or never made it (a read of another key of a
    section whose failed key has no field: the section is unreadable)."""
    fault = faults.get(raw)
    if fault is None:
        return False
    read = fields_read(flt.tree) if flt.tree is not None else {fault}
    return fault in read or (fault[1] is None and any(s == fault[0] for s, _ in read))


def _compare(out, raws, pairs, rows, faults=FAULTS):
    """Each (filter, case) as a column over ``rows`` of ``out``: per-message verdicts."""
    from pyspark.sql import functions as F
    columns = [fs.column(flt, out, receiving_connection=receiver(case)).alias(f"c{i}")
               for i, (flt, case) in enumerate(pairs)]
    got = sorted(out.where(F.col("id").isin(rows)).select("id", *columns).collect(),
                 key=lambda r: r["id"])
    assert [r["id"] for r in got] == rows
    bad = []
    for i, (flt, case) in enumerate(pairs):
        want = [expected(flt, raws[r], receiver(case)) for r in rows]
        have = [r[f"c{i}"] for r in got]
        wrong = [(rows[j], have[j], want[j]) for j in range(len(rows)) if have[j] != want[j]
                 and not (have[j] is None and _may_be_unknown(flt, raws[rows[j]], faults))]
        if wrong:
            bad.append((case["id"], wrong[:3]))
    assert not bad, bad[:5]


def _distinct(cases):
    """(filter, a case, the rows of its cases' messages) for each distinct filter and
    receiving connection of ``cases`` ((row or None, case) pairs): one column each."""
    out = {}
    for row, case in cases:
        key = (json.dumps(case["filter"], sort_keys=True), repr(receiver(case)))
        own = out.setdefault(key, (compile_case(case), case, []))[2]
        if row is not None:
            own.append(row)
    return list(out.values())


def _over(spark, raws, cases, seed, **options):
    """Every distinct filter of ``cases`` ((row or None, case) pairs) as a column
    of ``from_amqp`` of ``raws``, on its cases' own rows, ``always`` and a sample."""
    always = options.pop("always", ())
    out = fs.from_amqp(_dataframe(spark, raws), keep=["id"], **options).cache()
    rng = random.Random(seed)
    filters = _distinct(cases)
    jobs = []
    for start in range(0, len(filters), COLUMNS_A_SELECT):
        chunk = filters[start:start + COLUMNS_A_SELECT]
        rows = sorted({r for _, _, own in chunk for r in own} | set(always)
                      | set(rng.sample(range(len(raws)), min(SAMPLE, len(raws)))))
        jobs.append(([(flt, case) for flt, case, _ in chunk], rows))
    try:   # two selects at a time: one is planned while the other runs
        two_at_a_time(spark, [functools.partial(_compare, out, raws, pairs, rows)
                              for pairs, rows in jobs])
    finally:
        out.unpersist()


@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_conformance_filter_over_the_encoded_messages(interpreted, dialect):
    """keys=None: the keys are found first (one job), each key's VALUE struct has
    the children its values need, and only the residuals some message fills are
    columns. Each filter is checked on its cases' own messages and a sample."""
    cases = [c for c in CASES if c["dialect"] == dialect]
    _over(interpreted, [encoded(c) for c in cases], list(enumerate(cases)), dialect)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_unreadable_cells_mixed_in(interpreted, dialect):
    """The cells the decoder and the builder cannot read among a sample of a
    dialect's messages, under a tenth of its filters. Cells whose sections
    cannot be found (and the null cell) give the verdict on the bytes; where a
    message's sections are found and one read fails, a filter reading it may be
    unknown where the per-message engine stops before the read (``_compare``)."""
    cases = [c for c in CASES if c["dialect"] == dialect]
    rng = random.Random(dialect + "!")
    sample = sorted(rng.sample(range(len(cases)), 50))
    raws = [encoded(cases[i]) for i in sample] + [cell for _, cell in BAD]
    chosen = [(None, cases[i]) for i in range(0, len(cases), 10)]
    _over(interpreted, raws, chosen, dialect, always=range(len(raws)))


# --- explicit keys ----------------------------------------------------------------------

TYPED = [filtex.Message(
    header={"priority": ubyte(i % 10)},
    properties={"subject": ["orders", "Orders", "x"][i % 3], "message-id": ulong(i),
                "creation-time": timestamp(1_700_000_000_000 + i)},
    message_annotations={symbol("x-opt-route"): ["eu", "us"][i % 2], ulong(7): i},
    application_properties={"region": ["EU", "US", None][i % 3], "n": [i, int32(i), 2.5][i % 3],
                            "other": f"o{i % 4}", "Region": "eu"},
    footer={symbol("f"): True},
    body={"k": i}) for i in range(30)]
TYPED_FILTERS = ["region = 'EU'", "region IS NULL", "n > 4", "n = 2.5", "other = 'o1'",
                 "other IS NULL", "Region = 'eu'", "m.[x-opt-route] = 'eu'",
                 "p.subject = 'orders' AND region = 'EU'", "h.priority > 4",
                 "p.creation_time > 1700000000010", "p.message_id = 5",
                 "amqp_value.k > 10", "region = 'EU' OR other = 'o2'", "TRUE", "NOT EXISTS(zz)",
                 "n + 1 > 5"]


def _compiled(texts):
    """(filter, a stand-in case) for every text in every dialect that accepts it."""
    out = []
    for dialect in DIALECTS:
        for text in texts:
            try:
                out.append((filtex.compile_sql(text, dialect), {"id": f"{dialect}: {text}",
                                                                "message": {}}))
            except filtex.FilterError:
                pass
    return out


def test_explicit_keys(spark):
    """Listed keys are VALUE structs with every child; unlisted keys, and
    sections not named, are residual entries, read exactly."""
    raws = [bytes(encode_message(m)) for m in TYPED] + [cell for _, cell in BAD]
    keys = {"application_properties": ["region", "n", "absent"],
            "message_annotations": ["x-opt-route"]}
    out = fs.from_amqp(_dataframe(spark, raws), keys=keys, keep=["id"])
    app = out.schema["application_properties"].dataType
    assert app.fieldNames() == ["region", "n", "absent"]
    assert app["n"].dataType.fieldNames() == ["t", "b", "i", "u", "f", "s", "x", "e"]
    assert "footer" not in out.columns and "delivery_annotations" not in out.columns
    assert out.columns[-1] == "id"
    table = out.toArrow().sort_by("id")
    rest = table.column("application_properties_rest").to_pylist()
    for row in range(len(TYPED)):
        entries = {decode_value(k)[0]: decode_value(v)[0] for k, v in rest[row]}
        assert entries == {"other": f"o{row % 4}", "Region": "eu"}
    footers = table.column("footer_rest").to_pylist()
    assert all(decode_value(v)[0] is True for v in (footers[r][0][1] for r in range(30)))
    flts = _compiled(TYPED_FILTERS)
    assert len(flts) > len(TYPED_FILTERS)
    rows = list(range(len(raws)))
    # b is not listed: its failed read makes the section unreadable
    faults = {**FAULTS, BAD[4][1]: ("application_properties", None)}
    for start in range(0, len(flts), COLUMNS_A_SELECT):
        _compare(out, raws, flts[start:start + COLUMNS_A_SELECT], rows, faults)
    # the keys found: every key a VALUE struct with the children its values need,
    # and only the residual that holds something (the ulong annotation key)
    raws = raws[:len(TYPED)]
    found = fs.from_amqp(_dataframe(spark, raws), keep=["id"])
    app = found.schema["application_properties"].dataType
    assert app.fieldNames() == ["Region", "n", "other", "region"]
    assert app["n"].dataType.fieldNames() == ["t", "i", "f"]
    assert [n for n in found.columns if n.endswith("_rest")] == ["message_annotations_rest"]
    _compare(found, raws, flts[:COLUMNS_A_SELECT], list(range(len(raws))))


def test_what_cannot_be_read_is_marked(spark):
    """Unreadable cells: an empty residual entry in every section and empty
    bodies; a failed read of a listed key (or an id) is tagged UNREADABLE, of an
    unlisted one a residual entry with no value."""
    raws = [GOOD] + [cell for _, cell in BAD]
    keys = {"application_properties": ["a", "b"]}
    table = fs.from_amqp(_dataframe(spark, raws), keys=keys, keep=["id"]).toArrow()
    table = table.sort_by("id")
    labels = ["good"] + [label for label, _ in BAD]
    row = {label: table.slice(i, 1).to_pylist()[0] for i, label in enumerate(labels)}
    sections = ("header", "delivery_annotations", "message_annotations", "properties",
                "application_properties", "footer")
    for label in ("garbage", "truncated", "trailing bytes", "null"):
        r = row[label]
        assert all(r[f"{s}_rest"] == [UNREADABLE_SECTION] for s in sections), label
        assert r["amqp_value"] == b"" and r["amqp_sequence"] == b"", label
    good = row["good"]
    assert all(good[f"{s}_rest"] is None for s in sections if s != "application_properties")
    assert good["application_properties"]["b"] == {
        "t": 20, "b": None, "i": None, "u": None, "f": None, "s": "x", "x": None, "e": None}
    bad_value = row["undecodable value"]
    assert bad_value["application_properties"]["b"]["t"] == UNREADABLE
    assert bad_value["application_properties"]["a"]["i"] == 1
    assert bad_value["amqp_value"] == GOOD[GOOD.index(b"\xa1\x05hello"):]
    assert row["undecodable body"]["amqp_value"] == b""
    assert row["undecodable message-id"]["properties"]["message-id"]["t"] == UNREADABLE
    assert row["undecodable message-id"]["properties"]["subject"] == "s"
    # b unlisted: the failed read is an entry of b with no value (c is readable)
    table = fs.from_amqp(_dataframe(spark, raws), keys={"application_properties": ["a"]},
                         keep=["id"]).toArrow().sort_by("id")
    entries = table.column("application_properties_rest").to_pylist()[5]
    assert dict((decode_value(k)[0], v) for k, v in entries) == {"b": b"",
                                                                 "c": encode_exact(2)}


def test_partly_readable_messages(spark):
    """Reads that succeed are exact; where the layout has no place for one failed
    read alone (a typed properties field, a map whose walk fails part-way), its
    section is unreadable: filters reading that section are unknown (the
    per-message engine may still answer the properties fields before a fault;
    a map it checks whole, as the table has it)."""
    bad_subject = _replaced(GOOD, b"\xa1\x01s", b"\xa1\x01\xff")   # invalid UTF-8
    bad_key = _replaced(GOOD, b"\xa1\x01c", b"\xa3\x01c")   # a symbol key after a and b
    raws = [GOOD, bad_subject, bad_key]
    unreadable = [None, "properties", "application_properties"]
    for keys in ({"application_properties": ["a"]}, None):
        out = fs.from_amqp(_dataframe(spark, raws), keys=keys, keep=["id"])
        texts = ["a = 1", "b = 'x'", "zz IS NULL", "p.message_id = 'id-1'", "p.subject = 's'",
                 "amqp_value = 'hello'", "TRUE"]
        flts = [filtex.compile_sql(t) for t in texts]
        got = out.sort("id").select(*[fs.column(f, out).alias(f"c{i}")
                                      for i, f in enumerate(flts)]).collect()
        for i, flt in enumerate(flts):
            read = {section for section, _ in fields_read(flt.tree)}
            want = [None if section in read else flt.evaluate(raw)
                    for raw, section in zip(raws, unreadable)]
            assert [r[f"c{i}"] for r in got] == want, (keys, texts[i])
    # where the per-message engine answers: a properties field before the fault
    assert filtex.compile_sql("p.message_id = 'id-1'").evaluate(bad_subject) is True
    # a map is malformed for every read of it, the keys before the fault included
    assert filtex.compile_sql("a = 1").evaluate(bad_key) is None
    assert filtex.compile_sql("zz IS NULL").evaluate(bad_key) is None


def test_timestamps_spark_cannot_hold(spark):
    far = [timestamp(2**62), timestamp(-(2**62)), timestamp(5)]
    raws = [bytes(encode_message(filtex.Message(properties={"creation-time": t})))
            for t in far]
    out = fs.from_amqp(_dataframe(spark, raws), keys={}, keep=["id"])
    table = out.toArrow().sort_by("id")
    assert table.column("properties_rest").to_pylist()[2] is None
    assert table.column("properties_rest").to_pylist()[0] is not None
    for text in ("p.creation_time > 0", "p.creation_time = 5", "p.creation_time < -1000"):
        flt = filtex.compile_sql(text)
        got = [r[0] for r in out.sort("id").select(fs.column(flt, out)).collect()]
        assert got == [flt.evaluate(raw) for raw in raws], text


# --- streaming ---------------------------------------------------------------------------

def test_a_stream_of_parquet_files(spark, tmp_path):
    """A file source of Parquet files holding the binary column: ``from_amqp``
    with keys and ``where`` into a memory sink keep the rows the batch run keeps."""
    raws = [bytes(encode_message(m)) for m in TYPED] + [cell for _, cell in BAD]
    table = pa.table({"id": pa.array(range(len(raws)), pa.int32()),
                      "payload": pa.array(raws, pa.binary())})
    (tmp_path / "in").mkdir()
    for part in range(3):
        pq.write_table(table.slice(part * 13, 13), tmp_path / "in" / f"part-{part}.parquet")
    keys = {"application_properties": ["region", "n"]}
    text = "region = 'EU' OR other = 'o2' OR p.subject = 'x'"
    stream = spark.readStream.schema("id int, payload binary").parquet(str(tmp_path / "in"))
    with pytest.raises(ValueError, match="keys are needed"):
        fs.from_amqp(stream)
    query = (fs.where(fs.from_amqp(stream, keys=keys, keep=["id"]), text).select("id")
             .writeStream.format("memory").queryName("from_amqp_stream")
             .trigger(availableNow=True).start())
    query.awaitTermination()
    got = sorted(r[0] for r in spark.table("from_amqp_stream").collect())
    batch = fs.where(fs.from_amqp(spark.read.parquet(str(tmp_path / "in")), keys=keys,
                                  keep=["id"]), text)
    flt = filtex.compile_sql(text)
    want = [i for i, raw in enumerate(raws) if raw is not None and flt.evaluate(raw)]
    assert got == sorted(r[0] for r in batch.select("id").collect()) == want and want


# --- arguments ---------------------------------------------------------------------------

def test_arguments(spark):
    df = spark.createDataFrame([], "id int, payload binary, text string, header binary")
    with pytest.raises(ValueError, match="no column 'body'"):
        fs.from_amqp(df, "body", keys={})
    with pytest.raises(TypeError, match="not binary"):
        fs.from_amqp(df, "text", keys={})
    with pytest.raises(ValueError, match="not one of"):
        fs.from_amqp(df, keys={"properties": ["subject"]})
    with pytest.raises(ValueError, match="twice"):
        fs.from_amqp(df, keys={"application_properties": ["a", "a"]})
    with pytest.raises(TypeError):
        fs.from_amqp(df, keys={"application_properties": "a"})
    with pytest.raises(TypeError):
        fs.from_amqp(df, keys=["a"])
    with pytest.raises(ValueError, match="message table column"):
        fs.from_amqp(df, keys={}, keep=["header"])
    with pytest.raises(ValueError, match="no column"):
        fs.from_amqp(df, keys={}, keep=["nope"])
    out = fs.from_amqp(df, keep=["id", "payload"])   # no rows: no keys found
    assert out.columns[-2:] == ["id", "payload"] and out.count() == 0
    assert "application_properties" not in out.columns
    explicit = fs.from_amqp(df, "header", keys={"footer": ["f"]})
    assert explicit.schema["footer"].dataType["f"].dataType.fieldNames()[0] == "t"
