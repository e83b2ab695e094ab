"""Text forms: the predicates whose answer for a string is plain text matching.

LIKE with a constant pattern (parsed by filtex's own ``segments_of`` under the
dialect's escape rule), comparison with a string constant by an operator the
dialect orders as Python does, IN of string constants. The batch engine
computes them with Arrow's vectorised kernels over a dictionary
(``arrow/strings.py``), Spark with its own string functions (``spark/``).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from ..runtime.patterns import PatternError, segments_of
from ..tree import ast
from ..tree.ast import MIRROR


def _strings(node: ast.Node) -> list[str] | None:
    values = []
    for item in node:
        if not isinstance(item, ast.Literal) or type(item.value) is not str:
            return None
        values.append(item.value)
    return values


class TextForm(NamedTuple):
    """A predicate on the field whose answer for a string is plain text
    matching: ``kind`` ``like`` (``arg``: segments, ``_`` as None), ``cmp``
    (``arg``: (op, text)) or ``in`` (``arg``: texts); ``negate`` flips it.
    ``single_line``: LIKE on one line of at most this many characters (the
    dialect's ``single_line_like``: one final line feed left out first), None
    for LIKE of the whole string."""
    kind: str
    arg: Any
    negate: bool
    single_line: int | None = None


def text_form(node: ast.Node, semantics: Any) -> TextForm | None:
    """The plain-text form of an atom, or None when it has none (the batch
    engine's vectorised tables and the Spark translation both read it)."""
    negate = False
    while isinstance(node, ast.Not):
        node, negate = node.operand, not negate
    if isinstance(node, ast.Like) and isinstance(node.operand, ast.Field):
        texts = _strings([node.pattern] + ([node.escape] if node.escape is not None else []))
        if texts is None:
            return None
        try:
            segments = segments_of(texts[0], texts[1] if len(texts) > 1 else None,
                                   semantics.like_escapes)
        except PatternError:
            return None
        single_line = None
        if not semantics.plain_like(segments):
            single_line = semantics.single_line_like(segments)
            if single_line is None:
                return None   # the dialect's own matching, with no text form
        return TextForm("like", segments, negate ^ node.negated, single_line)
    if isinstance(node, ast.Compare):
        left, right, op = node.left, node.right, node.op
        if isinstance(left, ast.Literal):
            left, right = right, left
            op = MIRROR[op]
        texts = _strings([right])
        if not isinstance(left, ast.Field) or texts is None or op not in semantics.string_ops:
            return None
        return TextForm("cmp", (op, texts[0]), negate)
    if isinstance(node, ast.In) and isinstance(node.operand, ast.Field):
        texts = _strings(node.items)
        if texts is None:
            return None
        return TextForm("in", texts, negate ^ node.negated)
    return None


def like_pattern(segments: list, escape: str = "\\") -> str:
    """The segments as a LIKE pattern with ``escape`` before every literal
    ``%``, ``_`` and escape character (Arrow's and Spark's LIKE syntax)."""
    return "%".join("".join("_" if c is None else (escape + c if c in ("%", "_", escape) else c)
                            for c in segment) for segment in segments)


