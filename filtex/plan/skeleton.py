"""A checked tree split for the batch engine: a boolean skeleton over atoms.

The kernel generator's view of a filter. AND, OR and NOT (and the ``Scope``
that says which dialect reads a subtree) form the *skeleton*; every other
predicate is an *atom*. An atom that reads at most one message field (one
header or properties field, one application property or annotation, the
body, or the arrival connection) is a function of that one value, so the
kernel can evaluate it from the field's type tag and typed child alone; its
per-value answers come from the per-message engine itself (``atoms.py``), so
they are the dialect's by construction. An atom over several fields has a
kernel form only as arithmetic (``+ - *``) compared with constants
(``arith.py``); any other (``a = b``, ``a / b > 1``, ``JMSType``) makes the
filter run row by row.

The skeleton's *shape* (``Plan.shape``) is all the kernel source depends on:
constants live in the atoms' parameters, so ``customer_id = 17`` and
``customer_id = 4711`` share one compiled kernel, and so do all single-atom
filters.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..tree import ast
from .arith import arith_form

FieldRef = tuple
"""``(section, key)`` of a header/properties field or a map entry,
``("body", "amqp_value" | "amqp_sequence")``, ``("connection", None)``, or
``("none", None)`` for an atom that reads nothing."""


@dataclass(frozen=True)
class Atom:
    """A predicate of at most one field, read by ``semantics``' rules; or an
    arithmetic comparison over several (``arith``: ``arith.ArithForm``, and
    ``field`` is ``("expr", fields)``)."""
    node: ast.Node
    field: FieldRef
    semantics: Any
    arith: Any = None


@dataclass(frozen=True)
class Plan:
    """The skeleton (nested tuples: ``("atom", i)``, ``("and", items)``,
    ``("or", items)``, ``("not", item)``) and its atoms; ``reason`` says why a
    filter has no kernel form (then ``shape`` is None)."""
    shape: tuple | None
    atoms: tuple[Atom, ...]
    reason: str | None = None

    @property
    def fields(self) -> tuple[FieldRef, ...]:
        """The distinct fields the atoms read, in first-read order."""
        seen: dict[FieldRef, None] = {}
        for atom in self.atoms:
            for field in (atom.arith.fields if atom.arith is not None else [atom.field]):
                seen.setdefault(field, None)
        return tuple(seen)


class _TwoFields(Exception):
    def __init__(self, node: ast.Node) -> None:
        self.node = node


def fields_read(node: ast.Node) -> set[FieldRef]:
    """Every field a (sub)tree reads."""
    found: set[FieldRef] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Field):
            found.add((sub.section, sub.key))
        elif isinstance(sub, ast.Body):
            found.add(("body", sub.section))
        elif isinstance(sub, ast.NoLocal):
            found.add(("connection", None))
        elif isinstance(sub, (ast.Topic, ast.Direct)):
            found.add(("properties", "subject"))
        elif isinstance(sub, ast.HeaderMatch):
            found.add(("application_properties", sub.key))
        elif isinstance(sub, ast.PropertyMatch):
            found.add((sub.section, sub.key))
    return found


def plan(tree: ast.Node, semantics: Any) -> Plan:
    """Split ``tree`` (read by ``semantics`` where no ``Scope`` says otherwise)."""
    atoms: list[Atom] = []

    def split(node: ast.Node, rules: Any) -> tuple:
        if isinstance(node, ast.Scope):
            return split(node.body, node.dialect.semantics)
        if isinstance(node, (ast.And, ast.Or)) and len(node.items) == 1:
            return split(node.items[0], rules)   # a junction of one item is the item
        if isinstance(node, ast.And):
            return ("and", tuple(split(item, rules) for item in node.items))
        if isinstance(node, ast.Or):
            return ("or", tuple(split(item, rules) for item in node.items))
        if isinstance(node, ast.Not) and _junction(node.operand):
            return ("not", split(node.operand, rules))
        fields = fields_read(node)
        if len(fields) > 1:
            cases = first_present_cases(node, rules)
            if cases is not None:
                return split(cases, rules)
            form = arith_form(node, rules)
            if form is None:
                raise _TwoFields(node)
            atoms.append(Atom(node, ("expr", tuple(form.fields)), rules, form))
            return ("atom", len(atoms) - 1)
        field = next(iter(fields)) if fields else ("none", None)
        atoms.append(Atom(node, field, rules))
        return ("atom", len(atoms) - 1)

    try:
        shape = split(tree, semantics)
    except _TwoFields as problem:
        return Plan(None, (), f"an expression reads several fields (at offset "
                              f"{problem.node.offset}); the kernel evaluates one field a "
                              "predicate")
    except RecursionError:
        return Plan(None, (), "the filter is nested too deeply for a kernel")
    return Plan(_canonical(shape), tuple(atoms))


def first_present_cases(node: ast.Node, rules: Any) -> ast.Node | None:
    """A predicate of a derived value that is its first field where present, else a
    function of the others (``Semantics.first_present_rest``: RabbitMQ's
    ``h.priority``), as its two cases: ``(EXISTS(f) AND p(f)) OR (NOT EXISTS(f) AND
    p(rest))``. ``EXISTS`` of a header or properties field is "not null", exactly the
    derived value's test, and two-valued, so the OR is the predicate whatever ``p``
    answers; each case reads one field fewer. None where no such value is read."""
    for sub in ast.walk(node):
        if not isinstance(sub, ast.Derived) or len(sub.args) < 2:
            continue
        rest = rules.first_present_rest(sub.compute)
        first = sub.args[0]
        if rest is None or not isinstance(first, ast.Field) or first.default is not None \
                or first.section not in ("header", "properties"):
            continue
        present = ast.Exists(ref=first, offset=sub.offset, typ="bool")
        others = ast.Derived(name=sub.name, args=sub.args[1:], compute=rest,
                             offset=sub.offset, typ=sub.typ)
        return ast.Or(items=(
            ast.And(items=(present, ast.substitute(node, sub, first)), typ="bool"),
            ast.And(items=(ast.Not(operand=present, typ="bool"),
                           ast.substitute(node, sub, others)), typ="bool")),
            offset=node.offset, typ="bool")
    return None


def _junction(node: ast.Node) -> bool:
    """A node the skeleton keeps (else a NOT of it is part of one atom)."""
    while isinstance(node, ast.Scope):
        node = node.body
    return isinstance(node, (ast.And, ast.Or)) or (
        isinstance(node, ast.Not) and _junction(node.operand))


def _canonical(shape: tuple) -> tuple:
    """The shape without atom numbers (they are positional): the kernel's key."""
    kind = shape[0]
    if kind == "atom":
        return ("atom",)
    if kind == "not":
        return ("not", _canonical(shape[1]))
    return (kind, tuple(_canonical(item) for item in shape[1]))
