"""Raw syntax tree to resolved, checked tree.

- Field references are resolved: ``p.reply_to`` becomes ``Field('properties',
  'reply-to')``, ``a.order.lines[0]`` a ``Field`` with ``MapRef``/``Index``
  steps. A name after ``h.``/``p.`` that is not a well-known field is a
  definitional error, as are unknown functions, wrong argument counts and
  constant LIKE patterns that cannot be patterns.
- Static types are recorded in ``typ`` (predicates are ``bool``).
- Constant subtrees are folded with the runtime's own operations, so a folded
  value is exactly what evaluation would compute. A constant subtree whose
  evaluation fails is left alone: it fails for every message, as it should.
"""
from __future__ import annotations

from typing import Any

from .. import functions, runtime
from ..runtime import patterns as like
from ..errors import DefinitionProblem, EvaluationFailure
from ..limits import DEFAULT_LIMITS, RESOURCE_LIMIT, Limits
from ..message import HEADER_DEFAULTS, HEADER_FIELDS, PROPERTIES_FIELDS
from ..runtime.values import kind_of
from ..tree import ast
from ..dialects import AMQP, Dialect, Semantics
from ..dialects.base import BODY_QUALIFIERS

_KIND_TYPES = {"null": "null", "bool": "bool", "int": "int", "float": "float",
               "decimal": "decimal", "string": "string", "binary": "binary",
               "timestamp": "timestamp", "uuid": "uuid"}


def _spellings(amqp_name: str, which: str = "all") -> list[str]:
    """``reply-to`` may be written ``reply-to`` (delimited), ``reply_to``, ``replyTo``;
    some dialects know only ``reply_to``."""
    words = amqp_name.split("-")
    if which == "underscore":
        return ["_".join(words)]
    return [amqp_name, "_".join(words), words[0] + "".join(w.title() for w in words[1:])]


def well_known(dialect: Dialect) -> dict[str, dict[str, str]]:
    """Section -> {spelling: AMQP field name} for the header and properties fields
    a dialect can name."""
    header = dialect.header_fields or HEADER_FIELDS
    return {"header": {s: n for n in header for s in _spellings(n, dialect.field_spellings)},
            "properties": {s: n for n in PROPERTIES_FIELDS
                           for s in _spellings(n, dialect.field_spellings)}}


