"""filtex.arrow: the message table is exact, and filters read it as they read messages.

Every conformance message goes into a table (alone, and all of one dialect in
one table, so tags mix in a column) and every filter gives the verdict it
gives the message itself; the rows read back as the messages' sections, class
for class; Parquet and Arrow IPC keep the layout; a given schema sends what it
lacks to the residuals without changing a verdict; random messages agree too.
"""
from __future__ import annotations

import uuid

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from randomness import examples  # noqa: E402
from proton import (Array, Data, Described, byte, char, decimal32, float32, int32,  # noqa: E402
                    short, symbol, timestamp, ubyte, uint, ulong, ushort)

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.amqp.encode import encode_message  # noqa: E402
from filtex.message import SECTIONS  # noqa: E402

from conformance_cases import load_cases  # noqa: E402
from test_amqp_codec import same  # noqa: E402
from test_conformance import compile_case  # noqa: E402
from test_differential import decimals, floats, ints, strings  # noqa: E402

CASES = [(name, case) for name, case in load_cases()
         if "message" in case and case["expect"] != "invalid"]
DIALECTS = sorted({case["dialect"] for _, case in CASES})


def receiver(case: dict):
    return case["message"].get("receiving-connection")


def same_sections(row, message) -> bool:
    return (all(same(dict(getattr(row, f"_filtex_{n}")), dict(getattr(message, f"_filtex_{n}")))
                for n in SECTIONS)
            and same(row._filtex_amqp_value, message._filtex_amqp_value)
            and same(row._filtex_amqp_sequence, message._filtex_amqp_sequence)
            and row._filtex_connection == message._filtex_connection)


# --- (a) one message, one row -----------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("case", [pytest.param(c, id=n) for n, c in CASES])
def test_one_row_table_gives_the_message_verdict(case):
    flt = compile_case(case)
    message = filtex.message_from_json(case["message"])
    table = fa.message_table([case["message"]])
    want = flt.evaluate(message, receiver(case))
    assert fa.evaluate_batch(flt, table, receiver(case)).to_pylist() == [want]
    # the same message as a filtex.Message builds the same table
    again = fa.message_table([message])
    assert again.schema.equals(table.schema, check_metadata=True)
    assert same_sections(next(fa.messages(again)), next(fa.messages(table)))


# --- (b) all cases of one dialect in one table ----------------------------------------------

@pytest.fixture(scope="module")
def dialect_tables():
    tables = {}
    for dialect in DIALECTS:
        cases = [c for _, c in CASES if c["dialect"] == dialect]
        tables[dialect] = (cases, fa.message_table([c["message"] for c in cases]))
    return tables


@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
def test_one_table_per_dialect_gives_every_verdict_row_by_row(dialect, dialect_tables):
    """Every case's row read back as a message gives the case's verdict, and
    the case's filter on the batch engine over its one-row slice too (struct
    offsets honoured; the table's schema, so the kernels of
    ``test_every_filter_over_the_whole_table``)."""
    cases, table = dialect_tables[dialect]
    rows = list(fa.messages(table))
    assert len(rows) == table.num_rows == len(cases)
    for index, (case, row) in enumerate(zip(cases, rows)):
        flt = compile_case(case)
        want = flt.evaluate(filtex.message_from_json(case["message"]), receiver(case))
        assert flt.evaluate(row, receiver(case)) is want, case["id"]
        # a slice reads the same row (struct offsets are honoured)
        assert fa.evaluate_batch(flt, table.slice(index, 1), receiver(case)).to_pylist() \
            == [want], case["id"]


SHARDS = range(4)
"""The cases of the whole-table tests in four shards: each shard's filters over all the
messages (the test workers share the shards out)."""


