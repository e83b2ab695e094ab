"""The ``jms`` dialect: Jakarta Messaging 3.1 selectors as ActiveMQ, Artemis and
Qpid read them (``apache.org:selector-filter:string``).

JMS header names map to AMQP fields (the Apache filters document's table);
AMQP values are seen as the Java objects the peers hold (the Apache type
mapping); evaluation has no failures: what fails in amqp is NULL, values of
unlike types compare FALSE.
"""
from __future__ import annotations

import math
import re
from dataclasses import replace
from decimal import Decimal
from typing import Any

from proton import byte, char, float32, int32, short, ubyte, ushort

from .. import runtime
from ..runtime.patterns import compile_like
from ..runtime.values import (BOOL, DECIMAL, FLOAT, INT, STRING, TIMESTAMP, decimal_value,
                              double_value, exact, kind_of)
from .base import Dialect, Lenient
from . import rules as R

JAVA_DOUBLE = R.Rounded("double", "total")
JAVA_FLOAT = R.Rounded("float32", "total")
JMS_NUMBER_RULES = R.NumberRules(R.table({
    # an Integer or Long against an Integer or Long constant: exactly; a Double on
    # either side makes both doubles; a Float against an integer makes both
    # floats; doubles order as Double.compareTo; IN lists strings only
    **{kind: {R.INTEGER: R.EXACT, R.DOUBLE: JAVA_DOUBLE, R.INFINITY: JAVA_DOUBLE,
              R.NAN: JAVA_DOUBLE} for kind in (R.INTEGER, R.TIMESTAMP)},
    R.FLOAT32: {R.INTEGER: JAVA_FLOAT, R.DOUBLE: JAVA_DOUBLE, R.INFINITY: JAVA_DOUBLE,
                R.NAN: JAVA_DOUBLE},
    R.DOUBLE: {R.INTEGER: JAVA_DOUBLE, R.DOUBLE: JAVA_DOUBLE, R.INFINITY: JAVA_DOUBLE,
               R.NAN: JAVA_DOUBLE},
}), in_list=None, other_types={**R.other_types({
    # unlike Java types differ: = FALSE, <> TRUE, no order; IN is unknown but for
    # a String; LIKE FALSE for a non-String; a non-boolean condition FALSE
    "string =": "false", "string <>": "true", "string order": "false",
    "boolean =": "false", "boolean <>": "true", "boolean order": "false",
    "null": "unknown", "in strings": "unknown", "like": "false", "condition": "false"}),
    **R.other_types({
        # a String, a byte[], a map or list, a Double from a decimal: unlike a
        # number or a boolean; no arithmetic but on numbers (NULL)
        "boolean =": "false", "boolean <>": "true", "number =": "false", "number <>": "true",
        "number order": "false", "condition": "false", "arithmetic": "unknown",
        "between numbers": "false", "not between numbers": "false"},
        (R.STRING, R.CHAR, R.BINARY, R.UUID, *R.COMPOSITES)),
    **R.other_types({
        "string =": "false", "string <>": "true", "number =": "false", "number <>": "true",
        "number order": "false", "in strings": "unknown", "like": "false",
        "arithmetic": "unknown", "between numbers": "false", "not between numbers": "false"},
        (R.BOOLEAN,)),
    **R.other_types({   # a Character is no String
        "string =": "false", "string <>": "true", "in strings": "unknown", "like": "false"},
        (R.CHAR, R.BINARY, R.UUID, *R.COMPOSITES, R.DECIMAL_VALUE)),
    **R.other_types({"boolean =": "false", "boolean <>": "true", "condition": "false"},
                    (R.DECIMAL_VALUE,))})
"""jms: ``Jms.compare_views`` (``_java_key``), ``in_values``, ``like``, ``predicate``."""


def _converted(kind: str, test: str) -> bool:
    """The cells ``convert_string_expressions:`` makes value-dependent: a
    String against a number or a boolean, either way, and a String in arithmetic."""
    if kind in R.VALUE_KINDS or kind == R.BOOLEAN:
        return test.startswith("string ")
    return kind == R.STRING and (test.startswith(("number ", "boolean ")) or test in (
        "arithmetic", "between numbers", "not between numbers"))


JMS_CONVERTING_RULES = R.NumberRules(
    JMS_NUMBER_RULES.compare, in_list=JMS_NUMBER_RULES.in_list,
    other_types={cell: answer for cell, answer in JMS_NUMBER_RULES.other_types.items()
                 if not _converted(*cell)})
"""jms with ``convert_string_expressions:``: ``JmsConverting.compare_views``, ``arith``."""

JMS_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
                          "TRUE", "FALSE"})

