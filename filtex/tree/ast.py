"""Immutable syntax-tree nodes for SQL filter expressions.

The parser builds the *raw* tree (``Name``/``Member``/``Index`` chains for
field references); the checker turns it into the *resolved* tree, where every
field reference is a ``Field`` (section + key) optionally followed by
``MapRef``/``Index`` steps, and every expression carries its static type in
``typ``.  Every node remembers ``offset``, its position in the filter text, so
errors can name line and column.

Static types (``typ``): ``null bool int float decimal string binary timestamp
uuid any``.  ``any`` means "only known at evaluation time" (field values).
"""
from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Any, Iterator

ANY = "any"


@dataclass(frozen=True, slots=True)
class Node:
    offset: int = field(default=0, kw_only=True, compare=False)
    typ: str = field(default=ANY, kw_only=True, compare=False)

    def children(self) -> Iterator["Node"]:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Node):
                yield value
            elif isinstance(value, tuple):
                for item in value:
                    if isinstance(item, Node):
                        yield item

    def with_(self, **changes: Any) -> "Node":
        return replace(self, **changes)


# --- constants --------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant; ``typ`` says which SQL constant kind it is."""
    value: Any = None


# --- raw field references (parser output, removed by the checker) -----------

@dataclass(frozen=True, slots=True)
class Name(Node):
    """An identifier standing alone: ``color``, ``[order-status]``, ``h``."""
    name: str = ""
    delimited: bool = False


@dataclass(frozen=True, slots=True)
class Member(Node):
    """``base.name``: a section qualifier's field or a map entry."""
    base: Node = None  # type: ignore[assignment]
    name: str = ""
    delimited: bool = False


# --- resolved field references (checker output) ------------------------------

@dataclass(frozen=True, slots=True)
class Field(Node):
    """A field of a message section.

    ``section`` is one of ``header delivery_annotations message_annotations
    properties application_properties footer``; ``key`` is the AMQP field name
    (``reply-to``) or the map key.  ``default`` is the value a header field
    reads as when absent (``None`` when it has none).
    """
    section: str = ""
    key: str = ""
    default: Any = None


@dataclass(frozen=True, slots=True)
class Body(Node):
    """A body section read as one value (the 2018 working draft's ``amqp_value``
    and ``amqp_sequence`` qualifiers, ``amqp`` dialect only): ``section`` is
    ``amqp_value`` (the value) or ``amqp_sequence`` (the items of all
    amqp-sequence sections, as one list). NULL when the body is of another kind."""
    section: str = ""


@dataclass(frozen=True, slots=True)
class MapRef(Node):
    """``base.key`` where base holds a map: the entry, or NULL."""
    base: Node = None  # type: ignore[assignment]
    key: str = ""


@dataclass(frozen=True, slots=True)
class Index(Node):
    """``base[index]`` where base holds a list or array (0-based), or NULL."""
    base: Node = None  # type: ignore[assignment]
    index: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Derived(Node):
    """A value computed from fields: the JMS headers that are not one AMQP field
    as they stand (``JMSDeliveryMode`` from durable, ``JMSRedelivered`` from
    delivery-count, ``JMSType`` from an annotation or the subject): ``compute``
    applied to the fields' values (the dialect's own function)."""
    name: str = ""
    args: tuple = ()
    compute: Any = None


# --- operators ---------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Unary(Node):
    op: str = "-"          # '-' or '+'
    operand: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Binary(Node):
    op: str = "+"          # '+', '-', '*', '/', '%'
    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Compare(Node):
    op: str = "="          # '=', '<>', '<', '<=', '>', '>=' ('!=' is read as '<>')
    left: Node = None  # type: ignore[assignment]
    right: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class And(Node):
    items: tuple = ()


@dataclass(frozen=True, slots=True)
class Or(Node):
    items: tuple = ()


@dataclass(frozen=True, slots=True)
class Not(Node):
    operand: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class IsNull(Node):
    operand: Node = None  # type: ignore[assignment]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Like(Node):
    operand: Node = None  # type: ignore[assignment]
    pattern: Node = None  # type: ignore[assignment]
    escape: Node | None = None
    negated: bool = False


@dataclass(frozen=True, slots=True)
class In(Node):
    operand: Node = None  # type: ignore[assignment]
    items: tuple = ()
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Between(Node):
    operand: Node = None  # type: ignore[assignment]
    low: Node = None  # type: ignore[assignment]
    high: Node = None  # type: ignore[assignment]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Exists(Node):
    """``EXISTS(ref)``: true iff the referenced entry is really present."""
    ref: Node = None  # type: ignore[assignment]


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A function call.  ``name`` is upper-case for built-ins
    (``LOWER UPPER LEFT RIGHT SUBSTRING UTC DATE``) and ``vendor:name`` for
    vendor functions, which evaluate to NULL."""
    name: str = ""
    args: tuple = ()


# --- described filters, lowered into the same tree --------------------------------

@dataclass(frozen=True, slots=True)
class Scope(Node):
    """``body`` read by another dialect's rules than the tree around it (a JMS
    selector inside an amqp group): its conditions, fast paths and runtime."""
    body: Node = None  # type: ignore[assignment]
    dialect: Any = None


@dataclass(frozen=True, slots=True)
class PropertyMatch(Node):
    """One property-filter entry (filtex 4.1): does the field match ``ref``?
    Never NULL: an absent field does not match (a null reference matches
    anything). ``present``: the dialect's rule that needs the value present
    (RabbitMQ), ``match`` its matching function."""
    section: str = ""
    key: Any = ""
    ref: Any = None
    default: Any = None
    present: bool = False
    match: Any = None


@dataclass(frozen=True, slots=True)
class HeaderMatch(Node):
    """A legacy headers-binding entry: the application property has the same
    type and value as ``ref``, or (``ref`` None) is present."""
    key: str = ""
    ref: Any = None


@dataclass(frozen=True, slots=True)
class Topic(Node):
    """A legacy topic binding on the subject (``matcher`` from ``topic.py``)."""
    pattern: str = ""
    matcher: Any = None


@dataclass(frozen=True, slots=True)
class Direct(Node):
    """A legacy direct binding: the subject is the string ``key``."""
    key: str = ""


@dataclass(frozen=True, slots=True)
class NoLocal(Node):
    """The Apache no-local filter: the message did not come from the receiving
    connection (a failure when there is none)."""


PREDICATE_NODES = (Compare, And, Or, Not, IsNull, Like, In, Between, Exists, Scope,
                   PropertyMatch, HeaderMatch, Topic, Direct, NoLocal)


class NodeVisitor:
    """``visit(node)`` calls ``visit_<NodeClass>(node)``: the one dispatch of every
    pass over a tree (the checker, each engine's generator)."""

    def visit(self, node: Node) -> Any:
        return getattr(self, "visit_" + type(node).__name__)(node)


MIRROR = {"=": "=", "<>": "<>", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
"""The comparison operator with its operands swapped: ``c < x`` is ``x > c``."""


def substitute(node: Node, old: Node, new: Node) -> Node:
    """``node`` with every subtree equal to ``old`` replaced by ``new``."""
    if node == old:
        return new
    changes: dict[str, Any] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            replaced: Any = substitute(value, old, new)
        elif isinstance(value, tuple) and any(isinstance(item, Node) for item in value):
            items = tuple(substitute(item, old, new) if isinstance(item, Node) else item
                          for item in value)
            replaced = value if all(a is b for a, b in zip(items, value)) else items
        else:
            continue
        if replaced is not value:
            changes[f.name] = replaced
    return replace(node, **changes) if changes else node


def walk(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before children (iterative)."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(current.children())))
