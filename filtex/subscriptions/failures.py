"""When can a filter's evaluation fail? For ``evaluate_all`` in the dialects
with failures (amqp): a subscription whose gate is FALSE is FALSE unless
evaluating another part fails, which makes it unknown. For the filters made of
simple tests on fields, a failure needs a field holding a value of the wrong
kind (a number where a string is compared, a string in a predicate position),
so the filter's requirements are a set of (field, kind): while every field is
absent or of its kind, the filter cannot fail. A filter with any other part
has no requirements (None): it is evaluated whenever it could be unknown.
"""
from __future__ import annotations

from typing import Any

from proton import symbol

from ..runtime.values import INT_CLASSES
from ..tree import ast

# Value classes that never make the test of their kind fail (exact classes:
# anything else, a char or a decimal, counts as a possible failure).
SAFE = {"string": frozenset({str, symbol}), "number": INT_CLASSES | {float},
        "bool": frozenset({bool})}

_NEVER_FAIL = (ast.PropertyMatch, ast.HeaderMatch, ast.Direct, ast.Topic)


def requirements(tree: Any, semantics: Any) -> frozenset | None:
    """The (field, kind) pairs under which the filter cannot fail, or None."""
    found: set = set()
    return frozenset(found) if _collect(tree, semantics, found) else None


def _field(node: Any) -> tuple | None:
    if isinstance(node, ast.Field):
        return (node.section, node.key, node.default)
    return None


def _collect(node: Any, rules: Any, found: set) -> bool:
    if isinstance(node, ast.NoLocal):
        return False   # fails without a receiving connection, in every dialect
    if isinstance(node, ast.Scope):
        return _collect(node.body, node.dialect.semantics, found)
    if not rules.failures:   # a subtree of a dialect without failures
        return not any(isinstance(n, ast.NoLocal) for n in ast.walk(node))
    if isinstance(node, (ast.And, ast.Or)):
        return all(_collect(item, rules, found) for item in node.items)
    if isinstance(node, ast.Not):
        return _collect(node.operand, rules, found)
    if isinstance(node, _NEVER_FAIL):
        return True
    if isinstance(node, ast.Literal):
        return node.value is True or node.value is False or node.value is None
    if isinstance(node, (ast.IsNull, ast.Exists)):
        operand = node.operand if isinstance(node, ast.IsNull) else node.ref
        return _field(operand) is not None
    field = _field(node)
    if field is not None:   # a field in a predicate position
        found.add((field, "bool"))
        return True
    kind, field = _simple_test(node)
    if kind is None:
        return False
    found.add((field, kind))
    return True


def _simple_test(node: Any) -> tuple:
    """(kind, field) of a test of one field against constants, else (None, None)."""
    if isinstance(node, ast.Compare):
        left, right = node.left, node.right
        if isinstance(left, ast.Literal):
            left, right = right, left
        field = _field(left)
        if field and isinstance(right, ast.Literal):
            if right.typ == "string":
                return "string", field
            if right.typ in ("int", "float", "decimal"):
                return "number", field
            if right.typ == "bool" and node.op in ("=", "<>"):
                return "bool", field
    elif isinstance(node, ast.In):
        field = _field(node.operand)
        if field and all(isinstance(i, ast.Literal) and i.typ == "string" for i in node.items):
            return "string", field
    elif isinstance(node, ast.Like):
        field = _field(node.operand)
        constant = isinstance(node.pattern, ast.Literal) and node.pattern.typ == "string" and (
            node.escape is None or (isinstance(node.escape, ast.Literal)
                                    and node.escape.typ == "string"))
        if field and constant:
            return "string", field
    elif isinstance(node, ast.Between):
        field = _field(node.operand)
        if field and all(isinstance(b, ast.Literal) and b.typ in ("int", "float", "decimal")
                         for b in (node.low, node.high)):
            return "number", field
    return None, None


def satisfied(required: frozenset, message: Any) -> bool:
    """Does every required field of ``message`` hold a value of its kind (or none)?
    Not when a field cannot be read, or its value's class cannot be looked up
    (a class whose metaclass ``__hash__`` raises): then it may fail."""
    try:
        for (section, key, _default), kind in required:
            value = getattr(message, f"_filtex_{section}").get(key)
            if value is not None and type(value) not in SAFE[kind]:
                return False
    except Exception:
        return False
    return True
