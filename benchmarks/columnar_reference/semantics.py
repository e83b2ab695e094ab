"""The benchmark filters' amqp semantics, written once over engine primitives."""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from filtex.table.schema import (ABSENT, BOOLEAN, BYTE, CHAR, DECIMAL32, DECIMAL64,  # noqa: E402
                                 DECIMAL128, DOUBLE, FLOAT, INT, LONG, NULL, SHORT, STRING,
                                 SYMBOL, TAG_NAMES, TIMESTAMP, UBYTE, UINT, ULONG, USHORT)
from filtex.message import HEADER_DEFAULTS  # noqa: E402
from filtex.runtime.ops import parse_datetime_ms, parse_duration_ms  # noqa: E402

NULLISH = (ABSENT, NULL)
STRINGISH = (CHAR, STRING, SYMBOL)
INTEGERS = (UBYTE, USHORT, UINT, BYTE, SHORT, INT, LONG, TIMESTAMP)   # child i
FLOATS = (FLOAT, DOUBLE)
DECIMALS = (DECIMAL32, DECIMAL64, DECIMAL128)
LONG_MIN, ULONG_MAX = -(1 << 63), (1 << 64) - 1

ENGINES = ("polars", "duckdb", "pyarrow")
SPARK_ENGINES = ("spark",)
"""Spark SQL text (``engines.SparkEngine``). Not in ``ENGINES``: it needs a
SparkSession (a JVM), so ``benchmarks/spark.py`` checks it row by row
against filtex (``--check``) and times it, not ``run.py`` or ``columnar.py``."""
ALL_ENGINES = ENGINES + SPARK_ENGINES
ROW = "filtex_row"   # DuckDB: the row number the result is ordered by


class NotExact(Exception):
    """This engine cannot compute this filter exactly over this table."""


# --- the filters ----------------------------------------------------------------------

def _filters() -> dict[str, str]:
    from benchmarks.cases import CASES
    from benchmarks.encoded import FILTERS as ENCODED
    texts = {case.name: case.sql for case in CASES if case.name != "composite"}
    assert ENCODED["rabbitmq-complex"] == texts["rabbitmq-complex"]
    texts["two-properties"] = ENCODED["two-properties"]
    return texts


FILTERS = _filters()
"""name -> filter text: benchmarks/cases.py CASES (but 'composite') and
benchmarks/encoded.py's 'two-properties' (its 'rabbitmq-complex' is the same text)."""
ORDER = ("rabbitmq-complex", "equality", "like-in", "arithmetic", "header-properties",
         "functions", "null-exists", "numeric-range", "two-properties")
assert sorted(ORDER) == sorted(FILTERS)
EXCLUDED = {"composite": "m.[x-opt-order].lines[0].sku reads an AMQP-encoded map "
                         "(no columnar form in any of the three engines)"}

JAN_2025 = parse_datetime_ms("2025-01-01")   # DATE('2025-01-01'), as filtex folds it


def _rabbitmq_complex(S: "Semantics") -> "Tri":
    region = S.ap("customer_region")
    return S.and_(S.str_in(S.ap("order_type"), ("premium", "express")),
                  S.between(S.ap("total_amount"), 100, 5000),
                  S.or_(S.like(region, "EU-%"), S.str_cmp(region, "=", "US-CA")),
                  S.time_cmp("creation-time", ">=", 1750772279000),
                  S.not_(S.predicate(S.ap("cancelled"))))


def _equality(S):
    return S.str_cmp(S.ap("color"), "=", "blue")


def _like_in(S):
    return S.and_(S.like(S.ap("sku"), "ABC-%X_"),
                  S.str_in(S.ap("customer_region"),
                           ("EU-DE", "EU-FR", "EU-IT", "EU-ES", "US-CA", "US-NY")),
                  S.like(S.ap("customer"), "%test%", negate=True))


def _arithmetic(S):
    q, p, d = S.num(S.ap("quantity")), S.num(S.ap("price")), S.num(S.ap("discount"))
    return S.and_(S.num_cmp(S.ring(S.ring(q, "*", p), "-", d), ">", 1000),
                  S.divisible(S.ap("quantity"), 2))


