"""AMQP typed values as filtex sees them.

python-qpid-proton's classes carry the AMQP types that plain Python cannot
(``ubyte``, ``symbol``, ``timestamp``, ``decimal64``...); plain Python values
stand for the rest. Several proton classes subclass ``int``/``str``/``bytes``
(``timestamp`` and ``decimal32`` are ints, ``decimal128`` is bytes), so filtex
classifies values by exact class first, never by ``isinstance`` alone.

Decimals: proton keeps decimal32/64/128 as their raw IEEE 754-2008 bits (BID
encoding, as AMQP transfers them). ``decimal_value`` decodes them to
``decimal.Decimal``; ``encode_decimal`` builds them from one.
"""
from __future__ import annotations

import decimal
import math
import struct
import uuid
from decimal import Decimal
from typing import Any

from proton import (Array, Described, byte, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp,
                    ubyte, uint, ulong, ushort)

INT_CLASSES = frozenset({int, ubyte, ushort, uint, ulong, byte, short, int32})
FLOAT_CLASSES = frozenset({float, float32})
DECIMAL_CLASSES = frozenset({Decimal, decimal32, decimal64, decimal128})
STRING_CLASSES = frozenset({str, symbol, char})
NUMBER_CLASSES = INT_CLASSES | FLOAT_CLASSES | DECIMAL_CLASSES

LONG_MIN = -(1 << 63)
ULONG_MAX = (1 << 64) - 1

# Kinds: the comparison/arithmetic categories of the specification.
NULL, BOOL, INT, FLOAT, DECIMAL, STRING, BINARY, TIMESTAMP, UUID, OTHER = (
    "null", "bool", "int", "float", "decimal", "string", "binary",
    "timestamp", "uuid", "other")

_KIND_BY_CLASS: dict[type, str] = {type(None): NULL, bool: BOOL, timestamp: TIMESTAMP,
                                   bytes: BINARY, uuid.UUID: UUID}
_KIND_BY_CLASS.update(dict.fromkeys(INT_CLASSES, INT))
_KIND_BY_CLASS.update(dict.fromkeys(FLOAT_CLASSES, FLOAT))
_KIND_BY_CLASS.update(dict.fromkeys(DECIMAL_CLASSES, DECIMAL))
_KIND_BY_CLASS.update(dict.fromkeys(STRING_CLASSES, STRING))

# Order matters: the proton subclasses of int/str/bytes come before their bases.
_KIND_BY_BASE = ((bool, BOOL), (timestamp, TIMESTAMP), (decimal32, DECIMAL),
                 (decimal64, DECIMAL), (decimal128, DECIMAL), (Decimal, DECIMAL),
                 (int, INT), (float, FLOAT), (str, STRING), (bytes, BINARY),
                 (uuid.UUID, UUID))


def kind_of(value: Any) -> str:
    """The filtex kind of a value (``other`` for maps, lists, arrays, described).
    By ``type(value)``: an object's ``__class__`` can say what it likes."""
    cls = type(value)
    kind = _KIND_BY_CLASS.get(cls)
    if kind is not None:
        return kind
    for base, kind in _KIND_BY_BASE:
        if issubclass(cls, base):
            return kind
    return OTHER


_EXACT_COPIES = ((str, str.__str__), (bool, bool), (int, int.__int__),
                 (float, float.__float__), (bytes, lambda value: bytes.__getitem__(
                     value, slice(None))))


def exact(value: Any) -> Any:
    """``value`` itself if its class is one filtex knows exactly, else a copy of
    its built-in base class (a ``str`` subclass becomes the plain ``str`` of its
    characters), so no subclass method answers a comparison or an operation."""
    cls = type(value)
    if cls in _KIND_BY_CLASS:
        return value
    for base, copy in _EXACT_COPIES:
        if issubclass(cls, base):
            return copy(value)
    return value


# --- floats -------------------------------------------------------------------

_SINGLE = struct.Struct("<f")