@pytest.mark.slow
@pytest.mark.parametrize("shard", SHARDS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_filter_over_the_whole_table(dialect, shard, dialect_tables):
    """Every case's filter over all the dialect's messages in one table (tags of
    every type mixed in a column), row by row against the per-message engine."""
    cases, table = dialect_tables[dialect]
    messages = [filtex.message_from_json(c["message"]) for c in cases]
    for case in cases[shard::len(SHARDS)]:
        flt = compile_case(case)
        want = [flt.evaluate(m, receiver(case)) for m in messages]
        got = fa.evaluate(flt, table, receiver(case))
        assert got.verdicts.to_pylist() == want, case["id"]
        passes = fa.evaluate(flt, table, receiver(case), engine="passes")
        assert passes.verdicts.to_pylist() == want, (case["id"], "passes")
        assert got.fallback_rows <= passes.fallback_rows, case["id"]
    kept = fa.filter_table(flt, table, receiver(case))
    assert kept.num_rows == want.count(True)


@pytest.mark.slow
@pytest.mark.parametrize("shard", SHARDS)
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_filter_over_the_encoded_messages(dialect, shard, dialect_tables):
    """The same through the binary-column path: all the dialect's messages
    AMQP-encoded in one column, decoded by the numba decoder to what each
    filter reads, evaluated by its kernels; undecodable rows from their bytes."""
    pytest.importorskip("numba")
    cases, _ = dialect_tables[dialect]
    encoded = [bytes(encode_message(filtex.message_from_json(c["message"]))) for c in cases]
    column = pa.array(encoded, pa.binary())
    for case in cases[shard::len(SHARDS)]:
        flt = compile_case(case)
        want = [flt.evaluate(raw, receiver(case)) for raw in encoded]
        got = fa.evaluate_encoded(flt, column, receiver(case))
        assert got.verdicts.to_pylist() == want, case["id"]


# --- (c) round trip, class for class -------------------------------------------------------

def test_rows_read_back_as_the_messages_sections(dialect_tables):
    for cases, table in dialect_tables.values():
        for case, row in zip(cases, fa.messages(table)):
            assert same_sections(row, filtex.message_from_json(case["message"])), case["id"]


def test_encoded_and_proton_forms_give_the_same_rows():
    import proton
    message = filtex.Message(header={"priority": ubyte(7), "durable": True},
                             properties={"subject": "s", "message-id": ulong(9),
                                         "creation-time": timestamp(5)},
                             message_annotations={symbol("x-a"): 1, ulong(3): "u"},
                             application_properties={"a": 1, "b": "x"}, body={"k": [1]})
    from_bytes = fa.message_table([encode_message(message)])
    row = next(fa.messages(from_bytes))
    assert same_sections(row, filtex.view(encode_message(message)))
    received = proton.Message(priority=7, properties={"color": "blue"}, subject="s")
    row = next(fa.messages(fa.message_table([received])))
    assert same_sections(row, filtex.view(received))


def test_every_amqp_type_keeps_its_tag_and_class():
    values = [None, True, ubyte(1), ushort(2), uint(3), ulong(2**64 - 1), byte(-1), short(-2),
              int32(-3), -2**63, float32(1.5), float("nan"), decimal32(7),
              filtex.value_from_json({"@type": "decimal64", "value": "1.25"}),
              filtex.value_from_json({"@type": "decimal128", "value": "-3.5"}), char("c"),
              timestamp(-5), uuid.UUID(int=9), b"\x00\xff", "s", symbol("y"), [1, "a"],
              {"k": ubyte(1), ulong(2): None}, Array(None, Data.INT, int32(1), int32(2)),
              Described(symbol("d"), [1])]
    messages = [filtex.Message(application_properties={"v": v}, footer={symbol("v"): v})
                for v in values]
    table = fa.message_table(messages)
    tags = table.column("application_properties").combine_chunks().field("v").field("t")
    assert tags.to_pylist() == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
                                19, 20, 21, 22, 23, 24, 25]
    for row, message in zip(fa.messages(table), messages):
        assert same_sections(row, message)


def test_awkward_keys_and_wrong_typed_fields_are_kept():
    message = filtex.Message(
        header={"priority": "high", "durable": None, "ttl": 5},   # wrong types, null
        properties={"creation-time": 12, "subject": symbol("s"), "to": "q"},
        application_properties={"a": 1, "A": 2, "a.b": 3, "x-y": 4, "": 5, "été": 6},
        delivery_annotations={ulong(7): "seven", symbol("k"): 1},
        message_annotations={"plain-str-key": 1},
        connection="c1")
    table = fa.message_table([message])
    row = next(fa.messages(table))
    assert same_sections(row, message)
    assert table.column("header_rest")[0].as_py()   # priority, durable, ttl went there
    flt = filtex.compile_sql("a = 1 AND A = 2 AND [a.b] = 3 AND [x-y] = 4 AND été = 6")
    assert fa.evaluate_batch(flt, table).to_pylist() == [flt.evaluate(message)] == [True]


