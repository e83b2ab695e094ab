"""The engines' primitives: Polars expressions, DuckDB SQL, pyarrow.compute, Spark SQL."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from filtex.table.schema import ABSENT  # noqa: E402
from .semantics import (LONG_MIN, NotExact, ULONG_MAX, like_shape)


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


class _SqlText(_Masks):
    """SQL text engines' shared primitives: tags, Kleene logic and CASE, which
    DuckDB and Spark SQL write alike; ``WIDE_INT`` is each one's 128-bit type."""
    WIDE_INT = "HUGEINT"

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
        sql_type = {"bool": "BOOLEAN", "f64": "DOUBLE", "i128": self.WIDE_INT}[kind]
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


class DuckDBEngine(_SqlText):
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


# --- Spark SQL ---------------------------------------------------------------------------

def _spark_str(text: str) -> str:
    """A Spark SQL string literal: Spark reads backslash escapes in literals."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _spark_lit(c: Any) -> str:
    if c is True or c is False:
        return "TRUE" if c else "FALSE"
    if isinstance(c, float):
        return f"CAST('{c!r}' AS DOUBLE)"
    if isinstance(c, int):
        return str(c) if LONG_MIN <= c < 1 << 63 else f"{c}BD"
    return _spark_str(c)


class _SparkCol(str):
    """A struct field's SQL text that remembers which VALUE child it is."""
    child: str | None = None


class _Millis(str):
    """``unix_millis(ts)``; a comparison with a constant compares the timestamp
    itself with ``timestamp_millis(c)`` (exact: the layout's timestamps are
    milliseconds, Spark's microseconds), which Spark pushes into the Parquet scan."""
    ts: str = ""


@dataclass
class _SInt:
    """A Spark SQL integer of any size: ``lo`` (BIGINT) when the value fits,
    else ``hi`` (DECIMAL(38,0); None: never needed). Exact integer arithmetic
    in BIGINT with try_* (NULL on overflow) and only the overflowing rows in
    DECIMAL(38,0), whose own overflow (beyond 38 digits, far outside the
    ulong range) is NULL too."""
    lo: str
    hi: str | None


_DEC38 = "DECIMAL(38,0)"
_TRY = {"+": "try_add", "-": "try_subtract", "*": "try_multiply"}


