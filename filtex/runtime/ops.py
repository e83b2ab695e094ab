"""Operations that generated filter code calls when the static types did not
settle them: comparison and arithmetic across AMQP types, functions, and
composite references. Each either returns a value (``None`` is NULL, a float
NaN is not-a-number) or raises ``EvaluationFailure`` with a reason. A reason
that names types or values is written only when it is read
(``EvaluationFailure.deferred``): ``evaluate`` and ``matches`` never read it.

The constant folder calls the same functions, so a folded constant is always
what the message-time code would have computed.
"""
from __future__ import annotations

import math
import operator
import re
import time
from datetime import date as calendar_date, datetime, timezone
from decimal import Decimal
from typing import Any, NoReturn

from proton import Array, Described, timestamp

from . import casing
from ..errors import EvaluationFailure, excerpt
from .patterns import like_matcher
from .values import (BINARY, BOOL, DECIMAL, DECIMAL128_CONTEXT, FLOAT, INT, NULL, OTHER,
                     STRING, TIMESTAMP, UUID, LONG_MIN, ULONG_MAX, decimal_value, double_value,
                     exact, kind_of)

NAN = math.nan
OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}
# + - * for numbers of one kind (division and remainder have their own rules)
RING = {"+": operator.add, "-": operator.sub, "*": operator.mul}
_NUMERIC = frozenset({INT, FLOAT, DECIMAL})
_TYPE_NAMES = {NULL: "null", BOOL: "boolean", INT: "integer", FLOAT: "floating-point",
               DECIMAL: "decimal", STRING: "string", BINARY: "binary",
               TIMESTAMP: "timestamp", UUID: "uuid"}


def type_name(value: Any) -> str:
    kind = kind_of(value)
    if kind != OTHER:
        return _TYPE_NAMES[kind]
    if isinstance(value, dict):
        return "map"
    if isinstance(value, Array):
        return "array"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, Described):
        return "described"
    return type(value).__name__[:40]   # a class name is the sender's choice: kept short


def a_type(value: Any) -> str:
    """``a string``, ``an integer``: a value's type with its article."""
    name = type_name(value)
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


def fail(reason: str) -> NoReturn:
    raise EvaluationFailure(reason)


_later = EvaluationFailure.deferred   # a failure whose reason is written when read

# The reasons' writers (each given the operation's own values, written when read).


def _not_a_time(text: str) -> str:
    return (f"cannot compare a timestamp with the string {text[:40]!r}: "
            "not an ISO 8601 date-time or duration")


def _cannot_order(kind: str, op: str) -> str:
    return f"cannot order {_TYPE_NAMES[kind]} values with {op}"


def _cannot_compare(left: Any, right: Any) -> str:
    return f"cannot compare {type_name(left)} with {type_name(right)}"


def _not_a_condition(value: Any) -> str:
    return f"{a_type(value)} value where a condition is expected"


def _not_a_number(op: str, value: Any) -> str:
    return f"cannot apply {op} to {a_type(value)} value"


def _not_integers(left: Any, right: Any) -> str:
    return f"% needs integers, not {type_name(left)} and {type_name(right)}"


def _not_a_position(index: Any) -> str:
    return f"a positional reference needs an integer, not {a_type(index)}"


def _needs_a_string(what: str, value: Any) -> str:
    return f"{what} needs a string, not {a_type(value)}"


def _needs_an_integer(function: str, what: str, value: Any) -> str:
    return f"{function} needs an integer {what}, not {a_type(value)}"


def _below(function: str, what: str, minimum: int, number: int) -> str:
    return f"{function} {what} must be at least {minimum}, not {_integer_text(number)}"


def _malformed_tag(function: str, tag: str) -> str:
    return f"{function}: malformed language tag {excerpt(tag)}"


def _not_a_date(text: str) -> str:
    return f"DATE: not an ISO 8601 date or date-time: {text[:40]!r}"


# --- ISO 8601 ------------------------------------------------------------------

_WEEKS = re.compile(r"P(\d+)W")
_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)(?:[.,](\d+))?S)?)?")
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def parse_datetime_ms(text: str) -> int | None:
    """ISO 8601 date (midnight) or date-time with a ``T`` to epoch milliseconds,
    UTC when unqualified; sub-millisecond digits are dropped."""
    if not 8 <= len(text) <= 40 or not text.isascii() or not text[:4].isdigit() \
            or any(c.isspace() for c in text):
        return None
    day, separator, _ = text.partition("T")
    try:
        calendar_date.fromisoformat(day)
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if not separator and len(text) != len(day):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    delta = moment - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000


