"""filtex.table.decode: raw AMQP messages to a message table, exactly or not at all.

The decoder's promise is checked against the Python builder (``message_table``
of the same bytes): every row the kernel decodes equals the builder's row,
projected to the requested keys, and every row it cannot decode exactly is
marked ``undecoded`` and left all-absent. The messages: every conformance
message, the example files, hand-written encodings of every scalar type in
its small and large forms, malformed and truncated ones, and random
mutations (which must never crash nor depend on the bytes around a cell).
"""
from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numba")

import numpy as np  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from randomness import examples  # noqa: E402
from proton import symbol, ubyte, uint  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.amqp import encode_message  # noqa: E402
from filtex.table.decode import Decoded, decode_column  # noqa: E402
from filtex.table.schema import KEYED, SCHEMA_VERSION, rest_column  # noqa: E402
from filtex.files import read_records  # noqa: E402
from filtex.message import SECTIONS, Body  # noqa: E402

from conformance_cases import load_cases  # noqa: E402
from exact import same_array, same_table  # noqa: E402
from test_amqp_codec import same  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RESTS = {rest_column(s) for s in SECTIONS}


# --- hand encodings (OASIS AMQP 1.0 part 1.6) ------------------------------------------

def section(code: int, value: bytes, *, wide: bool = False) -> bytes:
    """A described section: ``0x00 0x53 code`` (or the 8-byte ulong form)."""
    if wide:
        return b"\x00\x80" + struct.pack(">Q", code) + value
    return b"\x00\x53" + bytes([code]) + value


def vbin8(b: bytes) -> bytes:
    return b"\xa0" + bytes([len(b)]) + b


def vbin32(b: bytes) -> bytes:
    return b"\xb0" + struct.pack(">I", len(b)) + b


def str8(t: str | bytes) -> bytes:
    raw = t.encode() if isinstance(t, str) else t
    return b"\xa1" + bytes([len(raw)]) + raw


def str32(t: str | bytes) -> bytes:
    raw = t.encode() if isinstance(t, str) else t
    return b"\xb1" + struct.pack(">I", len(raw)) + raw


def sym8(t: str | bytes) -> bytes:
    raw = t.encode() if isinstance(t, str) else t
    return b"\xa3" + bytes([len(raw)]) + raw


def sym32(t: str | bytes) -> bytes:
    raw = t.encode() if isinstance(t, str) else t
    return b"\xb3" + struct.pack(">I", len(raw)) + raw


def list8(items: list[bytes]) -> bytes:
    body = bytes([len(items)]) + b"".join(items)
    return b"\xc0" + bytes([len(body)]) + body


def list32(items: list[bytes]) -> bytes:
    body = struct.pack(">I", len(items)) + b"".join(items)
    return b"\xd0" + struct.pack(">I", len(body)) + body


def map8(pairs: list[tuple[bytes, bytes]]) -> bytes:
    body = bytes([2 * len(pairs)]) + b"".join(k + v for k, v in pairs)
    return b"\xc1" + bytes([len(body)]) + body


def map32(pairs: list[tuple[bytes, bytes]]) -> bytes:
    body = struct.pack(">I", 2 * len(pairs)) + b"".join(k + v for k, v in pairs)
    return b"\xd1" + struct.pack(">I", len(body)) + body


def app(pairs: list[tuple[bytes, bytes]], wide: bool = False) -> bytes:
    return section(0x74, (map32 if wide else map8)(pairs))


def data_body(payload: bytes = b"x" * 40) -> bytes:
    return section(0x75, vbin32(payload) if len(payload) > 255 else vbin8(payload))


NULL = b"\x40"

