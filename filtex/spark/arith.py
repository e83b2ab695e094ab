"""Arithmetic compared with constants as Spark SQL, exact by the kernel's model.

``quantity * price - discount > 1000`` and ``quantity % 2 = 0`` are computed
natively where every dialect agrees on the arithmetic (``arrow/arith.py``):
integer operands of the types the dialect declares it computes so
(``plan/arith.operand_tags``),
every integer intermediate within +-(2**31 - 1), doubles whose results stay
finite, ``%`` with the dividend's sign. Any other row (an operand of another
type, an intermediate out of range, a zero divisor, a non-finite double) goes
to the Arrow UDF, as the kernel sends it to the per-message engine.

Everything is computed in doubles: an integer within +-(2**31 - 1) is a double
exactly, so is the exact result of ``+ - * %`` on two of them while it stays in
range, and a result out of range stays out of range after rounding (2**31 is a
double), so the range test is exact too. Double arithmetic never raises in
Spark, ANSI mode or not; ``try_mod`` answers a zero divisor with null (a bad
row). A null or absent operand reads as 0 for the range tests, as in the
kernel, and makes the comparison unknown.
"""
from __future__ import annotations

from typing import Any, Callable

from ..plan import arith as kernel_arith
from ..plan import atoms as A
from ..tree import ast
from . import sql as S
from .fields import SparkField

BOUND = kernel_arith.BOUND
_MAX_DOUBLE = S.double(1.7976931348623157e308)
_INT_TAGS = frozenset(t for t in kernel_arith.OPERAND_CLASSES if t != kernel_arith.DOUBLE)


class Computed:
    """An arithmetic expression over a row: ``value`` (a double), ``bad`` (rows
    the kernel's model does not answer: the Arrow UDF's), ``null`` (an operand
    is null or absent: unknown) and ``result(spans_int, spans_double)``, the
    comparison of the value with the form's intervals."""

    def __init__(self, value: str, doubled: str, bad: str, null: str | None) -> None:
        self.value, self.doubled, self.bad, self.null = value, doubled, bad, null

    def within(self, form: Any) -> str:
        ints, _, doubles = form.intervals
        as_double = [(float(lo), float(hi)) for lo, hi in ints]
        test_i = S.within_spans(self.value, as_double, S.double)
        test_d = S.within_spans(self.value, [(float(lo), float(hi)) for lo, hi in doubles],
                                S.double)
        if self.doubled in ("TRUE", "FALSE") or test_i == test_d:
            return test_d if self.doubled == "TRUE" or test_i == test_d else test_i
        return f"CASE WHEN {self.doubled} THEN {test_d} ELSE {test_i} END"


def _operand(field: SparkField, accepted: frozenset) -> tuple[str, str, str, str | None]:
    """(value, is double, valid, null) of one operand field."""
    i, f = field.children.get("i"), field.children.get("f")
    ints = sorted(t for t in accepted & _INT_TAGS if t in field.tags) if i else []
    double = kernel_arith.DOUBLE in accepted and kernel_arith.DOUBLE in field.tags and f
    valid = []
    if ints:
        valid.append(f"({field.tag_test(ints)} AND {i} BETWEEN -{BOUND} AND {BOUND})")
    if double:
        valid.append(f"({field.tag_test([kernel_arith.DOUBLE])} AND abs({f}) <= {_MAX_DOUBLE})")
    nulls = [t for t in (A.ABSENT, A.NULL) if t in field.tags]
    null = field.tag_test(nulls) if nulls else None
    # a null, absent or invalid operand reads as 0 (as in the kernel; the last is bad)
    integer = f"coalesce(CAST({i} AS DOUBLE), {S.double(0.0)})" if ints else S.double(0.0)
    value = f"CASE WHEN {field.tag_test([kernel_arith.DOUBLE])} THEN {f} ELSE {integer} END" \
        if double else integer
    is_double = field.tag_test([kernel_arith.DOUBLE]) if double else "FALSE"
    return value, is_double, S.any_of(valid) or "FALSE", null


def compute(form: Any, fields: list[SparkField], accepted: frozenset) -> Computed:
    """The form's expression over ``fields`` (one per ``form.fields``)."""
    operands = [_operand(field, accepted) for field in fields]
    bads = [f"NOT {valid}" if valid != "FALSE" else "TRUE" for _, _, valid, _ in operands]

    def emit(node: ast.Node) -> tuple[str, set, bool]:
        """(value, the operands below, a double constant below)"""
        if isinstance(node, ast.Field):
            j = form.fields.index((node.section, node.key))
            return operands[j][0], {j}, False
        if isinstance(node, ast.Literal):
            c = kernel_arith.constant_value(node)
            return S.double(float(c)), set(), type(c) is float
        if isinstance(node, ast.Unary):
            value, below, floating = emit(node.operand)
            return f"(- {value})", below, floating
        (a, below_a, fa), (b, below_b, fb) = emit(node.left), emit(node.right)
        value = f"try_mod({a}, {b})" if node.op == "%" else f"({a} {node.op} {b})"
        below, floating = below_a | below_b, fa or fb
        limit = _limit(doubled(below, floating))
        bads.append(f"coalesce(NOT (abs({value}) <= {limit}), TRUE)")
        return value, below, floating

    def doubled(below: set, floating: bool) -> str:
        if floating:
            return "TRUE"
        return S.any_of([operands[j][1] for j in sorted(below) if operands[j][1] != "FALSE"]) \
            or "FALSE"

    value, below, floating = emit(form.expression)
    null = S.any_of([n for _, _, _, n in operands if n])
    return Computed(value, doubled(below, floating), S.any_of(bads) or "FALSE", null)


def _limit(doubled: str) -> str:
    if doubled == "TRUE":
        return _MAX_DOUBLE
    if doubled == "FALSE":
        return S.double(float(BOUND))
    return f"CASE WHEN {doubled} THEN {_MAX_DOUBLE} ELSE {S.double(float(BOUND))} END"


def single_field_form(compiled: Any) -> tuple[Any, frozenset] | None:
    """An atom over one field that is arithmetic compared with constants
    (``x % 2 = 0``, ``rank + 2 = 125``), with the operand tags the dialect
    computes as the model does (``plan/arith.operand_tags``); cached on
    the compiled atom."""
    found = getattr(compiled, "_spark_arith", False)
    if found is False:
        found = None
        semantics = compiled.atom.semantics
        form = kernel_arith.arith_form(compiled.atom.node, semantics)
        if form is not None and len(form.fields) == 1:
            tags = kernel_arith.operand_tags(form, semantics)
            if tags:
                found = (form, tags)
        compiled._spark_arith = found
    return found


def answer(form: Any, fields: list[SparkField], accepted: frozenset,
           columns_of: Callable[..., Any]) -> Any:
    """An arithmetic atom over several fields as ``native.AtomColumns``."""
    computed = compute(form, fields, accepted)
    test = computed.within(form)
    value = test if computed.null is None else \
        f"CASE WHEN {computed.null} THEN {S.NULL_BOOLEAN} ELSE {test} END"
    known = f"NOT ({computed.null})" if computed.null else None
    true = S.all_of([k for k in (known, test) if k])
    false = S.all_of([k for k in (known, f"NOT {test}") if k])
    # rows with residual entries in an operand's section take the UDF too
    back = S.any_of([computed.bad] + [f.back for f in fields if f.back])
    return columns_of(value=value, back=back, true=true, false=false)
