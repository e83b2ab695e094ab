"""A deliberately simple tree-walking reference evaluator for the ``amqp`` dialect.

This is an executable reading of ``docs/amqp-dialect.md`` and the project-wide
``semantics.md`` (three-valued logic, failures, type rules, functions), written
independently of the compiled engine so property-based tests can compare the
two.  Speed does not matter: one function per node kind, plain recursion, and a
Python exception (``EvaluationFailure``) for an evaluation failure.

It evaluates the *resolved* tree (the checker's output without constant
folding): ``Literal Field MapRef Index Unary Binary Compare And Or Not IsNull
Like In Between Exists Call``.

Public API:

* ``evaluate(node, message, now=None) -> (result, reason)``: the filter's
  result (``True``, ``False`` or ``None`` for unknown) and, when evaluation
  failed, the first failure's reason (else ``None``).
* ``value_of(node, message, now=None)``: the value of an expression node
  (raises ``EvaluationFailure``); handy for testing expressions.

``now`` (milliseconds since the epoch) pins what ``UTC()`` returns.

Readings of the documents that are not spelled out there are marked
"READING:" below.
"""
from __future__ import annotations

import math
import re
import time
import unicodedata
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, DivisionByZero, InvalidOperation, Overflow
from collections.abc import Mapping
from typing import Any

from proton import Array, timestamp

from filtex.errors import EvaluationFailure
from filtex.message import Message
from filtex.tree import ast
from filtex.runtime.values import (BINARY, BOOL, DECIMAL, DECIMAL128_CONTEXT, FLOAT, INT,
                           LONG_MIN, STRING, TIMESTAMP, ULONG_MAX, UUID,
                           decimal_value, kind_of)

NAN = float("nan")
NUMERIC = (INT, FLOAT, DECIMAL)
ARITHMETIC = (INT, FLOAT, DECIMAL, TIMESTAMP)
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def fail(reason: str) -> None:
    raise EvaluationFailure(reason)


# =============================================================================
# Public entry points
# =============================================================================

def evaluate(node: ast.Node, message: Message, now: int | None = None
             ) -> tuple[bool | None, str | None]:
    """The filter's result and, if evaluation failed, the first failure's reason."""
    try:
        value = Evaluator(message, now).eval(node)
        check_predicate_value(value, "the filter")
        return value, None
    except EvaluationFailure as failure:
        return None, failure.reason


def value_of(node: ast.Node, message: Message | None = None, now: int | None = None) -> Any:
    """The value of an expression node (raises ``EvaluationFailure``)."""
    return Evaluator(message if message is not None else Message(), now).eval(node)


# =============================================================================
# Small value helpers
# =============================================================================

def is_nan(value: Any) -> bool:
    kind = kind_of(value)
    if kind == FLOAT:
        return math.isnan(value)
    if kind == DECIMAL:
        # READING: a decimal NaN (possible in a message) is "not a number" too.
        return decimal_value(value).is_nan()
    return False


def check_predicate_value(value: Any, where: str) -> None:
    """A predicate position must hold a boolean or NULL."""
    if value is not None and kind_of(value) != BOOL:
        fail(f"{where} is not a boolean: {describe(value)}")


def describe(value: Any) -> str:
    kind = kind_of(value)
    return f"{kind} {value!r}" if kind != "other" else f"{type(value).__name__} value"


def as_int_or_fail(value: Any, what: str) -> int:
    if kind_of(value) != INT:
        fail(f"{what} must be an integer, not {describe(value)}")
    return int(value)


def as_str_or_fail(value: Any, what: str) -> str:
    if kind_of(value) != STRING:
        fail(f"{what} must be a string, not {describe(value)}")
    return str(value)


def decimal_result(compute) -> Any:
    """Run a decimal128 computation; overflow, division by zero and invalid
    operations (0/0, inf-inf) give a float NaN, as does a NaN result."""
    ctx = DECIMAL128_CONTEXT.copy()
    ctx.clear_flags()
    try:
        result = compute(ctx)
    except (InvalidOperation, Overflow, DivisionByZero):
        return NAN
    if result.is_nan():
        return NAN
    return result


