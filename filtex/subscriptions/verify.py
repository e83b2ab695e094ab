"""Verified gates (issue 27): subscriptions whose index hit alone decides that
they are TRUE, so ``match`` names them without evaluating them (what search
engines' percolators call *verified* matches).

A hit verifies only where the filter *is* its gate, and only for values of
the exact classes the dialects' rules settle:

- The filter is one SQL term (``field = 'x'``, ``field IN ('x', 'y')``,
  ``field LIKE 'x%'`` or with no wildcard, escapes read by the dialect's rules,
  ``field = 5``, ``field > 5``, and the negations ``gates`` reads as these):
  a hit on a ``str`` or ``symbol`` for a string term, on an integer of any
  proton class for ``=``, on an integer, a timestamp or a finite non-zero
  ``float`` for a range, makes it TRUE in amqp, jms and rabbitmq. Each dialect
  sees a symbol as the str of its characters; integers compare with integer
  constants exactly (``rules.Exact``, checked per constant); a range bound is
  indexed only where integers and timestamps order with it as Python does and
  a double compares with it exactly (``gates._orders_as_python``); NaN, zeros
  and infinities (jms orders them totally, rabbitmq drops NaN and infinities)
  take every member of the index, to be evaluated. The filter reads nothing but
  the field the index has read (a header default too, as the index applies
  it), so its evaluation cannot fail or raise.
- The filter is an OR of such terms: a verifying hit on one branch makes it
  TRUE only if no other branch fails (amqp: an error makes the whole filter
  unknown, whatever OR surrounds it) or raises (any dialect: a Python error
  makes ``matches`` FALSE). So it is *conditional*: verified for a message
  only when every field the OR reads is absent or holds a class under which
  its test neither fails nor raises (``SAFE``); else it is evaluated.

Not verified (evaluated as before): ANDs (the gate is one conjunct), BETWEEN
(the gate holds its lower bound only), IS [NOT] NULL, described filters and
filter sets (their own matching rules), chars, decimals, float32, binaries,
and anything whose class is not exactly one of the above (a ``str`` subclass
included). The verdicts stay exactly those of evaluating each filter alone:
``tests/test_subscriptions_verified.py`` checks it on every dialect.
"""
from __future__ import annotations

from typing import Any

from proton import symbol, timestamp

from ..dialects import rules as declared
from ..dialects.base import Semantics
from ..runtime.values import INT_CLASSES
from ..tree import ast
from .gates import Gate, Term, _negation, _term

PLAIN, SURE, MAYBE = 0, 1, 2
"""How a term's index treats a hit: a candidate to evaluate (``PLAIN``), a
verified match (``SURE``), or a match verified if the fields' classes allow
(``MAYBE``)."""

STRINGS = frozenset({str, symbol})
INTEGERS = INT_CLASSES | {timestamp}

# The classes (besides None: absent) under which a term of each kind can
# neither fail (amqp) nor raise, whatever the other branches hold.
SAFE: dict[str, frozenset[type]] = {
    "eq-str": STRINGS, "prefix": STRINGS,
    "eq-int": INTEGERS | {float}, "range": INTEGERS | {float},
    "null": STRINGS | INTEGERS | {float, bool},
}

_UNREAD = object()   # a field the index did not read: no value of any class

Condition = tuple[tuple[tuple[Any, ...], frozenset[type]], ...]
"""(field, classes) pairs: every field absent or of its classes."""


def whole_terms(tree: Any, semantics: Semantics) -> list[tuple[Term, bool]] | None:
    """The filter's OR branches as (term, whether a hit on it verifies) when
    every branch is an indexable term (the filter is its gate), else None."""
    found: list[tuple[Term, bool]] = []
    stack: list[tuple[Any, Semantics]] = [(tree, semantics)]
    while stack:
        node, rules = stack.pop()
        if isinstance(node, ast.Scope):
            stack.append((node.body, node.dialect.semantics))
        elif isinstance(node, ast.Or):
            stack.extend((item, rules) for item in reversed(node.items))
        else:
            term = _term(node, rules)
            if term is None:
                return None
            found.append((term, _verifies(node, term, rules)))
    return found


def _verifies(node: Any, term: Term, rules: Semantics) -> bool:
    """Does a hit on ``term`` (read from ``node``) decide that ``node`` is TRUE?"""
    while isinstance(node, ast.Not):   # the positive form gates read it as
        node = _negation(node)
    if term.kind in ("eq-str", "prefix"):
        return isinstance(node, (ast.Compare, ast.In, ast.Like))
    if term.kind == "eq-int":
        return isinstance(node, ast.Compare) and all(
            isinstance(rules.numbers.rule(declared.INTEGER, key), declared.Exact)
            for key in term.keys)
    if term.kind == "range":   # not BETWEEN: the term is its lower bound only
        return isinstance(node, ast.Compare)
    return False


def plan(whole: list[tuple[Term, bool]] | None, gate: Gate | None
         ) -> tuple[tuple[int, ...], Condition | None]:
    """How each of the gate's terms is indexed (``PLAIN``, ``SURE``, ``MAYBE``),
    and the condition a ``MAYBE`` hit needs (None where there is none)."""
    if gate is None:
        return (), None
    if whole is None or tuple(term for term, _ in whole) != gate.terms:
        return (PLAIN,) * len(gate.terms), None
    if len(whole) == 1:
        return (SURE if whole[0][1] else PLAIN,), None
    modes = tuple(MAYBE if verifies else PLAIN for _, verifies in whole)
    if MAYBE not in modes:
        return modes, None
    classes: dict[tuple[Any, ...], frozenset[type]] = {}
    for term, _ in whole:   # a field tested twice: the classes safe for both tests
        safe = SAFE.get(term.kind)
        if safe is None:
            return (PLAIN,) * len(modes), None
        classes[term.field] = classes.get(term.field, safe) & safe
    return modes, tuple(sorted(classes.items(), key=repr))


def holds(condition: Condition, values: dict[Any, Any]) -> bool:
    """Does every field of ``condition`` hold None or a value of its classes?
    ``values``: field -> the value the index read for this message (a field it
    did not read, or could not, fails the condition)."""
    try:
        for field, classes in condition:
            value = values.get(field, _UNREAD)
            if value is not None and type(value) not in classes:
                return False
    except Exception:   # a class that cannot be hashed: evaluate
        return False
    return True
