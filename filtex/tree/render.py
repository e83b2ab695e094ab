"""A checked tree back to readable filter text, node by node.

``filtex why`` and ``Filter.explain`` label each sub-expression with this
text, and ``filtex check --explain`` prints the whole tree with it. The text
is for people: fields are written with their section qualifier
(``p.subject``, ``h.priority``), names that need it delimited, constants as
SQL constants; described filters' entries read as what they test.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from . import ast

_QUALIFIER = {"header": "h", "delivery_annotations": "d", "message_annotations": "m",
              "properties": "p", "application_properties": "", "footer": "f"}
_PLAIN = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")
_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "IN", "LIKE", "ESCAPE", "BETWEEN",
                       "TRUE", "FALSE", "EXISTS", "NAN", "INF"})
_PREDICATE = 4   # comparisons, LIKE, IN, BETWEEN, IS NULL
_ATOM = 9


def _precedence(node: ast.Node) -> int:
    if isinstance(node, ast.Or):
        return 1
    if isinstance(node, ast.And):
        return 2
    if isinstance(node, ast.Not):
        return 3
    if isinstance(node, ast.Binary):
        return 6 if node.op in "+-" else 7
    if isinstance(node, ast.Unary):
        return 8
    return _PREDICATE if isinstance(node, ast.PREDICATE_NODES) else _ATOM


def name(key: Any) -> str:
    """A key as an identifier: plain when it can be, else ``[delimited]``."""
    text = str(key)
    if _PLAIN.match(text) and text.upper() not in _KEYWORDS:
        return text
    return "[" + text.replace("]", "]]").replace("[", "[[") + "]"


def constant(value: Any) -> str:
    """A value as the constant that writes it (or a readable stand-in)."""
    if value is None:
        return "NULL"
    if value is True or value is False:
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return "'" + str.__str__(value).replace("'", "''") + "'"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "INF" if value > 0 else "-INF"
        return repr(float(value))
    if isinstance(value, (int, Decimal)):
        return str(int(value) if isinstance(value, int) else value)
    if isinstance(value, (bytes, bytearray)):
        return "0x" + bytes(value).hex().upper()
    if isinstance(value, frozenset):
        return "(" + ", ".join(sorted(map(constant, value))) + ")"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def to_sql(node: ast.Node) -> str:
    """The text of ``node`` and everything under it."""
    return _Renderer().visit(node)


class _Renderer(ast.NodeVisitor):

    def wrap(self, node: ast.Node, outer: int) -> str:
        text = self.visit(node)
        return f"({text})" if _precedence(node) < outer else text

    def visit_Literal(self, node: ast.Literal) -> str:
        return constant(node.value)

    def visit_Field(self, node: ast.Field) -> str:
        qualifier = _QUALIFIER.get(node.section, node.section)
        return f"{qualifier}.{name(node.key)}" if qualifier else name(node.key)

    def visit_Body(self, node: ast.Body) -> str:
        return node.section

    def visit_MapRef(self, node: ast.MapRef) -> str:
        return f"{self.visit(node.base)}.{name(node.key)}"

    def visit_Index(self, node: ast.Index) -> str:
        return f"{self.visit(node.base)}[{self.visit(node.index)}]"

    def visit_Derived(self, node: ast.Derived) -> str:
        return node.name

    def visit_Name(self, node: ast.Name) -> str:
        return name(node.name)

    def visit_Member(self, node: ast.Member) -> str:
        return f"{self.visit(node.base)}.{name(node.name)}"

    def visit_Unary(self, node: ast.Unary) -> str:
        return f"{node.op}{self.wrap(node.operand, 8)}"

    def visit_Binary(self, node: ast.Binary) -> str:
        own = _precedence(node)
        return f"{self.wrap(node.left, own)} {node.op} {self.wrap(node.right, own + 1)}"

    def visit_Compare(self, node: ast.Compare) -> str:
        return f"{self.wrap(node.left, 5)} {node.op} {self.wrap(node.right, 5)}"

    def visit_And(self, node: ast.And) -> str:
        return " AND ".join(self.wrap(item, 2) for item in node.items)

    def visit_Or(self, node: ast.Or) -> str:
        return " OR ".join(self.wrap(item, 1) for item in node.items)

    def visit_Not(self, node: ast.Not) -> str:
        return f"NOT {self.wrap(node.operand, 3)}"

    def visit_IsNull(self, node: ast.IsNull) -> str:
        return f"{self.visit(node.operand)} IS {'NOT ' if node.negated else ''}NULL"

    def visit_Like(self, node: ast.Like) -> str:
        text = (f"{self.visit(node.operand)} {'NOT ' if node.negated else ''}LIKE "
                f"{self.visit(node.pattern)}")
        return text + (f" ESCAPE {self.visit(node.escape)}" if node.escape is not None else "")

    def visit_In(self, node: ast.In) -> str:
        items = node.items
        shown = ", ".join(self.visit(item) for item in items[:20])
        if len(items) > 20:
            shown += f", ... ({len(items)} items)"
        return f"{self.visit(node.operand)} {'NOT ' if node.negated else ''}IN ({shown})"

    def visit_Between(self, node: ast.Between) -> str:
        return (f"{self.visit(node.operand)} {'NOT ' if node.negated else ''}BETWEEN "
                f"{self.visit(node.low)} AND {self.visit(node.high)}")

    def visit_Exists(self, node: ast.Exists) -> str:
        return f"EXISTS({self.visit(node.ref)})"

    def visit_Call(self, node: ast.Call) -> str:
        return f"{node.name}({', '.join(self.visit(arg) for arg in node.args)})"

    def visit_Scope(self, node: ast.Scope) -> str:
        return self.visit(node.body)

    def visit_PropertyMatch(self, node: ast.PropertyMatch) -> str:
        field = self.visit_Field(ast.Field(section=node.section, key=node.key))
        return f"{field} matches {constant(node.ref)}"

    def visit_HeaderMatch(self, node: ast.HeaderMatch) -> str:
        if node.ref is None:
            return f"{name(node.key)} is present"
        return f"{name(node.key)} is the same value as {constant(node.ref)}"

    def visit_Topic(self, node: ast.Topic) -> str:
        return f"p.subject matches topic {constant(node.pattern)}"

    def visit_Direct(self, node: ast.Direct) -> str:
        return f"p.subject = {constant(node.key)}"

    def visit_NoLocal(self, node: ast.NoLocal) -> str:
        return "message is not from the receiving connection"
