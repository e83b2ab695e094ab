"""Edge values of the AMQP numeric types, around a filter's constants: where rounding
to double or to single precision, the ends of a type's range and the float specials show.
Shared by the suites that check a declared or planned answer against the row engine
(``test_rules.py``, ``test_plan.py``)."""
from __future__ import annotations

import math
import struct
from decimal import Decimal

import numpy as np


def single(x: float) -> float:
    """A double rounded to single precision, as a float32 travels on the wire (and as the
    message table stores it): round to nearest, overflow to an infinity, NaN kept."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def finite(c: object) -> bool:
    if isinstance(c, Decimal):
        return c.is_finite()
    if isinstance(c, float):
        return math.isfinite(c)
    return True


def as_double(c: object) -> float:
    try:
        return float(c)
    except OverflowError:
        return math.inf if c > 0 else -math.inf


def int_edges(lo: int, hi: int, numbers: list) -> list[int]:
    """min, min+1, -1, 0, 1, max-1, max, where int/double mixing would show, and c-1, c,
    c+1 around the floor and ceiling of each finite constant that fits the range."""
    found = {lo, lo + 1, -1, 0, 1, hi - 1, hi, 2**31 - 1, 2**31, 2**32, 2**53 - 1, 2**53,
             2**53 + 1, -(2**53) - 1, 2**63 - 1, 2**63, -(2**63)}
    for c in numbers:
        if finite(c):
            for base in {math.floor(c), math.ceil(c)}:
                found.update((base - 1, base, base + 1))
    return sorted(v for v in found if lo <= v <= hi)


MAX_DOUBLE = 1.7976931348623157e308
DOUBLE_EDGES = (0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 1.5, -1.5, 1e308, -1e308, MAX_DOUBLE,
                -MAX_DOUBLE, 5e-324, -5e-324, 2.2250738585072014e-308, 2.0**53, 2.0**53 + 2,
                -(2.0**53), 2.0**63, -(2.0**63), 2.0**64, 1e19, math.nan, math.inf, -math.inf)
FLOAT32_EDGES = (3.4028234663852886e38, 3.4028235e38, 3.4028235677973366e38, 3.5e38, 1e39,
                 -1e39, 1.401298464324817e-45, 1e-45, 7e-46, 1e-46, -1e-46, 1.1754943508222875e-38,
                 16777217.0, 16777216.0, 0.1, 1.1, 1.0000001, 0.99999999, 2.0**31, 2.0**63)
"""Doubles that round, overflow or underflow in single precision, and its ends."""


def double_edges(numbers: list) -> list[float]:
    """The double edges, and around each constant: its double, floor and ceiling, each with
    its neighbours, half-way (+-0.5) and +-1."""
    found = set(DOUBLE_EDGES)
    for c in numbers:
        if isinstance(c, (float, Decimal)) and c != c:
            continue
        d = as_double(c)
        if math.isinf(d):
            continue
        for x in {d, float(math.floor(d)), float(math.ceil(d))}:
            found.update((x, math.nextafter(x, math.inf), math.nextafter(x, -math.inf),
                          x + 0.5, x - 0.5, x + 1, x - 1))
    return list(found)


def float32_edges(numbers: list) -> list[float]:
    """The double edges as float32 messages hold them (rounded when sent), the single
    precision neighbours of each, and the values that round, overflow or underflow."""
    found = set(double_edges(numbers)) | set(FLOAT32_EDGES)
    for x in list(found):
        s = single(x)
        if math.isfinite(s):
            with np.errstate(over="ignore"):   # past the largest single: an infinity
                found.update((s, float(np.nextafter(np.float32(s), np.float32(np.inf))),
                              float(np.nextafter(np.float32(s), np.float32(-np.inf)))))
    return list(found)


def report(problems: list[str], limit: int = 30, between: str = "") -> str:
    """The first ``limit`` disagreements of a check, and how many there were."""
    shown = "\n".join(problems[:limit])
    more = f"\n... and {len(problems) - limit} more" if len(problems) > limit else ""
    what = f"disagreements {between}" if between else "disagreements"
    return f"{len(problems)} {what}:\n{shown}{more}"