# The JMS header identifiers (Apache filters document, figure 1) and the JMSX
# properties of the AMQP JMS mapping: the AMQP fields each one reads.
JMS_HEADERS = {
    "JMSCorrelationID": (("properties", "correlation-id"),),
    "JMSDeliveryMode": (("header", "durable"),),
    "JMSDestination": (("properties", "to"),),
    "JMSExpiration": (("properties", "absolute-expiry-time"),),
    "JMSMessageID": (("properties", "message-id"),),
    "JMSPriority": (("header", "priority"),),
    "JMSRedelivered": (("header", "delivery-count"),),
    "JMSReplyTo": (("properties", "reply-to"),),
    "JMSTimestamp": (("properties", "creation-time"),),
    # The Apache table names the x-opt-jms-type annotation; the AMQP JMS mapping
    # (Qpid JMS, the peers' suites) carries JMSType in subject: the annotation
    # wins when present.
    "JMSType": (("message_annotations", "x-opt-jms-type"), ("properties", "subject")),
    "JMSXGroupID": (("properties", "group-id"),),
    "JMSXGroupSeq": (("properties", "group-sequence"),),
    "JMSXUserID": (("properties", "user-id"),),
}



def jms_delivery_mode(durable: Any) -> str:
    return "PERSISTENT" if durable is True else "NON_PERSISTENT"


def jms_redelivered(delivery_count: Any) -> bool | None:
    return delivery_count > 0 if kind_of(delivery_count) == INT else None