def int_result(value: int) -> Any:
    """Integer results widen freely, but past both long and ulong are NaN."""
    if LONG_MIN <= value <= ULONG_MAX:
        return value
    return NAN


def float_result(result: float, x: float, y: float) -> float:
    """A double that overflows to infinity from finite operands is NaN."""
    if math.isinf(result) and math.isfinite(x) and math.isfinite(y):
        return NAN
    return result


# =============================================================================
# ISO 8601 parsing (date-times and durations)
# =============================================================================

def parse_iso_datetime_ms(text: str) -> int | None:
    """An ISO 8601 date or date-time as milliseconds since the epoch (UTC when
    unqualified), or None when the text is not one.

    READING: a date alone is accepted (midnight UTC), both by DATE() and by
    the timestamp-string comparison; the date/time separator must be 'T'
    (``datetime.fromisoformat`` would take any character there); sub-
    millisecond fractions are floored to the millisecond.
    """
    if not text.isascii() or any(c.isspace() for c in text):
        return None
    try:
        if "T" in text:
            date_part = text.split("T", 1)[0]
            date.fromisoformat(date_part)
            parsed = datetime.fromisoformat(text)
        else:
            day = date.fromisoformat(text)
            parsed = datetime(day.year, day.month, day.day)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return (parsed - EPOCH) // timedelta(milliseconds=1)


_DURATION_WEEKS = re.compile(r"P([0-9]+)W")
_DURATION = re.compile(r"P(?:([0-9]+)D)?"
                       r"(?:T(?:([0-9]+)H)?(?:([0-9]+)M)?(?:([0-9]+(?:[.,][0-9]+)?)S)?)?")


def parse_iso_duration_ms(text: str) -> int | None:
    """An ISO 8601 duration (``PnW`` or ``PnDTnHnMnS``; fraction only on the
    seconds) as milliseconds, or None.  Years and months are refused.

    READING: ',' is accepted as the decimal sign like '.', as ISO 8601 allows;
    weeks do not combine with other components; no sign; a sub-millisecond
    fraction is floored.
    """
    match = _DURATION_WEEKS.fullmatch(text)
    if match:
        return int(match.group(1)) * 7 * 86_400_000
    match = _DURATION.fullmatch(text)
    if not match or not any(match.groups()):
        return None
    if "T" in text and not any(match.groups()[1:]):
        return None  # 'T' with nothing after it
    days, hours, minutes, seconds = match.groups()
    whole, _, fraction = (seconds or "0").replace(",", ".").partition(".")
    return (int(days or 0) * 86_400_000 + int(hours or 0) * 3_600_000
            + int(minutes or 0) * 60_000 + int(whole) * 1000
            + int((fraction + "000")[:3]))  # milliseconds, the rest floored


# =============================================================================
# Comparison
# =============================================================================

def timestamp_operand(value: Any) -> int:
    """One side of a comparison that involves a timestamp, as milliseconds."""
    kind = kind_of(value)
    if kind in (TIMESTAMP, INT):
        return int(value)
    if kind == STRING:
        text = str(value)
        ms = parse_iso_datetime_ms(text)
        if ms is None:
            ms = parse_iso_duration_ms(text)
        if ms is None:
            fail(f"cannot compare a timestamp with {text!r}: "
                 f"not an ISO 8601 date-time or duration")
        return ms
    fail(f"cannot compare a timestamp with {describe(value)}")


def ordered(op: str, x: Any, y: Any) -> bool:
    if op == "=":
        return x == y
    if op == "<>":
        return x != y
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    if op == ">=":
        return x >= y
    raise AssertionError(f"unknown comparison {op!r}")


