"""How each dialect evaluates: the operations generated code calls when the
static types did not settle them, and the facts the code generator needs to
choose its inline fast paths.

``amqp`` is the runtime as it stands: an evaluation failure raises and makes
the whole filter unknown. The ``jms`` and ``rabbitmq`` dialects have no
failures (semantics.md): what fails in ``amqp`` is NULL there, and comparing
values of unlike types is FALSE, as JMS specifies and RabbitMQ does. Before an
operation they see each AMQP value as their own peer does (``view``): JMS
through the Apache type-mapping table (decimals are doubles, timestamps longs,
binary and uuid values byte arrays that nothing equals), RabbitMQ through its
Erlang terms.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from decimal import Decimal

from proton import byte, char, float32, int32, short, ubyte, ushort

from . import runtime
from .like import PatternError, _segments, compile_like
from .values import (BINARY, BOOL, DECIMAL, FLOAT, INT, STRING, TIMESTAMP, UUID, decimal_value,
                     double_value, exact, kind_of)

LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1


class Opaque:
    """A value its dialect cannot compare or compute with (a Java ``byte[]``,
    a map or list): every comparison with it is FALSE, every operation NULL."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Opaque({self.value!r})"


class JavaChar(str):
    """A JMS ``char``: not a String, so it equals no string constant."""

    __slots__ = ()


class Semantics:
    """The ``amqp`` rules: the runtime's functions, failures and all."""

    name = "amqp"
    failures = True
    # Python's str ordering is the dialect's for these operators (fast paths).
    string_ops = frozenset({"=", "<>", "<", "<=", ">", ">="})
    decimal_fast_paths = True      # Decimal compares with ints by value
    char_is_string = True          # a char compares as a one-character string
    int_division = "exact"         # inline int /: 7 / 2 = 3.5, 6 / 2 = 3 ("true": always float)
    int_range: tuple | None = (runtime.LONG_MIN, runtime.ULONG_MAX)   # else NaN
    null_view = False              # IS NULL tests the value as read
    inline_arithmetic = True       # int and float arithmetic inline (else the runtime's)
    like_escapes = "amqp"          # see like._segments
    non_boolean_condition = None   # (lenient dialects) what a non-boolean condition is
    java_floats = False
    string_concatenation = True    # string + string (jms: string + anything) makes a string

    def other_type(self, test: str, op: str = "=", negated: bool = False) -> str | None:
        """Inline result for values of other types, or None: the runtime decides."""
        return None

    def namespace(self) -> dict[str, Callable]:
        """The operations generated code calls, by their generated names."""
        return {"_compare": self.compare, "_arith": self.arith, "_negate": self.negate,
                "_plus": self.plus, "_predicate": self.predicate, "_in": self.in_values,
                "_like": self.like, "_between": self.between, "_view": self.view,
                **{f"_fn_{name}": fn for name, fn in runtime.FUNCTIONS.items()}}

    view = staticmethod(lambda value: value)
    compare = staticmethod(runtime.compare)
    arith = staticmethod(runtime.arith)
    negate = staticmethod(runtime.negate)
    plus = staticmethod(runtime.plus)
    predicate = staticmethod(runtime.predicate)
    in_values = staticmethod(runtime.in_values)
    like = staticmethod(runtime.like)
    between = staticmethod(runtime.between)


class Lenient(Semantics):
    """No failures: NULL instead, and FALSE for values of unlike types. A
    subclass says how it sees AMQP values (``view``) and compares them."""

    name = "lenient"
    failures = False

    def compare(self, op: str, left: Any, right: Any) -> bool | None:  # type: ignore[override]
        if left is None or right is None:
            return None
        left, right = self.view(left), self.view(right)
        if left is None or right is None:
            return None
        return self.compare_views(op, left, right)

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        """Two present values, as the dialect sees them."""
        raise NotImplementedError

    def between(self, value: Any, low: Any, high: Any,  # type: ignore[override]
                negate: bool = False) -> bool | None:
        above = self.compare(">=", value, low)
        below = self.compare("<=", value, high)
        if above is False or below is False:
            inside: bool | None = False
        else:
            inside = None if (above is None or below is None) else True
        return inside if inside is None else inside != negate


