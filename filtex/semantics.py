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

from proton import char

from . import runtime
from .errors import EvaluationFailure
from .like import PatternError, _segments, compile_like
from .values import (BINARY, BOOL, DECIMAL, FLOAT, INT, STRING, TIMESTAMP, UUID, decimal_value,
                     double_value, kind_of)

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
    int_division = "exact"         # 7 / 2 = 3.5, 6 / 2 = 3
    int_range: tuple | None = (runtime.LONG_MIN, runtime.ULONG_MAX)   # else NaN
    null_view = False              # IS NULL tests the value as read

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
    """No failures: NULL instead, and FALSE for values of unlike types."""

    name = "lenient"
    failures = False

    def view(self, value: Any) -> Any:  # type: ignore[override]
        return value

    def compare(self, op: str, left: Any, right: Any) -> bool | None:  # type: ignore[override]
        if left is None or right is None:
            return None
        left, right = self.view(left), self.view(right)
        if left is None or right is None:
            return None
        if left.__class__ is Opaque or right.__class__ is Opaque:
            return False
        if left.__class__ is JavaChar or right.__class__ is JavaChar:
            return False if left.__class__ is not right.__class__ else \
                runtime.OPS[op](str(left), str(right))
        return self.compare_values(op, left, right)

    def compare_values(self, op: str, left: Any, right: Any) -> bool | None:
        try:
            return runtime.compare(op, left, right)
        except EvaluationFailure:
            return False

    def in_values(self, value: Any, items: tuple) -> bool | None:  # type: ignore[override]
        if value is None or self.view(value) is None:
            return None
        result: bool | None = False
        for item in items:
            found = self.compare("=", value, item)
            if found:
                return True
            if found is None:
                result = None
        return result

    def between(self, value: Any, low: Any, high: Any,  # type: ignore[override]
                negate: bool = False) -> bool | None:
        above = self.compare(">=", value, low)
        below = self.compare("<=", value, high)
        if above is False or below is False:
            inside: bool | None = False
        else:
            inside = None if (above is None or below is None) else True
        return inside if inside is None else inside != negate

    def predicate(self, value: Any) -> bool | None:  # type: ignore[override]
        return value if value is True or value is False else None

    def number(self, value: Any) -> Any:
        """The value as a number of this dialect, or None."""
        value = self.view(value)
        kind = kind_of(value)
        if kind == INT:
            return int(value)
        if kind == FLOAT:
            return double_value(value)
        if kind == DECIMAL:
            return decimal_value(value)
        return None

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
        if op == "%":
            return None if b == 0 else math.fmod(a, b)
        if op == "/":
            if b == 0:
                return None
            return a / b
        return a + b if op == "+" else a - b if op == "-" else a * b

    def negate(self, value: Any) -> Any:  # type: ignore[override]
        number = None if value is None else self.number(value)
        return None if number is None else -number

    def plus(self, value: Any) -> Any:  # type: ignore[override]
        return None if value is None else self.number(value)

    def like(self, value: Any, pattern: Any, negated: bool,  # type: ignore[override]
             *escape: Any) -> bool | None:
        if value is None or pattern is None or (escape and escape[0] is None):
            return None
        text = self.like_text(self.view(value))
        if text is None or kind_of(pattern) != STRING or \
                (escape and (kind_of(escape[0]) != STRING or len(escape[0]) != 1)):
            return None
        try:
            matcher = compile_like(str(pattern), str(escape[0]) if escape else None)
        except PatternError:
            return None
        return matcher(text) != negated

    def like_text(self, value: Any) -> str | None:
        """The text LIKE matches a value as, or None (not a string)."""
        return str(value) if kind_of(value) == STRING and value.__class__ is not JavaChar \
            else None