def test_unstorable_values_are_refused_clearly():
    from decimal import Decimal
    with pytest.raises(TypeError, match="message 0: .*no AMQP type"):
        fa.message_table([filtex.Message(application_properties={"a": object()})])
    with pytest.raises(ValueError, match="Decimal"):
        fa.message_table([filtex.Message(application_properties={"a": [Decimal("1.5")]})])
    with pytest.raises(TypeError, match="connection ids must be strings"):
        fa.message_table([filtex.Message(connection=7)])
    with pytest.raises(ValueError, match="message 0: not a readable message"):
        fa.message_table([b"\x00\x53\x74\xc1\x09"])
    plain = pa.table({"a": [1]})   # a flat table: its columns are application properties
    assert fa.evaluate_batch(filtex.compile_sql("a = 1"), plain).to_pylist() == [True]
    other = fa.message_table([{}])
    other = other.replace_schema_metadata({b"filtex.message-table": b"99"})
    with pytest.raises(ValueError, match="version '99' is not supported"):
        fa.evaluate_batch(filtex.compile_sql("a = 1"), other)


def test_empty_table_and_import_isolation():
    table = fa.message_table([])
    assert table.num_rows == 0 and table.schema.metadata[b"filtex.message-table"] == b"1"
    assert fa.evaluate_batch(filtex.compile_sql("a = 1"), table).to_pylist() == []
    import subprocess
    import sys
    code = "import filtex, sys; filtex.compile_sql('a = 1'); assert 'pyarrow' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- (d) Parquet and Arrow IPC ---------------------------------------------------------------

def _all_cases_table():
    return [c for _, c in CASES], fa.message_table([c["message"] for _, c in CASES])


def _verdicts(cases, table):
    return [compile_case(c).evaluate(row, receiver(c)) for c, row in zip(cases, fa.messages(table))]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["parquet", "ipc"])
def test_files_keep_the_layout_and_the_verdicts(fmt, tmp_path):
    cases, table = _all_cases_table()
    path = tmp_path / f"messages.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=97)   # several row groups, several batches
        back = pq.read_table(path)
    else:
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            for batch in table.to_batches(max_chunksize=97):
                writer.write_batch(batch)
        back = pa.ipc.open_file(str(path)).read_all()
    assert back.schema.metadata[b"filtex.message-table"] == b"1"
    assert back.num_rows == table.num_rows
    again = fa.read(path)   # filtex's reader gives back the very schema written, and values
    assert again.schema.equals(table.schema, check_metadata=True)
    # values alike (dictionaries may be split by batch; repr, since NaN != NaN)
    assert repr(again.to_pylist()) == repr(table.to_pylist())
    want = [compile_case(c).evaluate(filtex.message_from_json(c["message"]), receiver(c))
            for c in cases]
    assert _verdicts(cases, back) == want
    for case, row in zip(cases, fa.messages(back)):
        assert same_sections(row, filtex.message_from_json(case["message"])), case["id"]


# --- (e) a given schema --------------------------------------------------------------------------

def test_a_given_schema_sends_the_rest_to_the_residuals():
    cases, full = _all_cases_table()
    some = cases[:40] + [c for c in cases if "connection" in c["message"]]
    small = fa.message_table([c["message"] for c in some]).schema
    table = fa.message_table([c["message"] for c in cases], schema=small)
    assert table.schema.equals(small, check_metadata=True)
    assert len(table.schema.field("application_properties").type) < len(
        full.schema.field("application_properties").type)
    assert table.column("application_properties_rest").null_count < table.num_rows
    assert _verdicts(cases, table) == _verdicts(cases, full)
    for case, row in zip(cases, fa.messages(table)):
        assert same_sections(row, filtex.message_from_json(case["message"])), case["id"]
    # a key whose child the schema lacks goes to the residual too
    ints_only = fa.message_table([{"application-properties": {"n": 1}}]).schema
    mixed = fa.message_table([{"application-properties": {"n": "one"}}], schema=ints_only)
    assert mixed.column("application_properties").combine_chunks().field("n").field(
        "t").to_pylist() == [0]
    assert next(fa.messages(mixed))._filtex_application_properties == {"n": "one"}
    with pytest.raises(ValueError, match="no connection column"):
        fa.message_table([{"connection": "c"}], schema=ints_only)