def double_value(value: Any) -> float:
    """A floating-point value as a double. A ``float32`` is taken at its
    single-precision value, as it travels on the wire (proton decodes it so;
    ``float32(0.1)`` built in Python still holds the double 0.1)."""
    if value.__class__ is float32:
        try:
            return _SINGLE.unpack(_SINGLE.pack(value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)
    try:
        return float(value)
    except OverflowError:   # an integer past the double range rounds to an infinity
        return math.inf if value > 0 else -math.inf


# --- decimals -----------------------------------------------------------------

DECIMAL128_CONTEXT = decimal.Context(prec=34, Emax=6144, Emin=-6143,
                                     rounding=decimal.ROUND_HALF_EVEN,
                                     traps=[decimal.InvalidOperation, decimal.Overflow,
                                            decimal.DivisionByZero])

# bits, exponent-continuation bits, digits of precision, exponent bias
_BID = {32: (8, 7, 101), 64: (10, 16, 398), 128: (14, 34, 6176)}


def _bid_decode(bits: int, width: int) -> Decimal:
    exp_bits, _, bias = _BID[width]
    sign = bits >> (width - 1) & 1
    top = bits >> (width - 6) & 0b11111
    if top == 0b11111:
        return Decimal("NaN")
    if top == 0b11110:
        return Decimal("-Infinity" if sign else "Infinity")
    if bits >> (width - 3) & 0b11 == 0b11:
        shift = width - 3 - exp_bits
        exponent = bits >> shift & ((1 << exp_bits) - 1)
        coefficient = (0b100 << shift) | (bits & ((1 << shift) - 1))
    else:
        shift = width - 1 - exp_bits
        exponent = bits >> shift & ((1 << exp_bits) - 1)
        coefficient = bits & ((1 << shift) - 1)
    if coefficient >= 10 ** _BID[width][1]:
        coefficient = 0  # non-canonical significands read as zero (IEEE 754-2008)
    return Decimal((sign, tuple(int(d) for d in str(coefficient)), exponent - bias))


def _bid_encode(value: Decimal, width: int) -> int:
    exp_bits, digits, bias = _BID[width]
    sign = 1 if value.is_signed() else 0
    if value.is_nan():
        return (0b11111 << (width - 6)) | (sign << (width - 1))
    if value.is_infinite():
        return (0b11110 << (width - 6)) | (sign << (width - 1))
    emax = 3 * (1 << (exp_bits - 2)) - 1 - bias + digits - 1  # top exponent bits never 0b11
    ctx = decimal.Context(prec=digits, Emax=emax, Emin=1 - emax, clamp=1,
                          traps=[decimal.Overflow])
    value = ctx.plus(value) if value else value
    _, digit_tuple, exponent = value.as_tuple()
    coefficient = int("".join(map(str, digit_tuple)) or "0")
    biased = exponent + bias
    if not 0 <= biased < (1 << exp_bits):
        raise ValueError(f"{value} is outside the decimal{width} range")
    normal_shift = width - 1 - exp_bits
    if coefficient < (1 << normal_shift):
        body = (biased << normal_shift) | coefficient
    else:
        shift = width - 3 - exp_bits
        body = (0b11 << (width - 3)) | (biased << shift) | (coefficient & ((1 << shift) - 1))
    return (sign << (width - 1)) | body


def decimal_value(value: Any) -> Decimal:
    """A decimal-kind value (proton decimal32/64/128 or Decimal) as a Decimal."""
    cls = value.__class__
    if cls is Decimal:
        return value
    if isinstance(value, decimal32):
        return _bid_decode(int(value) & 0xFFFFFFFF, 32)
    if isinstance(value, decimal64):
        return _bid_decode(int(value) & 0xFFFFFFFFFFFFFFFF, 64)
    if isinstance(value, decimal128):
        return _bid_decode(int.from_bytes(bytes(value), "big"), 128)
    if isinstance(value, Decimal):
        return Decimal(value)
    raise TypeError(f"not a decimal: {value!r}")


def encode_decimal(value: Decimal | str, width: int) -> Any:
    """``Decimal`` to proton's decimal32/64/128 (the BID bits AMQP carries)."""
    bits = _bid_encode(Decimal(value), width)
    if width == 32:
        return decimal32(bits)
    if width == 64:
        return decimal64(bits)
    return decimal128(bits.to_bytes(16, "big"))


# --- proton constructors by AMQP type name -------------------------------------

INTEGER_TYPES = {"ubyte": (ubyte, 0, 0xFF), "ushort": (ushort, 0, 0xFFFF),
                 "uint": (uint, 0, 0xFFFFFFFF), "ulong": (ulong, 0, ULONG_MAX),
                 "byte": (byte, -0x80, 0x7F), "short": (short, -0x8000, 0x7FFF),
                 "int": (int32, -(1 << 31), (1 << 31) - 1), "long": (int, LONG_MIN, (1 << 63) - 1)}

__all__ = ["Array", "Described", "kind_of", "decimal_value", "encode_decimal",
           "INT_CLASSES", "FLOAT_CLASSES", "DECIMAL_CLASSES", "STRING_CLASSES",
           "NUMBER_CLASSES", "INTEGER_TYPES", "DECIMAL128_CONTEXT", "double_value"]