class Jms(Lenient):
    """JMS selectors where ActiveMQ, Artemis and Qpid Broker-J agree (their
    shared ``ComparisonExpression``/``ArithmeticExpression`` lineage), and
    ActiveMQ's and Artemis' reading where Qpid differs.

    Values are Java objects: integers keep their Java width (a proton ``int32``
    or a literal in int range is an Integer, other integers Longs), floats are
    Double or Float. ``+ - *`` wrap at 32 or 64 bits; ``/`` and ``%`` are done
    in double (no division-by-zero error: Infinity or NaN); doubles order as
    ``Double.compareTo`` does (NaN above everything and equal to itself, -0.0
    below 0.0); strings order by UTF-16 code units."""

    name = "jms"
    string_ops = frozenset({"=", "<>"})
    decimal_fast_paths = False     # decimals are doubles in JMS
    char_is_string = False         # a Java char is not a String
    inline_arithmetic = False      # Java widths and wrapping decide: the runtime does it
    like_escapes = "jms"
    non_boolean_condition = False  # a bare non-boolean property is FALSE
    java_floats = True             # NaN and -0.0 order as in Java

    def view(self, value: Any) -> Any:  # type: ignore[override]
        """The Apache filters document's AMQP-to-JMS type mapping."""
        value = exact(value)
        cls = type(value)
        if cls is int or cls is str or cls is float or value is None or cls is bool \
                or cls is int32 or cls is float32:
            return value
        kind = kind_of(value)
        if kind == INT:
            if cls in _JAVA_INT_CLASSES:
                return int32(int(value))   # byte, short, int, ubyte, ushort: int arithmetic
            return int(value)              # uint, ulong, long: long
        if kind == TIMESTAMP:
            return int(value)
        if kind == FLOAT:
            return value
        if kind == DECIMAL:
            return float(decimal_value(value))
        if kind == STRING:
            return JavaChar(value) if isinstance(value, char) else str(value)
        if kind == BOOL:
            return bool(value)
        return Opaque(value)   # binary, uuid (byte arrays), maps, lists, described

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        # NULL on either side stayed unknown (the JMS specification and Qpid C++;
        # README: where the JMS peers disagree)
        if op in ("=", "<>"):   # <> is NOT (=): values of unlike types differ
            return self.equals(left, right) == (op == "=")
        return self.order(op, left, right)

    def equals(self, left: Any, right: Any) -> bool:
        if left.__class__ is Opaque or right.__class__ is Opaque:
            return left is right   # byte[] equals only itself
        key = _java_key(left, right)
        return key is not None and key[0] == key[1]

    def order(self, op: str, left: Any, right: Any) -> bool:
        key = _java_key(left, right)
        return False if key is None else runtime.OPS[op](*key)

    def other_type(self, test: str, op: str = "=", negated: bool = False) -> str | None:
        """Python source for the result of a test against constants when the
        value is neither NULL nor a String (the generated fast path's else)."""
        if test == "compare-string" and op in ("=", "<>"):
            return repr(op == "<>")   # a String never equals another Java type
        if test == "in-strings":
            return "None"             # IN on a non-string is unknown
        if test == "like":
            return repr(negated)      # LIKE on a non-string is FALSE
        return None

    def between(self, value: Any, low: Any, high: Any,  # type: ignore[override]
                negate: bool = False) -> bool | None:
        """The peers build BETWEEN as v >= lo AND v <= hi, and NOT BETWEEN as
        v < lo OR v > hi (so NOT BETWEEN is FALSE, too, for unlike types)."""
        if not negate:
            return super().between(value, low, high)
        below, above = self.compare("<", value, low), self.compare(">", value, high)
        if below is True or above is True:
            return True
        return None if below is None or above is None else False

    def in_values(self, value: Any, items: tuple) -> bool | None:  # type: ignore[override]
        value = None if value is None else self.view(value)
        if value.__class__ is not str:
            return None   # IN is for strings; anything else is unknown
        return any(value == item for item in items if item.__class__ is str)

    def predicate(self, value: Any) -> bool | None:  # type: ignore[override]
        if value is None or value is True or value is False:
            return value
        return False   # the boolean cast of a non-boolean property

    def number(self, value: Any) -> Any:
        value = self.view(value)
        cls = value.__class__
        return value if cls is int or cls is int32 or cls is float or cls is float32 else None

    def arith(self, op: str, left: Any, right: Any) -> Any:  # type: ignore[override]
        if left is None or right is None:
            return None
        if op == "+" and self.view(left).__class__ is str:
            return self.view(left) + java_string(self.view(right))   # String.valueOf
        a, b = self.number(left), self.number(right)
        if a is None or b is None:
            return None   # a RuntimeException in the peers: NULL here (semantics.md)
        if op in "/%" or a.__class__ in (float, float32) or b.__class__ in (float, float32):
            x, y = double_value(a), double_value(b)
            if op == "/":
                return _java_divide(x, y)
            if op == "%":
                return math.nan if y == 0 or x - x != 0 else math.fmod(x, y)
            return x + y if op == "+" else x - y if op == "-" else x * y
        result = a + b if op == "+" else a - b if op == "-" else a * b
        if a.__class__ is int32 and b.__class__ is int32:
            return int32(_wrap(result, 32))
        return _wrap(result, 64)

    def negate(self, value: Any) -> Any:  # type: ignore[override]
        number = None if value is None else self.number(value)
        if number is None:
            return None
        if number.__class__ is int32:
            return int32(_wrap(-number, 32))
        if number.__class__ is int:
            return _wrap(-number, 64)
        return -double_value(number) if number.__class__ is float else float32(-number)

    def plus(self, value: Any) -> Any:  # type: ignore[override]
        return value   # unary plus is a no-op on any type

    def like(self, value: Any, pattern: Any, negated: bool,  # type: ignore[override]
             *escape: Any) -> bool | None:
        if value is None:
            return None
        value = self.view(value)
        if value.__class__ is not str:
            return negated   # LIKE on a non-string is FALSE (NOT LIKE TRUE)
        matcher = compile_like(str(pattern), str(escape[0]) if escape else None, "jms")
        return matcher(value) != negated


