"""filtex.spark_io.connectors: Kafka and Event Hubs DataFrames as message tables.

Records are generated from typed values, written the way producers and the
connectors write them (UTF-8, JSON, AMQP, big-endian integers; the Event Hubs
connector's strings), with undecodable values, repeated keys, missing keys and
nulls mixed in. Every filter's verdict (three dialects, native and through the
Arrow UDF) over the converted DataFrame must equal, row by row, the
per-message engine's over the message the documented mapping says the record
is, and be unknown where a value the filter reads could not be decoded; the
batch engine must agree on the same rows collected back to Arrow. Filters are
columns of a few selects, so each check is a few Spark jobs.
"""
from __future__ import annotations

import datetime
import json
import random
import uuid

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")

from proton import (byte, char, decimal128, float32, int32, short, symbol,  # noqa: E402
                    timestamp, ubyte, uint, ulong, ushort)

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402
from filtex.table.build import encode_exact  # noqa: E402
from filtex.plan.skeleton import fields_read  # noqa: E402
from filtex.table.schema import SCALAR_TAGS  # noqa: E402
from filtex.spark_io.connectors import UNREADABLE, from_event_hubs, from_kafka  # noqa: E402

pytestmark = pytest.mark.spark

BAD = object()      # a value that cannot be decoded: unknown for filters reading it
DIALECTS = ("amqp", "jms", "rabbitmq")
CHUNK = 40

KAFKA_SCHEMA = ("key binary, value binary, topic string, partition int, offset long, "
                "timestamp timestamp, timestampType int, "
                "headers array<struct<key:string,value:binary>>")
EVENT_HUBS_SCHEMA = ("body binary, partition string, offset string, sequenceNumber long, "
                     "enqueuedTime timestamp, publisher string, partitionKey string, "
                     "properties map<string,string>, systemProperties map<string,string>")


def _compiled(texts):
    """(dialect, text, filter) for every text that compiles in a dialect."""
    out = []
    for dialect in DIALECTS:
        count = 0
        for text in texts:
            try:
                out.append((dialect, text, filtex.compile_sql(text, dialect)))
                count += 1
            except filtex.FilterError:
                pass
        assert count >= len(texts) // 3, dialect
    return out


def _expected(flt, message, unreadable, poisoned_sections=()):
    """The per-message engine's verdict, unknown where the filter reads an
    undecodable value (or any field of a section holding one in its residual)."""
    read = fields_read(flt.tree)
    if read & unreadable or any(section in poisoned_sections for section, _ in read):
        return None
    return flt.evaluate(message)


def _check(spark, out, filters, expected_of, order, udf=("amqp",)):
    """Each filter as a column (native, and the Arrow UDF for the ``udf`` dialects),
    CHUNK columns a job, then the batch engine over the same rows in Arrow."""
    columns = [fs.column(flt, out).alias(f"c{n}") for n, (_, _, flt) in enumerate(filters)]
    columns += [fs.column(flt, out, method="udf").alias(f"u{n}")
                for n, (d, _, flt) in enumerate(filters) if d in udf]
    rows = {}   # a few dozen columns a job: past that Spark's generated code is too large
    for start in range(0, len(columns), CHUNK):
        for row in out.select(order, *columns[start:start + CHUNK]).collect():
            rows.setdefault(row[order], {}).update(row.asDict())
    rows = [rows[key] for key in sorted(rows)]
    table = out.toArrow()
    index = sorted(range(table.num_rows), key=lambda i: table.column(order)[i].as_py())
    layout = [n for n in table.schema.names if n not in ("offset", "partition")]
    batch = fs.from_spark([table.column(n).combine_chunks().take(index) for n in layout], layout)
    mismatches = []
    for n, (dialect, text, flt) in enumerate(filters):
        want = [expected_of(flt, i) for i in range(len(rows))]
        got = [row[f"c{n}"] for row in rows]
        by_udf = [row[f"u{n}"] for row in rows] if dialect in udf else want
        batch_engine = fa.evaluate(flt, batch).verdicts.to_pylist()
        for kind, values in (("native", got), ("udf", by_udf), ("arrow", batch_engine)):
            bad = [(i, values[i], want[i]) for i in range(len(want)) if values[i] != want[i]]
            if bad:
                mismatches.append(f"{dialect} {text!r} {kind}: (row, got, want) {bad[:3]}")
    assert not mismatches, "\n".join(mismatches[:10])
    return rows, table


