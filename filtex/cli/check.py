"""``filtex check``: compile a filter, show where it is wrong, warn where it
probably does not say what its author meant, and (``--explain``) show the
checked tree and the generated Python."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Iterator

from .common import OK, CommandError, caret
from .definition import file_name_hint, names_a_file, single_filter


def run(args: argparse.Namespace) -> int:
    if (args.filter is None) == (args.filter_file is None):
        raise CommandError("check takes FILTER or -f FILE" if args.filter is None else
                           "check takes FILTER or -f FILE, not both")
    flt = single_filter(args.filter, args)
    from ..lint import lint
    warnings = lint(flt)
    origin = "" if args.filter_file is None else \
        f"{'<stdin>' if args.filter_file == '-' else args.filter_file}: "
    for warning in warnings:
        print(f"filtex: warning: {origin}line {warning.line}, column {warning.column}: "
              f"{warning.message}\n{caret(warning.text, warning.line, warning.column)}",
              file=sys.stderr)
    count = len(warnings)
    if args.filter is not None and names_a_file(args.filter) and \
            not any("looks like a file name" in w.message for w in warnings):
        print(f"filtex: warning: {file_name_hint(args.filter)}", file=sys.stderr)
        count += 1
    if args.explain:
        print("tree:")
        for line in tree_lines(flt.tree):
            print("  " + line)
        print("python:")
        print(flt.source.rstrip("\n"))
    shown = "1 warning" if count == 1 else f"{count} warnings"
    print(f"ok: {flt.kind} filter, {flt.dialect} dialect" + (f" ({shown})" if count else ""))
    return OK


def tree_lines(tree: Any) -> Iterator[str]:
    """The checked tree, one node a line, indented by depth: its class, its
    type (a header or properties field: its AMQP type), its text."""
    from ..tree.render import to_sql
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
        from ..runtime.property import FIELD_TYPES
        kinds = FIELD_TYPES[section].get(node.key)
        if kinds:
            return "|".join(kinds)
    return node.typ
