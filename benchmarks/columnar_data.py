"""A large order-message table in filtex's message-table layout (version 1),
built column by column with numpy and pyarrow (``message_table`` goes message
by message and would take hours for ten million rows).

    python -m benchmarks.columnar_data --rows 10000000 -o data/orders-10M.parquet
    python -m benchmarks.columnar_data --validate     # vectorised == message_table

The application properties mix their types on purpose, as in the columnar
research (shared/docs/columnar-spark-research.md, section 0): a string
``order_type`` that is sometimes a long, a ``total_amount`` that is a long, a
double (NaN now and then) or a string, a ``customer_region`` with look-alike
values (``eu-es``, ``EU-été``, ``EU_X``), a ``cancelled`` that is sometimes a
string, and absent and null values everywhere. The other keys serve the filters
of ``benchmarks/cases.py`` and ``benchmarks/encoded.py``.

Layout (``docs/message-table.md``): header and properties structs of their
AMQP types, one tagged VALUE struct per application property with only the
children its values need, all six residual maps null, no body. Strings are
dictionary-encoded per row group, in first-appearance order, which is what
``filtex.arrow.message_table`` produces; ``validate()`` checks that the row
views of a sample rebuild exactly the same table.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from filtex.table.build import encode_exact  # noqa: E402
from filtex.table.schema import (BOOLEAN, DOUBLE, HEADER_TYPES, LIST, LONG, NULL,  # noqa: E402
                                 PROPERTIES_TYPES, REST_TYPE, SECTION_COLUMNS, STRING,
                                 STRINGS, SYMBOL, TIMESTAMP_MS, UINT, VALUE_FIELDS,
                                 message_schema, rest_column, value_type)
from filtex.message import PROPERTIES_FIELDS  # noqa: E402

BASE_TIME_MS = 1_750_772_279_000            # 2025-06-24T13:37:59Z, the filters' constant
TIME_SPREAD_MS = 200 * 86_400_000           # creation times within +/- 200 days
ROW_GROUP = 1 << 20

# key -> its VALUE children (the schema); order = the struct's field order
KEYS: dict[str, frozenset[str]] = {
    "order_type": frozenset("is"), "total_amount": frozenset("ifs"),
    "customer_region": frozenset("is"), "cancelled": frozenset("bs"),
    "quantity": frozenset("ifs"), "price": frozenset("if"), "discount": frozenset("if"),
    "color": frozenset("ifs"), "sku": frozenset("s"), "customer": frozenset("s"),
    "coupon": frozenset("s"), "tags": frozenset("e"), "region": frozenset("s"),
    "total": frozenset("if"),
}
ID_CHILDREN: dict[str, frozenset[str]] = {name: frozenset() for name in VALUE_FIELDS}

ORDER_TYPES = (("standard", 50), ("express", 20), ("premium", 15), ("economy", 10),
               ("bulk", 5))
REGIONS = (("EU-DE", 22), ("EU-FR", 14), ("EU-IT", 8), ("EU-ES", 6), ("eu-es", 2),
           ("EU-été", 1), ("EU_X", 1), ("US-CA", 18), ("US-NY", 14), ("APAC-JP", 9),
           ("LATAM-BR", 5))
COLORS = (("blue", 30), ("red", 25), ("green", 20), ("black", 15), ("white", 10))
NAMES = ("ACME", "Acme", "acme", "AcMe", "ACMÉ", "Initech", "Globex", "Umbrella",
         "Stark Industries", "Wayne Enterprises", "test-corp", "Contest Ltd", "QA TEST",
         "Testa Rossa", "Hooli", "Vandelay")
COUPONS = ("WELCOME10", "SPRING25", "VIP15", "FREESHIP")
BASIC_REGIONS = (("EU", 40), ("US", 32), ("APAC", 20), ("LATAM", 8))
SUBJECTS = (("order.created", 35), ("order.paid", 25), ("order.shipped", 18),
            ("order.delivered", 12), ("order.cancelled", 6), ("order.refunded", 4))
CONTENT_TYPES = (("application/json", 95), ("text/plain", 5))
TAG_LISTS = (["gift"], ["gift", "fragile"], ["b2b"], [])


# --- drawing ------------------------------------------------------------------------

def _weights(pairs) -> tuple[list, np.ndarray]:
    values = [v for v, _ in pairs]
    w = np.array([float(w) for _, w in pairs])
    return values, w / w.sum()


def _kinds(rng: np.random.Generator, n: int, shares: dict[str, float]) -> dict[str, np.ndarray]:
    """Each row gets one kind; ``shares`` are fractions, the rest goes to the first kind."""
    names = list(shares)
    p = np.array([shares[k] for k in names])
    p[0] = 1.0 - p[1:].sum()
    drawn = np.searchsorted(np.cumsum(p), rng.random(n), side="right")
    drawn = np.minimum(drawn, len(names) - 1)
    return {k: drawn == i for i, k in enumerate(names)}


class _Value:
    """One VALUE struct being filled: tag per row, children as numpy values + masks."""

    def __init__(self, n: int, children: frozenset[str]) -> None:
        self.n = n
        self.type = value_type(children)
        self.tags = np.zeros(n, np.int8)
        self.valid = {c: np.zeros(n, bool) for c in children}
        self.data: dict[str, np.ndarray] = {}
        self.pools: dict[str, pa.Array] = {}

    def put(self, rows: np.ndarray, tag: int, child: str | None = None,
            values: np.ndarray | None = None, pool: pa.Array | None = None) -> None:
        self.tags[rows] = tag
        if child is None:
            return
        self.valid[child] |= rows
        if child not in self.data:
            dtype = {"b": bool, "i": np.int64, "f": np.float64}.get(child, np.int32)
            self.data[child] = np.zeros(self.n, dtype)
        self.data[child][rows] = values[rows]
        if pool is not None:   # s and e: ``values`` are codes into ``pool``
            if self.pools.setdefault(child, pool) is not pool:
                raise ValueError("one pool per child")

    def array(self) -> pa.StructArray:
        arrays = [pa.array(self.tags, pa.int8())]
        for field in list(self.type)[1:]:
            c = field.name
            valid = self.valid[c]
            data = self.data.get(c, np.zeros(self.n, np.int32))
            if c in ("s", "e"):
                pool = self.pools.get(c, pa.array([], STRINGS.value_type if c == "s"
                                                  else pa.binary()))
                codes = pa.array(data.astype(np.int32), pa.int32(), mask=~valid)
                taken = pool.take(codes)
                arrays.append(taken.dictionary_encode() if c == "s" else taken)
            else:
                arrays.append(pa.array(data, field.type, mask=~valid))
        return pa.StructArray.from_arrays(arrays, fields=list(self.type))


def _codes(rng: np.random.Generator, n: int, pairs) -> tuple[np.ndarray, pa.Array]:
    values, p = _weights(pairs)
    return rng.choice(len(values), size=n, p=p).astype(np.int32), pa.array(values, pa.string())


def _strings(rng, n, values) -> tuple[np.ndarray, pa.Array]:
    return rng.integers(0, len(values), n).astype(np.int32), pa.array(list(values), pa.string())


def _sku_pool() -> pa.Array:
    """500,000 distinct SKUs such as 'ABC-12345X7' (fixed, not drawn)."""
    rng = np.random.default_rng(20250624)
    prefix = np.array(["ABC", "ABC", "DEF", "XYZ", "ABD"])[rng.integers(0, 5, 500_000)]
    number = rng.integers(0, 100_000, 500_000)
    letter = np.array(["X", "X", "Y", "Z"])[rng.integers(0, 4, 500_000)]
    digit = rng.integers(0, 10, 500_000)
    skus = [f"{p}-{x:05d}{c}{d}" for p, x, c, d in zip(prefix, number, letter, digit)]
    skus[:6] = ["ABC-X7", "ABC-XX", "ABC-éX7", "ABC-12X", "abc-123X4", "ABC-7X7X"]
    return pa.array(skus, pa.string())


def _customer_pool() -> pa.Array:
    return pa.array(list(NAMES) + [f"C-{i:06d}" for i in range(40_000)]
                    + [f"test-{i:03d}" for i in range(200)], pa.string())


_POOLS: dict[str, pa.Array] = {}


def _pool(name: str) -> pa.Array:
    if name not in _POOLS:
        _POOLS[name] = {"sku": _sku_pool, "customer": _customer_pool,
                        "tags": lambda: pa.array([encode_exact(t) for t in TAG_LISTS],
                                                 pa.binary())}[name]()
    return _POOLS[name]


# --- one batch ----------------------------------------------------------------------

def build_orders(n: int, rng: np.random.Generator) -> pa.Table:
    """``n`` order messages as a message table (this module's schema)."""
    ap: dict[str, pa.StructArray] = {}

    # order_type: 93.9% string, 5% absent, 1% null, 0.1% long
    v = _Value(n, KEYS["order_type"])
    k = _kinds(rng, n, {"s": 0, "absent": 0.05, "null": 0.01, "long": 0.001})
    codes, pool = _codes(rng, n, ORDER_TYPES)
    v.put(k["s"], STRING, "s", codes, pool)
    v.put(k["null"], NULL)
    v.put(k["long"], LONG, "i", rng.integers(1, 4, n))
    ap["order_type"] = v.array()

    # total_amount: 81.5% long, 12% double (0.1% of them NaN), 5% absent, 1% null, 0.5% string
    v = _Value(n, KEYS["total_amount"])
    k = _kinds(rng, n, {"long": 0, "double": 0.12, "absent": 0.05, "null": 0.01,
                        "s": 0.005})
    v.put(k["long"], LONG, "i", np.exp(rng.normal(6.5, 1.6, n)).astype(np.int64) + 1)
    amounts = np.round(rng.uniform(1.0, 9000.0, n), 2)
    amounts[rng.random(n) < 0.001] = math.nan
    v.put(k["double"], DOUBLE, "f", amounts)
    v.put(k["null"], NULL)
    v.put(k["s"], STRING, "s", *_strings(rng, n, ("250.00", "1200", "n/a")))
    ap["total_amount"] = v.array()

    # customer_region: 96.4% string of 11 values, 3% absent, 0.5% null, 0.1% long
    v = _Value(n, KEYS["customer_region"])
    k = _kinds(rng, n, {"s": 0, "absent": 0.03, "null": 0.005, "long": 0.001})
    v.put(k["s"], STRING, "s", *_codes(rng, n, REGIONS))
    v.put(k["null"], NULL)
    v.put(k["long"], LONG, "i", rng.integers(1, 50, n))
    ap["customer_region"] = v.array()

    # cancelled: 90% boolean (a tenth true), 8% absent, 1% null, 1% string
    v = _Value(n, KEYS["cancelled"])
    k = _kinds(rng, n, {"b": 0, "absent": 0.08, "null": 0.01, "s": 0.01})
    v.put(k["b"], BOOLEAN, "b", rng.random(n) < 0.1)
    v.put(k["null"], NULL)
    v.put(k["s"], STRING, "s", *_strings(rng, n, ("false", "true", "no")))
    ap["cancelled"] = v.array()

    # quantity: long mostly; some uint, double (whole numbers, NaN rarely), string
    v = _Value(n, KEYS["quantity"])
    k = _kinds(rng, n, {"long": 0, "uint": 0.01, "double": 0.01, "absent": 0.03,
                        "null": 0.005, "s": 0.005})
    qty = np.minimum(rng.geometric(0.25, n), 40).astype(np.int64)
    v.put(k["long"], LONG, "i", qty)
    v.put(k["uint"], UINT, "i", qty)
    fq = qty.astype(np.float64)
    fq[rng.random(n) < 0.01] = math.nan
    v.put(k["double"], DOUBLE, "f", fq)
    v.put(k["null"], NULL)
    v.put(k["s"], STRING, "s", *_strings(rng, n, ("3", "two", "")))
    ap["quantity"] = v.array()

    # price: 88% double, 10% long, 1% absent, 1% null
    v = _Value(n, KEYS["price"])
    k = _kinds(rng, n, {"double": 0, "long": 0.10, "absent": 0.01, "null": 0.01})
    v.put(k["double"], DOUBLE, "f", np.round(np.exp(rng.normal(3.5, 1.2, n)), 2))
    v.put(k["long"], LONG, "i", rng.integers(1, 2000, n))
    v.put(k["null"], NULL)
    ap["price"] = v.array()

    # discount: 60% long, 35% double, 5% absent
    v = _Value(n, KEYS["discount"])
    k = _kinds(rng, n, {"long": 0, "double": 0.35, "absent": 0.05})
    v.put(k["long"], LONG, "i", np.array([0, 5, 10, 20, 50])[rng.integers(0, 5, n)])
    v.put(k["double"], DOUBLE, "f", np.round(rng.uniform(0, 80, n), 2))
    ap["discount"] = v.array()

    # color: string, symbol, absent, null, a few longs and doubles (half of them NaN)
    v = _Value(n, KEYS["color"])
    k = _kinds(rng, n, {"s": 0, "symbol": 0.05, "absent": 0.09, "null": 0.01,
                        "long": 0.005, "double": 0.005})
    codes, pool = _codes(rng, n, COLORS)
    v.put(k["s"], STRING, "s", codes, pool)
    v.put(k["symbol"], SYMBOL, "s", codes, pool)
    v.put(k["null"], NULL)
    v.put(k["long"], LONG, "i", rng.integers(0, 10, n))
    v.put(k["double"], DOUBLE, "f", np.where(rng.random(n) < 0.5, math.nan, 1.5))
    ap["color"] = v.array()

    # sku: 97% string from 500k distinct values, 2% absent, 1% null
    v = _Value(n, KEYS["sku"])
    k = _kinds(rng, n, {"s": 0, "absent": 0.02, "null": 0.01})
    pool = _pool("sku")
    v.put(k["s"], STRING, "s", rng.integers(0, len(pool), n).astype(np.int32), pool)
    v.put(k["null"], NULL)
    ap["sku"] = v.array()

    # customer: 25% company names (ACME in several casings), ids, 'test' accounts
    v = _Value(n, KEYS["customer"])
    k = _kinds(rng, n, {"id": 0, "name": 0.25, "test": 0.02, "absent": 0.02,
                        "null": 0.01})
    pool = _pool("customer")
    codes = np.where(k["name"], rng.integers(0, len(NAMES), n),
                     np.where(k["test"], len(pool) - 200 + rng.integers(0, 200, n),
                              len(NAMES) + rng.integers(0, 40_000, n))).astype(np.int32)
    v.put(k["id"] | k["name"] | k["test"], STRING, "s", codes, pool)
    v.put(k["null"], NULL)
    ap["customer"] = v.array()

    # coupon: mostly absent
    v = _Value(n, KEYS["coupon"])
    k = _kinds(rng, n, {"absent": 0, "s": 0.10, "null": 0.05})
    v.put(k["s"], STRING, "s", *_strings(rng, n, COUPONS))
    v.put(k["null"], NULL)
    ap["coupon"] = v.array()

    # tags: a list (AMQP-encoded) in 30% of the messages, null in 2%
    v = _Value(n, KEYS["tags"])
    k = _kinds(rng, n, {"absent": 0, "list": 0.30, "null": 0.02})
    pool = _pool("tags")
    v.put(k["list"], LIST, "e", rng.integers(0, len(pool), n).astype(np.int32), pool)
    v.put(k["null"], NULL)
    ap["tags"] = v.array()

    # region and total (benchmarks/encoded.py's two-properties filter)
    v = _Value(n, KEYS["region"])
    k = _kinds(rng, n, {"s": 0, "absent": 0.05})
    v.put(k["s"], STRING, "s", *_codes(rng, n, BASIC_REGIONS))
    ap["region"] = v.array()
    v = _Value(n, KEYS["total"])
    k = _kinds(rng, n, {"double": 0, "long": 0.25, "absent": 0.05})
    v.put(k["double"], DOUBLE, "f", np.round(rng.uniform(1, 300, n), 2))
    v.put(k["long"], LONG, "i", rng.integers(1, 300, n))
    ap["total"] = v.array()

    # header: durable (5% absent), priority ubyte 0-9 (10% absent)
    durable = pa.array(rng.random(n) < 0.74, pa.bool_(), mask=rng.random(n) < 0.05)
    priority = pa.array(rng.integers(0, 10, n).astype(np.uint8), pa.uint8(),
                        mask=rng.random(n) < 0.10)
    header_fields = {"durable": durable, "priority": priority}
    header = pa.StructArray.from_arrays(
        [header_fields[name] if name in header_fields else pa.nulls(n, typ)
         for name, (_, typ) in HEADER_TYPES.items()],
        fields=[pa.field(name, typ) for name, (_, typ) in HEADER_TYPES.items()])

    # properties: subject, content-type (a symbol), creation-time
    subject_codes, subject_pool = _codes(rng, n, SUBJECTS)
    subject = subject_pool.take(pa.array(subject_codes, mask=rng.random(n) < 0.02))
    ctype_codes, ctype_pool = _codes(rng, n, CONTENT_TYPES)
    ctype = ctype_pool.take(pa.array(ctype_codes, mask=rng.random(n) < 0.05))
    created = pa.array(BASE_TIME_MS + rng.integers(-TIME_SPREAD_MS, TIME_SPREAD_MS, n),
                       pa.int64(), mask=rng.random(n) < 0.01).cast(TIMESTAMP_MS)
    given = {"subject": subject.dictionary_encode(), "content-type": ctype.dictionary_encode(),
             "creation-time": created}
    schema = message_schema({"application_properties": KEYS}, ID_CHILDREN, False)
    props_type = schema.field("properties").type
    props = []
    for name in PROPERTIES_FIELDS:
        typ = props_type.field(name).type
        if name in given:
            props.append(given[name])
        elif name in VALUE_FIELDS:
            props.append(pa.StructArray.from_arrays([pa.array(np.zeros(n, np.int8))],
                                                    fields=list(typ)))
        elif typ == STRINGS:
            props.append(pa.nulls(n, pa.string()).dictionary_encode())
        else:
            props.append(pa.nulls(n, PROPERTIES_TYPES[name][1]))
    properties = pa.StructArray.from_arrays(props, fields=list(props_type))

    columns: dict[str, pa.Array] = {"header": header, "properties": properties}
    columns["application_properties"] = pa.StructArray.from_arrays(
        list(ap.values()), fields=[pa.field(key, ap[key].type) for key in ap])
    for section in SECTION_COLUMNS:
        columns[rest_column(section)] = pa.nulls(n, REST_TYPE)
    columns["amqp_value"] = pa.nulls(n, pa.binary())
    columns["amqp_sequence"] = pa.nulls(n, pa.binary())
    return pa.Table.from_arrays([columns[name] for name in schema.names], schema=schema)


def orders_schema() -> pa.Schema:
    return message_schema({"application_properties": KEYS}, ID_CHILDREN, False)


def generate(rows: int, seed: int = 42, row_group: int = ROW_GROUP) -> Iterator[pa.Table]:
    """The table, one row group at a time (each from its own seeded generator)."""
    for number, first in enumerate(range(0, rows, row_group)):
        rng = np.random.default_rng([seed, number])
        yield build_orders(min(row_group, rows - first), rng)


def write_orders(path, rows: int = 10_000_000, seed: int = 42,
                 row_group: int = ROW_GROUP) -> Path:
    """Write ``rows`` order messages to a Parquet message table at ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with pq.ParquetWriter(partial, orders_schema()) as writer:
        for table in generate(rows, seed, row_group):
            writer.write_table(table, row_group_size=row_group)
    partial.replace(path)
    return path


def stream_batches(path, batch_rows: int = 1 << 16) -> Iterator[pa.RecordBatch]:
    """The file's record batches (``batch_rows`` at most), each a compact,
    unsliced copy (DuckDB refuses struct batches with offsets)."""
    parquet = pq.ParquetFile(path)
    for group in range(parquet.num_row_groups):
        table = parquet.read_row_group(group)
        for start in range(0, table.num_rows, batch_rows):
            rows = np.arange(start, min(start + batch_rows, table.num_rows))
            yield from table.take(pa.array(rows)).combine_chunks().to_batches()


def read_orders(path) -> pa.Table:
    """The whole file as one table with one chunk per column."""
    return pq.read_table(path).combine_chunks()


# --- validation ---------------------------------------------------------------------

def _leaves(array: pa.Array, name: str = "") -> Iterator[tuple[str, pa.Array]]:
    if pa.types.is_struct(array.type):
        for i in range(array.type.num_fields):
            yield from _leaves(array.field(i), f"{name}.{array.type.field(i).name}")
        yield f"{name}<validity>", array.is_valid()
    else:
        yield name, array


def _same(a: pa.Array, b: pa.Array) -> bool:
    """Equal values, types and (for dictionaries) the same dictionary; NaN equals NaN."""
    if a.type != b.type:
        return False
    if pa.types.is_floating(a.type):
        import pyarrow.compute as pc
        an, bn = pc.is_nan(a).fill_null(False), pc.is_nan(b).fill_null(False)
        return an.equals(bn) and pc.if_else(an, 0.0, a).equals(pc.if_else(bn, 0.0, b))
    return a.equals(b)


def tables_equal(a: pa.Table, b: pa.Table) -> list[str]:
    """The leaf columns in which two tables differ (empty: equal)."""
    if a.schema.names != b.schema.names:
        return ["column names"]
    diffs = []
    for name in a.schema.names:
        x, y = a.column(name).combine_chunks(), b.column(name).combine_chunks()
        lx, ly = dict(_leaves(x, name)), dict(_leaves(y, name))
        if list(lx) != list(ly):
            diffs.append(f"{name}: fields differ")
            continue
        diffs += [leaf for leaf in lx if not _same(lx[leaf], ly[leaf])]
    return diffs


def validate(rows: int = 20_000, seed: int = 7) -> None:
    """Raise unless the vectorised build of a ``rows`` sample equals what
    ``message_table`` makes of its row views, inferred and with the schema."""
    import filtex.arrow
    sample = build_orders(rows, np.random.default_rng(seed))
    schema = orders_schema()
    if not sample.schema.equals(schema, check_metadata=True):
        raise AssertionError("the sample's schema is not message_schema(...)'s")
    rebuilt = filtex.arrow.message_table(filtex.arrow.messages(sample), schema=sample.schema)
    if not rebuilt.schema.equals(schema, check_metadata=True):
        raise AssertionError("message_table(schema=...) changed the schema")
    diffs = tables_equal(rebuilt, sample)
    if diffs:
        raise AssertionError(f"round trip (given schema) differs in {diffs}")
    inferred = filtex.arrow.message_table(filtex.arrow.messages(sample))
    ap = inferred.schema.field("application_properties").type
    found = {ap.field(i).name: frozenset(ap.field(i).type.names[1:])
             for i in range(ap.num_fields)}
    if found != KEYS:
        raise AssertionError(f"inferred keys/children {found} != {KEYS}")
    expected = message_schema({"application_properties": found}, ID_CHILDREN, False)
    if not inferred.schema.equals(expected, check_metadata=True):
        raise AssertionError("inferred schema is not message_schema(...) of its keys")
    # the inferred table lists keys in first-seen order: put them in ours to compare
    column = inferred.column("application_properties").combine_chunks()
    reordered = pa.StructArray.from_arrays([column.field(k) for k in KEYS],
                                           fields=[ap.field(k) for k in KEYS])
    inferred = inferred.set_column(inferred.schema.get_field_index("application_properties"),
                                   pa.field("application_properties", reordered.type),
                                   reordered)
    diffs = tables_equal(inferred, sample)
    if diffs:
        raise AssertionError(f"round trip (inferred) differs in {diffs}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--row-group", type=int, default=ROW_GROUP)
    parser.add_argument("-o", "--output", help="Parquet file to write")
    parser.add_argument("--validate", action="store_true",
                        help="check the vectorised build against message_table (20,000 rows)")
    args = parser.parse_args(argv)
    if args.validate:
        start = time.perf_counter()
        validate()
        print(f"validated: 20,000 rows, vectorised == message_table(messages(sample)) "
              f"({time.perf_counter() - start:.1f} s)")
    if args.output:
        start = time.perf_counter()
        write_orders(args.output, args.rows, args.seed, args.row_group)
        seconds = time.perf_counter() - start
        size = Path(args.output).stat().st_size
        print(f"{args.rows:,} rows -> {args.output} ({size / 1e6:.1f} MB) in {seconds:.1f} s")
    if not (args.validate or args.output):
        parser.error("nothing to do: give -o FILE and/or --validate")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