_JAVA_INT_CLASSES = frozenset({byte, short, int32, ubyte, ushort})


def _wrap(value: int, bits: int) -> int:
    """Java integer arithmetic wraps around."""
    half = 1 << (bits - 1)
    return (value + half) % (1 << bits) - half


def _java_divide(x: float, y: float) -> float:
    if y == 0:
        if x == 0 or x != x:
            return math.nan
        return math.copysign(math.inf, x) * math.copysign(1.0, y)
    return x / y


def _double_key(x: float) -> tuple:
    """``Double.compareTo``'s total order: -0.0 < 0.0, NaN above +Infinity."""
    if x != x:
        return (2, 0.0, 0.0)
    return (1, x, math.copysign(1.0, x) if x == 0 else 0.0)


def _java_key(left: Any, right: Any) -> tuple | None:
    """Comparable forms of two Java values, or None when Java cannot compare
    them (different kinds: FALSE)."""
    lk, rk = _java_kind(left), _java_kind(right)
    if lk == rk == "number":
        if left.__class__ in (float, float32) or right.__class__ in (float, float32):
            if left.__class__ is float or right.__class__ is float:
                return _double_key(double_value(left)), _double_key(double_value(right))
            # Float with an integer: the integer is rounded to float
            return (_double_key(double_value(float32(left))),
                    _double_key(double_value(float32(right))))
        return int(left), int(right)
    if lk != rk or lk is None:
        return None
    if lk == "string":   # String.compareTo: UTF-16 code units
        return (left.encode("utf-16-be", "surrogatepass"),
                right.encode("utf-16-be", "surrogatepass"))
    return left, right   # booleans (false < true), chars