class Jms(Lenient):
    """JMS selectors as ActiveMQ, Artemis and Qpid evaluate them."""

    name = "jms"
    string_ops = frozenset({"=", "<>"})
    decimal_fast_paths = False     # decimals are doubles in JMS
    char_is_string = False         # a Java char is not a String
    int_division = "truncate"      # Java integer division
    int_range = (LONG_MIN, LONG_MAX)

    def view(self, value: Any) -> Any:  # type: ignore[override]
        """The Apache filters document's AMQP-to-JMS type mapping."""
        cls = value.__class__
        if cls is int or cls is str or cls is float or value is None or cls is bool:
            return value
        kind = kind_of(value)
        if kind == INT or kind == TIMESTAMP:
            return int(value)
        if kind == FLOAT:
            return double_value(value)
        if kind == DECIMAL:
            return float(decimal_value(value))
        if kind == STRING:
            return JavaChar(value) if isinstance(value, char) else str(value)
        if kind == BOOL:
            return bool(value)
        return Opaque(value)   # binary, uuid (byte arrays), maps, lists, described

    def compare_values(self, op: str, left: Any, right: Any) -> bool | None:
        lk, rk = kind_of(left), kind_of(right)
        if lk == STRING and rk == STRING and op not in ("=", "<>"):
            return None   # JMS compares strings with = and <> only
        if lk == BOOL and rk == BOOL and op not in ("=", "<>"):
            return None
        return super().compare_values(op, left, right)

    def int_arith(self, op: str, a: int, b: int) -> Any:
        if op in "/%" and b == 0:
            return None   # ArithmeticException
        if op == "/":
            quotient = abs(a) // abs(b)
            return _wrap(quotient if (a < 0) == (b < 0) else -quotient)
        return _wrap(super().int_arith(op, a, b))

    def float_arith(self, op: str, a: float, b: float) -> Any:
        if op == "/":  # IEEE 754, as Java doubles divide
            if b == 0:
                return math.nan if a == 0 or a != a else math.copysign(math.inf, a) * \
                    math.copysign(1, b)
            return a / b
        return super().float_arith(op, a, b)


def _wrap(value: int) -> int:
    """Java long arithmetic wraps around."""
    return (value - LONG_MIN) % (1 << 64) + LONG_MIN


class RabbitMQ(Lenient):
    """RabbitMQ 4.2's evaluation of SQL filters (``rabbit_amqp_filter_sql``).

    Its values are numbers, booleans and byte strings: strings, symbols,
    binaries and uuids are all bytes, so ``'A' = 0x41``. Application property
    values it cannot represent (null, decimals, NaN and infinities, maps,
    lists, described values) are dropped: they read as absent."""

    name = "rabbitmq"
    decimal_fast_paths = False     # decimals are dropped, not compared
    int_division = "true"          # / always divides exactly: 5 / 2 = 2.5
    int_range = None               # Erlang integers do not overflow
    null_view = True               # IS NULL sees dropped values as absent

    def view(self, value: Any) -> Any:  # type: ignore[override]
        cls = value.__class__
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

    def compare(self, op: str, left: Any, right: Any) -> bool | None:  # type: ignore[override]
        if left is None or right is None:
            return None
        left, right = self.view(left), self.view(right)
        if left is None or right is None:
            return None
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

    def int_arith(self, op: str, a: int, b: int) -> Any:
        if op == "/":
            return None if b == 0 else a / b
        return super().int_arith(op, a, b)

    def float_arith(self, op: str, a: float, b: float) -> Any:
        if op == "%":
            return None   # rem is for integers only
        result = super().float_arith(op, a, b)
        # Erlang raises badarith rather than produce an infinity
        return result if result is None or result - result == 0 else None

    def number(self, value: Any) -> Any:
        value = self.view(value)
        return value if value.__class__ in (int, float) else None

    def like(self, value: Any, pattern: Any, negated: bool,  # type: ignore[override]
             *escape: Any) -> bool | None:
        subject = None if value is None else self.view(value)
        if subject.__class__ is bytes:
            return self.like_bytes(subject, str(pattern), str(escape[0]) if escape else None,
                                   negated)
        return super().like(subject, pattern, negated, *escape)

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


def get_semantics(name: str) -> Semantics:
    return SEMANTICS[name]
