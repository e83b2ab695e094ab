"""Spark SQL text for the translation: identifiers and literals of exact types.

The translation writes Spark SQL expression text and parses it once
(``F.expr``): building the same expression as Column objects costs a py4j
round trip per node, hundreds per filter. This module is the only place where
filter constants become Spark SQL, and only as literals of an exact type:

- strings are quoted as they are when they hold no quote, backslash or control
  character, otherwise written as UTF-8 bytes (``CAST(X'..' AS STRING)``), so
  no parser option (``escapedStringLiterals``) changes their meaning;
- integers are ``BIGINT`` (``123L``) or ``DECIMAL(20,0)`` (ulong); doubles are
  cast from their shortest exact decimal form (``CAST('0.1' AS DOUBLE)``,
  ``'NaN'``, ``'-Infinity'``, ``'-0.0'``), which Java parses to the same bits;
- identifiers are backquoted with backquotes doubled.

Catalyst folds the casts of constants into literals, so they are pushed into
Parquet scans like any literal.
"""
from __future__ import annotations

import math
import re
from typing import Any, Callable

_SAFE = re.compile(r"[^'\\\x00-\x1f\x7f]*")
NULL_BOOLEAN = "CAST(NULL AS BOOLEAN)"


class NotWritable(ValueError):
    """A constant Spark SQL cannot hold (a string with a lone surrogate)."""


def ident(*path: str) -> str:
    """A column or nested field reference, each name backquoted."""
    return ".".join("`" + name.replace("`", "``") + "`" for name in path)


def string(text: str) -> str:
    if _SAFE.fullmatch(text):
        return f"'{text}'"
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise NotWritable(f"the string {text!r} has no UTF-8 form") from exc
    return f"CAST(X'{raw.hex().upper()}' AS STRING)"


def long(value: int) -> str:
    if not -2**63 <= value < 2**63:
        raise NotWritable(f"{value} is not a long")
    if value == -2**63:
        return "CAST(-9223372036854775808 AS BIGINT)"
    return f"{value}L"


def ulong(value: int) -> str:
    if not 0 <= value < 2**64:
        raise NotWritable(f"{value} is not a ulong")
    return f"CAST({value} AS DECIMAL(20,0))"


def double(value: float) -> str:
    if math.isnan(value):
        text = "NaN"
    elif math.isinf(value):
        text = "Infinity" if value > 0 else "-Infinity"
    else:
        text = repr(float(value))
    return f"CAST('{text}' AS DOUBLE)"


def boolean(value: bool | None) -> str:
    return NULL_BOOLEAN if value is None else ("TRUE" if value else "FALSE")


def any_of(items: list[str]) -> str | None:
    items = [i for i in items if i is not None]
    if not items:
        return None
    return items[0] if len(items) == 1 else "(" + " OR ".join(items) + ")"


def all_of(items: list[str]) -> str:
    return items[0] if len(items) == 1 else "(" + " AND ".join(items) + ")"


def tag_in(tag: str, tags: list[int]) -> str:
    tags = sorted(set(int(t) for t in tags))
    return f"{tag} = {tags[0]}" if len(tags) == 1 else f"{tag} IN ({', '.join(map(str, tags))})"


def within_spans(child: str, spans: list[tuple[Any, Any]], lit: Callable[[Any], str],
                 ends: tuple[Any, ...] = ()) -> str:
    """``child`` within one of the sorted inclusive intervals (``ends``: the least
    and the greatest value of the child's type, which need no test)."""
    if not spans:
        return "FALSE"
    least, greatest = ends or (None, None)

    def within(lo: Any, hi: Any) -> str:
        if lo == hi:
            return f"{child} = {lit(lo)}"
        if lo == least:
            return f"{child} <= {lit(hi)}" if hi != greatest else f"{child} IS NOT NULL"
        return f"{child} >= {lit(lo)}" if hi == greatest else \
            f"{child} BETWEEN {lit(lo)} AND {lit(hi)}"
    return any_of([within(lo, hi) for lo, hi in spans]) or "FALSE"
