"""The Arrow data users hold, taken where a table is: C stream exporters
(pandas, Polars, DuckDB, a RecordBatchReader, any ``__arrow_c_stream__``),
string views and large strings, flat decimal and date columns read as the
AMQP decimal128 and timestamp that stand for them, time-of-day columns and
decimals too wide for decimal128 refused naming the column."""
from __future__ import annotations

import datetime
import random
from decimal import Decimal

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numba")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.runtime.values import encode_decimal  # noqa: E402
from proton import timestamp  # noqa: E402

from optional import optional  # noqa: E402

FLAT = pa.table({"region": ["EU-DE", "US-CA", None, "EU-FR"], "total": [120, 5, 300, None],
                 "ok": [True, False, None, True]})
TEXTS = ["region LIKE 'EU-%' AND total > 100", "NOT ok OR total IS NULL", "region = 'US-CA'"]


class StreamOnly:
    """An object that is nothing but an Arrow C stream exporter (as nanoarrow's,
    or a library filtex has never heard of)."""

    def __init__(self, table: pa.Table) -> None:
        self._table = table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self._table.__arrow_c_stream__(requested_schema)


class ArrayOnly:
    def __init__(self, batch: pa.RecordBatch) -> None:
        self._batch = batch

    def __arrow_c_array__(self, requested_schema: object = None) -> object:
        return self._batch.__arrow_c_array__(requested_schema)


def _exporters(table: pa.Table) -> dict[str, object]:
    found = {"c stream": StreamOnly(table),
             "c array": ArrayOnly(table.combine_chunks().to_batches()[0]),
             "reader": pa.RecordBatchReader.from_batches(table.schema,
                                                         table.to_batches(max_chunksize=2))}
    pandas = optional("pandas")
    if pandas is not None and "total" in table.schema.names:
        found["pandas"] = pandas.DataFrame(table.to_pydict()).astype(
            {"total": "Int64", "ok": "boolean"})
    polars = optional("polars")
    if polars is not None:
        found["polars"] = polars.from_arrow(table)
    return {k: v for k, v in found.items() if v is not None}


@pytest.mark.parametrize("text", TEXTS)
def test_arrow_c_streams_give_the_tables_verdicts(text):
    flt = filtex.compile_sql(text)
    want = fa.evaluate_batch(flt, FLAT).to_pylist()
    assert want == [flt.evaluate(filtex.Message(application_properties={
        k: v for k, v in row.items() if v is not None})) for row in FLAT.to_pylist()]
    for name, data in _exporters(FLAT).items():
        if name == "pandas":   # pandas' nullable ints and strings: the same values
            got = fa.evaluate_batch(flt, data).to_pylist()
        else:
            got = flt.evaluate_batch(data).to_pylist()
        assert got == want, name
    kept = fa.filter_table(flt, StreamOnly(FLAT))
    assert kept.equals(FLAT.filter(pa.array(want).fill_null(False)))


def test_a_message_table_keeps_its_layout_through_a_c_stream():
    messages = [filtex.Message(header={"priority": 7}, properties={"subject": "a"},
                               application_properties={"x": 1}),
                filtex.Message(application_properties={"x": "s"})]
    table = fa.message_table(messages)
    flt = filtex.compile_sql("h.priority > 4 OR x = 's'")
    want = [flt.evaluate(m) for m in messages]
    for name, data in _exporters(table).items():
        if name in ("pandas", "polars"):
            continue   # they hold the data, not Arrow's schema metadata
        assert fa.evaluate(flt, data).verdicts.to_pylist() == want, name
    assert fa.message_table_of(StreamOnly(FLAT)).num_rows == FLAT.num_rows


def test_duckdb_relations_are_streams():
    duckdb = optional("duckdb")
    if duckdb is None:
        pytest.skip("duckdb is not installed (pip install -e '.[test]')")
    relation = duckdb.connect().from_arrow(FLAT)
    flt = filtex.compile_sql(TEXTS[0])
    assert flt.evaluate_batch(relation).to_pylist() == flt.evaluate_batch(FLAT).to_pylist()


def test_a_stream_is_read_batch_by_batch():
    """Many small batches through a reader: read lazily, one verdict per row."""
    read = []

    def batches():
        for start in range(0, 1000, 7):
            batch = pa.record_batch({"n": list(range(start, min(start + 7, 1000)))})
            read.append(batch.num_rows)
            yield batch
    reader = pa.RecordBatchReader.from_batches(pa.schema([("n", pa.int64())]), batches())
    verdicts = fa.evaluate_batch(filtex.compile_sql("n % 3 = 0"), reader).to_pylist()
    assert verdicts == [n % 3 == 0 for n in range(1000)]
    assert sum(read) == 1000 and len(read) == 143


def test_what_is_not_arrow_is_refused_naming_it():
    with pytest.raises(TypeError, match="list"):
        fa.evaluate_batch(filtex.compile_sql("a = 1"), [{"a": 1}])
    with pytest.raises(TypeError, match="__arrow_c_stream__"):
        filtex.compile_sql("a = 1").evaluate_batch(object())