# --- Kafka -------------------------------------------------------------------------------------

def _utf8(rng):
    if rng.random() < 0.15:
        return rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"a\x80b"]), BAD
    value = rng.choice(["EU", "US", "", "é", "EU ", "a%b", "日本"])
    return value.encode(), value


_JSON = [None, True, False, 0, 5, -3, 2**63 - 1, -2**63, 1.5, -0.0, 4.0, 1e300, "EU", "5", ""]
_BAD_JSON = [b"{", b"[1]", b'{"a": 1}', b"NaN", b"-Infinity", b"1e400", b"18446744073709551616",
             b"\xff", b"", b"'x'", b'"\\ud800"', b"01", b"true false"]


def _json(rng):
    if rng.random() < 0.2:
        return rng.choice(_BAD_JSON), BAD
    value = rng.choice(_JSON)
    return json.dumps(value).encode(), value


_AMQP = [None, True, ubyte(7), ushort(300), uint(5), ulong(2**64 - 1), byte(-5), short(5),
         int32(5), 5, -(2**63), float32(1.5), 2.5, float("nan"), char("c"),
         timestamp(1_700_000_000_000), uuid.UUID(int=7), b"\x00bin", "EU", symbol("EU"),
         [1, "a"], {"k": 1}, decimal128(bytes(16))]


def _amqp(rng):
    value = rng.choice(_AMQP)
    raw = encode_exact(value)
    if rng.random() < 0.2:
        return rng.choice([raw[:-1], raw + b"\x00", b"", b"\xff"]), BAD
    return raw, value


def _int(rng):
    if rng.random() < 0.15:
        return rng.choice([b"", b"\x00\x01\x02", bytes(5), b"\x01" * 16]), BAD
    width = rng.choice([1, 2, 4, 8])
    low, high = -(1 << (8 * width - 1)), (1 << (8 * width - 1)) - 1
    value = rng.choice([low, high, -1, 0, 1, 4, 5, 100])
    value = max(low, min(high, value))
    cls = {1: byte, 2: short, 4: int32, 8: int}[width]
    return value.to_bytes(width, "big", signed=True), cls(value)


def _binary(rng):
    value = bytes(rng.randrange(256) for _ in range(rng.randrange(4)))
    return value, value


KAFKA_KEYS = {"s": _utf8, "S": _utf8, "j": _json, "a": _amqp, "i": _int, "x": _binary,
              "z": None}   # z is requested but never sent: absent everywhere
KAFKA_DECODERS = {"j": "json", "a": "amqp", "i": "int", "x": "binary"}
NOISE = {"other": _utf8, "J": _json}   # sent but not requested: no filter sees them


def _kafka_records(seed, n):
    rng = random.Random(seed)
    out = []
    for offset in range(n):
        headers = []
        for key, make in {**KAFKA_KEYS, **NOISE}.items():
            if make is None or rng.random() < 0.35:
                continue
            for _ in range(rng.choice([1, 1, 1, 2, 3])):
                raw, value = (None, None) if rng.random() < 0.1 else make(rng)
                headers.append((key, raw, value))
        rng.shuffle(headers)   # interleaved keys; the last header of a key wins
        final = {key: value for key, _, value in headers if key in KAFKA_KEYS}
        wire = [(key, raw) for key, raw, _ in headers]
        if offset % 20 in (3, 4):   # a null headers column, and no headers at all
            wire, final = None if offset % 20 == 3 else [], {}
        row = (b"k", b"v", "topic", 0, offset,
               datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc), 0, wire)
        properties = {k: v for k, v in final.items() if v is not BAD}
        unreadable = {("application_properties", k) for k, v in final.items() if v is BAD}
        out.append((row, properties, unreadable))
    return out


KAFKA_FILTERS = [
    "s = 'EU'", "s <> 'EU'", "s LIKE 'E%'", "s IS NULL", "s IS NOT NULL", "S = 'US'", "s = S",
    "NOT (s = 'EU' OR S = 'EU')", "EXISTS(s)",
    "j = 5", "j > 1.5", "j = 'EU'", "j = TRUE", "j IS NULL", "j < 0", "j BETWEEN -5 AND 5",
    "a = 5", "a > 4", "a = 'EU'", "a IS NULL", "a = 2.5", "a < 0", "a LIKE 'E%'",
    "i = 5", "i > 4", "i < 0", "i BETWEEN -1 AND 100", "i IS NULL", "i % 2 = 0",
    "x IS NULL", "x = 0x0062", "z IS NULL", "other IS NULL", "J IS NULL",
    "s = 'EU' OR i > 4", "s = 'EU' AND NOT (j = 5)", "(a > 4 OR j > 4) AND s IS NOT NULL",
    "i + j > 3", "i = a", "s = 'EU' OR TRUE",
]


