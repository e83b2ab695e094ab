"""Arithmetic over several fields compared with constants, as a kernel pass.

``quantity * price - discount > 1000`` reads three fields, so no per-tag table
answers it. Its kernel computes the expression per row where every dialect
agrees on the arithmetic: integer operands (byte to long, and ubyte to uint)
and every integer intermediate within +-(2**31 - 1), so neither Java's int
wrap, amqp's overflow to NaN nor Erlang's big integers come into play, and
doubles whose results stay finite (IEEE arithmetic is the same everywhere;
an integer that meets a double is converted exactly). ``+ - * %`` and unary
minus; ``%`` keeps the dividend's sign (Java's, C's ``fmod``), and a zero
divisor sends the row to the per-message engine. Two expressions compare as their difference with 0 (the sign of
a correctly rounded difference of finite doubles is that of the exact one).
A null or absent operand makes the comparison unknown; any
other operand (a string, a float32, a decimal, a huge integer, a
non-finite double) sends the row to the per-message engine. The result is
compared through the same exact intervals as a field (``intervals.py``).

Before an expression is trusted, the per-message engine evaluates the atom on
probe messages (integers and doubles of several types, nulls) and must agree
with this arithmetic on every one; otherwise the filter has no kernel form.
"""
from __future__ import annotations

import hashlib
import itertools
import math
import random
from decimal import Decimal
from typing import Any, Callable

from proton import byte, int32, short, ubyte, uint, ushort

from ..message import Message
from ..runtime.values import INT_CLASSES
from ..row.generator import _MIRROR as MIRROR
from ..tree import ast
from . import intervals
from .atoms import FALSE, TRUE, UNKNOWN, run
from ..table.schema import KEY_CLASS

BOUND = 2**31 - 1
DOUBLE = 12
_OPS = {"+", "-", "*", "%"}


class ArithForm:
    """An expression tree over fields and constants, and its comparison."""

    def __init__(self, expression: ast.Node, fields: list[tuple], comparison: list) -> None:
        self.expression = expression
        self.fields = fields                 # distinct (section, key), in first-read order
        self.comparison = comparison         # numeric form of atoms.numeric_form
        self.intervals = intervals.of_form(comparison)

    def shape(self) -> str:
        """The expression as kernel source (fields by position, constants inline)."""
        return _expr(self.expression, self.fields)


def _constant(node: ast.Node) -> Any:
    if not isinstance(node, ast.Literal):
        return None
    v = node.value
    if type(v) in INT_CLASSES and -BOUND <= v <= BOUND:   # jms constants are Java ints
        return int(v)
    if type(v) is float and math.isfinite(v):
        return v
    return None


def _expression(node: ast.Node, fields: list) -> bool:
    """Is ``node`` +, -, *, % and unary minus over fields and small constants?"""
    if isinstance(node, ast.Field):
        if not isinstance(node.key, str) or node.default is not None:
            return False
        if (node.section, node.key) not in fields:
            fields.append((node.section, node.key))
        return True
    if isinstance(node, ast.Literal):
        return _constant(node) is not None
    if isinstance(node, ast.Binary):
        return node.op in _OPS and _expression(node.left, fields) and \
            _expression(node.right, fields)
    if isinstance(node, ast.Unary):
        return node.op == "-" and _expression(node.operand, fields)
    return False


def arith_form(node: ast.Node) -> ArithForm | None:
    """The form of a comparison of an expression with numeric constants."""
    from .atoms import numeric_form
    negated = False
    while isinstance(node, ast.Not):
        node, negated = node.operand, not negated
    if isinstance(node, ast.Compare):
        left, right, op = node.left, node.right, node.op
        if isinstance(left, ast.Literal):
            left, right = right, left
            op = MIRROR[op]
        if not isinstance(right, ast.Literal):   # x op y as x - y op 0: exact while finite
            left = ast.Binary(op="-", left=left, right=right)
            right = ast.Literal(value=0, typ="int")
        operand, probe = left, ast.Compare(op=op, left=ast.Field(section="x", key="x"),
                                          right=right)
    elif isinstance(node, (ast.Between, ast.In)):
        operand, probe = node.operand, node.with_(operand=ast.Field(section="x", key="x"))
    else:
        return None
    fields: list = []
    if not _expression(operand, fields) or not fields:
        return None
    form = numeric_form(probe)
    if form is None or any(type(c) not in (int, float, Decimal)
                               for c in intervals.constants(form)):
        return None
    if negated:
        form = form[:-1] + [not form[-1]]
    return ArithForm(operand, fields, form)


