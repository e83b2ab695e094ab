"""Numeric comparisons with constants as sorted inclusive intervals, exactly.

``x < 2.5`` over a long child is ``x <= 2``; over a double child it is
``x <= 2.4999999999999996``; ``x = 2.5`` over longs is empty; ``x <> 7`` is
two intervals; ``x IN (1, 2, 3)`` is one. The bounds are computed with
Python's exact comparisons between int, float and Decimal, so the kernel's
plain ``lo <= v <= hi`` over its own child type gives the exact answer for
every value: no int-to-float rounding (2**53 + 1 stays itself), no uint64 vs
int64 mixing. NaN, -0.0 and the infinities of a double child never reach the
intervals: the kernel gives them their own answers (``atoms.py``).

Which comparison is meant is the dialect's declared rule for the value's kind
and the constant's (``dialects/rules.py``): exact, after rounding both numbers
(monotonic, so the answer is still intervals: found by bisection where the
rounding is not exact), or one answer for every value. ``decide`` combines
the comparisons of a numeric form (BETWEEN, IN, NOT) in three-valued logic;
where the answer is neither intervals nor one constant, it says so (None) and
the engines answer each value present instead.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Callable, Union

import numpy as np

from proton import timestamp

from ..dialects.rules import Exact, NumberRules, Outcome, Rounded, negation
from ..runtime.values import INT_CLASSES
from ..tree import ast
from ..tree.ast import MIRROR

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


# --- under a dialect's declared rules ------------------------------------------------------

Answer = Union[list, str, None]
"""An atom's answer for every value of one kind: intervals (TRUE inside, FALSE
outside), one outcome for every value ("true", "false", "unknown", "fail"), or
None (neither: it depends on the value in another way)."""

_PRECISION = {"double": 2**53, "float32": 2**24}


def _last(domain: Domain, holds: Any) -> Any:
    """The largest integer of ``domain`` where ``holds`` (true, then false as the
    integer grows) is true; None when it is true nowhere."""
    lo, hi = domain.lo, domain.hi
    if not holds(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if holds(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _rounded_integers(domain: Domain, key: Any, op: str, k: float) -> list[Interval]:
    """{x in an integer domain : key(x) op k} for a monotonic ``key``, by bisection."""
    le = _last(domain, lambda x: key(x) <= k)
    lt = _last(domain, lambda x: key(x) < k)
    at_most = [] if le is None else [(domain.lo, le)]
    below = [] if lt is None else [(domain.lo, lt)]
    if op == "<=":
        return at_most
    if op == "<":
        return below
    if op == ">":
        return complement(domain, at_most)
    if op == ">=":
        return complement(domain, below)
    start = domain.lo if lt is None else lt + 1
    equal = [(start, le)] if le is not None and start <= le else []
    return equal if op == "=" else complement(domain, equal)


def _rounded(domain: Domain, rule: Rounded, kind: str, op: str, c: Any) -> Answer:
    k = rule.key(c)
    everything = [(domain.lo, domain.hi)]
    if k != k:   # NaN: unknown in IEEE order; above everything in Java's
        if rule.order == "ieee":
            return "unknown"
        return everything if op in ("<", "<=", "<>") else []
    if rule.order == "total" and k == 0 and math.copysign(1.0, k) < 0:
        # -0.0 orders below 0.0 and above every negative number (the kernel
        # answers a -0.0 value apart): a constant between them
        if op == "=":
            return []
        if op == "<>":
            return everything
        return compare(domain, "<" if op in ("<", "<=") else ">=", 0)
    if not domain.integral:
        # a double child's values are doubles, or float32 values at their single
        # precision: rounding either to double is the identity, and a float32
        # value to float32 too; a double to float32 is not
        if rule.width == "float32" and kind != "float32":
            return None
        return compare(domain, op, k)
    if math.isfinite(k) and abs(k) < _PRECISION[rule.width]:
        return compare(domain, op, k)   # every integer that can reach k rounds exactly
    return _rounded_integers(domain, rule.key, op, k)


def comparison(domain: Domain, numbers: NumberRules, kind: str, op: str, c: Any) -> Answer:
    """{v of ``kind`` in ``domain`` : v op c} by the dialect's declared rule."""
    rule = numbers.rule(kind, c)
    if isinstance(rule, Outcome):
        return rule.answer
    if isinstance(rule, Exact):
        return None if _is_nan(c) else compare(domain, op, c)
    if isinstance(rule, Rounded):
        return _rounded(domain, rule, kind, op, c)
    return None   # a constant the dialect has no rule for