def test_kafka_differential(spark):
    records = _kafka_records(20250611, 240)
    df = spark.createDataFrame([r for r, _, _ in records], KAFKA_SCHEMA)
    out = from_kafka(df, keys=list(KAFKA_KEYS), decoders=KAFKA_DECODERS,
                     keep=["offset", "partition"])
    messages = [filtex.Message(application_properties=p) for _, p, _ in records]
    filters = _compiled(KAFKA_FILTERS)

    def expected_of(flt, i):
        return _expected(flt, messages[i], records[i][2])
    rows, table = _check(spark, out, filters, expected_of, "offset")
    # the tags themselves: 0 absent, 1 null, the value's AMQP type, UNREADABLE
    apps = table.column("application_properties").combine_chunks()
    offsets = table.column("offset").to_pylist()
    for key in KAFKA_KEYS:
        tags = apps.field(key).field("t").to_pylist()
        for row, tag in zip(offsets, tags):
            _, props, unreadable = records[row]
            want = (UNREADABLE if ("application_properties", key) in unreadable else
                    0 if key not in props else 1 if props[key] is None else
                    SCALAR_TAGS[type(props[key])])
            assert tag == want, (row, key, tag, want)
    assert [r["offset"] for r in rows] == list(range(len(records)))
    assert any(u for _, _, u in records) and any(r[7] is None for r, _, _ in records)


def test_kafka_schema_is_fixed_before_the_data(spark):
    """The schema comes from the arguments: an empty DataFrame and one whose
    headers hold none of the keys give the same, and the children are the
    decoders' (no data can add one)."""
    empty = spark.createDataFrame([], KAFKA_SCHEMA)
    other = spark.createDataFrame([(None, None, "t", 0, 0, None, 0, [("q", b"1")])],
                                  KAFKA_SCHEMA)
    args = dict(keys=["s", "a", "i"], decoders={"a": "amqp", "i": "int"}, keep=["offset"])
    schema = from_kafka(empty, **args).schema
    assert schema == from_kafka(other, **args).schema
    app = schema["application_properties"].dataType
    assert app["s"].dataType.fieldNames() == ["t", "s"]
    assert app["i"].dataType.fieldNames() == ["t", "i"]
    assert app["a"].dataType.fieldNames() == ["t", "b", "i", "u", "f", "s", "x", "e"]
    assert schema.fieldNames()[-1] == "offset"
    out = from_kafka(other, **args)
    assert out.select(fs.column("s IS NULL", out)).first()[0] is True


def test_kafka_arguments(spark):
    df = spark.createDataFrame([], KAFKA_SCHEMA)
    with pytest.raises(ValueError, match="decoder 'utf16'"):
        from_kafka(df, keys=["a"], decoders={"a": "utf16"})
    with pytest.raises(ValueError, match="not requested"):
        from_kafka(df, keys=["a"], decoders={"b": "int"})
    with pytest.raises(ValueError, match="twice"):
        from_kafka(df, keys=["a", "a"])
    with pytest.raises(TypeError):
        from_kafka(df, keys="a")
    with pytest.raises(ValueError, match="includeHeaders"):
        from_kafka(df.drop("headers"), keys=["a"])
    with pytest.raises(ValueError, match="message table column"):
        from_kafka(df.withColumnRenamed("topic", "header"), keys=["a"], keep=["header"])
    with pytest.raises(ValueError, match="no column"):
        from_kafka(df, keys=["a"], keep=["nope"])


# --- Event Hubs ---------------------------------------------------------------------------------

def _java_text(value):
    """A property value as the connector writes it: strings (and symbols, chars,
    unsigned integers, by toString) as they are, anything else as JSON."""
    if isinstance(value, str):
        return str(value)
    if type(value) in (ubyte, ushort, uint, ulong):
        return str(int(value))
    return json.dumps(value)


_EH_STRINGS = ["EU", "US", "", "null", "5", "é"]
_EH_JSON = [None, True, False, 5, int32(7), ubyte(9), -3, 2**63 - 1, 1.5, -0.0, 1e20]
_EH_BAD_JSON = ["EU", "", "{}", "[1, 2]", "1e400", "NaN", "tru"]