def _expr(node: ast.Node, fields: list) -> str:
    if isinstance(node, ast.Field):
        return f"F{fields.index((node.section, node.key))}"
    if isinstance(node, ast.Literal):
        return repr(_constant(node))
    if isinstance(node, ast.Unary):
        return f"(-{_expr(node.operand, fields)})"
    return f"({_expr(node.left, fields)} {node.op} {_expr(node.right, fields)})"


# --- the Python model of the kernel's arithmetic (for the probes) -----------------------

class _Bad(Exception):
    pass


def remainder(a: Any, b: Any) -> Any:
    """``a % b`` with the dividend's sign (truncated division), as Java, C and
    Spark have it; a zero divisor has no answer here."""
    if b == 0:
        raise _Bad
    if type(a) is float or type(b) is float:
        return math.fmod(a, b)
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def model(form: ArithForm, values: list) -> int:
    """The kernel's outcome for operand values (None: null), computed in Python."""
    if any(v is None for v in values):
        return UNKNOWN

    def value(node: ast.Node) -> Any:
        if isinstance(node, ast.Field):
            return values[form.fields.index((node.section, node.key))]
        if isinstance(node, ast.Literal):
            return _constant(node)
        if isinstance(node, ast.Unary):
            return -value(node.operand)
        a, b = value(node.left), value(node.right)
        if node.op == "%":
            result = remainder(a, b)
        else:
            result = a + b if node.op == "+" else a - b if node.op == "-" else a * b
        if type(result) is int and abs(result) > BOUND:
            raise _Bad
        if type(result) is float and not math.isfinite(result):
            raise _Bad
        return result
    result = value(form.expression)
    spans = form.intervals[2 if type(result) is float else 0]
    return TRUE if intervals.contains(spans, result) else FALSE


_PROBE_CLASSES = {10: int, 9: int32, 8: short, 7: byte, 3: ubyte, 4: ushort, 5: uint,
                  DOUBLE: float}
_RANGES = {ubyte: (0, 255), ushort: (0, 65535), uint: (0, 9999), byte: (-128, 127),
           short: (-9999, 9999)}


def _probe_value(rng: random.Random, cls: type, constants: list) -> Any:
    if cls is float:
        return rng.choice([0.5, -2.25, 3.0, 1e6, rng.uniform(-2000, 2000)] +
                          [float(c) for c in constants])
    lo, hi = _RANGES.get(cls, (-9999, 9999))
    return cls(rng.randint(lo, hi))


_SAME = (-2, -1, 1, 2, 3)
"""Every field one small value: the remainders of negative multiples (-2 % -2,
which a dialect computing in doubles makes -0.0) and sign rules, on every run."""


def _agrees(form: ArithForm, atom_fn: Callable, rng: random.Random, classes: list,
            constants: list, trials: int) -> bool:
    fixed = [[cls(v) if _RANGES.get(cls, (-9999, 9999))[0] <= v else None
              for _ in form.fields] for cls in classes for v in _SAME]
    randomised = ([None if trial % 16 == 15 else
                   _probe_value(rng, rng.choice(classes), constants) for _ in form.fields]
                  for trial in range(trials))
    for values in itertools.chain(fixed, randomised):
        try:
            want = model(form, [None if v is None else (float(v) if type(v) is float
                                                          else int(v)) for v in values])
        except _Bad:
            continue
        if run(atom_fn, _message(form.fields, values), None) != want:
            return False
    return True


def verified(form: ArithForm, atom_fn: Callable, seed: int = 7) -> frozenset | None:
    """The operand tags on which the per-message engine agrees with the model
    (each type alone, then all of them mixed), or None when they do not mix."""
    rng = random.Random(seed)
    constants = intervals.constants(form.comparison)
    accepted = [tag for tag, cls in _PROBE_CLASSES.items()
                if _agrees(form, atom_fn, rng, [cls], constants, 24)]
    if not accepted:
        return frozenset()
    if not _agrees(form, atom_fn, rng, [_PROBE_CLASSES[t] for t in accepted], constants, 160):
        return None
    return frozenset(accepted)


def _message(fields: list, values: list) -> Message:
    sections: dict[str, dict] = {}
    for (section, key), v in zip(fields, values):
        if v is None:
            continue
        name = KEY_CLASS[section](key) if section in KEY_CLASS else key
        sections.setdefault(section, {})[name] = v
    return Message(**sections)


# --- the kernel source -----------------------------------------------------------------------