def first_present(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


# The headers that are not one AMQP field as it stands: (static type, how the
# value is computed from the fields); the others read their first field.
JMS_DERIVED = {"JMSDeliveryMode": ("string", jms_delivery_mode),
               "JMSRedelivered": ("bool", jms_redelivered),
               "JMSType": ("any", first_present)}

# The same computations as generated code writes them (templates of this
# module, never of filter text): no call per message.
JMS_INLINE = {jms_delivery_mode: "'PERSISTENT' if {0} is True else 'NON_PERSISTENT'",
              jms_redelivered: "({0} > 0) if type({0}) in _INTS else {slow}",
              first_present: "{0} if {0} is not None else {1}"}


def java_integer(text: str) -> Any:
    """A Java integer literal: an Integer (``int32``) in int range, else a Long;
    a leading 0 is octal."""
    digits = text.rstrip("lL")
    value = int(digits, 8) if digits[0] == "0" else int(digits)
    return java_integer_value(value)


def java_integer_value(value: int) -> Any:
    """An integer as the Java constant that holds it: Integer in int range, else Long."""
    return int32(value) if -(1 << 31) <= value < (1 << 31) else value


JMS_NUMBERS = ((re.compile(r"[1-9]\d*[lL]?|0[0-7]*"), "INTEGER", java_integer),
               (re.compile(r"(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+"), "APPROX",
                float))


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
    arithmetic = "java"            # Java widths: inline where no wrap happens, else the runtime
    like_escapes = "escape-wildcards"
    non_boolean_condition = False  # a bare non-boolean property is FALSE
    float_order = "total"          # NaN and -0.0 order as in Java
    numbers = JMS_NUMBER_RULES

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
        # docs/dialects.md: where the JMS peers disagree)
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

    def inline_derived(self, compute: Any) -> str | None:
        return JMS_INLINE.get(compute)

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
            return runtime.RING[op](x, y)
        result = runtime.RING[op](a, b)
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
        matcher = compile_like(str(pattern), str(escape[0]) if escape else None,
                               self.like_escapes)
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


JMS_SEMANTICS = Jms()

# --- Artemis's (and ActiveMQ's) selector options ------------------------------------------

_JAVA_INTEGER = re.compile(r"[+-]?\d+")   # Integer/Long.parseInt: a sign, decimal digits
_JAVA_DOUBLE = re.compile(   # FloatingDecimal.readJavaFormatString, after trim()
    r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?"
    r"|0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?)", re.ASCII)
_JAVA_RANGES = {int32: (-(1 << 31), (1 << 31) - 1), int: (-(1 << 63), (1 << 63) - 1)}


def java_value_of(cls: type, text: str) -> Any:
    """``Integer``/``Long``/``Double``/``Float``/``Boolean.valueOf(text)``;
    None where Java throws ``NumberFormatException``."""
    if cls is bool:
        return text.upper() == "TRUE" and len(text) == 4   # equalsIgnoreCase
    if cls in _JAVA_RANGES:
        if not _JAVA_INTEGER.fullmatch(text):
            return None
        value = int(text)
        low, high = _JAVA_RANGES[cls]
        return (int32(value) if cls is int32 else value) if low <= value <= high else None
    trimmed = text.strip("".join(map(chr, range(33))))
    if not _JAVA_DOUBLE.fullmatch(trimmed):
        return None
    body = trimmed.rstrip("fFdD") if not trimmed.lower().startswith(
        ("0x", "-0x", "+0x")) else trimmed.rstrip("fFdD")
    if "x" in body or "X" in body:
        number = float.fromhex(body)
    else:
        number = float(body.replace("Infinity", "inf"))
    return float32(number) if cls is float32 else number


def _java_class(value: Any) -> type | None:
    cls = value.__class__
    return cls if cls in (int32, int, float, float32, bool) else None


class JmsConverting(Jms):
    """``convert_string_expressions:`` (Artemis's and ActiveMQ's
    ``ComparisonExpression.compare``): a String compared with a number or a
    boolean is read as one by that side's ``valueOf`` (the left operand's class
    decides; ``a = '5'`` is TRUE for the Integer 5, ``'5.0'`` FALSE: Integer
    reads no point), and arithmetic reads a String as a Long, or a Double when
    it holds a point (``ArithmeticExpression.asNumber``). Text Java cannot read
    makes a comparison FALSE (its ``<>``, the NOT of ``=``, TRUE) and arithmetic
    NULL. IN and LIKE are as ever."""

    numbers = JMS_CONVERTING_RULES

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        lcls, rcls = _java_class(left), _java_class(right)
        if rcls is None and right.__class__ is str and lcls is not None:
            right = java_value_of(lcls, right)
        elif lcls is None and left.__class__ is str and rcls is not None:
            left = java_value_of(rcls, left)
        if left is None or right is None:   # NumberFormatException: FALSE
            return op == "<>"
        return super().compare_views(op, left, right)

    def arith(self, op: str, left: Any, right: Any) -> Any:  # type: ignore[override]
        if left is None or right is None or (op == "+" and self.view(left).__class__ is str):
            return super().arith(op, left, right)
        operands = []
        for value in (left, right):
            value = self.view(value)
            if value.__class__ is str:
                value = java_value_of(float if "." in value else int, value)
                if value is None:
                    return None   # a RuntimeException in the peers: NULL here
            operands.append(value)
        return super().arith(op, *operands)


JMS_CONVERTING_SEMANTICS = JmsConverting()
ARTEMIS_PREFIXES = {"convert_string_expressions:": ("convert", True),
                    "hyphenated_props:": ("hyphenated", True),
                    "no_convert_string_expressions:": ("convert", False),
                    "no_hyphenated_props:": ("hyphenated", False)}
_VARIANTS: dict[tuple[bool, bool], Dialect] = {}


def artemis_prefixes(text: str) -> tuple[str, Dialect]:
    """The options a selector begins with (``SelectorParser.parse``: any of
    the four, in any order, repeated, the last of each kind winning; case and
    spacing exact) and the text with them blanked out (so positions stay the
    text's), with the jms dialect they choose: ``hyphenated_props:`` reads
    ``a-b`` as one name (and no quoted names), ``convert_string_expressions:``
    compares strings with numbers and booleans (``JmsConverting``)."""
    flags = {"convert": False, "hyphenated": False}
    at = 0
    while True:
        for prefix, (flag, on) in ARTEMIS_PREFIXES.items():
            if text.startswith(prefix, at):
                flags[flag], at = on, at + len(prefix)
                break
        else:
            break
    if at == 0:
        return text, JMS
    key = (flags["hyphenated"], flags["convert"])
    found = _VARIANTS.get(key)
    if found is None:
        found = _VARIANTS[key] = replace(
            JMS, hyphenated_identifiers=key[0], quoted_identifiers=not key[0],
            identifier=r"[A-Za-z_$][A-Za-z0-9_$-]*" if key[0] else JMS.identifier,
            semantics=JMS_CONVERTING_SEMANTICS if key[1] else JMS_SEMANTICS,
            read_prefixes=None)
    return " " * at + text[at:], found

# The Apache filter registry (qpid specs/apache-filters.xml, selector-filter): on the
# wire a JMS header name "should be translated to amqp.field_name", the AMQP field of
# its table with - as _ (amqp.correlation_id); Qpid C++'s own spellings beside them
# (delivery_mode, redelivered, jms_type: qpid/broker/Selector.cpp). Each reads as the
# JMS header it stands for.
JMS_AMQP_NAMES = (
    ("correlation_id", "JMSCorrelationID"), ("durable", "JMSDeliveryMode"),
    ("to", "JMSDestination"), ("absolute_expiry_time", "JMSExpiration"),
    ("message_id", "JMSMessageID"), ("priority", "JMSPriority"),
    ("delivery_count", "JMSRedelivered"), ("reply_to", "JMSReplyTo"),
    ("creation_time", "JMSTimestamp"), ("delivery_mode", "JMSDeliveryMode"),
    ("redelivered", "JMSRedelivered"), ("jms_type", "JMSType"))

JMS = Dialect(
    "jms", keywords=JMS_KEYWORDS, reserved=frozenset({"XPATH", "XQUERY"}),
    identifier=r"[A-Za-z_$][A-Za-z0-9_$]*", string_quotes="'", number_forms=JMS_NUMBERS,
    octal_integers=True, integer_constant=java_integer_value, decimal_constants=False,
    parameter_integers=(-(1 << 63), (1 << 63) - 1),
    binary_constants=None, delimited_identifiers=None, quoted_identifiers=True, comments=True,
    not_equal_bang=False, max_integer=None, hyphenated_sections=False,
    whitespace=" \t\n\r\f",
    section_qualifiers=(), functions=(), vendor_functions=False,
    header_names=tuple((name, fields, *JMS_DERIVED.get(name, ("any", None)))
                       for name, fields in JMS_HEADERS.items()),
    qualified_names=(("amqp", JMS_AMQP_NAMES),), read_prefixes=artemis_prefixes,
    allow_exists=False, allow_composite_references=False, typed_predicates=True,
    literal_patterns=True, semantics=JMS_SEMANTICS,
    sql_descriptor="apache.org:selector-filter:string")