# --- (f) random messages -------------------------------------------------------------------------

scalars = st.one_of(st.none(), st.booleans(), ints, floats, decimals, strings,
                    st.builds(timestamp, st.integers(-2**40, 2**42)), st.binary(max_size=3),
                    st.just(uuid.UUID(int=7)), st.builds(float32, st.sampled_from([0.5, -2.0])))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["k", "a", "x-y"]), inner, max_size=3),
    st.builds(Described, st.just(symbol("d")), inner)), max_leaves=5)
KEYS = ["a", "A", "b", "a.b", "x-y", "é", "s"]
header_values = st.one_of(st.none(), st.booleans(), st.builds(ubyte, st.integers(0, 9)),
                          st.builds(uint, st.integers(0, 9)), st.integers(0, 9), st.just("x"))
id_values = st.one_of(st.builds(ulong, st.integers(0, 2**64 - 1)), st.just(uuid.UUID(int=3)),
                      st.binary(max_size=2), st.text(max_size=2), st.none(), st.integers(0, 3))


@st.composite
def random_messages(draw):
    header = draw(st.dictionaries(st.sampled_from(["priority", "durable", "ttl",
                                                   "first-acquirer", "delivery-count"]),
                                  header_values, max_size=3))
    props = draw(st.dictionaries(
        st.sampled_from(["subject", "creation-time", "message-id", "correlation-id",
                         "content-type", "group-sequence", "user-id"]),
        st.one_of(strings, id_values, st.builds(timestamp, st.integers(0, 2**41))),
        max_size=3))
    annotation_keys = st.one_of(st.sampled_from([symbol("x-k"), symbol("k"), symbol("K")]),
                                st.builds(ulong, st.integers(0, 3)))
    body = draw(st.one_of(st.none(), values.map(filtex.Body.value),
                          st.lists(values, max_size=2).map(lambda s: filtex.Body.sequence(s)),
                          st.just(filtex.Body.data(b"x"))))
    return filtex.Message(
        header=header, properties=props,
        message_annotations=draw(st.dictionaries(annotation_keys, values, max_size=2)),
        delivery_annotations=draw(st.dictionaries(annotation_keys, values, max_size=1)),
        footer=draw(st.dictionaries(annotation_keys, values, max_size=1)),
        application_properties=draw(st.dictionaries(st.sampled_from(KEYS), values, max_size=4)),
        connection=draw(st.sampled_from([None, "c1", "c2"])), body=body)


RANDOM_FILTERS = [
    filtex.compile_sql("a > 0 OR A = 'a'"), filtex.compile_sql("[a.b] IS NULL AND é <> 1"),
    filtex.compile_sql("h.priority > 4 OR h.durable"), filtex.compile_sql("p.subject LIKE 'a%'"),
    filtex.compile_sql("m.[x-k] = 1 OR m.K IS NOT NULL"), filtex.compile_sql("EXISTS(a.[x-y])"),
    filtex.compile_sql("a > 0", "jms"), filtex.compile_sql("s = 'ab'", "rabbitmq"),
    filtex.compile_sql("amqp_value.k = 1 OR amqp_value IS NULL"),
    filtex.compile_filter(Described(symbol("apache.org:no-local-filter:list"), [])),
    filtex.compile_filter(Described(symbol("amqp:application-properties-filter"),
                                    {"a": "&p:a"})),
]


@pytest.mark.slow
@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(random_messages(), min_size=1, max_size=4))
def test_random_messages_round_trip_and_agree(messages):
    table = fa.message_table(messages)
    for row, message in zip(fa.messages(table), messages):
        assert same_sections(row, message)
    for flt in RANDOM_FILTERS:
        want = [flt.evaluate(m, "c1") for m in messages]
        assert fa.evaluate_batch(flt, table, "c1").to_pylist() == want