def source(form: ArithForm) -> str:
    """A module whose ``expr_pass`` writes the atom's outcome per row; ``ok[tag]``
    is 1 for the operand tags the dialect agreed on (``verified``)."""
    count = len(form.fields)
    args = ", ".join(f"t{j}, i{j}, iv{j}, f{j}, fv{j}" for j in range(count))
    lines = ["        bad = 0", "        null = 0"]
    for j in range(count):
        lines += [
            f"        tag = t{j}[r]",
            f"        if tag == {DOUBLE} and ok[tag] == 1 and (fv{j}[r >> 3] >> (r & 7)) & 1:",
            f"            F{j}f = f{j}[r]",
            f"            F{j}i = 0",
            f"            F{j}d = 1",
            f"            if F{j}f - F{j}f != 0.0:",
            "                bad = 1",
            f"        elif tag < 26 and tag != {DOUBLE} and ok[tag] == 1 "
            f"and (iv{j}[r >> 3] >> (r & 7)) & 1:",
            f"            F{j}i = i{j}[r]",
            f"            F{j}f = float(F{j}i)",
            f"            F{j}d = 0",
            f"            if F{j}i > {BOUND} or F{j}i < -{BOUND}:",
            "                bad = 1",
            "        elif tag == 0 or tag == 1:",
            "            null = 1",
            f"            F{j}i = 0",
            f"            F{j}f = 0.0",
            f"            F{j}d = 0",
            "        else:",
            "            bad = 1",
            f"            F{j}i = 0",
            f"            F{j}f = 0.0",
            f"            F{j}d = 0",
        ]
    temps = [0]

    def emit(node: ast.Node) -> str:
        if isinstance(node, ast.Field):
            return f"F{form.fields.index((node.section, node.key))}"
        temps[0] += 1
        name = f"E{temps[0]}"
        if isinstance(node, ast.Literal):
            c = _constant(node)
            if type(c) is float:
                lines.extend([f"        {name}f = {c!r}", f"        {name}i = 0",
                              f"        {name}d = 1"])
            else:
                lines.extend([f"        {name}i = {c!r}", f"        {name}f = {float(c)!r}",
                              f"        {name}d = 0"])
            return name
        if isinstance(node, ast.Unary):
            a = emit(node.operand)
            lines.extend([f"        {name}i = -{a}i", f"        {name}f = -{a}f",
                          f"        {name}d = {a}d"])
            return name
        a, b = emit(node.left), emit(node.right)
        op = node.op
        if op == "%":   # the dividend's sign; a zero divisor is bad (never raised)
            lines.extend([
                f"        {name}d = {a}d | {b}d",
                f"        if {b}i == 0:",
                f"            {name}i = 0",
                "        else:",
                f"            {name}i = abs({a}i) % abs({b}i)",
                f"            if {a}i < 0:",
                f"                {name}i = -{name}i",
                f"        if {b}f == 0.0:",
                f"            {name}f = 0.0",
                "            bad = 1",
                "        else:",
                f"            {name}f = np.fmod({a}f, {b}f)"])
        lines.extend([
            f"        {name}d = {a}d | {b}d",
            f"        {name}i = {a}i {op} {b}i" if op != "%" else "",
            f"        {name}f = {a}f {op} {b}f" if op != "%" else "",
            f"        if {name}d == 0 and ({name}i > {BOUND} or {name}i < -{BOUND}):",
            "            bad = 1",
            f"        if {name}d == 1 and {name}f - {name}f != 0.0:",
            "            bad = 1"])
        return name

    result = emit(form.expression)
    lines += [
        "        if bad:",
        "            out[r] = 8",
        "        elif null:",
        "            out[r] = 2",
        f"        elif {result}d:",
        f"            out[r] = _within(dd, {result}f)",
        "        else:",
        f"            out[r] = _within(ii, {result}i)"]
    body = "\n".join(line for line in lines if line)
    return f'''"""filtex arithmetic pass for {form.shape()!r}."""
import numpy as np
from filtex.codegen.jit import njit


@njit(inline="always")
def _within(spans, x):
    for j in range(spans.shape[0]):
        if spans[j, 0] <= x and x <= spans[j, 1]:
            return 1
    return 0


@njit(cache=True, nogil=True)
def expr_pass(out, ok, ii, dd, {args}):
    for r in range(out.shape[0]):
{body}
'''


def key(form: ArithForm) -> str:
    return hashlib.sha256(form.shape().encode()).hexdigest()[:16]
