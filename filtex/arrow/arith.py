"""The kernel pass of an arithmetic atom: numba source computing the plan's
``ArithForm`` (``plan/arith.py``: the form, the rules it is exact under and
its Python model) per row, cached on disk by the form's shape."""
from __future__ import annotations

import hashlib

from ..plan.arith import BOUND, DOUBLE, ArithForm, constant_value
from ..tree import ast


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
            c = constant_value(node)
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
