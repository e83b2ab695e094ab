"""Every columnar input form at every offset: sliced, chunked and re-batched.

Arrow arrays share buffers: a slice starts at a bit offset into its validity
and boolean bitmaps, a chunked column holds several such slices, and Spark,
Parquet readers and IPC streams cut tables into batches wherever they like.
A kernel that read a bitmap without the array's offset, or assumed batches
start on a byte or word boundary, would answer rows with the verdicts of
their neighbours (rows at multiples of 8 were the symptom in issue 22). Here
every batch form is cut at every offset 0-63 and compared with the
per-message engine on the same messages, for filters touching every kind of
column the kernels read: typed header and properties fields (booleans
included), VALUE structs of every child, dictionary strings, per-value
tables, arithmetic, and rows handed to the per-message engine.
"""
from __future__ import annotations

import math
import random

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numba")

from proton import byte, float32, int32, symbol, timestamp, ubyte, uint, ulong  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.amqp.encode import encode_message  # noqa: E402

VALUES = [0, 1, 2, 3, 5, -7, 2**40, 2**53, 2.0**53, 2.5, -0.0, 0.0, math.nan, math.inf,
          "a", "b", "v1x", "", True, False, None, byte(-3), ubyte(200), int32(4), uint(9),
          ulong(2**63 + 5), float32(1.5), symbol("a"), b"\x00"]


def _messages(count: int = 200, seed: int = 22) -> list[filtex.Message]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        props = {}
        for key in ("x", "y", "s", "b", "f"):
            if rng.random() < 0.85:
                props[key] = rng.choice(VALUES)
        header = {}
        if rng.random() < 0.7:
            header["priority"] = ubyte(rng.randrange(10))
        if rng.random() < 0.7:
            header["durable"] = rng.random() < 0.5
        properties = {}
        if rng.random() < 0.7:
            properties["subject"] = rng.choice(["order.paid", "order.new", "x"])
        if rng.random() < 0.5:
            properties["creation-time"] = timestamp(1_700_000_000_000 + i)
        annotations = {symbol("x-opt-partition"): rng.randrange(8)} if rng.random() < 0.6 else {}
        out.append(filtex.Message(header=header, properties=properties,
                                  message_annotations=annotations,
                                  application_properties=props))
    return out


TEXTS = [
    "x = 5", "x > 2.5", "x IN (1, 2, 3)", "x BETWEEN -1 AND 3", "s = 'a'", "s LIKE 'v1%'",
    "b", "NOT b", "x IS NULL", "s IS NOT NULL", "f <> 0", "f = f",
    "h.durable", "NOT h.durable", "h.priority > 4", "p.subject = 'order.paid'",
    "p.[creation-time] > 1700000000100", "m.[x-opt-partition] < 4",
    "x % 2 = 0", "x * 2 > 3", "x + y > 3",
    "(x = 1 OR s = 'b') AND NOT b", "x = y", "LOWER(s) = 'a'", "s LIKE '%1%'",
]
OFFSETS = range(64)


@pytest.fixture(scope="module")
def data():
    messages = _messages()
    table = fa.message_table(messages)
    encoded = pa.array([bytes(encode_message(m)) for m in messages], pa.binary())
    filters = [filtex.compile_sql(text) for text in TEXTS]
    want = [[f.evaluate(m) for m in messages] for f in filters]
    return messages, table, encoded, filters, want


def _cuts(n: int):
    """(start, length) of the slices tried at each offset: to the end, and an
    odd length that ends mid-word."""
    for offset in OFFSETS:
        yield offset, n - offset
        yield offset, min(37, n - offset)


@pytest.mark.slow
def test_sliced_message_tables(data):
    _, table, _, filters, want = data
    bad = []
    for flt, expected, text in zip(filters, want, TEXTS):
        for start, length in _cuts(table.num_rows):
            got = fa.evaluate_batch(flt, table.slice(start, length)).to_pylist()
            if got != expected[start:start + length]:
                bad.append((text, start, length))
    assert not bad, bad[:10]


