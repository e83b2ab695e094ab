"""String tables: an atom's outcome for every distinct string of a batch.

A dictionary column's distinct strings are few (regions, types, subjects), so
the atom is simply run on each one by the per-message engine (``plan/oracle``):
exact by construction, whatever the predicate (LIKE with escapes, case mapping
with language tags, the dialect's own string rules). High-cardinality columns
(ids, SKUs: a distinct string a row) would make that a Python call a row, so
for the predicates with a plain-text form (``plan/text.py``) the table is
computed by Arrow's vectorised kernels instead (LIKE through RE2, linear in
the input). A text form is trusted: it is built from the dialect's declared
string rules (``Semantics.string_ops``, ``like_escapes``), and
``tests/test_rules.py`` checks every kind of form against the row engine on
strings and symbols around its constants.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..plan.atoms import BACK, STRING_TAGS, STRING_VARIANT
from ..table.schema import CHAR
from ..plan.text import like_pattern, text_form
from ..tree import ast

PER_VALUE_LIMIT = 512
"""Dictionaries up to this size are run value by value (a microsecond each)."""

_ARROW_OPS = {"=": "equal", "<>": "not_equal", "<": "less", "<=": "less_equal",
              ">": "greater", ">=": "greater_equal"}


def vectorised(node: ast.Node, semantics: Any, dictionary: pa.Array) -> np.ndarray | None:
    """True/False per dictionary entry for a plain-text predicate on the field,
    or None when ``node`` is not one."""
    form = text_form(node, semantics)
    if form is None:
        return None
    if form.kind == "like" and form.single_line is not None:
        line = pc.if_else(pc.ends_with(dictionary, "\n"),
                          pc.utf8_slice_codeunits(dictionary, 0, -1), dictionary)
        found = pc.and_(pc.and_(pc.invert(pc.match_substring(line, "\n")),
                                pc.less_equal(pc.utf8_length(line), form.single_line)),
                        pc.match_like(line, like_pattern(form.arg)))
    elif form.kind == "like":
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
                row[i] = compiled.value_outcome(cls(dictionary[int(i)].as_py()), rc)
            continue
        if fast is not None:
            row[:size] = np.where(valid, fast.astype(np.int8), BACK)
            continue
        values = dictionary.to_pylist()
        row[:size] = compiled.string_outcomes(values, cls, rc)
    return table
