"""String tables: an atom's outcome for every distinct string of a batch.

A dictionary column's distinct strings are few (regions, types, subjects), so
the atom is simply run on each one by the per-message engine: exact by
construction, whatever the predicate (LIKE with escapes, case mapping with
language tags, the dialect's own string rules). High-cardinality columns
(ids, SKUs: a distinct string a row) would make that a Python call a row, so
for the predicates whose string answer is plain text matching — LIKE with a
constant pattern, comparison with a string constant by an operator the
dialect orders as Python does, IN of string constants — the table is
computed by Arrow's vectorised kernels instead (LIKE through RE2, linear in
the input), with the pattern parsed by filtex's own ``segments_of`` under the
dialect's escape rule. A sample of the dictionary is run through the engine
as well, and any disagreement drops back to the per-value path.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..runtime.patterns import PatternError, segments_of
from ..row.generator import _MIRROR as MIRROR
from ..tree import ast
from .atoms import BACK, CHAR, STRING_TAGS, STRING_VARIANT, run

PER_VALUE_LIMIT = 512
"""Dictionaries up to this size are run value by value (a microsecond each)."""
SAMPLE = 64

_ARROW_OPS = {"=": "equal", "<>": "not_equal", "<": "less", "<=": "less_equal",
              ">": "greater", ">=": "greater_equal"}


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
    (``arg``: (op, text)) or ``in`` (``arg``: texts); ``negate`` flips it."""
    kind: str
    arg: Any
    negate: bool


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
        return TextForm("like", segments, negate ^ node.negated)
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


def vectorised(node: ast.Node, semantics: Any, dictionary: pa.Array) -> np.ndarray | None:
    """True/False per dictionary entry for a plain-text predicate on the field,
    or None when ``node`` is not one."""
    form = text_form(node, semantics)
    if form is None:
        return None
    if form.kind == "like":
        found = pc.match_like(dictionary, like_pattern(form.arg))
    elif form.kind == "cmp":
        op, text = form.arg
        found = getattr(pc, _ARROW_OPS[op])(dictionary, pa.scalar(text, pa.string()))
    else:
        found = pc.is_in(dictionary, value_set=pa.array(form.arg, pa.string()))
    found = found.to_numpy(zero_copy_only=False)
    return ~found if form.negate else found


def string_table(compiled: Any, plan: Any, dictionary: pa.Array, rc: Any) -> np.ndarray:
    """The atom's outcome per (string tag variant, dictionary entry)."""
    size = len(dictionary)
    table = np.full((3, max(size, 1)), BACK, np.int8)
    fn = compiled.on_value
    fast = None
    if size > PER_VALUE_LIMIT:
        fast = vectorised(compiled.atom.node, compiled.atom.semantics, dictionary)
    valid = np.asarray(dictionary.is_valid().to_numpy(zero_copy_only=False))
    for tag in plan.string_tags:
        cls = STRING_TAGS[tag]
        row = table[STRING_VARIANT[tag]]
        if tag == CHAR:   # one-character strings only: few
            lengths = pc.utf8_length(dictionary).fill_null(0).to_numpy(zero_copy_only=False)
            for i in np.flatnonzero(lengths == 1):
                row[i] = run(fn, cls(dictionary[int(i)].as_py()), rc)
            continue
        if fast is not None and _agrees(fast, fn, cls, dictionary, rc):
            row[:size] = np.where(valid, fast.astype(np.int8), BACK)
            continue
        values = dictionary.to_pylist()
        row[:size] = [BACK if s is None else run(fn, s if cls is str else cls(s), rc)
                      for s in values]
    return table


def _agrees(fast: np.ndarray, fn: Any, cls: type, dictionary: pa.Array, rc: Any) -> bool:
    """Does the engine give the vectorised answer on a sample of the entries?"""
    size = len(dictionary)
    picks = sorted(set(range(min(size, SAMPLE // 2))) |
                   set(np.linspace(0, size - 1, SAMPLE // 2).astype(int).tolist()))
    for i in picks:
        s = dictionary[i].as_py()
        if s is None:
            continue
        if run(fn, s if cls is str else cls(s), rc) != int(fast[i]):
            return False
    return True
