"""The benchmark filters written by hand for Polars, DuckDB and pyarrow.compute,
each computing the exact three-valued result of filtex's amqp dialect over a
message table (``docs/message-table.md``), so ``benchmarks/columnar.py`` times
equal work.

    python -m benchmarks.columnar_reference --check        # row by row against filtex
    python -m benchmarks.columnar_reference --show-sql rabbitmq-complex

Exact means what filtex's per-message engine over the row views answers
(``filtex.arrow.rows.evaluate_rows``), row by row: true, false or null (unknown).

- Every value is read through its type tag ``t``, never a child's validity:
  tag 0 (absent) and 1 (null) are NULL, and only the child the tag names holds
  the value.
- **The amqp failure rule.** A value of a type an operation refuses (a string
  compared with a number, a long compared with a string, a string under NOT,
  a double under ``%``) is an evaluation failure, and a failure anywhere makes
  the *whole* filter unknown for that row, even where AND or OR would have
  decided it. Each predicate below yields (value, fail); the filter's result
  is ``CASE WHEN any fail THEN NULL ELSE value END``.
- NaN: any comparison with NaN is NULL (also against a string constant, which
  is then *not* a failure); LIKE and functions of a NaN fail.
- Header fields read their AMQP defaults when absent (priority 4, durable
  false); properties fields are typed, absent is NULL; timestamps compare
  with integers as milliseconds.
- Arithmetic: integers widen freely (int128 here), and a result outside
  [-2^63, 2^64-1] is NaN; a double that overflows to infinity from finite
  operands is NaN; NULL on either side is NULL before any type check.

The semantics are written once (``Semantics``) over a small set of engine
primitives; each engine (``PolarsEngine``, ``DuckDBEngine``,
``ArrowEngine``) implements the primitives natively: Polars expressions,
DuckDB SQL text, eager pyarrow.compute calls (string predicates on the
dictionary, then ``take``). Each filter is a short recipe over ``Semantics``.
What an engine cannot compute exactly raises ``NotExact`` with the reason;
``--check`` reports those, and the per-engine notes (``LOWER``, integer
overflow) are in ``NOTES``.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from filtex.arrow.schema import (ABSENT, BOOLEAN, BYTE, CHAR, DECIMAL32,  # noqa: E402
                                 DECIMAL64, DECIMAL128, DOUBLE, FLOAT, INT, LONG, NULL, SHORT,
                                 STRING, SYMBOL, TAG_NAMES, TIMESTAMP, UBYTE, UINT, ULONG,
                                 USHORT, rest_column)
from filtex.message import HEADER_DEFAULTS  # noqa: E402
from filtex.runtime.ops import parse_datetime_ms, parse_duration_ms  # noqa: E402

NULLISH = (ABSENT, NULL)
STRINGISH = (CHAR, STRING, SYMBOL)
INTEGERS = (UBYTE, USHORT, UINT, BYTE, SHORT, INT, LONG, TIMESTAMP)   # child i
FLOATS = (FLOAT, DOUBLE)
DECIMALS = (DECIMAL32, DECIMAL64, DECIMAL128)
LONG_MIN, ULONG_MAX = -(1 << 63), (1 << 64) - 1

ENGINES = ("polars", "duckdb", "pyarrow")
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


# --- engine primitives: masks may be Python bools (folded), values may not -------------

class _Masks:
    """Two-valued mask algebra with Python ``True``/``False`` folded away."""

    @staticmethod
    def _distinct(ms):
        seen, out = set(), []
        for m in ms:
            key = m if isinstance(m, str) else id(m)
            if key not in seen:
                seen.add(key)
                out.append(m)
        return out

    def m_and(self, *ms):
        ms = self._distinct(m for m in ms if m is not True)
        if any(m is False for m in ms):
            return False
        return True if not ms else self._and(ms)

    def m_or(self, *ms):
        ms = self._distinct(m for m in ms if m is not False)
        if any(m is True for m in ms):
            return True
        return False if not ms else self._or(ms)

    def m_not(self, m):
        if m is True or m is False:
            return not m
        key = ("not", m if isinstance(m, str) else id(m))
        cache = self.__dict__.setdefault("_nots", {})
        if key not in cache:
            cache[key] = (m, self._not(m))   # keep m alive: its id stays its own
        return cache[key][1]

    def bind(self, x):
        """A name for an intermediate result (Polars' CSE and eager pyarrow need none)."""
        return x

    def null_where(self, fail, value):
        if fail is False:
            return value
        if fail is True:
            return self.choose([])
        return self.choose([(self.m_not(fail), value)])


_OPS = {"=": "__eq__", "<>": "__ne__", "<": "__lt__", "<=": "__le__", ">": "__gt__",
        ">=": "__ge__"}


class PolarsEngine(_Masks):
    """Polars expressions (lazy; evaluated with ``df.lazy().select(expr)``)."""
    name = "polars"

    def __init__(self) -> None:
        import polars as pl
        self.pl = pl

    def field(self, section, name):
        return self.pl.col(section).struct.field(name)

    def sub(self, base, name):
        return base.struct.field(name)

    def absent(self):
        return self.pl.lit(ABSENT, self.pl.Int8)

    def lit(self, b):
        return self.pl.lit(b)

    def tag_in(self, tag, tags):
        return tag == tags[0] if len(tags) == 1 else tag.is_in(list(tags))

    def _and(self, ms):
        out = self._expr(ms[0])
        for m in ms[1:]:
            out = out & self._expr(m)
        return out

    def _or(self, ms):
        out = self._expr(ms[0])
        for m in ms[1:]:
            out = out | self._expr(m)
        return out

    def _not(self, m):
        return ~m

    def _expr(self, m):
        return self.pl.lit(m) if m is True or m is False else m

    def k_and(self, *vs):      # Polars' & and | are Kleene on nulls
        return self._and(list(vs))

    def k_or(self, *vs):
        return self._or(list(vs))

    def k_not(self, v):
        return ~v

    def choose(self, pairs, kind="bool"):
        pl = self.pl
        dtype = {"bool": pl.Boolean, "f64": pl.Float64, "i128": pl.Int128}[kind]
        pairs = [(c, v) for c, v in pairs if c is not False]
        if not pairs:
            return pl.lit(None, dtype)
        if pairs[0][0] is True:
            return pairs[0][1]
        chain = pl.when(pairs[0][0]).then(pairs[0][1])
        for cond, value in pairs[1:]:
            chain = chain.when(self._expr(cond)).then(value)
        return chain.otherwise(pl.lit(None, dtype))

    def where(self, mask, a, b):
        if mask is False:
            return b
        return self.pl.when(self._expr(mask)).then(a).otherwise(b)

    def cmp(self, x, op, c):
        return getattr(x, _OPS[op])(self.pl.lit(c))

    def cmp_unsigned(self, u, op, c):
        if not 0 <= c <= ULONG_MAX:   # every ulong compares with c as 0 does
            return self.pl.lit(getattr(0, _OPS[op])(c))
        return getattr(u, _OPS[op])(self.pl.lit(c, self.pl.UInt64))

    def isnan(self, x):
        return x.is_nan()

    def isinf(self, x):
        return x.is_infinite()

    def isfinite(self, x):
        return x.is_finite()

    def fill_false(self, x):
        return x.fill_null(False)

    def fill_null(self, x, value):
        return x.fill_null(value)

    def nan(self):
        return self.pl.lit(math.nan)

    def epoch_ms(self, x):
        return x.dt.epoch("ms")

    def _s(self, s):
        return s.cast(self.pl.String)

    def s_cmp(self, s, op, c):
        return getattr(self._s(s), _OPS[op])(self.pl.lit(c))

    def s_in(self, s, items):
        return self._s(s).is_in(list(items))

    def s_like(self, s, pattern):
        kind, text = like_shape(pattern)
        s = self._s(s)
        if kind == "eq":
            return s == text
        if kind == "prefix":
            return s.str.starts_with(text)
        if kind == "suffix":
            return s.str.ends_with(text)
        if kind == "contains":
            return s.str.contains(text, literal=True)
        return s.str.contains(text)

    def s_lower_eq(self, s, c):
        return self._s(s).str.to_lowercase() == c

    def s_left_eq(self, s, n, c):
        return self._s(s).str.head(n) == c

    def i128(self, x):
        return x.cast(self.pl.Int128)

    def ichoose(self, parts):
        return self.choose(parts, "i128") if len(parts) > 1 else parts[0][1]

    def iop(self, a, op, b):
        return {"+": a + b, "-": a - b, "*": a * b}[op]

    def i_in_range(self, x):
        pl = self.pl
        return ((x >= pl.lit(LONG_MIN, pl.Int128)) & (x <= pl.lit(ULONG_MAX, pl.Int128))
                ).fill_null(False)

    def icmp(self, x, op, c):
        return getattr(x, _OPS[op])(self.pl.lit(c, self.pl.Int128))

    def i_to_f(self, x):
        return x.cast(self.pl.Float64)

    def fop(self, a, op, b):
        return {"+": a + b, "-": a - b, "*": a * b}[op]

    def divisible(self, x, k):
        return (x % k) == 0


def _sql_str(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _sql_lit(c: Any) -> str:
    if c is True or c is False:
        return "TRUE" if c else "FALSE"
    if isinstance(c, float):
        return f"CAST('{c!r}' AS DOUBLE)"
    if isinstance(c, int):
        return str(c) if LONG_MIN <= c < 1 << 63 else f"CAST('{c}' AS HUGEINT)"
    return _sql_str(c)


class DuckDBEngine(_Masks):
    """DuckDB SQL text over a registered Arrow table. Intermediates that would
    repeat (arithmetic) are computed once, as columns of nested subqueries."""
    name = "duckdb"

    def __init__(self) -> None:
        self.stages: list[tuple[str, str]] = []

    def bind(self, x):
        if not isinstance(x, str) or len(x) < 40:
            return x
        name = f"filtex_t{len(self.stages)}"
        self.stages.append((name, x))
        return name

    def source(self, table: str) -> str:
        for name, sql in self.stages:
            table = f"(SELECT *, {sql} AS {name} FROM {table})"
        return table

    def field(self, section, name):
        return f'"{section}"[{_sql_str(name)}]'

    def sub(self, base, name):
        return f"{base}[{_sql_str(name)}]"

    def absent(self):
        return f"CAST({ABSENT} AS TINYINT)"

    def _expr(self, m):
        return "TRUE" if m is True else "FALSE" if m is False else m

    def tag_in(self, tag, tags):
        if len(tags) == 1:
            return f"({tag} = {tags[0]})"
        return f"({tag} IN ({', '.join(map(str, tags))}))"

    def _and(self, ms):
        return "(" + " AND ".join(map(self._expr, ms)) + ")"

    def _or(self, ms):
        return "(" + " OR ".join(map(self._expr, ms)) + ")"

    def _not(self, m):
        return f"(NOT {m})"

    def k_and(self, *vs):      # SQL AND/OR/NOT are Kleene
        return self._and(list(vs))

    def k_or(self, *vs):
        return self._or(list(vs))

    def k_not(self, v):
        return f"(NOT {v})"

    def choose(self, pairs, kind="bool"):
        sql_type = {"bool": "BOOLEAN", "f64": "DOUBLE", "i128": "HUGEINT"}[kind]
        pairs = [(c, v) for c, v in pairs if c is not False]
        if not pairs:
            return f"CAST(NULL AS {sql_type})"
        if pairs[0][0] is True:
            return pairs[0][1]
        whens = " ".join(f"WHEN {self._expr(c)} THEN {v}" for c, v in pairs)
        return f"(CASE {whens} END)"

    def where(self, mask, a, b):
        if mask is False:
            return b
        return f"(CASE WHEN {self._expr(mask)} THEN {a} ELSE {b} END)"

    def cmp(self, x, op, c):
        return f"({x} {op} {_sql_lit(c)})"

    def cmp_unsigned(self, u, op, c):
        return f"(CAST({u} AS HUGEINT) {op} {_sql_lit(c)})"

    def isnan(self, x):
        return f"isnan({x})"

    def isinf(self, x):
        return f"isinf({x})"

    def isfinite(self, x):
        return f"isfinite({x})"

    def fill_false(self, x):
        return f"coalesce({x}, FALSE)"

    def fill_null(self, x, value):
        return f"coalesce({x}, {_sql_lit(value)})"

    def nan(self):
        return "CAST('NaN' AS DOUBLE)"

    def epoch_ms(self, x):
        return f"epoch_ms({x})"

    def s_cmp(self, s, op, c):
        return f"({s} {op} {_sql_str(c)})"

    def s_in(self, s, items):
        return f"({s} IN ({', '.join(map(_sql_str, items))}))"

    def s_like(self, s, pattern):
        # DuckDB's LIKE has no default escape character, '_' is one code point and
        # '%' spans newlines: the amqp LIKE without ESCAPE, as it is
        return f"({s} LIKE {_sql_str(pattern)})"

    def s_lower_eq(self, s, c):
        return f"(lower({s}) = {_sql_str(c)})"

    def s_left_eq(self, s, n, c):
        return f"(left({s}, {n}) = {_sql_str(c)})"

    def i128(self, x):
        return f"CAST({x} AS HUGEINT)"

    def ichoose(self, parts):
        return self.choose(parts, "i128") if len(parts) > 1 else parts[0][1]

    def iop(self, a, op, b):
        return f"({a} {op} {b})"

    def i_in_range(self, x):
        return f"coalesce({x} BETWEEN {LONG_MIN} AND {_sql_lit(ULONG_MAX)}, FALSE)"

    def icmp(self, x, op, c):
        return f"({x} {op} {_sql_lit(c)})"

    def i_to_f(self, x):
        return f"CAST({x} AS DOUBLE)"

    def fop(self, a, op, b):
        return f"({a} {op} {b})"

    def divisible(self, x, k):
        return f"({x} % {k} = 0)"


@dataclass
class _Int:
    """pyarrow integers: int64 while a bound proves the values fit, else decimal256."""
    array: pa.Array
    bound: int          # |value| <= bound for every value


_DEC = pa.decimal256(20, 0)


class ArrowEngine(_Masks):
    """Eager pyarrow.compute over one table (one chunk per column)."""
    name = "pyarrow"

    def __init__(self, table: pa.Table, columns: dict[str, pa.Array] | None = None) -> None:
        self.n = table.num_rows
        self.columns = columns if columns is not None else arrow_columns(table)

    def field(self, section, name):
        column = self.columns[section]
        return pc.struct_field(column, [column.type.get_field_index(name)])

    def sub(self, base, name):
        return pc.struct_field(base, [base.type.get_field_index(name)])

    def absent(self):
        return pa.array(np.full(self.n, ABSENT, np.int8))

    def _expr(self, m):
        if m is True or m is False:
            return pa.array(np.full(self.n, m))
        return m

    def tag_in(self, tag, tags):
        if len(tags) == 1:
            return pc.equal(tag, pa.scalar(tags[0], pa.int8()))
        return pc.is_in(tag, value_set=pa.array(tags, pa.int8()))

    def _and(self, ms):
        out = ms[0]
        for m in ms[1:]:
            out = pc.and_(out, m)
        return self._expr(out)

    def _or(self, ms):
        out = ms[0]
        for m in ms[1:]:
            out = pc.or_(out, m)
        return self._expr(out)

    def _not(self, m):
        return pc.invert(m)

    def k_and(self, *vs):
        out = self._expr(vs[0])
        for v in vs[1:]:
            out = pc.and_kleene(out, self._expr(v))
        return out

    def k_or(self, *vs):
        out = self._expr(vs[0])
        for v in vs[1:]:
            out = pc.or_kleene(out, self._expr(v))
        return out

    def k_not(self, v):
        return pc.invert(v)

    def choose(self, pairs, kind="bool"):
        typ = {"bool": pa.bool_(), "f64": pa.float64()}[kind]
        out = pa.nulls(self.n, typ)
        for cond, value in reversed(pairs):
            if cond is False:
                continue
            out = value if cond is True else pc.if_else(cond, value, out)
        return out

    def where(self, mask, a, b):
        if mask is False:
            return b
        return pc.if_else(self._expr(mask), a, b)

    _FN = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
           ">": pc.greater, ">=": pc.greater_equal}

    def cmp(self, x, op, c):
        return self._FN[op](x, c)

    def cmp_unsigned(self, u, op, c):
        if not 0 <= c <= ULONG_MAX:
            return self._expr(getattr(0, _OPS[op])(c))
        return self._FN[op](u, pa.scalar(c, pa.uint64()))

    def isnan(self, x):
        return pc.is_nan(x)

    def isinf(self, x):
        return pc.is_inf(x)

    def isfinite(self, x):
        return pc.is_finite(x)

    def fill_false(self, x):
        return pc.fill_null(x, False)

    def fill_null(self, x, value):
        return pc.fill_null(x, value)

    def nan(self):
        return pa.scalar(math.nan)

    def epoch_ms(self, x):
        return pc.cast(x, pa.int64())

    # strings: the predicate runs once per dictionary value, then ``take``
    @staticmethod
    def _on_dictionary(s, fn):
        if isinstance(s, pa.ChunkedArray):
            return pa.chunked_array([ArrowEngine._on_dictionary(c, fn) for c in s.chunks],
                                    pa.bool_())
        if pa.types.is_dictionary(s.type):
            return fn(s.dictionary).take(s.indices)
        return fn(s)

    def s_cmp(self, s, op, c):
        return self._on_dictionary(s, lambda d: self._FN[op](d, c))

    def s_in(self, s, items):
        return self._on_dictionary(s, lambda d: pc.is_in(d, value_set=pa.array(items)))

    def s_like(self, s, pattern):
        kind, text = like_shape(pattern)
        fn = {"eq": lambda d: pc.equal(d, text),
              "prefix": lambda d: pc.starts_with(d, text),
              "suffix": lambda d: pc.ends_with(d, text),
              "contains": lambda d: pc.match_substring(d, text),
              "regex": lambda d: pc.match_substring_regex(d, text)}[kind]
        return self._on_dictionary(s, fn)

    def s_lower_eq(self, s, c):
        return self._on_dictionary(s, lambda d: pc.equal(pc.utf8_lower(d), c))

    def s_left_eq(self, s, n, c):
        return self._on_dictionary(s, lambda d: pc.equal(pc.utf8_slice_codeunits(d, 0, n), c))

    # exact integers
    @staticmethod
    def _bound(array) -> int:
        low_high = pc.min_max(array)
        low, high = low_high["min"].as_py(), low_high["max"].as_py()
        return 0 if low is None else max(abs(int(low)), abs(int(high)))

    def i128(self, x):
        bound = self._bound(x)
        if pa.types.is_unsigned_integer(x.type):
            return _Int(pc.cast(x, pa.int64()) if bound < 1 << 63 else pc.cast(x, _DEC), bound)
        return _Int(x, bound)

    @staticmethod
    def _dec(a: _Int):
        return a.array if pa.types.is_decimal(a.array.type) else pc.cast(a.array, _DEC)

    def ichoose(self, parts):
        if len(parts) == 1:
            return parts[0][1]
        bound = max(p[1].bound for p in parts)
        wide = any(pa.types.is_decimal(p[1].array.type) for p in parts)
        out = None
        for cond, value in reversed(parts):
            array = self._dec(value) if wide else value.array
            out = array if out is None else pc.if_else(cond, array, out)
        return _Int(out, bound)

    def iop(self, a: _Int, op, b: _Int):
        bound = a.bound * b.bound if op == "*" else a.bound + b.bound
        fn = {"+": pc.add, "-": pc.subtract, "*": pc.multiply}[op]
        if bound < 1 << 63 and not pa.types.is_decimal(a.array.type) \
                and not pa.types.is_decimal(b.array.type):
            return _Int(fn(a.array, b.array), bound)   # cannot overflow: exact
        result = fn(self._dec(a), self._dec(b))
        return _Int(result, bound)

    def i_in_range(self, x: _Int):
        if not pa.types.is_decimal(x.array.type):
            return True
        low = pa.scalar(LONG_MIN, pa.decimal256(20, 0)).cast(x.array.type)
        high = pa.scalar(ULONG_MAX, pa.decimal256(20, 0)).cast(x.array.type)
        return pc.fill_null(pc.and_(pc.greater_equal(x.array, low),
                                    pc.less_equal(x.array, high)), False)

    def icmp(self, x: _Int, op, c):
        if pa.types.is_decimal(x.array.type):
            return self._FN[op](x.array, pa.scalar(c, pa.decimal256(20, 0)).cast(x.array.type))
        return self._FN[op](x.array, c)

    def i_to_f(self, x: _Int):
        return pc.cast(x.array, pa.float64(), safe=False)

    def fop(self, a, op, b):
        return {"+": pc.add, "-": pc.subtract, "*": pc.multiply}[op](a, b)

    def divisible(self, x, k):
        if k & (k - 1) == 0:   # a power of two: the low bits (two's complement)
            return pc.equal(pc.bit_wise_and(x, pa.scalar(k - 1, x.type)), pa.scalar(0, x.type))
        raise NotExact("pyarrow has no integer remainder kernel")


# --- building and running --------------------------------------------------------------

def arrow_columns(table: pa.Table) -> dict[str, pa.Array]:
    """The struct columns the filters read, one array each."""
    return {name: table.column(name).combine_chunks() for name in table.schema.names
            if name in ("header", "properties", "application_properties")}


def per_message(flt: Any, data: pa.Table) -> pa.BooleanArray:
    """The ground truth: filtex's per-message engine over the row views
    (``filtex.arrow.rows.evaluate_rows``; ``evaluate_batch`` before the
    columnar engine took that name)."""
    from filtex.arrow import rows
    evaluate = getattr(rows, "evaluate_rows", None) or rows.evaluate_batch
    return evaluate(flt, data)


def tags_present(table: pa.Table) -> dict[str, set[int]]:
    """The type tags each application property holds in this table."""
    if "application_properties" not in table.schema.names:
        return {}
    column = table.column("application_properties")
    out = {}
    for i, field in enumerate(column.type):
        tags = pc.unique(pc.struct_field(column, [i, 0]))
        out[field.name] = set(tags.to_pylist())
    return out


def check_table(table: pa.Table, name: str) -> None:
    """The engines read typed places only: refuse rows with residual entries in
    a section the filter reads (the per-message engine would read them)."""
    for section in SECTIONS[name]:
        rest = rest_column(section)
        if rest in table.schema.names and table.column(rest).null_count != table.num_rows:
            raise NotExact(f"{table.num_rows - table.column(rest).null_count} rows have "
                           f"{rest} entries (values with no typed place)")


class Runner:
    """One engine over one table: ``compile(name)`` (may raise NotExact), then
    ``run(compiled)`` -> a pyarrow boolean array (null = unknown)."""

    def __init__(self, engine: str, table: pa.Table, duckdb_threads: int | None = None) -> None:
        self.engine, self.table = engine, table
        self.tags = tags_present(table)
        needed = [c for c in ("header", "properties", "application_properties")
                  if c in table.schema.names]
        if engine == "polars":
            import polars as pl
            self.pl = pl
            self.df = pl.from_arrow(table.select(needed))
        elif engine == "duckdb":
            import duckdb
            self.con = duckdb.connect()
            if duckdb_threads:
                self.con.execute(f"SET threads = {int(duckdb_threads)}")
            # DuckDB 2.0 returned the rows of a projection over a registered Arrow table
            # out of order with 2 threads (a permutation of 122,880-row morsels, although
            # preserve_insertion_order is true): the SQL orders by this row number
            rows = pa.array(np.arange(table.num_rows, dtype=np.int64))
            self.con.register("messages", table.select(needed).append_column(ROW, rows))
        elif engine == "pyarrow":
            self.columns = arrow_columns(table)
        else:
            raise ValueError(engine)

    def expression(self, name: str) -> Any:
        """The Polars expression or the DuckDB SQL (pyarrow: None, it is eager)."""
        check_table(self.table, name)
        if self.engine == "polars":
            S = Semantics(PolarsEngine(), self.table.schema, self.tags)
            return S.result(RECIPES[name](S))
        if self.engine == "duckdb":
            E = DuckDBEngine()
            S = Semantics(E, self.table.schema, self.tags)
            verdict = S.result(RECIPES[name](S))
            return f"SELECT {verdict} AS verdict FROM {E.source('messages')} ORDER BY {ROW}"
        S = Semantics(ArrowEngine(self.table.slice(0, 0)), self.table.schema, self.tags)
        RECIPES[name](S)   # raises NotExact where it would
        return None

    def compile(self, name: str) -> Any:
        return (name, self.expression(name))

    def run(self, compiled: Any) -> pa.Array:
        name, expr = compiled
        if self.engine == "polars":
            out = self.df.lazy().select(expr.alias("verdict")).collect()
            return out.to_series().to_arrow()
        if self.engine == "duckdb":
            return self.con.sql(expr).to_arrow_table().column(0).combine_chunks()
        S = Semantics(ArrowEngine(self.table, self.columns), self.table.schema, self.tags)
        return S.result(RECIPES[name](S))


def counts(verdicts) -> tuple[int, int, int]:
    """(true, false, unknown)."""
    n = len(verdicts)
    true = pc.sum(pc.fill_null(verdicts, False)).as_py() or 0
    unknown = verdicts.null_count
    return true, n - true - unknown, unknown


def codes(verdicts) -> np.ndarray:
    """0 false, 1 true, 2 unknown, per row."""
    if isinstance(verdicts, pa.ChunkedArray):
        verdicts = verdicts.combine_chunks()
    values = pc.fill_null(verdicts, False).to_numpy(zero_copy_only=False).astype(np.int8)
    values[verdicts.is_null().to_numpy(zero_copy_only=False)] = 2
    return values


def disagreements(a, b) -> np.ndarray:
    return np.nonzero(codes(a) != codes(b))[0]


# --- --check -----------------------------------------------------------------------------

def edge_messages() -> list:
    """Messages with the values that trip engines: NaN, infinities, -0.0, integer
    overflow into and past ulong, timestamps and ulongs as numbers, chars and
    symbols, newlines and non-ASCII in strings, every wrong type per key."""
    import uuid
    from proton import char, float32, symbol, timestamp, ubyte, ulong
    from filtex import Message
    T0 = 1750772279000
    rows = [
        {"quantity": 2 ** 62, "price": 4, "discount": 0},                  # 2^64: NaN
        {"quantity": 2 ** 62, "price": 3, "discount": 0},                  # ulong range
        {"quantity": 2 ** 62, "price": 3, "discount": -(2 ** 62)},         # past 2^64-1
        {"quantity": -(2 ** 62), "price": 2, "discount": 1},               # below -2^63
        {"quantity": -(2 ** 62), "price": 2, "discount": 0},               # = -2^63
        {"quantity": 2, "price": 1e308, "discount": 0},                    # inf from finite
        {"quantity": 2, "price": math.inf, "discount": 0},                 # inf operand
        {"quantity": 2, "price": math.nan, "discount": "x"},               # NaN - string
        {"quantity": None, "price": "x", "discount": 1},                   # NULL first
        {"quantity": "x", "price": None, "discount": 1},
        {"quantity": 4, "price": 300, "discount": None},
        {"quantity": 4, "price": 300, "discount": True},                   # boolean: fails
        {"quantity": timestamp(1002), "price": 1, "discount": 0},          # timestamp = int
        {"quantity": ulong(2 ** 64 - 1), "price": 1, "discount": 0},
        {"quantity": ulong(2 ** 64 - 2), "price": 1, "discount": -1},
        {"quantity": 6.0, "price": 300, "discount": 0},                    # % of a double
        {"quantity": float32(2.5), "price": 1000, "discount": 1},
        {"quantity": -7, "price": -300, "discount": 0.5},
        {"quantity": 2 ** 53 + 1, "price": 1.0, "discount": 0},
        {"total_amount": -0.0, "color": "blue", "order_type": "premium"},
        {"total_amount": math.nan, "color": math.nan, "order_type": math.nan},
        {"total_amount": math.inf, "color": symbol("blue"), "order_type": symbol("express")},
        {"total_amount": ulong(4000), "color": char("b"), "order_type": char("p")},
        {"total_amount": timestamp(150), "color": timestamp(T0), "order_type": 5},
        {"total_amount": ubyte(200), "color": True, "order_type": b"premium"},
        {"total_amount": "150", "color": None, "order_type": None},
        {"total_amount": [150], "color": uuid.UUID(int=5), "order_type": {"a": 1}},
        {"customer_region": "EU-\n", "sku": "ABC-\nX\n", "customer": "ACME"},
        {"customer_region": "EU-", "sku": "ABC-X", "customer": "İacme"},
        {"customer_region": "eu-de", "sku": "ABC-éXé", "customer": "tEsT"},
        {"customer_region": "US-CA", "sku": "ABC-XX", "customer": "a\ntest"},
        {"customer_region": math.nan, "sku": math.nan, "customer": math.nan},
        {"customer_region": 7, "sku": 7, "customer": 7},
        {"customer_region": symbol("EU-DE"), "sku": symbol("ABC-1X2"), "customer": "ΑCME"},
        {"customer_region": "US-CA", "cancelled": "false", "order_type": "premium",
         "total_amount": 200},
        {"customer_region": "US-CA", "cancelled": False, "order_type": "premium",
         "total_amount": 200},
        {"customer_region": "US-CA", "cancelled": 0, "order_type": "premium",
         "total_amount": 200},
        {"cancelled": math.nan, "tags": None, "coupon": math.nan},
        {"tags": [], "coupon": None, "region": "EU", "total": math.nan},
        {"tags": "x", "region": symbol("EU"), "total": ulong(101)},
        {"region": char("E"), "total": timestamp(101)},
        {"region": "EU", "total": "101"},
        {"region": "EU", "total": float32(100.5)},
    ]
    out = []
    for i, ap in enumerate(rows):
        header = {"priority": ubyte(i % 10)} if i % 3 else {"durable": bool(i % 2)}
        props = {"subject": "order.created" if i % 2 else "order.paid",
                 "content-type": symbol("application/json"),
                 "creation-time": timestamp(T0 + (i - 20) * 86_400_000 * 30)}
        if i % 7 == 0:
            del props["creation-time"]
        out.append(Message(header=header, properties=props, application_properties=ap))
    return out


def decimal_messages() -> list:
    """A few decimals in total_amount and color: the engines must say they
    cannot be exact for the filters comparing them."""
    from filtex import Message
    from filtex.runtime.values import encode_decimal
    return [Message(application_properties={"total_amount": encode_decimal("150.5", 128),
                                            "color": encode_decimal("NaN", 64)}),
            Message(application_properties={"total_amount": 7, "color": "blue"})]


def lower_audit(constant: str) -> dict[str, str]:
    """Per engine: how many code points its LOWER maps differently from
    Python's, and whether any of those could make ``LOWER(x) = constant``
    differ (a differing code point whose lower-casing in either mapping
    consists only of characters of the constant)."""
    import duckdb
    import polars as pl
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    python = [p.lower() for p in points]
    array = pa.array(points)
    mapped = {"polars": pl.Series(points).str.to_lowercase().to_list(),
              "pyarrow": pc.utf8_lower(array).to_pylist()}
    con = duckdb.connect()
    con.register("cps", pa.table({"s": array}))
    mapped["duckdb"] = [r[0] for r in con.execute("SELECT lower(s) FROM cps").fetchall()]
    contexts = ["ΑΣ", "ΟΔΟΣ ΑΣ", "İ"]   # final sigma; a one-to-two mapping
    con.register("ctx", pa.table({"s": contexts}))
    in_context = {"polars": pl.Series(contexts).str.to_lowercase().to_list(),
                  "pyarrow": pc.utf8_lower(pa.array(contexts)).to_pylist(),
                  "duckdb": [r[0] for r in con.execute("SELECT lower(s) FROM ctx").fetchall()]}
    letters = set(constant)
    out = {}
    for engine, lows in mapped.items():
        differ = [(p, py, lo) for p, py, lo in zip(points, python, lows) if py != lo]
        risky = [p for p, py, lo in differ if (py and set(py) <= letters) or
                 (lo and set(lo) <= letters)]
        sample = ", ".join(f"U+{ord(p):04X} {py!r}/{lo!r}" for p, py, lo in differ[:3])
        verdict = ("exact for this constant" if not risky else
                   f"NOT exact: {len(risky)} code points could match {constant!r}")
        wrong = [f"{c!r} -> {lo!r} (Python {c.lower()!r})"
                 for c, lo in zip(contexts, in_context[engine]) if lo != c.lower()]
        out[engine] = (f"{len(differ)} code points lower-case differently from Python "
                       f"({sample}{', ...' if len(differ) > 3 else ''}); in context: "
                       f"{'; '.join(wrong) if wrong else 'same as Python'}; {verdict}")
    return out


def check(sample_rows: int = 200_000, seed: int = 11, verbose: bool = True) -> int:
    """Every engine against filtex's per-message engine, row by row, on a
    generated sample and on the edge-case table; returns the number of
    disagreeing (engine, filter, table) combinations."""
    import filtex
    import filtex.arrow
    from benchmarks.columnar_data import build_orders
    tables = {
        f"sample ({sample_rows:,} rows)": build_orders(sample_rows, np.random.default_rng(seed)),
        "edge cases": filtex.arrow.message_table(edge_messages()),
        "decimals": filtex.arrow.message_table(decimal_messages()),
    }
    say = print if verbose else (lambda *a, **k: None)
    bad = 0
    for label, table in tables.items():
        say(f"\n{label}:")
        runners = {engine: Runner(engine, table) for engine in ENGINES}
        for name in ORDER:
            flt = filtex.compile_sql(FILTERS[name])
            start = time.perf_counter()
            truth = per_message(flt, table)
            seconds = time.perf_counter() - start
            t, f, u = counts(truth)
            parts, reasons = [], {}
            for engine, runner in runners.items():
                try:
                    got = runner.run(runner.compile(name))
                except NotExact as exc:
                    reasons[engine] = str(exc)
                    parts.append(f"{engine}: not exact ({exc})")
                    continue
                rows = disagreements(truth, got)
                if len(rows):
                    bad += 1
                    first = int(rows[0])
                    parts.append(f"{engine}: **{len(rows)} DISAGREE** (first row {first}: "
                                 f"filtex {truth[first].as_py()}, {engine} {got[first].as_py()})")
                else:
                    parts.append(f"{engine}: agrees")
            if len(reasons) == len(runners) and len(set(reasons.values())) == 1:
                parts = [f"all engines: not exact ({reasons[ENGINES[0]]})"]
            say(f"  {name:<18} filtex T/F/U {t}/{f}/{u} ({seconds:.1f} s): " + "; ".join(parts))
    say("\nLOWER(customer) = 'acme', per engine, against Python's str.lower on every code point:")
    for engine, line in lower_audit("acme").items():
        say(f"  {engine}: {line}")
    say("\n" + ("all engines agree row by row" if not bad else
                f"{bad} disagreeing engine/filter/table combinations"))
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare every engine with filtex, row by row")
    parser.add_argument("--rows", type=int, default=200_000, help="sample rows for --check")
    parser.add_argument("--show-sql", metavar="FILTER",
                        help="print the DuckDB SQL and the Polars expression of a filter")
    args = parser.parse_args(argv)
    if args.show_sql:
        from benchmarks.columnar_data import build_orders
        table = build_orders(10, np.random.default_rng(0))
        for engine in ("duckdb", "polars"):
            print(f"-- {engine}:\n{Runner(engine, table).expression(args.show_sql)}\n")
        return 0
    if args.check:
        return 1 if check(args.rows) else 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