def _header_properties(S):
    return S.and_(S.header_cmp("priority", ">", 4), S.header_cmp("durable", "=", True),
                  S.prop_str_cmp("subject", "=", "order.created"),
                  S.prop_str_cmp("content-type", "=", "application/json"))


def _functions(S):
    return S.and_(S.lower_eq(S.ap("customer"), "acme"), S.left_eq(S.ap("sku"), 3, "ABC"),
                  S.time_cmp("creation-time", ">", JAN_2025))


def _null_exists(S):
    return S.and_(S.exists(S.ap("tags")), S.is_null(S.ap("coupon")))


def _numeric_range(S):
    return S.and_(S.between(S.ap("total_amount"), 100, 5000),
                  S.value_cmp(S.ap("quantity"), ">=", 3))


def _two_properties(S):
    return S.and_(S.str_cmp(S.ap("region"), "=", "EU"), S.value_cmp(S.ap("total"), ">", 100))


RECIPES: dict[str, Callable] = {
    "rabbitmq-complex": _rabbitmq_complex, "equality": _equality, "like-in": _like_in,
    "arithmetic": _arithmetic, "header-properties": _header_properties,
    "functions": _functions, "null-exists": _null_exists, "numeric-range": _numeric_range,
    "two-properties": _two_properties}
SECTIONS = {name: ("header", "properties", "application_properties") for name in RECIPES}

NOTES = {
    "duckdb": "lower() is not Python's str.lower: U+0130 'İ' gives 'i' (Python 'i̇') and "
              "there is no final sigma (word-final 'Σ' gives 'σ', Python 'ς'); LOWER(x) = "
              "'acme' is exact all the same, since no differing mapping can make or unmake "
              "'acme' (--check audits every code point).",
    "pyarrow": "utf8_lower is simple per-code-point case mapping (differs from Python on "
               "U+0130 and on letters of newer Unicode versions; no final sigma): exact "
               "for 'acme' only, as for DuckDB. Integer arithmetic runs in int64 when the "
               "operands' bounds prove it cannot overflow, else in decimal256 (exact).",
    "polars": "str.to_lowercase is full case mapping with final sigma, like Python's; it "
              "differs only on letters of newer Unicode versions than Python's: exact for "
              "'acme'.",
}
SPARK_NOTES = {
    "spark": "lower() differs from Python's str.lower on letters of newer Unicode "
             "versions (55 code points with Spark 4.3 and Python 3.11; final sigma and "
             "U+0130 as Python; the JVM's locale is pinned to en/US all the same): exact "
             "for 'acme' (benchmarks/spark.py --check audits every code point). "
             "Integer arithmetic runs "
             "in BIGINT with try_add/try_subtract/try_multiply and only the rows that "
             "overflow in DECIMAL(38,0); its query counts with count_if over a projection "
             "of the named intermediates, as a WHERE over them is inlined by Spark past "
             "the JVM's 64 kB method limit (then interpreted). Timestamps compare as "
             "TIMESTAMP against timestamp_millis(c). The exact form is one CASE wherever a "
             "failure is possible, so Spark pushes into the Parquet scan only the "
             "top-level conjuncts of filters that cannot fail (no implied conditions are "
             "added by hand).",
}
"""Not in ``NOTES`` (which ``columnar.py`` prints under its own engines)."""


# --- the semantics, once, over engine primitives -----------------------------------------

@dataclass
class Tri:
    """A three-valued condition: ``value`` (null = unknown) and ``fail`` (a
    non-null mask of rows where evaluating it failed; False: never)."""
    value: Any
    fail: Any


@dataclass
class Val:
    """An application property: its tag expression and its children."""
    key: str
    tag: Any
    children: dict[str, Any]


@dataclass
class Num:
    """A number being computed: NULL rows, non-number rows (``bad``: a failure
    where used), failures so far, an exact integer (int128) or a double."""
    null: Any
    bad: Any
    fail: Any
    is_int: Any
    ival: Any
    is_dbl: Any
    dval: Any