def parse_duration_ms(text: str) -> int | None:
    """ISO 8601 duration ``PnW`` or ``PnDTnHnMnS`` (a fraction on the seconds
    only) to milliseconds; years and months are ambiguous and refused."""
    if len(text) > 64:   # no duration is this long; int() of long digit runs is costly
        return None
    weeks = _WEEKS.fullmatch(text)
    if weeks:
        return int(weeks.group(1)) * 7 * 86_400_000
    found = _DURATION.fullmatch(text)
    if found is None or not any(found.groups()) or text.endswith("T"):
        return None
    days, hours, minutes, seconds, fraction = found.groups()
    return (int(days or 0) * 86_400_000 + int(hours or 0) * 3_600_000
            + int(minutes or 0) * 60_000 + int(seconds or 0) * 1000
            + int(((fraction or "") + "000")[:3]))


def _string_as_time(text: str) -> int:
    millis = parse_datetime_ms(text)
    if millis is None:
        millis = parse_duration_ms(text)
    if millis is None:
        raise _later(_not_a_time, text)
    return millis


# --- comparison ----------------------------------------------------------------

def compare(op: str, left: Any, right: Any) -> bool | None:
    """``left op right`` by the specification's rules; None when unknown."""
    if left is None or right is None:
        return None
    left, right = exact(left), exact(right)   # no subclass's own == answers
    if _is_nan(left) or _is_nan(right):
        return None
    lk, rk = kind_of(left), kind_of(right)
    if lk == rk:
        if lk in (INT, STRING, TIMESTAMP, BINARY):
            return OPS[op](left, right)
        if lk == FLOAT:
            left, right = double_value(left), double_value(right)
            if left != left or right != right:
                return None
            return OPS[op](left, right)
        if lk == DECIMAL:
            return _compare_decimals(op, decimal_value(left), decimal_value(right))
        if lk in (BOOL, UUID):
            if op == "=":
                return left == right
            if op == "<>":
                return left != right
            raise _later(_cannot_order, lk, op)
    elif lk in _NUMERIC and rk in _NUMERIC:
        if FLOAT in (lk, rk):
            a, b = _as_double(left, lk), _as_double(right, rk)
            if a != a or b != b:
                return None
            return OPS[op](a, b)
        return _compare_decimals(op, _as_number(left, lk), _as_number(right, rk))
    elif TIMESTAMP in (lk, rk):
        other = rk if lk == TIMESTAMP else lk
        if other == INT:
            return OPS[op](int(left), int(right))
        if other == STRING:
            if lk == STRING:
                return OPS[op](_string_as_time(left), int(right))
            return OPS[op](int(left), _string_as_time(right))
    raise _later(_cannot_compare, left, right)


def _is_nan(value: Any) -> bool:
    """NaN, binary or decimal: any comparison with it is NULL."""
    if value.__class__ is float:
        return value != value
    kind = kind_of(value)
    if kind == FLOAT:
        return value != value
    return kind == DECIMAL and decimal_value(value).is_nan()


def _as_number(value: Any, kind: str) -> Any:
    return decimal_value(value) if kind == DECIMAL else value


def _as_double(value: Any, kind: str) -> float:
    if kind == DECIMAL:
        return float(decimal_value(value))
    return double_value(value)   # integers past the double range round to infinities


def _compare_decimals(op: str, left: Any, right: Any) -> bool | None:
    if (isinstance(left, Decimal) and left.is_nan()) or \
            (isinstance(right, Decimal) and right.is_nan()):
        return None
    return OPS[op](left, right)


def compare_eq(left: Any, right: Any) -> bool | None:
    return compare("=", left, right)


def in_values(value: Any, items: tuple) -> bool | None:
    """``value IN items``: OR of ``=`` comparisons (each may fail)."""
    result: bool | None = False
    for item in items:
        found = compare("=", value, item)
        if found:
            result = True
        elif found is None and result is False:
            result = None
    return result


def junction(values: tuple, decisive: bool) -> bool | None:
    """Three-valued OR (``decisive`` True) or AND (False) of conditions that are
    each True, False or None."""
    if decisive in values:
        return decisive
    return None if None in values else not decisive


def negated(value: bool | None) -> bool | None:
    return None if value is None else not value


def between(value: Any, low: Any, high: Any, negate: bool = False,
            compare: Any = compare) -> bool | None:
    """``value [NOT] BETWEEN low AND high`` as ``value >= low AND value <= high``,
    by the given comparison (each dialect's own)."""
    above = compare(">=", value, low)
    below = compare("<=", value, high)
    if above is False or below is False:
        inside: bool | None = False
    else:
        inside = None if (above is None or below is None) else True
    return inside if inside is None else inside != negate


def too_long(bound: int) -> None:
    """A computed string past ``Limits.max_string``: a failure (amqp)."""
    fail(f"a computed string is longer than {bound:,} characters (limit max_string)")


