"""Answers that depend on a value's type alone, found by probing.

The kernel answers a tag it has no exact form for per distinct value present
in a batch; a native expression needs the answer for every value. Where the
per-message engine gives one answer for every probe value of a tag (a string
compared with a list, a timestamp with a decimal, amqp's double % 2), that
answer is the tag's constant. Probes are the ends of the type's range, the
usual suspects, values around every constant and values spelling them.
"""
from __future__ import annotations

import math
import re
from typing import Any

from proton import Described, symbol

from ..plan import atoms as A
from ..plan import intervals
from ..plan.text import TextForm, text_form
from ..tree import ast
from .strings import function_form, probe_strings

def _arithmetic_without_plus(compiled: Any) -> bool:
    """Arithmetic compared with constants and no ``+`` (which joins strings): a
    string operand's answer is its type's (probed on numeric strings too)."""
    from ..plan.arith import arith_form
    form = arith_form(compiled.atom.node, compiled.atom.semantics)
    return form is not None and "+" not in form.shape()


def _truth_of_field(node: Any) -> bool:
    """``x`` or ``NOT x`` in a boolean position: a non-boolean's answer is its type's."""
    from ..tree import ast
    while isinstance(node, ast.Not):
        node = node.operand
    return isinstance(node, ast.Field)


def constant_by_type(compiled: Any, tag: int, rc: Any) -> int | None:
    """The one answer a string predicate (``x = 'a'``, ``x LIKE 'a%'``), or a
    numeric one the tag's values do not compare with, gives for every value of
    ``tag``, if it gives one. The kernel answers such a tag per
    value present in a batch; a native expression needs the answer for every
    value, so it is taken only for predicates over string constants, probed
    on the ends of the range, the usual suspects, and every number a constant
    spells (a dialect that converted strings would answer those apart); never
    for constants with a digit ('2025-06-24T13:37:59Z' is a timestamp to amqp)."""
    if tag in A.STRING_TAGS:   # strings: only where a string's value cannot matter
        if not (_truth_of_field(compiled.atom.node) or _arithmetic_without_plus(compiled)):
            return None
        cls = A.STRING_TAGS[tag]
        answers = {compiled.value_outcome(p if cls is str else cls(p), rc)
                   for p in probe_strings(TextForm("in", [], False))
                   if tag != A.CHAR or len(p) == 1}
        return answers.pop() if len(answers) == 1 else None
    if tag in OPAQUE:
        return _opaque_constant(compiled, tag, rc)
    if tag not in A.VALUE_CLASS:
        return None
    convert = float if tag in A.FLOAT_TAGS else int
    lo, hi = A.INT_TAGS.get(tag, (None, 0, 2**64 - 1))[1:]
    if compiled.numeric is not None:
        return None   # the plan decided from the declared rules: no one answer
    from ..plan.arith import arith_form
    form = arith_form(compiled.atom.node, compiled.atom.semantics)
    functions = function_form(compiled.atom.node, compiled.atom.semantics)
    if form is not None or functions is not None:   # arithmetic or string functions
        # refusing the type (amqp's double % 2 fails): only a failure or unknown for
        # every probe is taken (a value can always bring a result to the constants)
        constants = intervals.constants(form.comparison) if form is not None else []
        spread = [c * k + d for c in constants
                  for k in (1, -1, 2, 0.5) for d in (0, 1, -1)
                  if isinstance(c, (int, float))] + [0, 1, -1, 2, -2, 7]
        if tag in A.FLOAT_TAGS:
            probes = _suspects_double() + [float(v) for v in spread]
        else:
            probes = _suspects_int(lo, hi) + [
                int(v) for v in spread if float(v).is_integer() and lo <= v <= hi]
        answers = {compiled.value_outcome(A.VALUE_CLASS[tag](convert(v)), rc)
                   for v in probes}
        found = answers.pop() if len(answers) == 1 else None
        return found if found in (A.FAIL, A.UNKNOWN) else None
    node = compiled.atom.node
    form = text_form(node, compiled.atom.semantics)
    if form is None and _truth_of_field(node):
        form = TextForm("in", [], False)
    if isinstance(node, ast.PropertyMatch) and isinstance(node.ref, str):
        # a property filter's string pattern: numbers never match one, but probe
        # every number it spells too
        texts, digits_allowed = re.findall(r"-?\d+(?:\.\d+)?", node.ref), True
    elif form is None:
        return None
    else:
        texts, digits_allowed = (
            form.arg if form.kind == "in" else [form.arg[1]] if form.kind == "cmp" else
            ["".join(c for c in seg if c is not None) for seg in form.arg]), False
    if not digits_allowed and any(c.isdigit() for text in texts for c in text):
        return None   # a number, a date or a duration: a dialect may read it as one
    numbers: list[Any] = []
    for text in texts:
        for parse in (int, float):
            try:
                numbers.append(parse(text.strip()))
            except (ValueError, OverflowError):
                pass
    if tag in A.FLOAT_TAGS:
        probes = _suspects_double() + [float(n) for n in numbers if
                                                   math.isfinite(float(n))]
    else:
        cls, lo, hi = A.INT_TAGS.get(tag, (None, 0, 2**64 - 1))
        probes = _suspects_int(lo, hi) + [
            int(n) for n in numbers if (type(n) is int or float(n).is_integer())
            and lo <= int(n) <= hi]
    answers = {compiled.value_outcome(A.VALUE_CLASS[tag](convert(v)), rc) for v in probes}
    return answers.pop() if len(answers) == 1 else None