@pytest.mark.slow
def test_chunked_and_rebatched_message_tables(data):
    _, table, _, filters, want = data
    bad = []
    for offset in OFFSETS:
        # chunks that each start at another bit offset of the same buffers
        chunked = pa.concat_tables([table.slice(offset, 29), table.slice(offset + 29, 51),
                                    table.slice(offset + 80)])
        rebatched = pa.Table.from_batches(table.slice(offset).to_batches(max_chunksize=7))
        for flt, expected, text in zip(filters, want, TEXTS):
            for form, cut in (("chunked", chunked), ("rebatched", rebatched)):
                got = fa.evaluate_batch(flt, cut).to_pylist()
                if got != expected[offset:]:
                    bad.append((form, text, offset))
            if offset % 8 == 3:   # batch by batch, as Spark hands a UDF its input
                got = [v for b in rebatched.to_batches() for v in fa.evaluate_batch(flt, b)
                       .to_pylist()]
                if got != expected[offset:]:
                    bad.append(("batches", text, offset))
    assert not bad, bad[:10]


def test_row_views_of_sliced_tables(data):
    messages, table, _, filters, want = data
    for offset in (0, 1, 7, 8, 9, 31, 63):
        rows = list(fa.messages(table.slice(offset, 40)))
        for flt, expected, text in zip(filters, want, TEXTS):
            assert [flt.evaluate(r) for r in rows] == expected[offset:offset + 40], (text, offset)


@pytest.mark.slow
def test_sliced_and_chunked_encoded_columns(data):
    _, _, encoded, filters, want = data
    bad = []
    for flt, expected, text in zip(filters, want, TEXTS):
        for start, length in _cuts(len(encoded)):
            got = fa.evaluate_encoded(flt, encoded.slice(start, length)).verdicts.to_pylist()
            if got != expected[start:start + length]:
                bad.append(("slice", text, start, length))
        for offset in (1, 8, 13, 63):
            chunked = pa.chunked_array([encoded.slice(offset, 21), encoded.slice(offset + 21)])
            got = fa.evaluate_encoded(flt, chunked).verdicts.to_pylist()
            if got != expected[offset:]:
                bad.append(("chunked", text, offset))
    assert not bad, bad[:10]


FLAT_TEXTS = ["i = 5", "i > 2", "i IN (1, 3)", "d > 2.5", "d = d", "s = 'a'", "s LIKE 'v%'",
              "t", "NOT t", "i IS NULL", "i % 2 = 0", "i * 2 > 3 AND NOT t", "i + d > 1",
              "u > 7", "w < 0", "r IS NOT NULL"]


@pytest.mark.slow
def test_sliced_flat_tables():
    """Plain columns (nulls read as absent) at every offset, validity bitmaps
    and boolean values at bit offsets included."""
    rng = random.Random(7)
    n = 180

    def pick(values):
        return [rng.choice(values) for _ in range(n)]
    table = pa.table({
        "i": pa.array(pick([0, 1, 2, 3, 5, -4, 2**40, None]), pa.int64()),
        "d": pa.array(pick([2.5, -0.0, 0.0, math.nan, 3.0, None]), pa.float64()),
        "s": pa.array(pick(["a", "b", "v1", "", None]), pa.string()),
        "t": pa.array(pick([True, False, None]), pa.bool_()),
        "u": pa.array(pick([0, 7, 8, 2**32 - 1, None]), pa.uint32()),
        "w": pa.array(pick([-1, 0, 1, None]), pa.int8()),
        "r": pa.array(pick([b"x", None]), pa.binary()),
    })
    columns = table.to_pydict()
    kinds = {"u": uint, "w": byte}
    messages = [filtex.Message(application_properties={
        k: kinds.get(k, lambda v: v)(v) for k, v in ((k, columns[k][r]) for k in columns)
        if v is not None}) for r in range(n)]
    bad = []
    for text in FLAT_TEXTS:
        flt = filtex.compile_sql(text)
        expected = [flt.evaluate(m) for m in messages]
        for start, length in _cuts(n):
            got = fa.evaluate_batch(flt, table.slice(start, length)).to_pylist()
            if got != expected[start:start + length]:
                bad.append((text, start, length))
    assert not bad, bad[:10]