# Every scalar encoding: (name, bytes). Small and large forms of each type.
SCALARS = [
    ("null", b"\x40"), ("true", b"\x41"), ("false", b"\x42"), ("boolean1", b"\x56\x01"),
    ("boolean0", b"\x56\x00"), ("ubyte", b"\x50\xfe"), ("ushort", b"\x60\xfe\xdc"),
    ("uint", b"\x70\xfe\xdc\xba\x98"), ("smalluint", b"\x52\x07"), ("uint0", b"\x43"),
    ("ulong", b"\x80\xff\xee\xdd\xcc\xbb\xaa\x99\x88"), ("smallulong", b"\x53\xfe"),
    ("ulong0", b"\x44"), ("byte", b"\x51\x80"), ("short", b"\x61\x80\x01"),
    ("int", b"\x71\x80\x00\x00\x01"), ("smallint", b"\x54\xff"),
    ("long", b"\x81\x80\x00\x00\x00\x00\x00\x00\x01"), ("smalllong", b"\x55\x85"),
    ("float", b"\x72" + struct.pack(">f", -1.5)), ("float-tiny", b"\x72\x00\x00\x00\x01"),
    ("float-inf", b"\x72\x7f\x80\x00\x00"), ("float-negzero", b"\x72\x80\x00\x00\x00"),
    ("double", b"\x82" + struct.pack(">d", 2.25)),
    ("double-inf", b"\x82" + struct.pack(">d", float("-inf"))),
    ("char", b"\x73\x00\x00\x00\x41"), ("char-wide", b"\x73\x00\x01\xf6\x00"),
    ("char-2", b"\x73\x00\x00\x00\xe9"), ("char-3", b"\x73\x00\x00\x20\xac"),
    ("timestamp", b"\x83" + struct.pack(">q", -1_700_000_000_123)),
    ("uuid", b"\x98" + bytes(range(16))), ("decimal32", b"\x74\x22\x50\x00\x05"),
    ("decimal64", b"\x84" + bytes(range(8))), ("decimal128", b"\x94" + bytes(range(16))),
    ("vbin8", vbin8(b"\x00\xff")), ("vbin32", vbin32(b"\x01\x02\x03")),
    ("vbin-empty", vbin8(b"")), ("str8", str8("héllo")), ("str32", str32("wörld")),
    ("str-empty", str8("")), ("sym8", sym8("a:b")), ("sym32", sym32("c.d")),
]
LONG = [("str-long", str32("x" * 300)), ("vbin-long", vbin32(bytes(range(256)) * 2))]


def scalar_messages() -> list[bytes]:
    """Application properties holding every scalar encoding, one per key: in
    map8 with str8 keys (several messages: a map8 holds 255 bytes), and in one
    map32 with str32 keys that also holds values over 255 bytes."""
    small, pairs = [], []
    for name, value in SCALARS:
        pair = (str8(name), value)
        if sum(len(k) + len(v) for k, v in pairs + [pair]) > 250:
            small.append(app(pairs))
            pairs = []
        pairs.append(pair)
    small.append(app(pairs))
    return small + [app([(str32(n), v) for n, v in SCALARS + LONG], wide=True)]


# --- the comparison with the builder ------------------------------------------------------

def column(cells: list) -> pa.Array:
    return pa.array(cells, pa.binary())


def builder_rows(cells: list[bytes], decoded: Decoded, keys=None, body: bool = False):
    """The decoder's rows beside the builder's, for the rows decoded: the builder
    lays the decoded rows out in the decoder's schema (so keys and children
    line up) and must accept them all."""
    ok = ~decoded.undecoded
    good = [c for c, u in zip(cells, decoded.undecoded) if not u]
    ours = decoded.table.filter(pa.array(ok))
    want = fa.message_table(good, schema=decoded.table.schema)
    return ours, want


def assert_same_as_builder(cells: list[bytes], keys=None, body: bool = False,
                           decoded: Decoded | None = None) -> Decoded:
    decoded = decoded or decode_column(column(cells), keys, body=body)
    table = decoded.table
    assert table.num_rows == len(cells) == len(decoded.undecoded)
    assert decoded.undecoded.dtype == np.bool_
    assert table.schema.metadata[b"filtex.message-table"] == str(SCHEMA_VERSION).encode()
    ours, want = builder_rows(cells, decoded, keys, body)
    assert ours.schema.equals(want.schema, check_metadata=True)
    for name in want.schema.names:
        if name in RESTS:
            assert ours.column(name).null_count == ours.num_rows
            if keys is None:   # everything decoded: nothing has no typed place
                assert want.column(name).null_count == want.num_rows, name
            continue
        if name in ("amqp_value", "amqp_sequence") and not body:
            assert ours.column(name).null_count == ours.num_rows
            continue
        got, exp = ours.column(name), want.column(name)
        assert got.type == exp.type, name
        assert same_array(got, exp), name   # NaN is NaN, -0.0 is not 0.0
    # the rows read the same through the reading protocol, class for class
    # (projected: of the keyed sections, the keys asked for)
    for row, message in zip(fa.messages(ours), fa.messages(want)):
        for section_name in SECTIONS:
            got = dict(getattr(row, f"_filtex_{section_name}"))
            exp = dict(getattr(message, f"_filtex_{section_name}"))
            if keys is not None and section_name in KEYED:
                asked = set(keys.get(section_name, ()))
                exp = {k: v for k, v in exp.items() if isinstance(k, str) and k in asked
                       and type(k) is (str if section_name == "application_properties"
                                       else symbol)}
            assert same(got, exp), section_name
    # undecoded rows are all absent
    bad = decoded.undecoded
    if bad.any():
        rows = table.filter(pa.array(bad))
        for name in rows.schema.names:
            if name in ("header", "properties"):
                for child in rows.column(name).combine_chunks().flatten():
                    if pa.types.is_struct(child.type):
                        assert set(child.field("t").to_pylist()) <= {0}
                    else:
                        assert child.null_count == len(child)
            elif name in KEYED:
                for child in rows.column(name).combine_chunks().flatten():
                    assert set(child.field("t").to_pylist()) <= {0}
            else:
                assert rows.column(name).null_count == rows.num_rows, name
    return decoded