def bounded(value: Any, bound: int) -> Any:
    """``value``, or a failure if it is a string longer than ``bound`` (amqp)."""
    if value.__class__ is str and len(value) > bound:
        too_long(bound)
    return value


def bounded_null(value: Any, bound: int) -> Any:
    """``value``, or NULL if it is a string longer than ``bound`` (jms)."""
    return None if value.__class__ is str and len(value) > bound else value


def over_budget(bound: int) -> None:
    """The strings one evaluation computed and kept add up to more than
    ``Limits.max_computed`` characters: a failure in every dialect (the
    evaluation, not one value, is what went too far)."""
    fail(f"the evaluation computed strings of more than {bound:,} characters "
         "(limit max_computed)")


def bounded_pattern(pattern: Any, bound: int) -> Any:
    """``pattern``, or a failure if it is a string longer than ``bound``
    (``Limits.max_pattern``): a LIKE pattern the message supplies costs time
    in its length when it is compiled and in its ``_`` segments when it runs."""
    if issubclass(type(pattern), str) and str.__len__(pattern) > bound:
        fail(f"a LIKE pattern from the message is longer than {bound:,} characters "
             "(limit max_pattern)")
    return pattern


def not_boolean(mode: Any) -> None:
    """A filter's result was not True, False or None (a hostile value's ``__eq__``
    answered something else): unknown, and a failure when the reason is asked."""
    if mode is False:
        fail("a value compared to something other than a boolean")
    return None


def predicate(value: Any) -> bool | None:
    """A value in a predicate position: boolean or NULL, else a failure."""
    if value is None or value is True or value is False:
        return value
    raise _later(_not_a_condition, value)


# --- arithmetic -----------------------------------------------------------------

def _number_kind(value: Any, op: str) -> str:
    kind = kind_of(value)
    if kind in _NUMERIC:
        return kind
    if kind == TIMESTAMP:
        return INT
    raise _later(_not_a_number, op, value)


def _int_result(value: int) -> int | float:
    return value if LONG_MIN <= value <= ULONG_MAX else NAN


def _float_result(value: float, a: float, b: float) -> float:
    if math.isinf(value) and math.isfinite(a) and math.isfinite(b):
        return NAN
    return value


def _decimal_result(compute) -> Decimal | float:
    try:
        return compute(DECIMAL128_CONTEXT)
    except ArithmeticError:  # Overflow, InvalidOperation, DivisionByZero
        return NAN