def _java_kind(value: Any) -> str | None:
    cls = value.__class__
    if cls in (int, int32, float, float32):
        return "number"
    if cls is str:
        return "string"
    if cls is bool:
        return "bool"
    if cls is JavaChar:
        return "char"
    return None


def java_string(value: Any) -> str:
    """``String.valueOf`` of a Java value."""
    if value is True or value is False:
        return "true" if value else "false"
    if value.__class__ is float32:
        return _java_float_text(double_value(value), single=True)
    if value.__class__ is float:
        return _java_float_text(value)
    if value.__class__ is Opaque:
        return f"[B@{id(value.value):x}"
    if isinstance(value, int):
        return str(int(value))   # proton's int32 prints as int32(1)
    return str(value)


def _java_float_text(x: float, single: bool = False) -> str:
    """``Double.toString``/``Float.toString``: the shortest digits that read back,
    plain between 10^-3 and 10^7, else d.dddEn."""
    if x != x:
        return "NaN"
    if x in (math.inf, -math.inf):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    text = repr(x)
    if single:
        for digits in range(1, 10):
            candidate = f"{x:.{digits}g}"
            if double_value(float32(float(candidate))) == x:
                text = candidate
                break
    sign, digits, exponent = Decimal(text).as_tuple()
    digits_text = "".join(map(str, digits)).rstrip("0") or "0"
    point = len(digits) + exponent          # position of the decimal point
    prefix = "-" if sign else ""
    if 1e-3 <= abs(x) < 1e7:
        if point <= 0:
            return f"{prefix}0.{'0' * -point}{digits_text}"
        whole = digits_text[:point].ljust(point, "0")
        fraction = digits_text[point:] or "0"
        return f"{prefix}{whole}.{fraction}"
    return f"{prefix}{digits_text[0]}.{digits_text[1:] or '0'}E{point - 1}"