def _suspects_int(lo: int, hi: int) -> list[int]:
    """Integers of a range where answers usually change: its ends, around 0, the
    int, double and long boundaries."""
    found = {lo, hi, 0, 1, -1, 2**31, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63 - 1,
             2**63, lo + 1, hi - 1}
    return sorted(v for v in found if lo <= v <= hi)


def _suspects_double() -> list[float]:
    return [0.0, 1.0, -1.0, 0.5, -0.5, 1e300, -1e300, 2.0**53, 2.0**63, -2.0**63, 5e-324,
            1.7976931348623157e308]


OPAQUE = {A.BINARY: lambda t: [t.encode()], A.UUID: lambda t: [],
           A.LIST: lambda t: [[t], [t, t], [1]], A.MAP: lambda t: [{t: t}, {"k": t}],
           A.ARRAY: lambda t: [], A.DESCRIBED: lambda t: [Described(symbol(t), t)],
           A.DECIMAL32: lambda t: [], A.DECIMAL64: lambda t: [], A.DECIMAL128: lambda t: []}
"""Tags with no child the expressions compare (bytes, composites), and probe
values spelling a constant ``t`` the way such a value could hold it."""
_DECIMALS = (A.DECIMAL32, A.DECIMAL64, A.DECIMAL128)


def _opaque_constant(compiled: Any, tag: int, rc: Any) -> int | None:
    """The one answer a comparison with constants gives every value of an opaque
    tag, if it gives one: a string or number compared with bytes or a list is a
    type mismatch whatever the bytes or items. Probed on samples, and on values
    holding each constant; never for decimals against numbers or digits (a
    decimal's answer depends on its value)."""
    form = text_form(compiled.atom.node, compiled.atom.semantics)
    if form is not None:
        texts = form.arg if form.kind == "in" else [form.arg[1]] if form.kind == "cmp" else \
            ["".join(c for c in seg if c is not None) for seg in form.arg]
        if tag in _DECIMALS and any(c.isdigit() for text in texts for c in text):
            return None
    elif compiled.numeric is not None and tag not in _DECIMALS:
        texts = [str(c) for c in intervals.constants(compiled.numeric)]
    elif _truth_of_field(compiled.atom.node):
        texts = []
    else:
        return None
    probes = list(A.SAMPLES[tag]) + [v for t in texts[:32] for v in OPAQUE[tag](t)]
    answers = {compiled.value_outcome(v, rc) for v in probes}
    return answers.pop() if len(answers) == 1 else None