def decodes(cell: bytes, keys=None, body: bool = False) -> bool:
    return not decode_column(column([cell]), keys, body=body).undecoded[0]


# --- every conformance message -------------------------------------------------------------

def conformance_cells() -> list[bytes]:
    cells, seen = [], set()
    for _, case in load_cases():
        if "message" not in case or case["expect"] == "invalid":
            continue
        try:
            cell = encode_message(filtex.message_from_json(case["message"]))
        except Exception:   # a message of no AMQP encoding (the conformance suite has some)
            continue
        if cell not in seen:
            seen.add(cell)
            cells.append(cell)
    return cells


CONFORMANCE = conformance_cells()


def test_conformance_messages_decode_as_the_builder_builds_them():
    assert len(CONFORMANCE) > 300
    decoded = assert_same_as_builder(CONFORMANCE, None, body=True)
    undecoded = [c for c, u in zip(CONFORMANCE, decoded.undecoded) if u]
    assert len(undecoded) < len(CONFORMANCE) // 10
    # each undecoded row holds what the kernel leaves to the per-message engine:
    # a composite value (the e child) or a value with no typed place (a residual)
    for cell in undecoded:
        table = fa.message_table([cell])
        rests = any(table.column(r).null_count == 0 for r in RESTS)
        composite = any("e" in [f.type.field(i).name for i in range(f.type.num_fields)]
                        for s in (*KEYED, "properties") if s in table.schema.names
                        for f in table.schema.field(s).type if pa.types.is_struct(f.type))
        assert rests or composite, cell


def test_conformance_messages_one_by_one_and_projected():
    keys = {"application_properties": ["a", "color", "price", "size", "b", "x", "nope"],
            "message_annotations": ["x-opt-a", "k"], "footer": ["f"]}
    assert_same_as_builder(CONFORMANCE, keys)
    for cell in CONFORMANCE[::7]:
        assert_same_as_builder([cell], None, body=True)


# --- the example files --------------------------------------------------------------------

def example(name: str) -> list[bytes]:
    return [record.raw for record in read_records(REPO / "examples" / name)]


@pytest.mark.parametrize("name", ["orders.amqp", "telemetry.amqp"])
def test_examples_decode_completely_and_exactly(name):
    cells = example(name)
    decoded = decode_column(column(cells), body=True)
    assert not decoded.undecoded.any()
    want = fa.message_table(cells)
    assert decoded.table.schema.equals(want.schema, check_metadata=True)
    assert same_table(decoded.table, want)   # dictionaries in first-seen order, as the builder's
    assert_same_as_builder(cells, None, body=True, decoded=decoded)


@pytest.mark.parametrize("name", ["orders.amqp", "telemetry.amqp"])
def test_examples_projected_to_some_keys(name):
    cells = example(name)
    full = fa.message_table(cells)
    keys = {"application_properties": ["region", "total", "alarm", "seq", "missing"],
            "message_annotations": ["x-opt-partition"]}
    decoded = decode_column(column(cells), keys)
    assert not decoded.undecoded.any()
    table = decoded.table
    assert "delivery_annotations" not in table.schema.names
    assert "footer" not in table.schema.names
    for section, names in keys.items():
        struct = table.column(section).combine_chunks()
        assert [struct.type.field(i).name for i in range(struct.type.num_fields)] == names
        for key in names:
            got = struct.field(key)
            if key in full.schema.field(section).type.names:
                assert same_array(got, full.column(section).combine_chunks().field(key))
            else:   # asked for, in no message: only its tag, all absent
                assert got.type == pa.struct([pa.field("t", pa.int8())])
                assert set(got.field("t").to_pylist()) == {0}
    for name_ in ("header", "properties"):
        assert same_array(table.column(name_), full.column(name_))
    assert table.column("amqp_value").null_count == len(cells)
    assert_same_as_builder(cells, keys)