class RabbitMQ(Lenient):
    """RabbitMQ 4.2's evaluation of SQL filters (``rabbit_amqp_filter_sql``).

    Its values are numbers, booleans and byte strings: strings, symbols,
    binaries and uuids are all bytes, so ``'A' = 0x41``. Application property
    values it cannot represent (null, decimals, NaN and infinities, maps,
    lists, described values) are dropped: they read as absent."""

    name = "rabbitmq"
    decimal_fast_paths = False     # decimals are dropped, not compared
    char_is_string = False         # a char is its code point, a number
    int_division = "true"          # / always divides exactly: 5 / 2 = 2.5
    int_range = None               # Erlang integers do not overflow
    string_concatenation = False   # + is for numbers only
    null_view = True               # IS NULL sees dropped values as absent

    def view(self, value: Any) -> Any:  # type: ignore[override]
        value = exact(value)
        cls = type(value)
        if cls is int or cls is str or cls is bool or cls is bytes or value is None:
            return value
        kind = kind_of(value)
        if kind == INT or kind == TIMESTAMP:
            return int(value)
        if kind == FLOAT:
            number = double_value(value)
            return number if number - number == 0 else None  # NaN and infinities: dropped
        if kind == STRING:
            return ord(value) if isinstance(value, char) else str(value)
        if kind == BOOL:
            return bool(value)
        if kind == UUID:
            return value.bytes
        if kind == BINARY:
            return bytes(value)
        return None   # decimals, maps, lists, arrays, described: dropped

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        if left.__class__ is str and right.__class__ is bytes:
            left = left.encode("utf-8", "surrogatepass")
        elif left.__class__ is bytes and right.__class__ is str:
            right = right.encode("utf-8", "surrogatepass")
        lk, rk = kind_of(left), kind_of(right)
        same = lk == rk or (lk in (INT, FLOAT) and rk in (INT, FLOAT))
        if op == "=":
            return same and left == right
        if op == "<>":
            return not same or left != right   # Erlang /=: unlike kinds differ
        if not same or lk == BOOL:
            return False   # ordering is for numbers and byte strings only
        return runtime.OPS[op](left, right)

    def in_values(self, value: Any, items: tuple) -> bool | None:  # type: ignore[override]
        if value is None or self.view(value) is None:
            return None
        return any(self.compare("=", value, item) for item in items)

    def number(self, value: Any) -> Any:
        """The value as an Erlang number, or None."""
        value = self.view(value)
        return value if value.__class__ in (int, float) else None

    def predicate(self, value: Any) -> bool | None:  # type: ignore[override]
        return value if value is True or value is False else None

    def arith(self, op: str, left: Any, right: Any) -> Any:  # type: ignore[override]
        if left is None or right is None:
            return None
        a, b = self.number(left), self.number(right)
        if a is None or b is None:
            return None
        try:
            if a.__class__ is int and b.__class__ is int:
                return self.int_arith(op, a, b)
            return self.float_arith(op, float(a), float(b))
        except (ArithmeticError, ValueError):
            return None

    def int_arith(self, op: str, a: int, b: int) -> Any:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if b == 0:
            return None
        if op == "%":
            rem = abs(a) % abs(b)
            return -rem if a < 0 else rem
        return a / b

    def float_arith(self, op: str, a: float, b: float) -> Any:
        if op == "%" or (op == "/" and b == 0):
            return None   # rem is for integers only; no division by zero
        result = a / b if op == "/" else a + b if op == "+" else a - b if op == "-" else a * b
        # Erlang raises badarith rather than produce an infinity
        return result if result - result == 0 else None

    def negate(self, value: Any) -> Any:  # type: ignore[override]
        number = None if value is None else self.number(value)
        return None if number is None else -number

    def plus(self, value: Any) -> Any:  # type: ignore[override]
        return None if value is None else self.number(value)

    def like(self, value: Any, pattern: Any, negated: bool,  # type: ignore[override]
             *escape: Any) -> bool | None:
        if value is None or pattern is None or (escape and escape[0] is None):
            return None
        subject = self.view(value)
        if kind_of(pattern) != STRING or \
                (escape and (kind_of(escape[0]) != STRING or len(escape[0]) != 1)):
            return None
        pattern, escape_char = str(pattern), str(escape[0]) if escape else None
        if subject.__class__ is bytes:
            return self.like_bytes(subject, pattern, escape_char, negated)
        if subject.__class__ is not str:
            return None   # LIKE on a number or boolean is unknown
        try:
            return compile_like(pattern, escape_char)(subject) != negated
        except PatternError:
            return None

    @staticmethod
    def like_bytes(subject: bytes, pattern: str, escape: str | None, negated: bool) -> bool | None:
        """A binary subject: patterns with no ``_`` and at most one ``%`` match its
        bytes; any other pattern needs it to be UTF-8 text (else unknown)."""
        segments = _segments(pattern, escape)
        if len(segments) <= 2 and all(None not in seg for seg in segments):
            parts = ["".join(seg).encode("utf-8", "surrogatepass") for seg in segments]
            if len(parts) == 1:
                found = subject == parts[0]
            else:
                found = (len(subject) >= len(parts[0]) + len(parts[1])
                         and subject.startswith(parts[0]) and subject.endswith(parts[1]))
            return found != negated
        try:
            text = subject.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return compile_like(pattern, escape)(text) != negated


SEMANTICS = {s.name: s for s in (Semantics(), Jms(), RabbitMQ())}

