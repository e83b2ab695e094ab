"""Numeric comparisons with constants as sorted inclusive intervals, exactly.

``x < 2.5`` over a long child is ``x <= 2``; over a double child it is
``x <= 2.4999999999999996``; ``x = 2.5`` over longs is empty; ``x <> 7`` is
two intervals; ``x IN (1, 2, 3)`` is one. The bounds are computed with
Python's exact comparisons between int, float and Decimal, so the kernel's
plain ``lo <= v <= hi`` over its own child type gives the exact answer for
every value: no int-to-float rounding (2**53 + 1 stays itself), no uint64 vs
int64 mixing. NaN, -0.0 and the infinities of a double child never reach the
intervals: the kernel gives them their own answers (``atoms.py``).
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

import numpy as np

Interval = tuple  # (lo, hi), inclusive


class Domain:
    def __init__(self, lo: Any, hi: Any, integral: bool) -> None:
        self.lo, self.hi, self.integral = lo, hi, integral

    def succ(self, x: Any) -> Any:
        return x + 1 if self.integral else math.nextafter(x, math.inf)

    def pred(self, x: Any) -> Any:
        return x - 1 if self.integral else math.nextafter(x, -math.inf)


INT64 = Domain(-2**63, 2**63 - 1, True)
UINT64 = Domain(0, 2**64 - 1, True)
DOUBLE = Domain(-math.inf, math.inf, False)
DOMAINS = (INT64, UINT64, DOUBLE)


def _is_nan(c: Any) -> bool:
    return (type(c) is float and c != c) or (type(c) is Decimal and c.is_nan())


def _to_float(c: Any) -> float:
    try:
        return float(c)
    except OverflowError:
        return math.inf if c > 0 else -math.inf


def _le(domain: Domain, c: Any) -> Any:
    """The largest domain value <= c (None when there is none)."""
    if domain.integral:
        if c == math.inf or (type(c) is Decimal and c.is_infinite() and c > 0):
            return domain.hi
        if c == -math.inf or (type(c) is Decimal and c.is_infinite()):
            return None
        return math.floor(c)
    d = _to_float(c)
    if d > c:
        d = math.nextafter(d, -math.inf)
    return None if d > c else d


def _ge(domain: Domain, c: Any) -> Any:
    """The smallest domain value >= c (None when there is none)."""
    if domain.integral:
        if c == -math.inf or (type(c) is Decimal and c.is_infinite() and c < 0):
            return domain.lo
        if c == math.inf or (type(c) is Decimal and c.is_infinite()):
            return None
        return math.ceil(c)
    d = _to_float(c)
    if d < c:
        d = math.nextafter(d, math.inf)
    return None if d < c else d


def _clip(domain: Domain, lo: Any, hi: Any) -> list[Interval]:
    if lo is None or hi is None:
        return []
    lo, hi = max(lo, domain.lo), min(hi, domain.hi)
    return [(lo, hi)] if lo <= hi else []


def compare(domain: Domain, op: str, c: Any) -> list[Interval]:
    """{v in domain : v op c} (Python's exact comparison)."""
    if _is_nan(c):
        return [(domain.lo, domain.hi)] if op == "<>" else []
    if op == "=":
        le, ge = _le(domain, c), _ge(domain, c)
        return _clip(domain, ge, le) if le is not None and le == ge and le == c else []
    if op == "<>":
        return complement(domain, compare(domain, "=", c))
    if op == "<=":
        return _clip(domain, domain.lo, _le(domain, c))
    if op == ">=":
        return _clip(domain, _ge(domain, c), domain.hi)
    if op == "<":
        le = _le(domain, c)
        if le is not None and le == c:
            le = None if le == domain.lo else domain.pred(le)
        return _clip(domain, domain.lo, le)
    if op == ">":
        ge = _ge(domain, c)
        if ge is not None and ge == c:
            ge = None if ge == domain.hi else domain.succ(ge)
        return _clip(domain, ge, domain.hi)
    raise ValueError(f"not a comparison: {op!r}")


def complement(domain: Domain, spans: list[Interval]) -> list[Interval]:
    out, start = [], domain.lo
    for lo, hi in spans:
        if lo > start:
            out.append((start, domain.pred(lo)))
        if hi == domain.hi:
            return out
        start = domain.succ(hi)
    out.append((start, domain.hi))
    return out


def intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return out


def union(domain: Domain, spans: list[Interval]) -> list[Interval]:
    out: list[list] = []
    for lo, hi in sorted(spans):
        last = out[-1][1] if out else None
        if out and (last >= lo or (last < domain.hi and domain.succ(last) >= lo)):
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [tuple(s) for s in out]


def of_form(form: list) -> tuple[list[Interval], list[Interval], list[Interval]]:
    """The intervals of a numeric form (``atoms.numeric_form``) per domain."""
    result = []
    for domain in DOMAINS:
        if form[0] == "cmp":
            spans = compare(domain, form[1], form[2])
            if form[3]:
                spans = complement(domain, spans)
        elif form[0] == "between":
            spans = intersect(compare(domain, ">=", form[1]), compare(domain, "<=", form[2]))
            if form[3]:
                spans = complement(domain, spans)
        else:
            spans = union(domain, [s for c in form[1] for s in compare(domain, "=", c)])
            if form[2]:
                spans = complement(domain, spans)
        result.append(spans)
    return result[0], result[1], result[2]


def contains(spans: list[Interval], v: Any) -> bool:
    return any(lo <= v <= hi for lo, hi in spans)


def as_arrays(spans: list[Interval], dtype: Any) -> np.ndarray:
    """A (k, 2) array of bounds for the kernel."""
    if not spans:
        return np.zeros((0, 2), dtype)
    return np.array(spans, dtype=dtype).reshape(len(spans), 2)


EMPTY_INT = np.zeros((0, 2), np.int64)
EMPTY_UINT = np.zeros((0, 2), np.uint64)
EMPTY_DOUBLE = np.zeros((0, 2), np.float64)


PROBED_CONSTANTS = 64
"""Constants probed around: a long IN list's plain integers by an even sample of
them, so the probes of one atom stay a few hundred whatever the filter's size;
every other constant always (``trusted``)."""


def _plain(c: Any) -> bool:
    """An integer constant a double holds exactly: it compares exactly in every
    domain, with every value type, whatever the dialect (a float, a decimal or a
    huge integer may be compared after rounding: each is probed)."""
    return type(c) is int and -(2**53) <= c <= 2**53


def trusted(form: list) -> bool:
    """Can probes vouch for ``form``'s intervals? Not when more than
    ``PROBED_CONSTANTS`` of its constants are not plain integers: such a tag is
    answered per value present instead (exact by construction)."""
    return sum(not _plain(c) for c in constants(form)) <= PROBED_CONSTANTS


def constants(form: list) -> list:
    """Every constant of a numeric form (``atoms.numeric_form``)."""
    if form[0] == "cmp":
        return [form[2]]
    if form[0] == "between":
        return [form[1], form[2]]
    return list(form[1])


def _constants(form: list | None) -> list:
    """The constants probed around."""
    if form is None:
        return []
    values = constants(form)
    if len(values) > PROBED_CONSTANTS:
        plain = [c for c in values if _plain(c)]
        others = [c for c in values if not _plain(c)][:PROBED_CONSTANTS]
        step = len(plain) / PROBED_CONSTANTS
        sample = [plain[int(i * step)] for i in range(PROBED_CONSTANTS)] + plain[-1:] \
            if len(plain) > PROBED_CONSTANTS else plain
        values = sample + others
    return values


def int_probes(form: list | None, lo: int, hi: int) -> list[int]:
    """Values of an integer tag around every constant and at its range's ends."""
    found = {lo, hi, 0, 1, -1, 2**31, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1,
             2**63, lo + 1, hi - 1}
    for c in _constants(form):
        if _is_nan(c) or (type(c) is Decimal and c.is_infinite()) or c in (math.inf, -math.inf):
            continue
        base = math.floor(c)
        found.update(range(base - 2, base + 3))
    return sorted(v for v in found if lo <= v <= hi)


def double_probes(form: list | None) -> list[float]:
    """Doubles around every constant, and some that catch int/float mixing."""
    found = {0.0, 1.0, -1.0, 0.5, -0.5, 1e300, -1e300, 2.0**53, 2.0**63, -2.0**63, 5e-324,
             1.7976931348623157e308}
    for c in _constants(form):
        if _is_nan(c):
            continue
        d = _to_float(c)
        if math.isinf(d):
            continue
        found.update({d, math.nextafter(d, math.inf), math.nextafter(d, -math.inf),
                      float(math.floor(d)), float(math.ceil(d)), d + 1, d - 1})
    return sorted(v for v in found if v == v and not math.isinf(v) and
                  not (v == 0.0 and math.copysign(1.0, v) < 0))