# --- every encoding of every scalar -----------------------------------------------------------

def test_every_scalar_in_its_small_and_large_forms():
    cells = scalar_messages()
    cells += [cells[0] + data_body(), section(0x70, list0()) + cells[-1]]
    decoded = assert_same_as_builder(cells, None)
    assert not decoded.undecoded.any()
    struct = decoded.table.column("application_properties").combine_chunks()
    last = len(cells) - 3   # the map32 message: every key
    tags = {name: struct.field(name).field("t")[last].as_py() for name, _ in SCALARS}
    assert tags["null"] == 1 and tags["boolean1"] == 2 and tags["ulong"] == 6
    assert tags["char-wide"] == 16 and tags["uuid"] == 18 and tags["sym32"] == 21
    assert set(tags.values()) == set(range(1, 22))   # every scalar type's tag
    ulong = struct.field("ulong").field("u")[last].as_py()
    assert ulong == 0xffeeddccbbaa9988
    assert struct.field("float-tiny").field("f")[last].as_py() == struct_float(
        b"\x00\x00\x00\x01")
    assert struct.field("char-wide").field("s")[last].as_py() == "\U0001f600"
    # and through projection, one key at a time
    for name, _ in SCALARS[::5]:
        assert_same_as_builder(cells, {"application_properties": [name]})


def struct_float(raw: bytes) -> float:
    return struct.unpack(">f", raw)[0]


def list0() -> bytes:
    return b"\x45"


def test_nan_floats_widen_as_the_builder_widens_them():
    cells = [app([(str8("f"), b"\x72\x7f\xc0\x00\x00")]),   # a quiet NaN float
             app([(str8("f"), b"\x72\x7f\x80\x00\x01")]),   # a signalling one
             app([(str8("f"), b"\x82\x7f\xf0\x00\x00\x00\x00\x00\x01")])]   # a double
    decoded = assert_same_as_builder(cells, None)
    want = fa.message_table(cells).column("application_properties").combine_chunks()
    got = decoded.table.column("application_properties").combine_chunks()
    bits = [np.asarray(a.field("f").field("f").buffers()[1]).view(np.uint64)[:3]
            for a in (got, want)]
    assert list(bits[0]) == list(bits[1])


HEADER_FORMS = [
    list0(),
    list8([b"\x41", b"\x50\x07", b"\x70\x00\x00\x03\xe8", b"\x42", b"\x52\x02"]),
    list32([b"\x56\x01", b"\x50\x09", b"\x52\x05", b"\x56\x00", b"\x43"]),
    list8([NULL, NULL, b"\x43"]),
    list8([b"\x42"]),
]
PROPERTIES_FORMS = [
    list0(),
    list8([str8("id-1"), vbin8(b"user"), str8("to"), str32("subject"), str8("reply"),
           b"\x53\x09", sym8("text/plain"), sym32("gzip"), b"\x83" + bytes(8),
           b"\x83" + struct.pack(">q", 1_750_000_000_000), str8("g"), b"\x43", str8("rg")]),
    list32([b"\x80" + bytes(7) + b"\x05", vbin32(b""), NULL, NULL, NULL,
            b"\x98" + bytes(range(16)), NULL, NULL, NULL, NULL, NULL, b"\x70\xff\xff\xff\xff"]),
    list8([vbin8(b"\x01\x02"), NULL, NULL, str8("s"), NULL, str8("corr")]),
    list8([b"\x73\x00\x00\x00\x7a"]),   # a char message-id
]


@pytest.mark.parametrize("wide", [False, True])
def test_header_and_properties_in_every_list_form(wide):
    cells = [section(0x70, h, wide=wide) + section(0x73, p, wide=wide)
             for h in HEADER_FORMS for p in PROPERTIES_FORMS]
    cells += [section(0x70, h, wide=wide) for h in HEADER_FORMS]
    cells += [section(0x73, p, wide=wide) + data_body() for p in PROPERTIES_FORMS]
    decoded = assert_same_as_builder(cells, None)
    assert not decoded.undecoded.any()


