"""The kernel pass of an arithmetic atom: numba source computing the plan's
``ArithForm`` (``plan/arith.py``: the form, the rules it is exact under and
its Python model) per row, cached on disk by the form's shape."""
from __future__ import annotations

import hashlib

from ..plan.arith import BOUND, DOUBLE, ArithForm, constant_value
from ..tree import ast


def row_lines(form: ArithForm, p: str, target: str) -> list[str]:
    """Lines (indented from 0) putting the atom's outcome for row ``r`` in
    ``target``; arrays and scalars named with the prefix ``p``: per operand ``j``
    its tags ``{p}t{j}``, children ``{p}i{j}``, ``{p}f{j}`` and their byte
    bitmaps ``{p}iv{j}``, ``{p}fv{j}``; ``{p}ok[tag]`` 1 for the operand tags
    the dialect agreed on (``verified``); ``{p}ii``/``{p}dd`` the intervals."""
    lines = [f"{p}bad = 0", f"{p}null = 0"]
    for j in range(len(form.fields)):
        v = f"{p}F{j}"
        lines += [
            f"{p}tag = {p}t{j}[r]",
            f"if {p}tag == {DOUBLE} and {p}ok[{p}tag] == 1 and ({p}fv{j}[r >> 3] >> (r & 7)) & 1:",
            f"    {v}f = {p}f{j}[r]",
            f"    {v}i = 0",
            f"    {v}d = 1",
            f"    if {v}f - {v}f != 0.0:",
            f"        {p}bad = 1",
            f"elif {p}tag < 26 and {p}tag != {DOUBLE} and {p}ok[{p}tag] == 1 "
            f"and ({p}iv{j}[r >> 3] >> (r & 7)) & 1:",
            f"    {v}i = {p}i{j}[r]",
            f"    {v}f = float({v}i)",
            f"    {v}d = 0",
            f"    if {v}i > {BOUND} or {v}i < -{BOUND}:",
            f"        {p}bad = 1",
            f"elif {p}tag == 0 or {p}tag == 1:",
            f"    {p}null = 1",
            f"    {v}i = 0",
            f"    {v}f = 0.0",
            f"    {v}d = 0",
            "else:",
            f"    {p}bad = 1",
            f"    {v}i = 0",
            f"    {v}f = 0.0",
            f"    {v}d = 0",
        ]
    temps = [0]

    def emit(node: ast.Node) -> str:
        if isinstance(node, ast.Field):
            return f"{p}F{form.fields.index((node.section, node.key))}"
        temps[0] += 1
        name = f"{p}E{temps[0]}"
        if isinstance(node, ast.Literal):
            c = constant_value(node)
            if type(c) is float:
                lines.extend([f"{name}f = {c!r}", f"{name}i = 0", f"{name}d = 1"])
            else:
                lines.extend([f"{name}i = {c!r}", f"{name}f = {float(c)!r}", f"{name}d = 0"])
            return name
        if isinstance(node, ast.Unary):
            a = emit(node.operand)
            lines.extend([f"{name}i = -{a}i", f"{name}f = -{a}f", f"{name}d = {a}d"])
            return name
        a, b = emit(node.left), emit(node.right)
        op = node.op
        if op == "%":   # the dividend's sign; a zero divisor is bad (never raised)
            lines.extend([
                f"{name}d = {a}d | {b}d",
                f"if {b}i == 0:",
                f"    {name}i = 0",
                "else:",
                f"    {name}i = abs({a}i) % abs({b}i)",
                f"    if {a}i < 0:",
                f"        {name}i = -{name}i",
                f"if {b}f == 0.0:",
                f"    {name}f = 0.0",
                f"    {p}bad = 1",
                "else:",
                f"    {name}f = np.fmod({a}f, {b}f)"])
        lines.extend([
            f"{name}d = {a}d | {b}d",
            f"{name}i = {a}i {op} {b}i" if op != "%" else "",
            f"{name}f = {a}f {op} {b}f" if op != "%" else "",
            f"if {name}d == 0 and ({name}i > {BOUND} or {name}i < -{BOUND}):",
            f"    {p}bad = 1",
            f"if {name}d == 1 and {name}f - {name}f != 0.0:",
            f"    {p}bad = 1"])
        return name

    result = emit(form.expression)
    lines += [
        f"if {p}bad:",
        f"    {target} = 8",
        f"elif {p}null:",
        f"    {target} = 2",
        f"elif {result}d:",
        f"    {target} = arith_within({p}dd, {result}f)",
        "else:",
        f"    {target} = arith_within({p}ii, {result}i)"]
    return [line for line in lines if line]


WITHIN = '''
@njit(inline="always")
def arith_within(spans, x):
    for j in range(spans.shape[0]):
        if spans[j, 0] <= x and x <= spans[j, 1]:
            return 1
    return 0
'''
"""The interval test of an arithmetic result, defined in every module that computes one."""


def source(form: ArithForm) -> str:
    """A module whose ``expr_pass`` writes the atom's outcome per row (the
    pass-per-atom engine's; the fused kernel computes it in its own loop)."""
    count = len(form.fields)
    args = ", ".join(f"t{j}, i{j}, iv{j}, f{j}, fv{j}" for j in range(count))
    body = "\n".join("        " + line for line in row_lines(form, "", "out[r]"))
    return f'''"""filtex arithmetic pass for {form.shape()!r}."""
import numpy as np
from filtex.codegen.jit import njit
{WITHIN}

@njit(cache=True, nogil=True)
def expr_pass(out, ok, ii, dd, {args}):
    for r in range(out.shape[0]):
{body}
'''


def key(form: ArithForm) -> str:
    return hashlib.sha256(form.shape().encode()).hexdigest()[:16]
