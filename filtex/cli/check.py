"""``filtex check``: compile a filter, show where it is wrong, warn where it
probably does not say what its author meant, and (``--explain``) show the
checked tree and the generated Python."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Iterator

from .common import OK, caret, load_filter


def run(args: argparse.Namespace) -> int:
    flt = load_filter(args.filter, args.dialect, args.filter_json)
    from ..lint import lint
    warnings = lint(flt)
    for warning in warnings:
        print(f"filtex: warning: line {warning.line}, column {warning.column}: "
              f"{warning.message}\n{caret(warning.text, warning.line, warning.column)}",
              file=sys.stderr)
    if args.explain:
        print("tree:")
        for line in tree_lines(flt.tree):
            print("  " + line)
        print("python:")
        print(flt.source.rstrip("\n"))
    shown = "1 warning" if len(warnings) == 1 else f"{len(warnings)} warnings"
    print(f"ok: {flt.kind} filter, {flt.dialect} dialect" + (f" ({shown})" if warnings else ""))
    return OK


def tree_lines(tree: Any) -> Iterator[str]:
    """The checked tree, one node a line, indented by depth: its class, its
    type (a header or properties field: its AMQP type), its text."""
    from ..sql.render import to_sql
    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        label = type(node).__name__
        if label == "Scope":
            label += f" {node.typ} ({getattr(node.dialect, 'name', '?')} dialect)"
        else:
            label += f" {_type(node)}"
        yield f"{'  ' * depth}{label}: {to_sql(node)}"
        stack.extend((child, depth + 1) for child in reversed(list(node.children())))


def _type(node: Any) -> str:
    """A node's static type; a well-known field's AMQP type (``ubyte``)."""
    section = getattr(node, "section", None)
    if type(node).__name__ == "Field" and section in ("header", "properties"):
        from ..described.property import FIELD_TYPES
        kinds = FIELD_TYPES[section].get(node.key)
        if kinds:
            return "|".join(kinds)
    return node.typ