def test_every_section_in_its_place_and_form():
    sections = (section(0x70, list8([b"\x41"])) + section(0x71, map8([(sym8("d"), b"\x41")]))
                + section(0x72, map32([(sym32("m"), b"\x54\x05")]))
                + section(0x73, list8([str8("id")])) + app([(str8("a"), b"\x55\x01")], True))
    footer = section(0x78, map8([(sym8("f"), str8("end"))]))
    cells = [sections, sections + footer, sections + data_body() + data_body(b"y") + footer,
             sections + section(0x77, str8("value")) + footer,
             sections + section(0x76, list8([b"\x41"])) + section(0x76, list0()) + footer,
             sections + section(0x77, b"\x00\x53\x05" + list8([b"\x41"])),   # described body
             footer, b""]
    decoded = assert_same_as_builder(cells, None, body=True)
    assert not decoded.undecoded.any()
    values = decoded.table.column("amqp_value").to_pylist()
    assert values[3] == str8("value") and values[0] is None
    assert decoded.table.column("amqp_sequence").to_pylist()[4] is not None


def test_map_keys_of_the_other_classes():
    ulong_keys = section(0x72, map8([(b"\x53\x07", str8("seven")), (sym8("k"), b"\x41"),
                                     (b"\x80" + bytes(7) + b"\x01", b"\x42"), (b"\x44", NULL)]))
    # every key: the builder keeps ulong keys in the residual, left undecoded
    assert not decodes(ulong_keys)
    # the symbol keys asked for: the ulong keys are not part of the projection
    keys = {"message_annotations": ["k"]}
    decoded = assert_same_as_builder([ulong_keys], keys)
    assert not decoded.undecoded.any()
    # an application property whose key is a symbol: not a message (the builder refuses)
    assert not decodes(app([(sym8("a"), b"\x41")]))
    assert not decodes(app([(sym8("a"), b"\x41")]), {"application_properties": ["a"]})


def test_awkward_key_names_are_kept_exactly():
    names = ["a", "A", "a.b", "x-y", "", "été", "\U0001f600", "k" * 300]
    cell = app([(str8(n) if len(n.encode()) < 256 else str32(n), b"\x54\x01") for n in names],
               wide=True)
    decoded = assert_same_as_builder([cell], None)
    struct = decoded.table.column("application_properties").type
    assert [struct.field(i).name for i in range(struct.num_fields)] == names
    assert_same_as_builder([cell], {"application_properties": names[::-1]})


def test_strings_share_dictionaries_in_first_seen_order():
    cells = [app([(str8("c"), str8(v))]) for v in ["b", "a", "b", "c", "a"]]
    decoded = assert_same_as_builder(cells, None)
    s = decoded.table.column("application_properties").combine_chunks().field("c").field("s")
    assert s.dictionary.to_pylist() == ["b", "a", "c"]
    assert s.indices.to_pylist() == [0, 1, 0, 2, 1]


def test_the_eight_byte_descriptors_and_symbol_descriptors():
    cell = section(0x70, list8([b"\x41"]), wide=True) + app([(str8("a"), b"\x41")], True)
    assert_same_as_builder([cell], None)
    assert decodes(cell)
    symbolic = b"\x00\xa3\x10amqp:header:list" + list8([b"\x41"])
    assert not decodes(symbolic)   # valid, but left to the per-message engine
    assert fa.message_table([symbolic]).num_rows == 1


# --- what is left undecoded ---------------------------------------------------------------

GOOD = (section(0x70, list8([b"\x41", b"\x50\x04"]))
        + section(0x73, list8([str8("id"), NULL, str8("to")]))
        + app([(str8("a"), str8("text")), (str8("b"), b"\x54\x05"), (str8("c"), sym8("s"))])
        + data_body(b"\x00" * 300))


def test_the_sample_decodes():
    assert_same_as_builder([GOOD], None)
    assert decodes(GOOD)