@pytest.mark.parametrize("typ", [pa.large_string(), pa.string_view(), pa.string(),
                                 pa.dictionary(pa.int32(), pa.string())])
def test_every_string_layout_reads_the_same(typ):
    values = ["EU-été", "", None, "US-CA", "EU-%"]
    flat = pa.table({"s": pa.array(values).cast(typ), "subject": pa.array(values).cast(typ)})
    for text in ["s LIKE 'EU-%'", "s = ''", "s IS NULL", "p.subject = 'US-CA'",
                 "s IN ('US-CA', 'EU-%') OR p.subject LIKE '%é'"]:
        flt = filtex.compile_sql(text)
        want = [flt.evaluate(filtex.Message(
            application_properties={} if v is None else {"s": v},
            properties={} if v is None else {"subject": v})) for v in values]
        got = fa.evaluate_batch(flt, flat, mapping={"s": "s",
                                                    "subject": ("properties", "subject")})
        assert got.to_pylist() == want, (typ, text)


DECIMAL_TYPES = [pa.decimal128(5, 2), pa.decimal128(34, 10), pa.decimal128(38, 0),
                 pa.decimal128(10, -3), pa.decimal256(20, 4)]


def _decimals(typ: pa.DataType, rng: random.Random, count: int) -> list[Decimal | None]:
    digits = min(typ.precision, 34)
    out: list[Decimal | None] = [None, Decimal(0).scaleb(-typ.scale)]
    for _ in range(count):
        unscaled = rng.randrange(-10 ** digits + 1, 10 ** digits)
        if rng.random() < 0.3:
            unscaled = rng.randrange(-1000, 1000)
        out.append(Decimal(unscaled).scaleb(-typ.scale))
    return out


@pytest.mark.parametrize("typ", DECIMAL_TYPES, ids=str)
@pytest.mark.parametrize("dialect", ["amqp", "jms", "rabbitmq"])
def test_decimal_columns_read_as_amqp_decimal128_exactly(typ, dialect):
    rng = random.Random(f"{typ}-{dialect}")
    values = _decimals(typ, rng, 60)
    table = pa.table({"d": pa.array(values, typ)})
    messages = [filtex.Message(application_properties={} if v is None else
                               {"d": encode_decimal(v, 128)}) for v in values]
    texts = ["d > 0", "d = 0", "d >= 1.5", "d < -12.25", "d BETWEEN -1 AND 1E3",
             "d IN (0, 1, 2.5)", "d IS NULL", "d + 1 > 2", "d <> 7"]
    for text in texts:
        try:
            flt = filtex.compile_sql(text, dialect)
        except filtex.FilterError:
            continue
        want = [flt.evaluate(m) for m in messages]
        assert fa.evaluate_batch(flt, table).to_pylist() == want, (text, dialect)


def test_dates_read_as_timestamps_at_midnight_utc():
    days = [datetime.date(2025, 1, 1), datetime.date(1969, 12, 31), None,
            datetime.date(2000, 2, 29), datetime.date(1, 1, 1)]
    epoch = datetime.date(1970, 1, 1)
    for typ in (pa.date32(), pa.date64()):
        table = pa.table({"day": pa.array(days, typ), "creation": pa.array(days, typ)})
        messages = [filtex.Message(
            application_properties={} if d is None else
            {"day": timestamp((d - epoch).days * 86_400_000)},
            properties={} if d is None else
            {"creation-time": timestamp((d - epoch).days * 86_400_000)}) for d in days]
        for text in ["day >= DATE('2025-01-01')", "day < 0", "p.[creation-time] = 0",
                     "day = p.[creation-time]", "p.[creation-time] < DATE('2000-03-01')"]:
            flt = filtex.compile_sql(text)
            got = fa.evaluate_batch(flt, table, mapping={
                "day": "day", "creation": ("properties", "creation-time")})
            assert got.to_pylist() == [flt.evaluate(m) for m in messages], (typ, text)


def test_times_of_day_and_too_wide_decimals_are_refused_naming_the_column():
    flt = filtex.compile_sql("x = 1")
    for typ in (pa.time32("s"), pa.time64("ns")):
        table = pa.table({"x": pa.array([datetime.time(1, 2)], typ)})
        with pytest.raises(ValueError, match=r"column 'x' is time.*time of day"):
            fa.evaluate_batch(flt, table)
    wide = pa.table({"x": pa.array([Decimal(1), Decimal("9" * 35)], pa.decimal128(38, 0))})
    with pytest.raises(ValueError, match=r"column 'x' is decimal128\(38, 0\): row 1 holds 9+"):
        fa.evaluate_batch(flt, wide)
    fine = pa.table({"x": pa.array([Decimal(1), Decimal("9" * 34)], pa.decimal128(38, 0))})
    assert fa.evaluate_batch(flt, fine).to_pylist() == [True, False]