def _eh_record(rng, n):
    """One connector row and the message it is: (row, message, unreadable, poisoned)."""
    props, text_props, unreadable = {}, {}, set()
    for key in ("region", "Region"):
        if rng.random() < 0.7:
            value = rng.choice(_EH_STRINGS + [symbol("EU"), None])
            text_props[key] = _java_text(value)
            props[key] = text_props[key]   # the text, whatever the value was
    for key in ("n", "flag"):
        if rng.random() < 0.7:
            if rng.random() < 0.2:
                text_props[key] = rng.choice(_EH_BAD_JSON)
                unreadable.add(("application_properties", key))
            else:
                value = rng.choice(_EH_JSON)
                text_props[key] = _java_text(value)
                props[key] = None if value is None else (
                    value if type(value) in (bool, float) else int(value))
    system, properties, annotations, poisoned = {}, {}, {}, ()
    for field, values in (("to", ["queue/a", "queue/b"]), ("subject", ["orders", "Orders"]),
                          ("reply-to", ["r"]), ("group-id", ["g1", ""]),
                          ("content-encoding", ["gzip"])):
        if rng.random() < 0.6:
            properties[field] = system[field] = rng.choice(values)
    if rng.random() < 0.6:
        system["content-type"] = rng.choice(["application/json", "text/plain"])
        properties["content-type"] = symbol(system["content-type"])
    for field in ("creation-time", "absolute-expiry-time"):
        if rng.random() < 0.6:
            ms = rng.choice([0, 1_700_000_000_000, -5, 253_402_300_799_999])
            system[field], properties[field] = str(ms), timestamp(ms)
    if rng.random() < 0.6:
        sequence = rng.choice([0, 5, 2**31 - 1, 2**31, 2**32 - 1])
        system["group-sequence"] = str(sequence - (1 << 32) if sequence >= 1 << 31 else sequence)
        properties["group-sequence"] = uint(sequence)
    if rng.random() < 0.4:
        user = bytes(rng.choice([0, 1, 127, 128, 255]) for _ in range(rng.randrange(4)))
        system["user-id"] = json.dumps([b - 256 if b > 127 else b for b in user])
        properties["user-id"] = user
    for field in ("message-id", "correlation-id"):
        if rng.random() < 0.6:
            kind = rng.random()
            if kind < 0.15:   # a ulong, uuid or binary id: written as JSON, unreadable
                system[field] = rng.choice(["{}", "[1, -2]", '{"a": 1}'])
                unreadable.add(("properties", field))
            else:
                properties[field] = system[field] = rng.choice(["id-1", "id-2", "", "5"])
    if rng.random() < 0.08:   # a typed field the connector could not have written
        field, bad = rng.choice([("creation-time", ["soon", "1.5", str(2**62)]),
                                 ("group-sequence", ["4294967296", "-2147483649", "1.5"]),
                                 ("user-id", ["[300]", "soon", "[1.5]"])])
        system[field] = rng.choice(bad)
        properties.pop(field, None)
        poisoned = ("properties",)
    for key, decoder in (("x-opt-custom", "string"), ("x-opt-count", "json")):
        if rng.random() < 0.5:
            value = rng.choice(["tenant-1", "7"] if decoder == "string" else [3, -1, None, "x"])
            if decoder == "json" and value == "x":
                system[key] = "x"
                unreadable.add(("message_annotations", key))
            else:
                system[key] = value if decoder == "string" else json.dumps(value)
                annotations[symbol(key)] = value
    publisher = rng.choice([None, "pub"])
    partition_key = rng.choice([None, "pk1", "pk2"])
    enqueued_ms = 1_700_000_000_000 + rng.randrange(10**6)
    annotations.update({symbol("x-opt-offset"): str(n * 100),
                        symbol("x-opt-sequence-number"): n,
                        symbol("x-opt-enqueued-time"): timestamp(enqueued_ms)})
    if publisher is not None:
        annotations[symbol("x-opt-publisher")] = publisher
    if partition_key is not None:
        annotations[symbol("x-opt-partition-key")] = partition_key
        system["x-opt-partition-key"] = partition_key
    enqueued = datetime.datetime.fromtimestamp(enqueued_ms / 1000, datetime.timezone.utc)
    row = (b"body", "0", str(n * 100), n, enqueued, publisher, partition_key,
           text_props, system)
    message = filtex.Message(properties=properties, message_annotations=annotations,
                             application_properties=props)
    return row, message, unreadable, poisoned