MALFORMED = {
    "truncated": GOOD[:-1],
    "trailing byte": GOOD + b"\x00",
    "not described": b"\x45" + GOOD,
    "unknown section": section(0x79, list0()),
    "ulong0 descriptor": b"\x00\x44\x45",
    "wide descriptor out of range": b"\x00\x80" + b"\x01" + bytes(6) + b"\x70" + list0(),
    "out of order": app([(str8("a"), b"\x41")]) + section(0x70, list0()),
    "repeated": app([(str8("a"), b"\x41")]) + app([(str8("b"), b"\x41")]),
    "header as a map": section(0x70, map8([])),
    "data of a string": section(0x75, str8("x")),
    "mixed bodies": data_body() + section(0x77, b"\x41"),
    "list size past the end": section(0x70, b"\xc0\x09\x01\x41"),
    "list size of nothing": section(0x70, b"\xc0\x00"),
    "list count past its size": section(0x70, b"\xc0\x02\x02\x41"),
    "list fields short of its size": section(0x70, b"\xc0\x03\x01\x41\x41"),
    "map odd count": section(0x74, b"\xc1\x03\x01" + str8("a")[:2]),
    "map entries past its size": section(0x74, b"\xc1\x04\x02" + str8("ab")),
    "map size of nothing": section(0x74, b"\xc1\x00"),
    "string past the map": app([(str8("a"), b"\xa1\x09ab")]),
    "value truncated": app([(str8("a"), b"\x71\x00\x00")]),
    "unknown constructor": app([(str8("a"), b"\xff")]),
    "invalid utf-8 value": app([(str8("a"), str8(b"\xc3\x28"))]),
    "surrogate in utf-8": app([(str8("a"), str8(b"\xed\xa0\x80"))]),
    "overlong utf-8": app([(str8("a"), str8(b"\xc0\xaf"))]),
    "invalid utf-8 key": app([(str8(b"\xff"), b"\x41")]),
    "non-ascii symbol value": app([(str8("a"), sym8("é"))]),
    "non-ascii symbol key": section(0x72, map8([(sym8("é"), b"\x41")])),
    "surrogate char": app([(str8("a"), b"\x73\x00\x00\xd8\x00")]),
    "char past unicode": app([(str8("a"), b"\x73\x00\x11\x00\x00")]),
    "boolean byte 2": app([(str8("a"), b"\x56\x02")]),
    "duplicate key": app([(str8("a"), b"\x41"), (str8("a"), b"\x42")]),
    "string header field": section(0x70, list8([str8("yes")])),
    "long ttl": section(0x70, list8([NULL, NULL, b"\x81" + bytes(8)])),
    "ulong subject": section(0x73, list8([NULL, NULL, NULL, b"\x53\x01"])),
    "too many header fields": section(0x70, list8([NULL] * 6)),
    "list value": app([(str8("a"), list8([b"\x41"]))]),
    "map value": app([(str8("a"), map8([]))]),
    "described value": app([(str8("a"), b"\x00\x53\x01\x41")]),
    "array value": app([(str8("a"), b"\xe0\x03\x02\x41")]),
    "list0 value": app([(str8("a"), b"\x45")]),
    "deep described body": section(0x77, b"\x00\x53\x01" * 40 + b"\x41"),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_and_unsupported_rows_are_undecoded(name):
    cell = MALFORMED[name]
    decoded = decode_column(column([GOOD, cell, GOOD]), body=True)
    assert decoded.undecoded.tolist() == [False, True, False]
    assert_same_as_builder([GOOD, cell, GOOD], None, body=True, decoded=decoded)


def test_problems_outside_the_projection_do_not_matter():
    keys = {"application_properties": ["b"]}
    for cell in (app([(str8("a"), str8(b"\xff")), (str8("b"), b"\x41")]),   # bad unread value
                 app([(str8("b"), b"\x41"), (str8("a"), list8([]))]),   # unread composite
                 section(0x72, map8([(str8("k"), b"\x41")]))   # a string annotation key
                 + app([(str8("b"), b"\x41")])):
        decoded = decode_column(column([cell]), keys)
        assert not decoded.undecoded.any(), cell
        assert decoded.table.column("application_properties").combine_chunks().field(
            "b").field("b").to_pylist() == [True]
    # a key twice, asked for or not, in any encoding: the map is malformed (AMQP 1.0
    # part 1.6.23), left to the per-message engine, which says so for every read of it;
    # a map not walked (no key of it asked for) is not looked at
    twice = app([(str8("b"), b"\x41"), (str8("a"), b"\x41"), (str8("a"), b"\x42")])
    wide = app([(str8("a"), b"\x41"), (str8("b"), b"\x41"), (str32("a"), b"\x42")], wide=True)
    ulongs = section(0x72, map8([(b"\x53\x03", b"\x41"), (sym8("k"), b"\x41"),
                                 (b"\x80" + bytes(7) + b"\x03", b"\x42")])) + app(
        [(str8("b"), b"\x41")])
    for cell, asked, decoded in [
            (twice, keys, False), (twice, {"application_properties": ["a"]}, False),
            (twice, {"application_properties": ["zz"]}, False), (wide, keys, False),
            (ulongs, {"message_annotations": ["k"]}, False), (ulongs, keys, True)]:
        assert decodes(cell, asked) is decoded, (cell, asked)


def test_a_body_that_cannot_be_stored_undoes_its_row():
    bad_body = (section(0x70, list8([b"\x41"])) + app([(str8("a"), str8("x"))])
                + section(0x77, b"\xc0\x02\x01\xff"))   # a list holding an unknown constructor
    no_body = GOOD[:len(GOOD) - len(data_body(b"\x00" * 300))]
    cells = [GOOD, bad_body, no_body + section(0x77, str8("fine"))]
    assert decode_column(column(cells)).undecoded.tolist() == [False, False, False]
    decoded = decode_column(column(cells), body=True)
    assert decoded.undecoded.tolist() == [False, True, False]
    assert_same_as_builder(cells, None, body=True, decoded=decoded)


def test_keys_asked_for_that_cannot_be_symbols_and_empty_sections():
    cell = section(0x72, map8([(sym8("é".encode()), b"\x41"), (sym8("k"), b"\x42")]))
    assert not decodes(cell, {"message_annotations": ["é"]})   # not ASCII: never a symbol
    assert decodes(cell, {"message_annotations": ["k"]})
    decoded = decode_column(column([cell]), {"message_annotations": [], "footer": ()})
    assert "message_annotations" not in decoded.table.schema.names
    assert not decoded.undecoded.any()


def test_null_cells_and_empty_columns():
    decoded = decode_column(pa.array([GOOD, None, b""], pa.binary()))
    assert decoded.undecoded.tolist() == [False, True, False]
    assert decode_column(pa.array([], pa.binary())).table.num_rows == 0
    nulls = decode_column(pa.array([None, None], pa.binary()))
    assert nulls.undecoded.tolist() == [True, True]
    assert nulls.table.column("header").combine_chunks().field("durable").null_count == 2
    empty = decode_column(pa.chunked_array([], pa.binary()))
    assert empty.table.num_rows == 0 and len(empty.undecoded) == 0


def test_every_prefix_of_a_message():
    cell = GOOD + section(0x78, map8([(sym8("f"), b"\x41")]))
    prefixes = [cell[:i] for i in range(len(cell) + 1)]
    decoded = assert_same_as_builder(prefixes, None, body=True)
    boundaries = {0, len(cell)} | {len(cell) - len(section(0x78, map8([(sym8("f"), b"\x41")])))}
    assert {i for i, u in enumerate(decoded.undecoded) if not u} >= boundaries


# --- inputs: slices, chunks, large binary --------------------------------------------------

def test_sliced_chunked_and_large_inputs_decode_alike():
    cells = example("orders.amqp")[:20] + [None] + CONFORMANCE[:30]
    whole = pa.array(cells, pa.binary())
    base = decode_column(whole, body=True)
    sliced = decode_column(whole.slice(5, 30), body=True)
    assert sliced.undecoded.tolist() == base.undecoded[5:35].tolist()
    want = decode_column(pa.array(cells[5:35], pa.binary()), body=True)
    assert same_table(sliced.table, want.table)
    chunked = pa.chunked_array([whole.slice(0, 7), whole.slice(7, 0), whole.slice(7, 44)])
    again = decode_column(chunked, body=True)
    assert again.undecoded.tolist() == base.undecoded.tolist()
    assert same_table(again.table, base.table)
    large = decode_column(pa.array(cells, pa.large_binary()), body=True)
    assert same_table(large.table, base.table)
    # a chunked column whose strings and binaries need the tables to grow
    many = [app([(str8("id"), str8(f"value-{i}")), (str8("u"), b"\x98" + i.to_bytes(16, "big"))])
            for i in range(5000)]
    chunked = pa.chunked_array([pa.array(many[:2500], pa.binary()),
                                pa.array(many[2500:], pa.binary())])
    decoded = decode_column(chunked)
    assert not decoded.undecoded.any()
    assert same_table(decoded.table, fa.message_table(many))


def test_arguments_are_checked():
    with pytest.raises(ValueError, match="keyed sections"):
        decode_column(column([GOOD]), {"header": ["durable"]})
    with pytest.raises(TypeError, match="str"):
        decode_column(column([GOOD]), {"application_properties": [1]})
    with pytest.raises(TypeError, match="iterable"):
        decode_column(column([GOOD]), {"application_properties": "a"})
    with pytest.raises(TypeError, match="binary"):
        decode_column(pa.array(["x"]))
    with pytest.raises(TypeError):
        decode_column([GOOD])


def test_importing_filtex_arrow_does_not_import_numba():
    code = "import filtex, filtex.arrow, sys; assert 'numba' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_decoded_tables_feed_the_filters():
    cells = example("orders.amqp")
    decoded = decode_column(column(cells), {"application_properties": ["region", "total"]})
    flt = filtex.compile_sql("region = 'EU' AND total > 100")
    got = [flt.evaluate(row) for row in fa.messages(decoded.table)]
    assert got == [flt.evaluate(filtex.view(c)) for c in cells]
    assert got.count(True) == 21


# --- random messages and mutations: never a crash, never a wrong row ----------------------------

SAMPLES = example("orders.amqp")[:3] + example("telemetry.amqp")[:2] + [
    GOOD] + scalar_messages() + CONFORMANCE[::60]


@settings(max_examples=examples(120), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(SAMPLES), st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)),
                                          max_size=4),
       st.integers(0, 1 << 16), st.sampled_from(["flip", "cut", "insert", "delete"]))
