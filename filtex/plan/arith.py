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
compared through intervals as a field is: the dialect's declared number rules
for an integer or a double result (``intervals.decide``).

Which operand tags the model holds for is declared, not probed
(``operand_tags``): ``%`` is the integer remainder only where the dialect
computes it so (``Semantics.arithmetic``: Java computes ``%`` in double), and
a double result of -0.0 is 0.0 only where the dialect's float order says so.
``tests/test_rules.py`` checks ``model`` against the row engine on every
accepted tag, every dialect and edge operands. This module is the form and
its model; the kernel pass that computes it is ``arrow/arith.py``.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from proton import byte, int32, short, ubyte, uint, ushort

from ..runtime.values import INT_CLASSES
from ..tree import ast
from ..tree.ast import MIRROR
from ..dialects import rules
from . import intervals
from .codes import FALSE, TRUE, UNKNOWN

BOUND = 2**31 - 1
DOUBLE = 12
OPERAND_CLASSES = {10: int, 9: int32, 8: short, 7: byte, 3: ubyte, 4: ushort, 5: uint,
                   DOUBLE: float}
"""The operand tags the kernel's arithmetic reads (long, int, short, byte, ubyte,
ushort, uint, double), each with the Python class of its values."""
_OPS = {"+", "-", "*", "%"}


class ArithForm:
    """An expression tree over fields and constants, and its comparison."""

    def __init__(self, expression: ast.Node, fields: list[tuple], comparison: list,
                 spans: tuple[list, list, list]) -> None:
        self.expression = expression
        self.fields = fields                 # distinct (section, key), in first-read order
        self.comparison = comparison         # intervals.numeric_form of the comparison
        self.intervals = spans               # an integer result's, (unused), a double's

    def shape(self) -> str:
        """The expression as kernel source (fields by position, constants inline)."""
        return _expr(self.expression, self.fields)


def constant_value(node: ast.Node) -> Any:
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
        return constant_value(node) is not None
    if isinstance(node, ast.Binary):
        return node.op in _OPS and _expression(node.left, fields) and \
            _expression(node.right, fields)
    if isinstance(node, ast.Unary):
        return node.op == "-" and _expression(node.operand, fields)
    return False


def arith_form(node: ast.Node, semantics: Any) -> ArithForm | None:
    """The form of a comparison of an expression with numeric constants, read
    by ``semantics`` (the dialect's)."""
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
    form = intervals.numeric_form(probe)
    if form is None or any(type(c) not in (int, float, Decimal)
                               for c in intervals.constants(form)):
        return None
    if negated:
        form = form[:-1] + [not form[-1]]
    numbers = semantics.numbers
    ints = intervals.decide(form, numbers, rules.INTEGER, intervals.INT64)
    doubles = intervals.decide(form, numbers, rules.DOUBLE, intervals.DOUBLE)
    if not isinstance(ints, list) or not isinstance(doubles, list):
        return None   # a result compared with NaN, say: one answer, not intervals
    return ArithForm(operand, fields, form, (ints, [], doubles))


def operand_tags(form: ArithForm, semantics: Any) -> frozenset[int]:
    """The operand tags on which the dialect computes ``form`` as ``model`` does:
    every one, but doubles where ``%`` is not fmod of doubles in the dialect
    (amqp fails, RabbitMQ is unknown: ``%`` is for integers), none where ``%``
    is computed in double even for integers (Java: -2 % -2 is -0.0), and not
    doubles where a zero constant meets a -0.0 result that the dialect orders
    below 0.0 (Java's ``Double.compareTo``)."""
    tags = set(OPERAND_CLASSES)
    if "%" in form.shape():
        if semantics.arithmetic == "java":
            return frozenset()
        tags.discard(DOUBLE)
    if semantics.float_order == "total" and any(
            c == 0 for c in intervals.constants(form.comparison)):
        tags.discard(DOUBLE)
    return frozenset(tags)


def _expr(node: ast.Node, fields: list) -> str:
    if isinstance(node, ast.Field):
        return f"F{fields.index((node.section, node.key))}"
    if isinstance(node, ast.Literal):
        return repr(constant_value(node))
    if isinstance(node, ast.Unary):
        return f"(-{_expr(node.operand, fields)})"
    return f"({_expr(node.left, fields)} {node.op} {_expr(node.right, fields)})"


# --- the Python model of the kernel's arithmetic (the tests check it) ------------------

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
    if any(type(v) is int and abs(v) > BOUND for v in values):
        raise _Bad   # the kernel's integer operands are within +-BOUND too

    def value(node: ast.Node) -> Any:
        if isinstance(node, ast.Field):
            return values[form.fields.index((node.section, node.key))]
        if isinstance(node, ast.Literal):
            return constant_value(node)
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