def arith(op: str, left: Any, right: Any) -> Any:
    """``left op right`` for ``+ - * / %``."""
    if left is None or right is None:
        return None
    left, right = exact(left), exact(right)
    lk, rk = kind_of(left), kind_of(right)
    if op == "+" and lk == STRING and rk == STRING:
        return str(left) + str(right)
    lk, rk = _number_kind(left, op), _number_kind(right, op)
    if op == "%":
        if lk != INT or rk != INT:
            raise _later(_not_integers, left, right)
        a, b = int(left), int(right)
        if b == 0:
            return NAN
        rem = abs(a) % abs(b)
        return _int_result(-rem if a < 0 else rem)
    if lk == INT and rk == INT:
        a, b = int(left), int(right)
        if op in RING:
            return _int_result(RING[op](a, b))
        if b == 0:
            return NAN
        if a % b == 0:
            return _int_result(a // b)
        return a / b
    if FLOAT in (lk, rk):
        a, b = _as_double(left, lk), _as_double(right, rk)
        if op in RING:
            return _float_result(RING[op](a, b), a, b)
        if b == 0:
            return NAN
        return _float_result(a / b, a, b)
    a = decimal_value(left) if lk == DECIMAL else Decimal(int(left))
    b = decimal_value(right) if rk == DECIMAL else Decimal(int(right))
    if op in _DECIMAL_RING:
        return _decimal_result(lambda c: getattr(c, _DECIMAL_RING[op])(a, b))
    if not b:
        return NAN
    return _decimal_result(lambda c: c.divide(a, b))


_DECIMAL_RING = {"+": "add", "-": "subtract", "*": "multiply"}   # decimal128 context methods


def negate(value: Any) -> Any:
    if value is None:
        return None
    kind = _number_kind(value, "unary -")
    if kind == INT:
        return _int_result(-int(value))
    if kind == FLOAT:
        return -double_value(value)
    return -decimal_value(value)


def plus(value: Any) -> Any:
    if value is None:
        return None
    kind = _number_kind(value, "unary +")
    return int(value) if kind == INT and kind_of(value) == TIMESTAMP else value


# --- composite references --------------------------------------------------------

def map_get(base: Any, key: str) -> Any:
    """``base.key``: the map entry, or None when base is not a map or has none."""
    if isinstance(base, dict):
        return base.get(key)
    if isinstance(base, Described):
        return map_get(base.value, key)
    return None


def map_has(base: Any, key: str) -> bool:
    if isinstance(base, Described):
        return map_has(base.value, key)
    return isinstance(base, dict) and key in base


def _sequence(base: Any):
    if isinstance(base, Described):
        base = base.value
    if isinstance(base, Array):
        return base.elements
    if isinstance(base, (list, tuple)):
        return base
    return None


def _position(index: Any) -> int | None:
    if index is None:
        return None
    if kind_of(index) != INT:
        raise _later(_not_a_position, index)
    return int(index)


def item_get(base: Any, index: Any) -> Any:
    """``base[index]``: 0-based; out of range or not a list/array is NULL."""
    position = _position(index)
    items = _sequence(base)
    if position is None or items is None or not 0 <= position < len(items):
        return None
    return items[position]


def item_has(base: Any, index: Any) -> bool:
    position = _position(index)
    items = _sequence(base)
    return position is not None and items is not None and 0 <= position < len(items)


# --- LIKE ---------------------------------------------------------------------------

def like(value: Any, pattern: Any, negated: bool, *escape: Any) -> bool | None:
    """``value [NOT] LIKE pattern [ESCAPE escape]`` for computed operands."""
    if value is None or pattern is None or (escape and escape[0] is None):
        return None
    for what, item in (("LIKE", value), ("a LIKE pattern", pattern)) + \
            tuple(("a LIKE escape", e) for e in escape):
        if kind_of(item) != STRING:
            raise _later(_needs_a_string, what, item)
    matcher = like_matcher(str.__str__(pattern), str.__str__(escape[0]) if escape else None)
    return matcher(str.__str__(value)) != negated


# --- functions ---------------------------------------------------------------------



def _string_arg(value: Any, function: str) -> str:
    if kind_of(value) != STRING:
        raise _later(_needs_a_string, function, value)
    return str.__str__(value)


def _count_arg(value: Any, function: str, what: str, minimum: int) -> int:
    if kind_of(value) != INT:
        raise _later(_needs_an_integer, function, what, value)
    number = int.__int__(value)
    if number < minimum:
        raise _later(_below, function, what, minimum, number)
    return number


def _integer_text(number: int) -> str:
    """An integer for a reason: its digits if it has at most 20, else its size
    (a message's integer may have thousands of digits, and Python refuses to
    write more than 4,300)."""
    if -10**20 < number < 10**20:
        return str(number)
    digits = int(abs(number).bit_length() * 0.30103) + 1
    return f"{'-' if number < 0 else ''}an integer of about {digits:,} digits"


def _language(tag: Any, function: str) -> str:
    language = casing.primary_language(_string_arg(tag, function))
    if language is None:
        raise _later(_malformed_tag, function, str.__str__(tag))
    return language


def lower(value: Any, tag: Any = "") -> str | None:
    if value is None or tag is None:
        return None
    text = _string_arg(value, "LOWER")
    return casing.lower(text, _language(tag, "LOWER") if tag != "" else "")


def upper(value: Any, tag: Any = "") -> str | None:
    if value is None or tag is None:
        return None
    text = _string_arg(value, "UPPER")
    return casing.upper(text, _language(tag, "UPPER") if tag != "" else "")


def left(value: Any, count: Any) -> str | None:
    if value is None or count is None:
        return None
    text = _string_arg(value, "LEFT")
    return text[:_count_arg(count, "LEFT", "count", 0)]


def right(value: Any, count: Any) -> str | None:
    if value is None or count is None:
        return None
    text = _string_arg(value, "RIGHT")
    n = _count_arg(count, "RIGHT", "count", 0)
    return text[len(text) - n:] if n < len(text) else text


def substring(value: Any, start: Any, count: Any = ...) -> str | None:
    if value is None or start is None or count is None:
        return None
    text = _string_arg(value, "SUBSTRING")
    begin = _count_arg(start, "SUBSTRING", "start", 1) - 1
    if count is ...:
        return text[begin:]
    return text[begin:begin + _count_arg(count, "SUBSTRING", "count", 0)]


def length(value: Any) -> int | None:
    """``filtex:length``: a string's characters (code points)."""
    if value is None:
        return None
    return len(_string_arg(value, "filtex:length"))


def utc() -> timestamp:
    return timestamp(time.time_ns() // 1_000_000)


def date(value: Any) -> timestamp | None:
    if value is None:
        return None
    text = _string_arg(value, "DATE")
    millis = parse_datetime_ms(text)
    if millis is None:
        raise _later(_not_a_date, text)
    return timestamp(millis)




# --- derived fields (JMS header identifiers) -----------------------------------------
