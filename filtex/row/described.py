"""The row engine's code for the nodes described filters lower to: property
and headers-binding entries, topic and direct bindings, no-local.

Entries of one property filter or headers binding are never NULL and never
fail, so an AND (OR) of them is one short-circuit Python expression that reads
each field only when the entries before it left the answer open, as a
hand-written early-exit function would.
"""
from __future__ import annotations

from typing import Any

from ..runtime.property import match_value, string_rule
from ..tree import ast
from ..runtime.values import FLOAT_CLASSES, INT_CLASSES, double_value, exact, kind_of

_ENTRIES = (ast.PropertyMatch, ast.HeaderMatch)


def same_value(value: Any, ref: Any) -> bool:
    """Legacy headers binding: same type (string and symbol alike) and value."""
    if value is None:
        return False
    value = exact(value)
    return kind_of(value) == kind_of(ref) and value == ref


class DescribedNodes:
    """Mixed into the row generator: ``visit_<Node>`` for the described-filter nodes."""

    def visit_And(self, node: ast.And) -> str:
        if all(isinstance(item, _ENTRIES) for item in node.items):
            return self.entries(node.items, " and ")
        return super().visit_And(node)  # type: ignore[misc]

    def visit_Or(self, node: ast.Or) -> str:
        if all(isinstance(item, _ENTRIES) for item in node.items):
            return self.entries(node.items, " or ")
        return super().visit_Or(node)  # type: ignore[misc]

    def entries(self, items: tuple, joiner: str) -> str:
        tests = [self.entry(item) for item in items]
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = {joiner.join(f'({t})' for t in tests)}")
        return var

    def entry(self, node: Any) -> str:
        """One entry as an expression (its field read inside it)."""
        if isinstance(node, ast.HeaderMatch):
            section = self.section("application_properties")
            key = self.key(node.key)
            if node.ref is None:
                return f"{key} in {section}"
            self.namespace["_same_value"] = same_value
            read = self.accessor.field("application_properties", section, key)
            return f"_same_value({read}, {self.hoist('ref', node.ref)})"
        section_var = self.section(node.section)
        read = self.accessor.field(node.section, section_var, self.key(node.key))
        if node.present:   # the dialect's own rule, hoisted once whatever the entries
            return f"{self.const(node.match, hoist=True)}({read}, {self.hoist('ref', node.ref)})"
        if node.ref is None:
            return "True"   # a null reference matches whatever is there
        value = self.temp()
        if node.default is not None:
            read = f"_v if (_v := {read}) is not None else {self.const(node.default)}"
        return self.match_expression(f"({value} := {read})", node.ref, value)

    def visit_PropertyMatch(self, node: ast.PropertyMatch) -> str:
        return self.entries((node,), " and ")

    visit_HeaderMatch = visit_PropertyMatch

    def match_expression(self, first: str, ref: Any, value: str) -> str:
        """A Python expression: does the value match the reference (4.1)?
        ``first`` is the expression for the value's first use (it assigns
        ``value``), later uses are ``value``."""
        kind = kind_of(ref)
        if kind == "string":
            return f"type({first}) in _STRS_CHAR and {self.string_test(ref, value)}"
        if ref.__class__ in INT_CLASSES:
            as_float = self.const(double_value(ref))
            return (f"({value} == {self.const(int(ref))} if type({first}) in _INTS else "
                    f"(type({value}) in _FLOATS and _double({value}) == {as_float}))")
        if ref.__class__ in FLOAT_CLASSES:
            as_float = self.const(double_value(ref))
            return f"type({first}) in _NUMS_F and _double({value}) == {as_float}"
        if ref is True or ref is False:
            return f"{first} is {ref!r}"
        self.namespace["_match_value"] = match_value
        return f"_match_value({first}, {self.hoist('ref', ref)})"

    def string_test(self, ref: Any, value: str) -> str:
        """The test of a plain string ``value`` against a string reference; an
        ``&i:`` literal is case-folded here, once, and the value when it runs."""
        rule, text = string_rule(ref)
        if rule == "fold":
            return f"{value}.casefold() == {self.const(text.casefold())}"
        literal = self.const(text)
        return {"eq": f"{value} == {literal}", "prefix": f"{value}.startswith({literal})",
                "suffix": f"{value}.endswith({literal})"}[rule]

    def subject(self) -> str:
        """The subject, which the legacy exchange bindings read."""
        return self.visit_Field(ast.Field(section="properties", key="subject"))

    def visit_Topic(self, node: ast.Topic) -> str:
        matcher = self.hoist("topic", node.matcher)
        subject = self.subject()
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = {matcher}({subject})")
        return var

    def visit_Direct(self, node: ast.Direct) -> str:
        subject = self.subject()
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = type({subject}) in _STRS_CHAR and {subject} == {self.const(node.key)}")
        return var

    def visit_NoLocal(self, node: ast.NoLocal) -> str:
        var = self.temp()
        self.emit("if receiving_connection is None:")   # a failure, in every dialect
        with self.indented():
            self.exit_failed(None, "if")
            self.emit("raise _Failure('the no-local filter needs the receiving connection')")
        self.emit(f"{var} = {self.accessor.connection()} != receiving_connection")
        return var