def compare_values(op: str, left: Any, right: Any) -> bool | None:
    if op == "!=":
        op = "<>"
    # NULL or NaN on either side: NULL (checked before any type rule).
    if left is None or right is None or is_nan(left) or is_nan(right):
        return None
    lk, rk = kind_of(left), kind_of(right)
    if TIMESTAMP in (lk, rk):
        return ordered(op, timestamp_operand(left), timestamp_operand(right))
    if lk in NUMERIC and rk in NUMERIC:
        if FLOAT in (lk, rk):
            return ordered(op, to_float(left), to_float(right))
        if DECIMAL in (lk, rk):
            return ordered(op, to_decimal(left), to_decimal(right))
        return ordered(op, int(left), int(right))
    if lk == STRING and rk == STRING:
        return ordered(op, str(left), str(right))
    if lk == BINARY and rk == BINARY:
        return ordered(op, bytes(left), bytes(right))
    if lk == rk and lk in (BOOL, UUID):
        if op in ("=", "<>"):
            return ordered(op, left, right)
        fail(f"cannot order {lk} values with {op}")
    fail(f"cannot compare {describe(left)} with {describe(right)}")


def to_float(value: Any) -> float:
    kind = kind_of(value)
    if kind == DECIMAL:
        return float(decimal_value(value))
    return float(value)


def to_decimal(value: Any) -> Decimal:
    if kind_of(value) == DECIMAL:
        return decimal_value(value)
    return Decimal(int(value))


# =============================================================================
# Arithmetic
# =============================================================================

def arithmetic_number(value: Any) -> Any:
    """A number operand read for arithmetic: timestamp as its milliseconds."""
    kind = kind_of(value)
    if kind in (TIMESTAMP, INT):
        return int(value)
    if kind == FLOAT:
        return float(value)
    return decimal_value(value)