def _negation(domain: Domain, answer: Answer) -> Answer:
    if isinstance(answer, list):
        return complement(domain, answer)
    return None if answer is None else negation(answer)


def _junction(domain: Domain, parts: list[Answer], decisive: str) -> Answer:
    """Three-valued AND (``decisive`` "false") or OR ("true"); a failure anywhere
    fails the whole evaluation."""
    if "fail" in parts:
        return "fail"
    if decisive in parts:
        return decisive
    neutral = "true" if decisive == "false" else "false"
    parts = [p for p in parts if p != neutral]
    if not parts:
        return neutral
    if any(p is None for p in parts):
        return None
    if "unknown" in parts:
        return "unknown" if all(p == "unknown" for p in parts) else None
    lists = [p for p in parts if isinstance(p, list)]   # every part, by now
    if decisive == "false":
        spans = lists[0]
        for p in lists[1:]:
            spans = intersect(spans, p)
        return spans
    return union(domain, [s for p in lists for s in p])


def decide(form: list, numbers: NumberRules, kind: str, domain: Domain) -> Answer:
    """The answer of a numeric form (``numeric_form``) for the values of
    ``kind`` (a value kind of ``dialects/rules.py``) in ``domain``."""
    def cmp(op: str, c: Any) -> Answer:
        return comparison(domain, numbers, kind, op, c)
    if form[0] == "cmp":
        answer = cmp(form[1], form[2])
    elif form[0] == "between":
        answer = _junction(domain, [cmp(">=", form[1]), cmp("<=", form[2])], "false")
    else:
        rule = numbers.in_list
        if rule is None:
            return None
        if isinstance(rule, Outcome):
            answer = rule.answer
        else:
            parts = [cmp("=", c) for c in form[1]]
            if rule == "or-known":   # an unknown item counts FALSE
                parts = ["false" if p == "unknown" else p for p in parts]
            answer = _junction(domain, parts, "true")
    return _negation(domain, answer) if form[-1] else answer


def constants(form: list) -> list:
    """Every constant of a numeric form (``numeric_form``)."""
    if form[0] == "cmp":
        return [form[2]]
    if form[0] == "between":
        return [form[1], form[2]]
    return list(form[1])


# --- the numeric form of an atom ---------------------------------------------------------

_FAILED = object()

def numeric_form(node: ast.Node, fold: Callable[[ast.Node], Any] = lambda n: _FAILED
                 ) -> list | None:
    """``["cmp", op, c, negated]``, ``["between", lo, hi, negated]`` or ``["in",
    constants, negated]`` for a comparison of the field itself with numeric
    constants (``fold`` computes an operand that reads no field); None for any
    other atom."""
    def number(n: ast.Node) -> Any:
        if isinstance(n, ast.Literal):
            v = n.value
        elif isinstance(n, ast.Field):
            return None
        else:
            v = fold(n)
            if v is _FAILED:
                return None
        cls = type(v)
        if cls is timestamp:
            return v   # a timestamp constant: its own kind of the rules
        if cls is bool or v is None:
            return None
        if cls is float or cls is Decimal or cls in INT_CLASSES:
            if cls is Decimal and not v.is_finite() and v.is_nan():
                return None
            return v if cls in (float, Decimal, int) else int(v)
        return None

    if isinstance(node, ast.Not):   # NOT of a comparison: its complement
        inner = numeric_form(node.operand, fold)
        if inner is None:
            return None
        return inner[:-1] + [not inner[-1]]
    if isinstance(node, ast.Compare):
        left, right, op = node.left, node.right, node.op
        if isinstance(right, ast.Field) and not isinstance(left, ast.Field):
            left, right = right, left
            op = MIRROR[op]
        c = number(right)
        if isinstance(left, ast.Field) and c is not None:
            return ["cmp", op, c, False]
    elif isinstance(node, ast.Between) and isinstance(node.operand, ast.Field):
        lo, hi = number(node.low), number(node.high)
        if lo is not None and hi is not None:
            return ["between", lo, hi, node.negated]
    elif isinstance(node, ast.In) and isinstance(node.operand, ast.Field) and node.items:
        values = [number(item) for item in node.items]
        if all(v is not None for v in values):
            return ["in", values, node.negated]
    return None
