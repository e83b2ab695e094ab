"""The gate of a subscription: one conjunct of its checked tree that an index
can answer for thousands of subscriptions with one lookup.

A filter is TRUE only if every conjunct of its top-level AND is TRUE, in every
dialect and whatever fails. So if an index yields, for a message, every
subscription whose gate may be TRUE (a superset), the others are certainly not
TRUE and need no evaluation for ``match``. Gates are terms on one field: a
constant equality or string IN list, a LIKE prefix, IS [NOT] NULL, an integer
range, and the described filters' property entries, direct and topic
bindings; an OR of such terms is a gate too (the subscription is listed under
each). The index never decides a verdict: candidates are evaluated in full.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from proton import symbol

from ..dialects import rules as declared
from ..dialects.base import Semantics
from ..runtime.property import string_rule
from ..runtime.patterns import PatternError, segments_of
from ..runtime.values import INT_CLASSES
from ..tree import ast

SUBJECT = ("properties", "subject", None)

# Between equally selective conjuncts, the kind that usually is.
_RANK = {"eq-str": 5, "eq-int": 5, "prefix": 4, "word": 3, "range": 2, "null": 1}


@dataclass(frozen=True)
class Term:
    """One indexable test on one field: ``kind`` with its constants.

    ``kind``: ``eq-str`` (the value is one of ``keys``, strings), ``eq-int``
    (integers), ``prefix`` (a string starting with ``keys[0]``), ``word`` (a
    subject whose first dot-separated word is ``keys[0]``), ``range``
    (``keys = (op, bound)``: an integer value ``op`` the bound), ``null`` (``keys
    = (absent,)``: the value is absent, or present). ``never_null``: the test
    is FALSE, not unknown, when the field is absent (property entries,
    bindings). ``semantics``: the dialect that reads the field."""
    kind: str
    field: tuple        # (section, key, default)
    keys: tuple
    never_null: bool
    semantics: Semantics


@dataclass(frozen=True)
class Gate:
    """The terms one of which is TRUE whenever the subscription is TRUE."""
    terms: tuple

    @property
    def rank(self) -> int:
        """Between gates as selective as each other: the kind that is most often
        selective (an equality before a prefix, before a range)."""
        return min(_RANK[t.kind] for t in self.terms)


def find_gates(tree: Any, semantics: Semantics) -> list[Gate]:
    """Every gate of a checked tree (one per indexable conjunct); the set picks
    the one its indexes say is most selective."""
    gates = []
    for node, rules in _conjuncts(tree, semantics):
        gate = _gate(node, rules)
        if gate is not None:
            gates.append(gate)
    return gates


def _conjuncts(node: Any, semantics: Semantics):
    """The items of the top-level AND (through nested ANDs and Scopes), each
    with the semantics of the dialect that reads it."""
    stack = [(node, semantics)]
    while stack:
        node, rules = stack.pop()
        if isinstance(node, ast.Scope):
            stack.append((node.body, node.dialect.semantics))
        elif isinstance(node, ast.And):
            stack.extend((item, rules) for item in reversed(node.items))
        elif isinstance(node, ast.Not) and isinstance(node.operand, ast.Or):
            # NOT (a OR b) is TRUE only where NOT a and NOT b both are
            stack.extend((ast.Not(operand=item), rules) for item in reversed(node.operand.items))
        elif isinstance(node, ast.Not) and isinstance(node.operand, ast.Not):
            stack.append((node.operand.operand, rules))
        else:
            yield node, rules


def _gate(node: Any, rules: Semantics) -> Gate | None:
    if isinstance(node, ast.Or):   # every item must be a term
        terms = []
        for item in node.items:
            inner = _gate(item, rules)
            if inner is None:
                return None
            terms.extend(inner.terms)
        return Gate(tuple(terms)) if terms else None
    if isinstance(node, ast.Scope):
        return _gate(node.body, node.dialect.semantics)
    term = _term(node, rules)
    return None if term is None else Gate((term,))


def _field(node: Any) -> tuple | None:
    if isinstance(node, ast.Field):
        return (node.section, node.key, node.default)
    return None


# NOT (x op c) is TRUE exactly where x (negated op) c is, for every value an
# index looks up (a string, an integer, a double neither NaN nor zero: the
# comparison is TRUE or FALSE there); other values make every term a candidate.
_NEGATED = {"<>": "=", "<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _negation(node: ast.Not) -> Any:
    """The test NOT of ``node.operand`` is, when it has a positive form."""
    inner = node.operand
    if isinstance(inner, ast.Compare) and inner.op in _NEGATED:
        return ast.Compare(op=_NEGATED[inner.op], left=inner.left, right=inner.right)
    if isinstance(inner, (ast.In, ast.Like, ast.IsNull)) and inner.negated:
        return replace(inner, negated=False)
    if isinstance(inner, ast.IsNull):
        return replace(inner, negated=True)
    return None


def _term(node: Any, rules: Semantics) -> Term | None:
    if isinstance(node, ast.Not):
        positive = _negation(node)
        return None if positive is None else _term(positive, rules)
    if isinstance(node, ast.Compare):
        return _compare(node, rules)
    if isinstance(node, ast.In) and not node.negated:
        field = _field(node.operand)
        if field and node.items and all(isinstance(i, ast.Literal) and i.typ == "string"
                                        for i in node.items):
            return Term("eq-str", field, tuple(str(i.value) for i in node.items), False, rules)
    if isinstance(node, ast.Like) and not node.negated:
        return _like(node, rules)
    if isinstance(node, ast.IsNull):
        field = _field(node.operand)
        if field:
            return Term("null", field, (not node.negated,), True, rules)
    if isinstance(node, ast.Between) and not node.negated:
        field = _field(node.operand)
        low = node.low
        if field and isinstance(low, ast.Literal) and low.typ == "int" and \
                _orders_as_python(rules, int(low.value)) and \
                isinstance(node.high, ast.Literal) and node.high.typ == "int":
            return Term("range", field, (">=", int(low.value)), False, rules)
    if isinstance(node, ast.PropertyMatch) and not node.present and node.ref is not None:
        return _property(node, rules)
    if isinstance(node, ast.Direct):
        return Term("eq-str", SUBJECT, (str(node.key),), True, rules)
    if isinstance(node, ast.Topic):
        first = node.pattern.split(".", 1)[0]
        if first not in ("*", "#"):
            return Term("word", SUBJECT, (first,), True, rules)
    return None


def _orders_as_python(semantics: Semantics, bound: int) -> bool:
    """Does every value a range index looks up (an integer, a timestamp, a
    double neither NaN nor zero) compare with the integer ``bound`` as Python
    orders them (the index bisects), by the dialect's declared number rules?
    Exactly, or after rounding to double a bound that a double holds."""
    numbers = semantics.numbers
    return all(isinstance(numbers.rule(kind, bound), declared.Exact)
               for kind in (declared.INTEGER, declared.TIMESTAMP)) and \
        numbers.double_operand(bound) == bound


def _compare(node: ast.Compare, rules: Semantics) -> Term | None:
    left, right, op = node.left, node.right, node.op
    if isinstance(left, ast.Literal):
        left, right, op = right, left, ast.MIRROR[op]
    field = _field(left)
    if not field or not isinstance(right, ast.Literal):
        return None
    if op == "=" and right.typ == "string":
        return Term("eq-str", field, (str(right.value),), False, rules)
    if right.typ == "int" and type(right.value) in INT_CLASSES:
        if op == "=":
            return Term("eq-int", field, (int(right.value),), False, rules)
        if op in ("<", "<=", ">", ">=") and _orders_as_python(rules, int(right.value)):
            return Term("range", field, (op, int(right.value)), False, rules)
    return None


def _like(node: ast.Like, rules: Semantics) -> Term | None:
    field = _field(node.operand)
    pattern, escape = node.pattern, node.escape
    if not field or not (isinstance(pattern, ast.Literal) and pattern.typ == "string"):
        return None
    if escape is not None and not (isinstance(escape, ast.Literal) and escape.typ == "string"):
        return None
    try:
        segments = segments_of(str(pattern.value), None if escape is None else str(escape.value),
                               rules.like_escapes)
    except PatternError:
        return None
    head = segments[0]
    if None in head:
        return None
    text = "".join(head)
    if len(segments) == 1:
        return Term("eq-str", field, (text,), False, rules)
    if len(segments) == 2 and not segments[1] and text:
        return Term("prefix", field, (text,), False, rules)
    return None


def _property(node: ast.PropertyMatch, rules: Semantics) -> Term | None:
    field = (node.section, node.key, node.default)
    ref = node.ref
    if type(ref) is str or type(ref) is symbol:
        rule, text = string_rule(ref)
        if rule == "eq":
            return Term("eq-str", field, (text,), True, rules)
        if rule == "prefix" and text:
            return Term("prefix", field, (text,), True, rules)
        return None
    if type(ref) in INT_CLASSES:
        return Term("eq-int", field, (int(ref),), True, rules)
    return None