def binary_values(op: str, left: Any, right: Any) -> Any:
    if left is None or right is None:
        return None
    lk, rk = kind_of(left), kind_of(right)
    if op == "+" and lk == STRING and rk == STRING:
        return str(left) + str(right)
    if lk not in ARITHMETIC or rk not in ARITHMETIC:
        fail(f"arithmetic {op} on {describe(left)} and {describe(right)}")
    x, y = arithmetic_number(left), arithmetic_number(right)
    # After reading, ints are int (timestamps included), floats float, decimals Decimal.
    if op == "%":
        # READING: a timestamp, read as its milliseconds (a long), counts as an integer.
        if not (isinstance(x, int) and isinstance(y, int)):
            fail(f"% needs integer operands, not {describe(left)} and {describe(right)}")
        if y == 0:
            return NAN
        remainder = abs(x) % abs(y)
        return -remainder if x < 0 else remainder
    if isinstance(x, float) or isinstance(y, float):
        x, y = float(x), float(y)
        if op == "/":
            if y == 0:
                return NAN
            return float_result(x / y, x, y)
        return float_result(plain_arith(op, x, y), x, y)
    if isinstance(x, Decimal) or isinstance(y, Decimal):
        dx = x if isinstance(x, Decimal) else Decimal(x)
        dy = y if isinstance(y, Decimal) else Decimal(y)
        method = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide"}[op]
        return decimal_result(lambda ctx: getattr(ctx, method)(dx, dy))
    # integer with integer
    if op == "/":
        if y == 0:
            return NAN
        if x % y == 0:
            return int_result(x // y)
        return x / y  # Python's int true division is correctly rounded
    return int_result(plain_arith(op, x, y))


def plain_arith(op: str, x: Any, y: Any) -> Any:
    if op == "+":
        return x + y
    if op == "-":
        return x - y
    if op == "*":
        return x * y
    raise AssertionError(f"unknown arithmetic operator {op!r}")


def unary_value(op: str, value: Any) -> Any:
    if value is None:
        return None
    kind = kind_of(value)
    if kind not in ARITHMETIC:
        fail(f"unary {op} on {describe(value)}")
    if op == "+":
        return int(value) if kind == TIMESTAMP else value
    number = arithmetic_number(value)
    if isinstance(number, int):
        return int_result(-number)
    if isinstance(number, float):
        return -number
    return decimal_result(lambda ctx: ctx.minus(number))


# =============================================================================
# LIKE
# =============================================================================

def like_tokens(pattern: str, escape: str | None) -> list[tuple[str, str]]:
    """The pattern as ('lit', c), ('one', '') and ('many', '') tokens."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if escape is not None and c == escape:
            if i + 1 >= len(pattern):
                fail("LIKE pattern ends with the escape character")
            tokens.append(("lit", pattern[i + 1]))
            i += 2
            continue
        if c == "%":
            tokens.append(("many", ""))
        elif c == "_":
            tokens.append(("one", ""))
        else:
            tokens.append(("lit", c))
        i += 1
    return tokens


def like_match(text: str, pattern: str, escape: str | None) -> bool:
    """Plain dynamic programming over (text position, pattern position)."""
    tokens = like_tokens(pattern, escape)
    n, m = len(text), len(tokens)
    # matches[i][j]: text[i:] matches tokens[j:]
    matches = [[False] * (m + 1) for _ in range(n + 1)]
    matches[n][m] = True
    for i in range(n, -1, -1):
        for j in range(m - 1, -1, -1):
            kind, char = tokens[j]
            if kind == "many":
                matches[i][j] = matches[i][j + 1] or (i < n and matches[i + 1][j])
            elif kind == "one":
                matches[i][j] = i < n and matches[i + 1][j + 1]
            else:
                matches[i][j] = i < n and text[i] == char and matches[i + 1][j + 1]
    return matches[0][0]


# =============================================================================
# LOWER / UPPER with language tags
# =============================================================================

_GRANDFATHERED = {t.lower() for t in (
    "en-GB-oed i-ami i-bnn i-default i-enochian i-hak i-klingon i-lux i-mingo i-navajo "
    "i-pwn i-tao i-tay i-tsu sgn-BE-FR sgn-BE-NL sgn-CH-DE art-lojban cel-gaulish no-bok "
    "no-nyn zh-guoyu zh-hakka zh-min zh-min-nan zh-xiang").split()}


def language_of_tag(tag: str) -> str:
    """The primary language of a well-formed BCP 47 (RFC 5646) tag, lower-case
    ('' for private-use and grandfathered tags); a malformed tag is a failure.

    READING: RFC 5646 section 2.1's ABNF walked subtag by subtag (the engine
    uses one regular expression; this is an independent reading of the grammar):
    language (2-3 letters with up to three 3-letter extlangs, or 4-8 letters),
    script (4 letters), region (2 letters or 3 digits), variants (5-8
    alphanumerics, or a digit and 3), extensions (a singleton other than x and
    one or more 2-8 subtags), private use (x and one or more 1-8 subtags)."""
    if tag.lower() in _GRANDFATHERED:
        return ""
    parts = tag.split("-")
    if not all(part and part.isascii() and part.isalnum() for part in parts):
        fail(f"malformed language tag {tag!r}")
    end = len(parts)

    def run(start: int, fits) -> int:
        """Index after the subtags from ``start`` that fit (at least one needed)."""
        i = start
        while i < end and fits(parts[i]):
            i += 1
        if i == start:
            fail(f"malformed language tag {tag!r}")
        return i

    if parts[0].lower() == "x":   # private use only
        if run(1, lambda p: len(p) <= 8) != end:
            fail(f"malformed language tag {tag!r}")
        return ""
    language = parts[0]
    if not (language.isalpha() and 2 <= len(language) <= 8):
        fail(f"malformed language tag {tag!r}")
    i = 1
    if len(language) <= 3:
        while i < min(end, 4) and len(parts[i]) == 3 and parts[i].isalpha():
            i += 1                                              # extlang
    if i < end and len(parts[i]) == 4 and parts[i].isalpha():
        i += 1                                                  # script
    if i < end and ((len(parts[i]) == 2 and parts[i].isalpha())
                    or (len(parts[i]) == 3 and parts[i].isdigit())):
        i += 1                                                  # region
    while i < end and (5 <= len(parts[i]) <= 8
                       or (len(parts[i]) == 4 and parts[i][0].isdigit())):
        i += 1                                                  # variants
    while i < end and len(parts[i]) == 1 and parts[i].lower() != "x":
        i = run(i + 1, lambda p: 2 <= len(p) <= 8)              # extensions
    if i < end and parts[i].lower() == "x":
        i = run(i + 1, lambda p: len(p) <= 8)                   # private use
    if i != end:
        fail(f"malformed language tag {tag!r}")
    return language.lower()


# Soft_Dotted (Unicode PropList.txt), for the Lithuanian rules.
_SOFT_DOTTED = set(map(chr, [
    0x69, 0x6A, 0x12F, 0x249, 0x268, 0x29D, 0x2B2, 0x3F3, 0x456, 0x458, 0x1D62,
    0x1D96, 0x1DA4, 0x1DA8, 0x1E2D, 0x1ECB, 0x2071, 0x2148, 0x2149, 0x2C7C,
    0x1D422, 0x1D423, 0x1D456, 0x1D457, 0x1D48A, 0x1D48B, 0x1D4BE, 0x1D4BF,
    0x1D4F2, 0x1D4F3, 0x1D526, 0x1D527, 0x1D55A, 0x1D55B, 0x1D58E, 0x1D58F,
    0x1D5C2, 0x1D5C3, 0x1D5F6, 0x1D5F7, 0x1D62A, 0x1D62B, 0x1D65E, 0x1D65F,
    0x1D692, 0x1D693, 0x1DF1A, 0x1E04C, 0x1E04D, 0x1E068]))
DOT_ABOVE = "\u0307"


def _blocking(c: str) -> bool:
    """Combining class 0 or 230 (Above): what the SpecialCasing contexts stop at."""
    return unicodedata.combining(c) in (0, 230)


def _next_blocking(text: str, i: int) -> str | None:
    """The first character after text[i] whose combining class is 0 or 230."""
    for c in text[i + 1:]:
        if _blocking(c):
            return c
    return None


def _previous_blocking(text: str, i: int) -> str | None:
    for c in reversed(text[:i]):
        if _blocking(c):
            return c
    return None


def _more_above(text: str, i: int) -> bool:
    following = _next_blocking(text, i)
    return following is not None and unicodedata.combining(following) == 230


def lower_text(text: str, language: str) -> str:
    """Unicode full lower-case mapping, with SpecialCasing.txt's conditional
    rules for tr/az and lt.  The language-specific characters are replaced by
    their (already lower-case) mappings first, then ``str.lower`` maps the
    rest (it keeps the Final_Sigma context: the replacements keep cased letters
    cased and only add or drop case-ignorable U+0307)."""
    out = []
    for i, c in enumerate(text):
        if language in ("tr", "az"):
            if c == "\u0130":
                out.append("i")
                continue
            if c == DOT_ABOVE and _previous_blocking(text, i) == "I":
                continue  # After_I: the dot is dropped
            if c == "I":
                out.append("i" if _next_blocking(text, i) == DOT_ABOVE else "\u0131")
                continue
        elif language == "lt":
            if c in "IJ\u012E" and _more_above(text, i):
                out.append({"I": "i", "J": "j", "\u012E": "\u012F"}[c] + DOT_ABOVE)
                continue
            extra = {"\u00CC": "\u0300", "\u00CD": "\u0301", "\u0128": "\u0303"}.get(c)
            if extra:
                out.append("i" + DOT_ABOVE + extra)
                continue
        out.append(c)
    return "".join(out).lower()


def upper_text(text: str, language: str) -> str:
    out = []
    for i, c in enumerate(text):
        if language in ("tr", "az") and c == "i":
            out.append("\u0130")
            continue
        if language == "lt" and c == DOT_ABOVE and _previous_blocking(text, i) in _SOFT_DOTTED:
            continue  # After_Soft_Dotted: the dot is dropped
        out.append(c)
    return "".join(out).upper()


# =============================================================================
# The evaluator
# =============================================================================

class Evaluator:
    def __init__(self, message: Message, now: int | None = None) -> None:
        self.message = message
        self.now = now

    def eval(self, node: ast.Node) -> Any:
        method = getattr(self, "eval_" + type(node).__name__, None)
        if method is None:
            raise TypeError(f"the reference evaluator does not know {type(node).__name__}")
        return method(node)

    # --- constants and references -------------------------------------------

    def eval_Literal(self, node: ast.Literal) -> Any:
        return node.value

    def eval_Field(self, node: ast.Field) -> Any:
        value = getattr(self.message, node.section).get(node.key)
        if value is None and node.default is not None:
            return node.default
        return value

    def eval_Body(self, node: ast.Body) -> Any:
        return getattr(self.message, f"_filtex_{node.section}")

    def eval_MapRef(self, node: ast.MapRef) -> Any:
        base = self.eval(node.base)
        if isinstance(base, Mapping):
            return base.get(node.key)
        return None  # not a map: a missing step

    def eval_Index(self, node: ast.Index) -> Any:
        base = self.eval(node.base)
        index = self.eval(node.index)
        return self.index_step(base, index)[1]

    @staticmethod
    def index_step(base: Any, index: Any) -> tuple[bool, Any]:
        """(present, value) of base[index].

        READING: a non-NULL index that is not an integer is a failure (the
        specification says it MUST be an integer), whatever the base holds;
        a NULL index is a missing step.
        """
        if index is None:
            return False, None
        position = as_int_or_fail(index, "a positional reference")
        if isinstance(base, Array):
            items = list(base.elements)
        elif isinstance(base, (list, tuple)):
            items = list(base)
        else:
            return False, None
        if 0 <= position < len(items):
            return True, items[position]
        return False, None

    # --- operators -----------------------------------------------------------

    def eval_Unary(self, node: ast.Unary) -> Any:
        return unary_value(node.op, self.eval(node.operand))

    def eval_Binary(self, node: ast.Binary) -> Any:
        left = self.eval(node.left)
        right = self.eval(node.right)
        return binary_values(node.op, left, right)

    def eval_Compare(self, node: ast.Compare) -> bool | None:
        left = self.eval(node.left)
        right = self.eval(node.right)
        return compare_values(node.op, left, right)

    # --- logic (no short-circuit: every operand is evaluated) ----------------

    def predicate(self, node: ast.Node, where: str) -> bool | None:
        value = self.eval(node)
        check_predicate_value(value, where)
        return value

    def eval_And(self, node: ast.And) -> bool | None:
        values = [self.predicate(item, "an AND operand") for item in node.items]
        return and3(values)

    def eval_Or(self, node: ast.Or) -> bool | None:
        values = [self.predicate(item, "an OR operand") for item in node.items]
        return or3(values)

    def eval_Not(self, node: ast.Not) -> bool | None:
        return not3(self.predicate(node.operand, "a NOT operand"))

    # --- predicates ------------------------------------------------------------

    def eval_IsNull(self, node: ast.IsNull) -> bool:
        is_null = self.eval(node.operand) is None
        return not is_null if node.negated else is_null

    def eval_Like(self, node: ast.Like) -> bool | None:
        operand = self.eval(node.operand)
        pattern = self.eval(node.pattern)
        escape = self.eval(node.escape) if node.escape is not None else None
        # READING: NULL anywhere gives NULL before the type checks (as with
        # arithmetic and functions).
        if operand is None or pattern is None or (node.escape is not None and escape is None):
            return None
        text = as_str_or_fail(operand, "the LIKE operand")
        pattern_text = as_str_or_fail(pattern, "the LIKE pattern")
        escape_char = None
        if node.escape is not None:
            escape_char = as_str_or_fail(escape, "the LIKE escape")
            if len(escape_char) != 1:
                fail(f"the LIKE escape must be one character, not {escape_char!r}")
        result = like_match(text, pattern_text, escape_char)
        return not result if node.negated else result

    def eval_In(self, node: ast.In) -> bool | None:
        # x IN (e1, ..., en) is x = e1 OR ... OR x = en: each comparison is
        # made right after its item is evaluated (so its failure comes first).
        operand = self.eval(node.operand)
        results = []
        for item in node.items:
            results.append(compare_values("=", operand, self.eval(item)))
        result = or3(results)
        return not3(result) if node.negated else result

    def eval_Between(self, node: ast.Between) -> bool | None:
        # x BETWEEN a AND b is x >= a AND x <= b.
        operand = self.eval(node.operand)
        low = compare_values(">=", operand, self.eval(node.low))
        high = compare_values("<=", operand, self.eval(node.high))
        result = and3([low, high])
        return not3(result) if node.negated else result

    def eval_Exists(self, node: ast.Exists) -> bool:
        return self.presence(node.ref)[0]

    def presence(self, ref: ast.Node) -> tuple[bool, Any]:
        """(present, value) of a reference chain, ignoring header defaults."""
        if isinstance(ref, ast.Field):
            section = getattr(self.message, ref.section)
            if ref.key not in section:
                return False, None
            value = section[ref.key]
            # READING: header and properties are composite (list) sections:
            # a null there is "no value at the field position".  The map
            # sections (annotations, application properties, footer) have
            # the entry whatever its value.
            if ref.section in ("header", "properties") and value is None:
                return False, None
            return True, value
        if isinstance(ref, ast.MapRef):
            present, base = self.presence(ref.base)
            if present and isinstance(base, Mapping) and ref.key in base:
                return True, base[ref.key]
            return False, None
        if isinstance(ref, ast.Index):
            present, base = self.presence(ref.base)
            index = self.eval(ref.index)
            found, value = self.index_step(base, index)
            return present and found, value
        raise TypeError(f"EXISTS of a {type(ref).__name__}")

    # --- functions -------------------------------------------------------------

    def eval_Call(self, node: ast.Call) -> Any:
        if ":" in node.name and node.name.lower() != "filtex:length":
            # READING: an unknown (vendor) function is NULL without evaluating
            # its arguments ("its arguments are still checked for syntax").
            return None
        if ":" in node.name:
            # filtex's own vendor function: a string's length in code points
            # (LEFT's and SUBSTRING's characters); NULL for NULL, else a failure
            value = self.eval(node.args[0])
            return None if value is None else len(as_str_or_fail(value, "LENGTH's argument"))
        name = node.name.upper()
        args = [self.eval(arg) for arg in node.args]
        if name == "UTC":
            now = self.now if self.now is not None else int(time.time() * 1000)
            return timestamp(now)
        # READING: a NULL argument gives NULL before any type check.
        if any(arg is None for arg in args):
            return None
        if name in ("LOWER", "UPPER"):
            text = as_str_or_fail(args[0], f"{name}'s argument")
            language = ""
            if len(args) > 1:
                language = language_of_tag(as_str_or_fail(args[1], f"{name}'s language tag"))
            return lower_text(text, language) if name == "LOWER" else upper_text(text, language)
        if name in ("LEFT", "RIGHT"):
            text = as_str_or_fail(args[0], f"{name}'s string")
            count = as_int_or_fail(args[1], f"{name}'s count")
            if count < 0:
                fail(f"{name}'s count is negative: {count}")
            return text[:count] if name == "LEFT" else text[max(0, len(text) - count):]
        if name == "SUBSTRING":
            text = as_str_or_fail(args[0], "SUBSTRING's string")
            start = as_int_or_fail(args[1], "SUBSTRING's start")
            if start < 1:
                fail(f"SUBSTRING's start must be at least 1, not {start}")
            if len(args) > 2:
                count = as_int_or_fail(args[2], "SUBSTRING's count")
                if count < 0:
                    fail(f"SUBSTRING's count is negative: {count}")
                return text[start - 1:start - 1 + count]
            return text[start - 1:]
        if name == "DATE":
            text = as_str_or_fail(args[0], "DATE's argument")
            ms = parse_iso_datetime_ms(text)
            if ms is None:
                fail(f"DATE: {text!r} is not an ISO 8601 date or date-time")
            return timestamp(ms)
        raise TypeError(f"unknown built-in function {node.name!r}")


# =============================================================================
# Three-valued logic
# =============================================================================

def and3(values: list) -> bool | None:
    if any(v is False for v in values):
        return False
    if any(v is None for v in values):
        return None
    return True


def or3(values: list) -> bool | None:
    if any(v is True for v in values):
        return True
    if any(v is None for v in values):
        return None
    return False


def not3(value: bool | None) -> bool | None:
    return None if value is None else not value