def like_shape(pattern: str) -> tuple[str, str]:
    """A LIKE pattern (amqp: no escape character) as ('eq'|'prefix'|'suffix'|
    'contains', literal) or ('regex', an anchored, dot-all regex: '_' is one
    code point, '%' any run, newlines included)."""
    if "_" not in pattern:
        parts = pattern.split("%")
        if len(parts) == 1:
            return "eq", pattern
        if len(parts) == 2 and parts[1] == "" and parts[0]:
            return "prefix", parts[0]
        if len(parts) == 2 and parts[0] == "" and parts[1]:
            return "suffix", parts[1]
        if len(parts) == 3 and parts[0] == parts[2] == "" and parts[1]:
            return "contains", parts[1]
    out = []
    for c in pattern:
        if c == "%":
            out.append(".*")
        elif c == "_":
            out.append(".")
        elif c.isalnum() or ord(c) > 127:
            out.append(c)
        else:
            out.append("\\x{%X}" % ord(c))
    return "regex", "(?s)\\A" + "".join(out) + "\\z"


class Semantics:
    """amqp-dialect predicates over one engine's primitives (``E``)."""

    def __init__(self, E: Any, schema: pa.Schema, tags: dict[str, set[int]]) -> None:
        self.E = E
        self.schema = schema
        self.tags = tags
        self._memo: dict[tuple, Any] = {}   # one expression (one array) per value and test

    def _once(self, key: tuple, make: Callable[[], Any]) -> Any:
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # values
    def ap(self, key: str) -> Val:
        return self._once(("ap", key), lambda: self._ap(key))

    def _ap(self, key: str) -> Val:
        if "application_properties" not in self.schema.names:
            return Val(key, self.E.absent(), {})
        struct = self.schema.field("application_properties").type
        if struct.get_field_index(key) < 0:   # no message has it (check_table: no residual)
            return Val(key, self.E.absent(), {})
        children = struct.field(key).type.names[1:]
        base = self.E.field("application_properties", key)
        return Val(key, self.E.sub(base, "t"), {c: self.E.sub(base, c) for c in children})

    def _tags(self, v: Val, tags, child: str | None = None) -> Any:
        """``v``'s tag is one of ``tags`` (False when ``v`` has no ``child``)."""
        if child is not None and child not in v.children:
            return False
        tags = tuple(tags)
        return self._once(("tags", v.key, tags), lambda: self.E.tag_in(v.tag, tags))

    def _ok(self, v: Val, *groups: tuple[tuple[int, ...], str | None]) -> Any:
        """The tag is absent/null or in one of the groups whose child ``v`` has."""
        tags = NULLISH + tuple(t for tags, child in groups
                               if child is None or child in v.children for t in tags)
        return self._tags(v, tags)

    def _nan(self, v: Val) -> Any:
        """A float holding NaN (only a float tag's row has an f value)."""
        if "f" not in v.children:
            return False
        E = self.E
        return self._once(("nan", v.key), lambda: E.fill_false(E.isnan(v.children["f"])))

    def _no_decimals(self, v: Val, what: str) -> None:
        """uuid and binary values (the x child) simply fail; decimals need their
        value (IEEE BID bytes), which no engine here decodes."""
        found = self.tags.get(v.key, set()) & set(DECIMALS)
        if found:
            names = ", ".join(TAG_NAMES[t] for t in sorted(found))
            raise NotExact(f"{v.key!r} holds decimal values ({names}): a decimal cannot be "
                           f"{what} without decoding its BID bytes (and a decimal NaN is "
                           "NULL, not a failure)")

    # conditions
    def and_(self, *items: Tri) -> Tri:
        E = self.E
        return Tri(E.k_and(*[t.value for t in items]), E.m_or(*[t.fail for t in items]))

    def or_(self, *items: Tri) -> Tri:
        E = self.E
        return Tri(E.k_or(*[t.value for t in items]), E.m_or(*[t.fail for t in items]))

    def not_(self, item: Tri) -> Tri:
        return Tri(self.E.k_not(item.value), item.fail)

    def result(self, item: Tri) -> Any:
        """The filter's three-valued result: NULL wherever anything failed."""
        return self.E.null_where(item.fail, item.value)

    # string comparisons and functions
    def _string_constant(self, c: str) -> None:
        if parse_datetime_ms(c) is not None or parse_duration_ms(c) is not None:
            raise NotExact(f"{c!r} reads as a time: a timestamp value would compare with it")

    def _string(self, v: Val, op: Callable[[Any], Any], nan_is_null: bool,
                negate: bool = False) -> Tri:
        E = self.E
        is_str = self._tags(v, STRINGISH, "s")
        ok = E.m_or(self._ok(v, (STRINGISH, "s")), self._nan(v) if nan_is_null else False)
        value = E.choose([(is_str, op(v.children.get("s")))]) if is_str is not False \
            else E.choose([])
        return Tri(E.k_not(value) if negate else value, E.m_not(ok))

    def str_cmp(self, v: Val, op: str, c: str) -> Tri:
        """``v op 'c'``: strings, symbols and chars by code point; NaN is NULL;
        any other type (a long, a boolean, a timestamp) fails."""
        self._string_constant(c)
        self._no_decimals(v, "compared")
        return self._string(v, lambda s: self.E.s_cmp(s, op, c), True)

    def str_in(self, v: Val, items: tuple[str, ...]) -> Tri:
        for c in items:
            self._string_constant(c)
        self._no_decimals(v, "compared")
        return self._string(v, lambda s: self.E.s_in(s, items), True)

    def like(self, v: Val, pattern: str, negate: bool = False) -> Tri:
        """``v [NOT] LIKE pattern``: a non-string (NaN too) fails."""
        return self._string(v, lambda s: self.E.s_like(s, pattern), False, negate)

    def lower_eq(self, v: Val, c: str) -> Tri:
        """``LOWER(v) = 'c'``: LOWER of a non-string fails."""
        self._string_constant(c)
        return self._string(v, lambda s: self.E.s_lower_eq(s, c), False)

    def left_eq(self, v: Val, n: int, c: str) -> Tri:
        """``LEFT(v, n) = 'c'`` (n code points)."""
        self._string_constant(c)
        return self._string(v, lambda s: self.E.s_left_eq(s, n, c), False)

    # numbers
    def value_cmp(self, v: Val, op: str, c: int) -> Tri:
        """``v op c`` for an integer constant: integers and timestamps exactly,
        ulong exactly, floats as doubles (NaN: NULL); anything else fails."""
        assert type(c) is int
        self._no_decimals(v, "compared")
        E = self.E
        ints = self._tags(v, INTEGERS, "i")
        ulongs = self._tags(v, (ULONG,), "u")
        floats = self._tags(v, FLOATS, "f")
        pairs = []
        if ints is not False:
            pairs.append((ints, E.cmp(v.children["i"], op, c)))
        if ulongs is not False:
            pairs.append((ulongs, E.cmp_unsigned(v.children["u"], op, c)))
        if floats is not False:
            pairs.append((E.m_and(floats, E.m_not(self._nan(v))),
                          E.cmp(v.children["f"], op, float(c))))
        ok = self._ok(v, (INTEGERS, "i"), ((ULONG,), "u"), (FLOATS, "f"))
        return Tri(E.choose(pairs), E.m_not(ok))

    def between(self, v: Val, low: int, high: int) -> Tri:
        return self.and_(self.value_cmp(v, ">=", low), self.value_cmp(v, "<=", high))

    def predicate(self, v: Val) -> Tri:
        """``v`` where a condition is expected: boolean or NULL, else a failure."""
        E = self.E
        is_bool = self._tags(v, (BOOLEAN,), "b")
        value = E.choose([(is_bool, v.children["b"])] if is_bool is not False else [])
        return Tri(value, E.m_not(self._ok(v, ((BOOLEAN,), "b"))))

    def exists(self, v: Val) -> Tri:
        return Tri(self.E.m_not(self.E.tag_in(v.tag, (ABSENT,))), False)

    def is_null(self, v: Val) -> Tri:
        return Tri(self.E.tag_in(v.tag, NULLISH), False)

    # header and properties (typed fields; a residual entry is refused in check_table)
    def header_cmp(self, name: str, op: str, c: Any) -> Tri:
        E = self.E
        value = E.fill_null(E.field("header", name), HEADER_DEFAULTS[name])
        return Tri(E.cmp(value, op, c), False)

    def prop_str_cmp(self, name: str, op: str, c: str) -> Tri:
        return Tri(self.E.s_cmp(self.E.field("properties", name), op, c), False)

    def time_cmp(self, name: str, op: str, millis: int) -> Tri:
        return Tri(self.E.cmp(self.E.epoch_ms(self.E.field("properties", name)), op, millis),
                   False)

    # arithmetic
    def num(self, v: Val) -> Num:
        self._no_decimals(v, "used in arithmetic")
        E = self.E
        ints = self._tags(v, INTEGERS, "i")
        ulongs = self._tags(v, (ULONG,), "u")
        floats = self._tags(v, FLOATS, "f")
        null = self._tags(v, NULLISH)
        parts = []
        if ints is not False:
            parts.append((ints, E.i128(v.children["i"])))
        if ulongs is not False:
            parts.append((ulongs, E.i128(v.children["u"])))
        bad = E.m_and(E.m_not(null), E.m_not(E.m_or(ints, ulongs, floats)))
        return Num(null=null, bad=bad, fail=False, is_int=E.m_or(ints, ulongs),
                   ival=E.ichoose(parts) if parts else None, is_dbl=floats,
                   dval=v.children.get("f"))

    def _double(self, n: Num) -> Any:
        E = self.E
        pairs = []
        if n.is_int is not False:
            pairs.append((n.is_int, E.i_to_f(n.ival)))
        if n.is_dbl is not False:
            pairs.append((n.is_dbl, n.dval))
        return E.choose(pairs, "f64")

    def ring(self, a: Num, op: str, b: Num) -> Num:
        """``a op b`` for + - *: NULL first, then a non-number fails; integers
        exactly (outside [-2^63, 2^64-1]: NaN), else doubles (an infinity from
        finite operands: NaN)."""
        E = self.E
        B = E.bind   # name an intermediate (SQL text would repeat it otherwise)
        null = B(E.m_or(a.null, b.null))
        live = E.m_not(null)
        fail = B(E.m_or(a.fail, b.fail, E.m_and(live, E.m_or(a.bad, b.bad))))
        both_int = B(E.m_and(live, a.is_int, b.is_int))
        if both_int is not False:
            exact = B(E.iop(a.ival, op, b.ival))
            in_range = B(E.i_in_range(exact))
            int_ok = B(E.m_and(both_int, in_range))
            int_nan = B(E.m_and(both_int, E.m_not(in_range)))
        else:
            exact, int_ok, int_nan = None, False, False
        flt = B(E.m_and(live, E.m_or(a.is_int, a.is_dbl), E.m_or(b.is_int, b.is_dbl),
                        E.m_not(E.m_and(a.is_int, b.is_int))))
        if flt is not False:
            da, db = B(self._double(a)), B(self._double(b))
            y = B(E.fop(da, op, db))
            overflow = E.m_and(E.fill_false(E.isinf(y)), E.fill_false(E.isfinite(da)),
                               E.fill_false(E.isfinite(db)))
            dval = B(E.where(E.m_or(int_nan, overflow), E.nan(), y))
        elif int_nan is not False:
            dval = B(E.choose([(int_nan, E.nan())], "f64"))
        else:
            dval = None
        return Num(null=null, bad=False, fail=fail, is_int=int_ok, ival=exact,
                   is_dbl=B(E.m_or(flt, int_nan)), dval=dval)

    def num_cmp(self, n: Num, op: str, c: int) -> Tri:
        """``n op c`` for a computed number: NaN is NULL."""
        E = self.E
        pairs = []
        if n.is_int is not False:
            pairs.append((n.is_int, E.icmp(n.ival, op, c)))
        if n.is_dbl is not False:
            pairs.append((E.m_and(n.is_dbl, E.m_not(E.fill_false(E.isnan(n.dval)))),
                          E.cmp(n.dval, op, float(c))))
        return Tri(E.choose(pairs), E.m_or(n.fail, n.bad))

    def divisible(self, v: Val, k: int) -> Tri:
        """``v % k = 0``: both operands must be integers (a double fails)."""
        E = self.E
        ints = self._tags(v, INTEGERS, "i")
        ulongs = self._tags(v, (ULONG,), "u")
        pairs = []
        if ints is not False:
            pairs.append((ints, E.divisible(v.children["i"], k)))
        if ulongs is not False:
            pairs.append((ulongs, E.divisible(v.children["u"], k)))
        ok = self._ok(v, (INTEGERS, "i"), ((ULONG,), "u"))
        return Tri(E.choose(pairs), E.m_not(ok))