class SparkEngine(_SqlText):
    """Spark SQL text (ANSI mode, Spark's default) over a message table in
    Spark's types (``filtex.spark.to_spark``: uint8 smallint, uint32 bigint,
    uint64 decimal(20,0), strings plain, timestamps TIMESTAMP in µs). As for
    DuckDB, intermediates that would repeat (arithmetic) are computed once, as
    columns of nested subqueries (``source``).

    Spark traps avoided (shared/docs/columnar-spark-research.md, section 4):
    ANSI mode raises on integer overflow, so integer arithmetic uses try_*
    and reads NULL as "out of range"; ``NaN = NaN`` is TRUE and NaN sorts
    above everything, so every float comparison sits behind the semantics'
    NaN guard; LIKE's default escape is the backslash, so a pattern's
    backslashes are escaped; no comparison ever mixes types (no implicit
    casts); struct fields are named with backticks (run with
    spark.sql.caseSensitive=true). Decimal values are refused (NotExact), as
    by every engine here.
    """
    name = "spark"
    WIDE_INT = _DEC38

    def __init__(self, inline: bool = False) -> None:
        self.stages: list[tuple[str, str]] = []
        self.inline = inline   # True: no subqueries, intermediates repeated as text

    def bind(self, x):
        if isinstance(x, _SInt):
            return _SInt(self.bind(x.lo), None if x.hi is None else self.bind(x.hi))
        if self.inline or not isinstance(x, str) or len(x) < 40:
            return x
        name = f"filtex_t{len(self.stages)}"
        self.stages.append((name, x))
        return name

    def source(self, table: str) -> str:
        for name, sql in self.stages:
            table = f"(SELECT *, {sql} AS {name} FROM {table})"
        return table

    @staticmethod
    def _name(name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def field(self, section, name):
        return f"{self._name(section)}.{self._name(name)}"

    def sub(self, base, name):
        out = _SparkCol(f"{base}.{self._name(name)}")
        out.child = name
        return out

    def cmp(self, x, op, c):
        if isinstance(x, _Millis) and type(c) is int:
            return f"({x.ts} {op} timestamp_millis({c}))"
        return f"({x} {op} {_spark_lit(c)})"

    def cmp_unsigned(self, u, op, c):   # decimal(20,0) against an integer: exact
        return f"({u} {op} {_spark_lit(c)})"

    def isnan(self, x):
        return f"isnan({x})"

    def isinf(self, x):
        return f"(abs({x}) = CAST('Infinity' AS DOUBLE))"

    def isfinite(self, x):   # NaN is above every double in Spark: abs(NaN) < inf is FALSE
        return f"(abs({x}) < CAST('Infinity' AS DOUBLE))"

    def fill_false(self, x):
        return f"coalesce({x}, FALSE)"

    def fill_null(self, x, value):
        return f"coalesce({x}, {_spark_lit(value)})"

    def nan(self):
        return "CAST('NaN' AS DOUBLE)"

    def epoch_ms(self, x):
        out = _Millis(f"unix_millis({x})")
        out.ts = x
        return out

    def s_cmp(self, s, op, c):
        return f"({s} {op} {_spark_str(c)})"

    def s_in(self, s, items):
        return f"({s} IN ({', '.join(map(_spark_str, items))}))"

    def s_like(self, s, pattern):
        # Spark's LIKE: '_' is one code point, '%' spans newlines, and '\' is the
        # default escape: a literal backslash of the amqp pattern is written '\\'
        return f"({s} LIKE {_spark_str(pattern.replace(chr(92), chr(92) * 2))})"

    def s_lower_eq(self, s, c):
        return f"(lower({s}) = {_spark_str(c)})"

    def s_left_eq(self, s, n, c):   # left() counts code points
        return f"(left({s}, {n}) = {_spark_str(c)})"

    # exact integers: BIGINT while it fits, DECIMAL(38,0) for the rows that overflow
    def i128(self, x):
        if getattr(x, "child", None) == "u":   # ulong: decimal(20,0)
            return _SInt(f"try_cast({x} AS BIGINT)",
                         f"(CASE WHEN {x} > {(1 << 63) - 1} THEN CAST({x} AS {_DEC38}) END)")
        return _SInt(x, None)

    def ichoose(self, parts):
        if len(parts) == 1:
            return parts[0][1]
        def case(pairs):   # no ELSE: NULL of the branches' type
            whens = [f"WHEN {self._expr(c)} THEN {v}" for c, v in pairs if c is not False]
            return "(CASE " + " ".join(whens) + " END)" if whens else "CAST(NULL AS BIGINT)"
        his = [(c, v.hi) for c, v in parts if v.hi is not None]
        return _SInt(case([(c, v.lo) for c, v in parts]), case(his) if his else None)

    @staticmethod
    def _wide(x: _SInt) -> str:
        wide = f"CAST({x.lo} AS {_DEC38})"
        return wide if x.hi is None else f"coalesce({wide}, {x.hi})"

    @staticmethod
    def _known(x: _SInt) -> str:
        return f"{x.lo} IS NOT NULL" if x.hi is None else \
            f"({x.lo} IS NOT NULL OR {x.hi} IS NOT NULL)"

    def iop(self, a, op, b):
        lo = self.bind(f"{_TRY[op]}({a.lo}, {b.lo})")
        # DECIMAL only where BIGINT overflowed (Spark's decimals are Java objects: slow)
        hi = (f"(CASE WHEN {lo} IS NULL AND {self._known(a)} AND {self._known(b)} THEN "
              f"{_TRY[op]}({self._wide(a)}, {self._wide(b)}) END)")
        return _SInt(lo, hi)

    def i_in_range(self, x):
        if x.hi is None:
            return self.fill_false(f"({x.lo} IS NOT NULL)")
        return (f"coalesce(({x.lo} IS NOT NULL) OR ({x.hi} BETWEEN {LONG_MIN} AND "
                f"{ULONG_MAX}BD), FALSE)")

    def icmp(self, x, op, c):
        if x.hi is None:
            return f"({x.lo} {op} {_spark_lit(c)})"
        return (f"(CASE WHEN {x.lo} IS NOT NULL THEN {x.lo} {op} {_spark_lit(c)} "
                f"ELSE {x.hi} {op} {_spark_lit(c)} END)")

    def i_to_f(self, x):   # long and decimal to double: both correctly rounded
        if x.hi is None:
            return f"CAST({x.lo} AS DOUBLE)"
        return f"coalesce(CAST({x.lo} AS DOUBLE), CAST({x.hi} AS DOUBLE))"

    def fop(self, a, op, b):   # doubles: IEEE in Spark, ANSI mode or not
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

def arrow_columns(table: pa.Table) -> dict[str, pa.Array]:
    """The struct columns the filters read, one array each."""
    return {name: table.column(name).combine_chunks() for name in table.schema.names
            if name in ("header", "properties", "application_properties")}