EVENT_HUBS_FILTERS = [
    "region = 'EU'", "Region = 'EU'", "region IS NULL", "region = 'null'", "region = '5'",
    "n = 5", "n > 1.5", "n IS NULL", "flag = TRUE", "flag IS NOT NULL OR region = 'US'",
    "p.subject = 'orders'", "p.to LIKE 'queue/%'", "p.content_type = 'application/json'",
    "p.creation_time > 0", "p.absolute_expiry_time < 0", "p.group_sequence > 2147483647",
    "p.group_sequence = 5", "p.user_id IS NULL", "p.message_id = 'id-1'",
    "p.correlation_id IS NULL", "p.reply_to = 'r'", "p.group_id = ''",
    "p.content_encoding = 'gzip'", "p.subject = 'orders' OR region = 'EU'",
    "m.[x-opt-sequence-number] > 10", "m.[x-opt-offset] = '500'",
    "m.[x-opt-enqueued-time] > 1700000500000", "m.[x-opt-partition-key] = 'pk1'",
    "m.[x-opt-publisher] IS NULL", "m.[x-opt-custom] = 'tenant-1'", "m.[x-opt-count] > 0",
    "JMSMessageID = 'id-1'", "JMSCorrelationID IS NULL", "JMSTimestamp > 0",
]


def test_event_hubs_differential(spark):
    rng = random.Random(77)
    records = [_eh_record(rng, n) for n in range(200)]
    df = spark.createDataFrame([r[0] for r in records], EVENT_HUBS_SCHEMA)
    out = from_event_hubs(df, keys=["region", "Region", "n", "flag"],
                          decoders={"n": "json", "flag": "json"},
                          system_keys={"x-opt-custom": "string", "x-opt-count": "json"},
                          keep=["partition", "offset"])
    out = out.withColumn("offset", out["offset"].cast("long"))
    filters = _compiled(EVENT_HUBS_FILTERS)

    def expected_of(flt, i):
        _, message, unreadable, poisoned = records[i]
        return _expected(flt, message, unreadable, poisoned)
    _check(spark, out, filters, expected_of, "offset")
    assert any(r[3] for r in records) and any(r[2] for r in records)


def test_event_hubs_arguments(spark):
    df = spark.createDataFrame([], EVENT_HUBS_SCHEMA)
    with pytest.raises(ValueError, match="mapped already"):
        from_event_hubs(df, keys=[], system_keys=["x-opt-offset"])
    with pytest.raises(ValueError, match="decoder 'amqp'"):
        from_event_hubs(df, keys=["a"], decoders={"a": "amqp"})
    with pytest.raises(ValueError, match="systemProperties"):
        from_event_hubs(df.drop("systemProperties"), keys=[])
    schema = from_event_hubs(df, keys=[]).schema
    assert "application_properties" not in schema.fieldNames()
    assert schema["message_annotations"].dataType.fieldNames() == [
        "x-opt-offset", "x-opt-sequence-number", "x-opt-enqueued-time",
        "x-opt-partition-key", "x-opt-publisher"]


# --- streaming -----------------------------------------------------------------------------------

def test_kafka_stream(spark, tmp_path):
    """The same conversion on a streaming DataFrame (a file source of Kafka-shaped
    rows): ``where`` keeps the rows the batch conversion keeps."""
    records = _kafka_records(5, 60)
    batch = spark.createDataFrame([r for r, _, _ in records], KAFKA_SCHEMA)
    batch.write.parquet(str(tmp_path / "in"))
    args = dict(keys=list(KAFKA_KEYS), decoders=KAFKA_DECODERS, keep=["offset"])
    text = "s = 'EU' OR i > 4 OR j = 5"
    stream = spark.readStream.schema(batch.schema).parquet(str(tmp_path / "in"))
    query = (fs.where(from_kafka(stream, **args), text).select("offset").writeStream
             .format("memory").queryName("kafka_connector").trigger(availableNow=True).start())
    query.awaitTermination()
    got = sorted(r[0] for r in spark.table("kafka_connector").collect())
    flt = filtex.compile_sql(text)
    want = [i for i, (_, props, unreadable) in enumerate(records)
            if _expected(flt, filtex.Message(application_properties=props), unreadable)]
    assert got == want and want