def test_mutated_messages_decode_exactly_or_not_at_all(sample, flips, at, how):
    cell = bytearray(sample)
    for where, value in flips:
        cell[where % len(cell)] = value
    where = at % (len(cell) + 1)
    if how == "cut":
        cell = cell[:where]
    elif how == "insert":
        cell[where:where] = bytes([flips[0][1] if flips else 0x40])
    elif how == "delete" and cell:
        del cell[where % len(cell)]
    cell = bytes(cell)
    decoded = decode_column(column([cell]), body=True)
    if not decoded.undecoded[0]:
        assert_same_as_builder([cell], None, body=True, decoded=decoded)
    # the bytes around a cell change nothing (nothing is read outside it)
    noise = bytes((i * 37 + len(cell)) & 0xFF for i in range(64))
    around = pa.array([noise, cell, noise[::-1]], pa.binary()).slice(1, 1)
    again = decode_column(around, body=True)
    assert again.undecoded.tolist() == decoded.undecoded.tolist()
    assert same_table(again.table, decoded.table)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.binary(max_size=200))
def test_random_bytes_decode_exactly_or_not_at_all(cell):
    decoded = decode_column(column([cell, b"\x00\x53\x74" + cell]), body=True)
    cells = [cell, b"\x00\x53\x74" + cell]
    assert_same_as_builder(cells, None, body=True, decoded=decoded)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.sampled_from(["a", "b", "é", "x-y", ""]),
                                st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63 - 1),
                                          st.floats(allow_nan=False), st.text(max_size=5),
                                          st.builds(ubyte, st.integers(0, 255)),
                                          st.builds(uint, st.integers(0, 2**32 - 1)),
                                          st.builds(symbol, st.sampled_from(["s", "t"]))),
                                max_size=4), min_size=1, max_size=6))