def measure(tree: ast.Node, limits: Limits = DEFAULT_LIMITS) -> None:
    """Refuse trees deeper or larger than the limits allow (iteratively, so a
    pathological tree cannot exhaust the stack before it is refused). The parser
    refuses them as it reads; this guards trees built any other way."""
    stack = [(tree, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if depth > limits.max_depth:
            raise DefinitionProblem(
                f"filter is nested more than {limits.max_depth} levels deep "
                f"(limit max_depth = {limits.max_depth})", node.offset, RESOURCE_LIMIT)
        if count > limits.max_nodes:
            raise DefinitionProblem(
                f"filter has more than {limits.max_nodes:,} elements "
                f"(limit max_nodes = {limits.max_nodes:,})", node.offset, RESOURCE_LIMIT)
        stack.extend((child, depth + 1) for child in node.children())


class Checker(ast.NodeVisitor):
    """Resolves and checks one tree for one dialect."""

    def __init__(self, dialect: Dialect, fold: bool = True,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        self.dialect = dialect
        self.fold = fold
        self.limits = limits
        self.semantics = dialect.semantics
        self.header_names = {name: spec for name, *spec in dialect.header_names}
        self.section_fields = {where: spec for where, *spec in dialect.section_fields}
        self.qualified = {qualifier: dict(members) for qualifier, members in
                          dialect.qualified_names}
        self.sections = dict(dialect.section_qualifiers)
        self.bodies = dict(dialect.body_qualifiers)
        self.functions = frozenset(dialect.functions)
        self.well_known = well_known(dialect)

    def check(self, tree: ast.Node) -> ast.Node:
        measure(tree, self.limits)
        if self.dialect.typed_predicates:
            check_static_types(tree)
        return self.visit(tree)

    # --- fields ----------------------------------------------------------------

    def visit_Name(self, node: ast.Name) -> ast.Node:
        if node.name in self.header_names:
            return self._header_name(node)
        return ast.Field(section="application_properties", key=node.name,
                         offset=node.offset)

    def _header_name(self, node: ast.Name, shown: str | None = None) -> ast.Node:
        """A name the dialect gives to message fields (JMS headers): the field, or a
        value the dialect computes from its fields (``shown``: the name as written,
        when it is another name of it)."""
        spec, typ, compute = self.header_names[node.name]
        fields = tuple(ast.Field(section=section, key=key, offset=node.offset,
                                 default=HEADER_DEFAULTS.get(key) if section == "header"
                                 else None)
                       for section, key in spec)
        if compute is not None:
            return ast.Derived(name=shown or node.name, args=fields, offset=node.offset,
                               typ=typ, compute=compute)
        return fields[0]

    def _qualified_name(self, qualifier: str, node: ast.Member) -> ast.Node:
        """``amqp.correlation_id``: the header name it stands for."""
        members = self.qualified[qualifier]
        name = members.get(node.name)
        if name is None:
            raise DefinitionProblem(
                f"{qualifier}.{node.name} is none of the names {self.dialect.name} reads "
                f"after {qualifier}. ({', '.join(sorted(members))})", node.base.offset)
        return self._header_name(ast.Name(name=name, offset=node.offset),
                                 f"{qualifier}.{node.name}")

    def _computed_field(self, name: str, section: str, key: str, offset: int) -> ast.Node:
        """A qualified field the dialect computes from several fields, read as
        they are (RabbitMQ's ``h.priority``: the header's, else an annotation's,
        else its own default): the dialect's compute owns every default."""
        spec, typ, compute = self.section_fields[(section, key)]
        fields = tuple(ast.Field(section=s, key=k, offset=offset) for s, k in spec)
        return ast.Derived(name=name, args=fields, offset=offset, typ=typ, compute=compute)

    def _body(self, base: ast.Node) -> ast.Node | None:
        """The body section a qualifier names (``amqp_value`` in ``amqp_value.x``)."""
        if not isinstance(base, ast.Name) or base.delimited or base.name not in BODY_QUALIFIERS:
            return None
        if base.name not in self.bodies:
            raise DefinitionProblem(
                f"{base.name} (a body reference of the 2018 working draft) is read only in "
                f"the amqp dialect, not in {self.dialect.name}", base.offset)
        return ast.Body(section=self.bodies[base.name], offset=base.offset)

    def visit_Member(self, node: ast.Member) -> ast.Node:
        base = node.base
        if isinstance(base, ast.Name) and not base.delimited and base.name in self.sections:
            section = self.sections[base.name]
            return self._section_field(section, node)
        if isinstance(base, ast.Name) and not base.delimited and base.name in self.qualified:
            return self._qualified_name(base.name, node)
        body = self._body(base)
        if body is not None:
            return ast.MapRef(base=body, key=node.name, offset=node.offset)
        if not self.dialect.allow_composite_references:
            raise DefinitionProblem(
                f"map references are not supported in the {self.dialect.name} dialect",
                node.offset)
        return ast.MapRef(base=self.visit(base), key=node.name, offset=node.offset)

    def _section_field(self, section: str, node: ast.Member) -> ast.Node:
        if section in self.well_known:
            key = self.well_known[section].get(node.name)
            if key is None:
                raise DefinitionProblem(
                    f"{node.name!r} is not a field of the {section} section", node.offset)
            if (section, key) in self.section_fields:
                qualifier = node.base.name if isinstance(node.base, ast.Name) else section
                return self._computed_field(f"{qualifier}.{node.name}", section, key,
                                            node.offset)
            default = HEADER_DEFAULTS.get(key) if section == "header" else None
            return ast.Field(section=section, key=key, default=default, offset=node.offset)
        return ast.Field(section=section, key=node.name, offset=node.offset)

    def visit_Index(self, node: ast.Index) -> ast.Node:
        body = self._body(node.base)
        if body is not None:
            return ast.Index(base=body, index=self.visit(node.index), offset=node.offset)
        if not self.dialect.allow_composite_references:
            raise DefinitionProblem(
                f"positional references are not supported in the {self.dialect.name} "
                "dialect", node.offset)
        return ast.Index(base=self.visit(node.base), index=self.visit(node.index),
                         offset=node.offset)

    def visit_Field(self, node: ast.Node) -> ast.Node:  # already resolved
        return node

    visit_MapRef = visit_Derived = visit_Body = visit_Field

    def visit_Exists(self, node: ast.Exists) -> ast.Node:
        return node.with_(ref=self.visit(node.ref), typ="bool")

    # --- constants and operators --------------------------------------------------

    def visit_Literal(self, node: ast.Literal) -> ast.Node:
        return node

    def visit_Unary(self, node: ast.Unary) -> ast.Node:
        return self._folded(node.with_(operand=self.visit(node.operand)))

    def visit_Binary(self, node: ast.Binary) -> ast.Node:
        return self._folded(node.with_(left=self.visit(node.left),
                                       right=self.visit(node.right)))

    def visit_Compare(self, node: ast.Compare) -> ast.Node:
        return self._folded(node.with_(left=self.visit(node.left),
                                       right=self.visit(node.right), typ="bool"))

    def visit_And(self, node: ast.And) -> ast.Node:
        return self._folded(node.with_(items=tuple(map(self.visit, node.items)), typ="bool"))

    visit_Or = visit_And

    def visit_Not(self, node: ast.Not) -> ast.Node:
        return self._folded(node.with_(operand=self.visit(node.operand), typ="bool"))

    def visit_IsNull(self, node: ast.IsNull) -> ast.Node:
        return self._folded(node.with_(operand=self.visit(node.operand), typ="bool"))

    def visit_In(self, node: ast.In) -> ast.Node:
        return self._folded(node.with_(operand=self.visit(node.operand),
                                       items=tuple(map(self.visit, node.items)), typ="bool"))

    def visit_Between(self, node: ast.Between) -> ast.Node:
        return self._folded(node.with_(operand=self.visit(node.operand),
                                       low=self.visit(node.low), high=self.visit(node.high),
                                       typ="bool"))

    def visit_Like(self, node: ast.Like) -> ast.Node:
        if self.dialect.literal_patterns:
            for what, part in (("pattern", node.pattern), ("escape", node.escape)):
                if part is not None and not (isinstance(part, ast.Literal)
                                             and part.typ == "string"):
                    raise DefinitionProblem(f"a LIKE {what} is a string constant in the "
                                            f"{self.dialect.name} dialect", _start(part))
        if not self.dialect.pattern_control_characters and isinstance(node.pattern, ast.Literal) \
                and isinstance(node.pattern.value, str) \
                and any(c < " " or c == "\x7f" for c in node.pattern.value):
            raise DefinitionProblem("control character in a LIKE pattern", node.pattern.offset)
        pattern = self.visit(node.pattern)
        escape = None if node.escape is None else self.visit(node.escape)
        if isinstance(pattern, ast.Literal) and (escape is None or
                                                 isinstance(escape, ast.Literal)):
            self._check_pattern(pattern, escape)
        return self._folded(node.with_(operand=self.visit(node.operand), pattern=pattern,
                                       escape=escape, typ="bool"))

    def _check_pattern(self, pattern: ast.Literal, escape: ast.Literal | None) -> None:
        if pattern.value is None or (escape is not None and escape.value is None):
            return
        if escape is not None and (escape.typ != "string" or len(escape.value) != 1):
            raise DefinitionProblem("LIKE escape must be a string of one character",
                                    escape.offset)
        if pattern.typ != "string":
            return  # a failure at evaluation, as for any non-string operand
        try:
            like.compile_like(pattern.value, None if escape is None else escape.value,
                              self.semantics.like_escapes)
        except like.PatternError as exc:
            raise DefinitionProblem(str(exc), pattern.offset) from None

    def visit_Call(self, node: ast.Call) -> ast.Node:
        args = tuple(map(self.visit, node.args))
        name = functions.canonical(node.name)
        function = functions.REGISTRY.get(name) if name in self.functions else None
        if ":" in node.name and function is None:
            if not self.dialect.vendor_functions:
                raise DefinitionProblem(
                    f"vendor functions are not supported in the {self.dialect.name} dialect",
                    node.offset)
            # a vendor function filtex does not know is NULL, arguments and all
            return ast.Literal(value=None, typ="null", offset=node.offset) if self.fold \
                else node.with_(args=args, typ="null")
        if function is None:
            raise DefinitionProblem(f"unknown function {node.name}", node.offset)
        low, high = function.arity
        if not low <= len(args) <= high:
            wanted = str(low) if low == high else f"{low} to {high}"
            raise DefinitionProblem(
                f"{node.name} takes {wanted} argument{'s' if high != 1 else ''}, "
                f"not {len(args)}", node.offset)
        node = node.with_(name=name, args=args, typ=function.result)
        return node if function.volatile else self._folded(node)

    # --- folding ---------------------------------------------------------------------

    def _folded(self, node: ast.Node) -> ast.Node:
        if not self.fold or not all(isinstance(c, ast.Literal) for c in node.children()):
            return node
        try:
            value = fold_constant(node, self.semantics)
        except EvaluationFailure:
            return node
        return ast.Literal(value=value, typ=_KIND_TYPES.get(kind_of(value), "any"),
                           offset=node.offset)


def fold_constant(node: ast.Node, semantics: Semantics = AMQP.semantics) -> Any:
    """The value of a node whose operands are all literals, by the dialect's rules."""
    values = [c.value for c in node.children()]  # type: ignore[attr-defined]
    if isinstance(node, ast.Unary):
        return semantics.negate(values[0]) if node.op == "-" else semantics.plus(values[0])
    if isinstance(node, ast.Binary):
        return semantics.arith(node.op, *values)
    if isinstance(node, ast.Compare):
        return semantics.compare(node.op, *values)
    if isinstance(node, (ast.And, ast.Or)):
        items = [semantics.predicate(v) for v in values]
        decisive = node.__class__ is ast.Or
        if decisive in items:
            return decisive
        return None if None in items else not decisive
    if isinstance(node, ast.Not):
        value = semantics.predicate(values[0])
        return None if value is None else not value
    if isinstance(node, ast.IsNull):
        return (values[0] is None) != node.negated
    if isinstance(node, ast.In):
        found = semantics.in_values(values[0], tuple(values[1:]))
        return runtime.negated(found) if node.negated else found
    if isinstance(node, ast.Between):
        return semantics.between(*values, node.negated)
    if isinstance(node, ast.Like):
        return semantics.like(values[0], values[1], node.negated, *values[2:])
    if isinstance(node, ast.Call):
        return functions.REGISTRY[node.name].run(*values)
    raise EvaluationFailure(f"cannot fold {type(node).__name__}")


# --- static types (jms) -------------------------------------------------------------------

_CONDITIONS = (ast.Compare, ast.And, ast.Or, ast.Not, ast.IsNull, ast.Like, ast.In,
               ast.Between, ast.Exists, ast.Name, ast.Member)
_ORDERING = ("<", "<=", ">", ">=")


def check_static_types(tree: ast.Node) -> None:
    """JMS selectors are typed when they are defined, as the peers' parsers
    check them: a condition is a predicate, a property, TRUE, FALSE or NULL
    (unary plus allowed); NULL is only tested with IS NULL; ordering takes
    numeric constants and no conditions; a boolean constant on the left of =
    or <> takes a boolean constant on the right; IN tests a property against
    string constants. Arithmetic operands are checked only when evaluated."""
    conditions = {id(tree)}
    for node in ast.walk(tree):
        if isinstance(node, (ast.And, ast.Or)):
            conditions.update(id(item) for item in node.items)
        elif isinstance(node, ast.Not):
            conditions.add(id(node.operand))
        elif isinstance(node, ast.Unary) and node.op == "+" and id(node) in conditions:
            conditions.add(id(node.operand))
            continue
        if id(node) in conditions and not (
                isinstance(node, _CONDITIONS) or
                (isinstance(node, ast.Literal) and node.typ in ("bool", "null"))):
            raise DefinitionProblem(f"a condition is expected here, not {_describe(node)}",
                                    _start(node))
        if isinstance(node, ast.Compare):
            _check_comparison(node)
        elif isinstance(node, ast.Between):
            for operand in (node.operand, node.low, node.high):
                _check_ordered(operand, "BETWEEN")
        elif isinstance(node, ast.In):
            if not isinstance(node.operand, ast.Name):
                raise DefinitionProblem("IN tests a property", _start(node.operand))
            for item in node.items:
                if not (isinstance(item, ast.Literal) and item.typ == "string"):
                    raise DefinitionProblem("IN lists string constants", _start(item))


def _check_ordered(operand: ast.Node, op: str) -> None:
    if isinstance(operand, ast.Literal) and operand.typ in ("bool", "string", "null"):
        raise DefinitionProblem(f"{_describe(operand)} cannot be ordered with {op}",
                                operand.offset)
    if isinstance(operand, ast.PREDICATE_NODES):
        raise DefinitionProblem(f"a condition cannot be ordered with {op}", _start(operand))


def _check_comparison(node: ast.Compare) -> None:
    for operand in (node.left, node.right):
        if isinstance(operand, ast.Literal) and operand.typ == "null":
            raise DefinitionProblem("NULL is compared only with IS NULL", operand.offset)
        if node.op in _ORDERING:
            _check_ordered(operand, node.op)
    left, right = node.left, node.right
    if isinstance(left, ast.Literal) and isinstance(right, ast.Literal) \
            and left.typ == "bool" and right.typ != "bool":
        raise DefinitionProblem(f"{_describe(left)} cannot be compared with "
                                f"{_describe(right)}", node.offset)


def _describe(node: ast.Node) -> str:
    if isinstance(node, ast.Literal):
        return {"string": "a string constant", "bool": "a boolean constant",
                "null": "NULL", "int": "a number", "decimal": "a number",
                "float": "a number", "binary": "a binary constant"}.get(node.typ, "a constant")
    if isinstance(node, (ast.Binary, ast.Unary)):
        return "an arithmetic expression"
    return "this expression"


def _start(node: ast.Node) -> int:
    while isinstance(node, (ast.And, ast.Or, ast.Binary, ast.Compare)):
        node = node.items[0] if isinstance(node, (ast.And, ast.Or)) else node.left
    return node.offset
