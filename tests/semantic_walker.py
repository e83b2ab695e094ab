"""A tree walker over a dialect's own evaluation rules, for the dialects the
amqp reference evaluator does not read (``jms``, ``rabbitmq``).

It evaluates the checked tree *without* constant folding by calling only the
dialect's ``Semantics`` operations (compare, arith, like, in, between,
predicate) and plain three-valued logic: no inline fast path, no generated
code. Property-based tests compare it with the compiled filter, so every fast
path the generator picks for a dialect is checked against that dialect's
complete rules.
"""
from __future__ import annotations

from typing import Any

from filtex import runtime
from filtex.functions import REGISTRY
from filtex.dialects import Semantics
from filtex.tree import ast


def evaluate(node: ast.Node, message: Any, semantics: Semantics) -> bool | None:
    return condition(node, message, semantics)


def condition(node: ast.Node, message: Any, semantics: Semantics) -> bool | None:
    return semantics.predicate(value(node, message, semantics))


def value(node: ast.Node, message: Any, semantics: Semantics) -> Any:
    def v(child):
        return value(child, message, semantics)

    if isinstance(node, ast.Literal):
        return node.value
    if isinstance(node, ast.Field):
        found = getattr(message, node.section).get(node.key)
        return node.default if found is None and node.default is not None else found
    if isinstance(node, ast.Derived):
        return node.compute(*map(v, node.args))
    if isinstance(node, ast.Unary):
        operand = v(node.operand)
        return semantics.negate(operand) if node.op == "-" else semantics.plus(operand)
    if isinstance(node, ast.Binary):
        return semantics.arith(node.op, v(node.left), v(node.right))
    if isinstance(node, ast.Compare):
        return semantics.compare(node.op, v(node.left), v(node.right))
    if isinstance(node, (ast.And, ast.Or)):
        decisive = isinstance(node, ast.Or)
        items = [condition(item, message, semantics) for item in node.items]
        if decisive in items:
            return decisive
        return None if None in items else not decisive
    if isinstance(node, ast.Not):
        operand = condition(node.operand, message, semantics)
        return None if operand is None else not operand
    if isinstance(node, ast.IsNull):
        operand = v(node.operand)
        absent = operand is None or (semantics.null_view and semantics.view(operand) is None)
        return absent != node.negated
    if isinstance(node, ast.Like):
        escape = () if node.escape is None else (v(node.escape),)
        return semantics.like(v(node.operand), v(node.pattern), node.negated, *escape)
    if isinstance(node, ast.In):
        found = semantics.in_values(v(node.operand), tuple(map(v, node.items)))
        return runtime.negated(found) if node.negated else found
    if isinstance(node, ast.Between):
        return semantics.between(v(node.operand), v(node.low), v(node.high), node.negated)
    if isinstance(node, ast.Call):
        return REGISTRY[node.name].run(*map(v, node.args))
    raise NotImplementedError(type(node).__name__)