def test_random_messages_decode_as_the_builder_builds_them(props):
    cells = [encode_message(filtex.Message(application_properties=p,
                                           header={"priority": ubyte(len(p))},
                                           body=Body.data(b"z" * 10))) for p in props]
    decoded = assert_same_as_builder(cells, None)
    assert not decoded.undecoded.any()
    assert_same_as_builder(cells, {"application_properties": ["b", "a"]})


def test_only_the_fields_asked_for_are_stored():
    """``fields`` limits the header and properties fields stored (the rest read
    as absent), and a filter over encoded messages asks for its own."""
    import filtex
    from filtex.table.decode import decode_column
    from filtex.amqp.encode import encode_message
    message = filtex.Message(header={"priority": ubyte(7)},
                             properties={"subject": "s", "message-id": "m-1"})
    column = pa.array([bytes(encode_message(message))], pa.binary())
    table = decode_column(column, {}, fields=[("properties", "subject")]).table
    assert table.column("properties").combine_chunks().field("subject").to_pylist() == ["s"]
    assert table.column("header").combine_chunks().field("priority").to_pylist() == [None]
    ids = table.column("properties").combine_chunks().field("message-id").field("t")
    assert ids.to_pylist() == [0]


def test_tables_holding_nan_and_negative_zero_compare_exactly():
    """The mutation test above once failed by chance: a flipped byte made a
    double NaN, and Arrow's ``equals`` calls NaN unequal to itself."""
    import math
    cells = [encode_message(filtex.Message(application_properties={"x": v}))
             for v in (math.nan, -0.0, 0.0)]
    first = decode_column(column(cells)).table
    again = decode_column(pa.array([b"noise", *cells], pa.binary()).slice(1)).table
    assert not first.equals(again)            # Arrow's rule: NaN != NaN
    assert same_table(first, again)           # the tests' rule: the same values
    zero = decode_column(column(cells[2:] * 2)).table
    negative = decode_column(column(cells[1:2] * 2)).table
    assert not same_table(zero, negative)     # and -0.0 is not 0.0
