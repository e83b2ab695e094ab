"""The pass-per-atom batch engine: the reference the fused kernel is checked against.

Per batch: for each field with tags answered per value, a histogram and a
gather pass over the whole column (``scan.py``) and the distinct values run by
the per-message engine; then one generic pass per atom (``atomcode.py``: a
mode dispatch per row) writing an outcome column, and the combining kernel
of the filter's shape (``kernel.py``) reading them back into the two bitmaps.
``BatchOptions`` has no switch for it: ``evaluate(..., engine="passes")`` runs
it, and the differential suites compare it with the fused engine row by row.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from ..plan import intervals, oracle
from ..plan import atoms as atom_rules
from ..plan.prepared import PreparedPlan
from . import kernel as kernels
from .columns import back_rows, checked_children, field_arrays, possible_tags
from .parallel import in_parallel, readonly, set_verdicts, verdict_array
from .row_path import row_by_row
from .strings import string_table


def evaluate_batch(flt: Any, ready: PreparedPlan, batch: pa.RecordBatch,
                  rc: Any, threads: int = 1) -> tuple[pa.BooleanArray, int]:
    n = batch.num_rows
    schema = batch.schema
    columns: dict[tuple, Any] = {}
    args: list[np.ndarray] = []
    plans: list[Any] = []
    deep: dict[tuple, set] = {}   # per field: its x/e children some atom answers by tag
    for index, compiled in enumerate(ready.atoms):
        if compiled.atom.arith is not None:
            plans.append(None)
            continue
        rules = ready.tag_plan(index, frozenset(possible_tags(schema, compiled.field)), rc)
        plans.append(rules)
        found = checked_children(rules.modes, atom_rules.FALLBACK)
        if found:
            deep.setdefault(compiled.field, set()).update(found)
    for index, compiled in enumerate(ready.atoms):
        field = compiled.field
        if compiled.atom.arith is not None:   # arithmetic over several fields
            args.append(ArithPass(compiled.atom.arith, ready.operand_tags[index], [
                _arrays(columns, batch, f, deep.get(f)) for f in compiled.atom.arith.fields]))
            continue
        arrays = _arrays(columns, batch, field, deep.get(field))
        rules = plans[index]
        table = (string_table(compiled, rules, arrays.dictionary, rc)
                 if rules.string_tags and arrays.dictionary is not None
                 and len(arrays.dictionary) else _NO_STRINGS)
        modes, consts, values = rules.modes, rules.consts, _NO_VALUES
        if rules.data_tags:
            modes, consts, values = _by_value(compiled, rules, arrays, rc,
                                              columns.setdefault((field, "seen"), {}))
        if arrays.dictionary is not None and len(arrays.dictionary):
            modes, table = _constant_strings(modes, consts, table, arrays.dictionary)
        args.append([*arrays[:11], modes, consts, rules.bools, rules.ints,
                     rules.uints, rules.doubles, table, *values])
    back = back_rows(batch, ready.plan.fields)
    words = (n + 63) >> 6
    out_v = np.zeros(max(words, 1), np.int64)
    out_k = np.zeros(max(words, 1), np.int64)
    held = 0
    if n:   # an outcome column per atom, then the shape's combining kernel
        atom_pass = kernels.atom_pass()
        combine = kernels.compiled(ready.plan.shape)
        outcomes = [np.empty(n, np.int8) for _ in args]

        def rows(lo: int, hi: int) -> int:
            """Rows lo..hi (lo a multiple of 64: bitmaps and words stay aligned)."""
            for atom_args, out in zip(args, outcomes):
                if isinstance(atom_args, ArithPass):
                    atom_args.run(out[lo:hi], lo, hi)
                else:
                    atom_pass(out[lo:hi], *_rows_of(atom_args, lo, hi))
            return combine(hi - lo, back[lo:hi], out_v[lo >> 6:], out_k[lo >> 6:],
                           *[readonly(out[lo:hi]) for out in outcomes])
        held = in_parallel(rows, n, threads)
    if held:
        rows = np.flatnonzero(back)
        set_verdicts(out_v, out_k, rows, row_by_row(flt, batch, rows, rc))
    return verdict_array(n, out_v, out_k), int(held)


def _arrays(columns: dict, batch: pa.RecordBatch, field: tuple, deep: set | None) -> Any:
    """A field's arrays, made once per batch whatever number of atoms read it."""
    found = columns.get(field)
    if found is None:
        found = columns[field] = field_arrays(batch, field, deep)
    return found


class ArithPass:
    """An arithmetic atom's pass and its fields' arrays."""

    def __init__(self, form: Any, ok: np.ndarray, fields: list) -> None:
        self.form, self.ok, self.fields = form, ok, fields

    def run(self, out: np.ndarray, lo: int, hi: int) -> None:
        ints = intervals.as_arrays(self.form.intervals[0], np.int64)
        doubles = intervals.as_arrays(self.form.intervals[2], np.float64)
        arrays = [readonly(a) for f in self.fields for a in _rows_of(
            (f.tags, f.i, f.iv, f.f, f.fv), lo, hi, (0, 1, 3), (2, 4))]
        kernels.arith_pass(self.form)(out, readonly(self.ok), readonly(ints),
                                      readonly(doubles), *arrays)


_ROW_ARRAYS, _BITMAPS = (0, 1, 3, 5, 7), (2, 4, 6, 8, 9, 10)
"""Positions in an atom's arguments (``atomcode.ARGS``) of per-row arrays and bitmaps."""


def _rows_of(arrays: Any, lo: int, hi: int, per_row: tuple = _ROW_ARRAYS,
             bitmaps: tuple = _BITMAPS) -> list:
    """An atom's arguments for rows lo..hi: per-row arrays and bitmaps sliced
    (empty children stay empty), tables as they are."""
    out = []
    for position, array in enumerate(arrays):
        if len(array) and position in per_row:
            array = array[lo:hi]
        elif len(array) and position in bitmaps:
            array = array[lo >> 3:]
        out.append(readonly(array))
    return out




_NO_STRINGS = np.full((3, 1), atom_rules.BACK, np.int8)
_NO_VALUES = (np.zeros(0, np.int64), np.zeros(0, np.int8), np.zeros(0, np.uint64),
              np.zeros(0, np.int8), np.zeros(0, np.float64), np.zeros(0, np.int8))
_VALUES_MODE = (atom_rules.VALUES_I, atom_rules.VALUES_U, atom_rules.VALUES_F)


def _constant_strings(modes: np.ndarray, consts: np.ndarray, table: np.ndarray,
                      dictionary: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """A string tag's one declared answer as a string table: the constant for
    each sound dictionary entry, back to the per-message engine for a null
    (malformed) one, as the string tables answer."""
    tags = [t for t in atom_rules.STRING_TAGS if modes[t] == atom_rules.CONST]
    if not tags:
        return modes, table
    size = len(dictionary)
    if table is _NO_STRINGS:
        table = np.full((3, size), atom_rules.BACK, np.int8)
    sound = np.asarray(dictionary.is_valid().to_numpy(zero_copy_only=False))
    modes = modes.copy()
    for tag in tags:
        modes[tag] = atom_rules.STRINGS
        table[atom_rules.STRING_VARIANT[tag], :size] = np.where(
            sound, consts[tag], atom_rules.BACK)
    return modes, table


def _by_value(compiled: Any, rules: Any, arrays: Any, rc: Any, seen: dict) -> tuple:
    """Resolve the tags an atom answers per value (``DATA``) for this batch: the
    distinct values of the rows of such a tag, each run once. A tag whose values
    all agree is constant; the tags of one child share its value table where
    they agree value for value (else the rarer goes row by row). NaN, -0.0 and
    the infinities have their own entries already."""
    from . import scan
    modes, consts = rules.modes.copy(), rules.consts.copy()
    values = list(_NO_VALUES)
    counts = seen.get("counts")   # per field and batch, whatever its atoms
    if counts is None:
        counts = seen["counts"] = scan.histogram(arrays.tags)
    children = ((arrays.i, arrays.iv), (arrays.u, arrays.uv), (arrays.f, arrays.fv))
    tables: list[dict | None] = [None, None, None]   # per child: value -> outcome
    for tag in sorted(rules.data_tags, key=lambda t: -counts[t]):   # the commonest first
        modes[tag] = atom_rules.FALLBACK
        if not counts[tag]:
            continue
        domain = atom_rules.DOMAIN_OF_TAG[tag]
        present = seen.get(tag)
        if present is None:
            present = scan.gather(arrays.tags, tag, *children[domain])
            if domain == 2:   # the specials are pseudo tags; dropped before np.unique,
                # which merges 0.0 into -0.0 (and 0.0 would go with it)
                present = present[np.isfinite(present) & ~((present == 0) & np.signbit(present))]
            present = np.unique(present)
            seen[tag] = present
        if len(present) > atom_rules.MAX_DISTINCT:
            continue
        outcomes = oracle.value_outcomes(compiled, tag, present, rc)
        if len(outcomes) and (outcomes == outcomes[0]).all():
            modes[tag], consts[tag] = atom_rules.CONST, outcomes[0]
            continue
        # tags of one child share its value table where they agree value for value
        table = dict(zip(present.tolist(), outcomes.tolist()))
        merged = tables[domain]
        if merged is not None and any(merged.get(v, o) != o for v, o in table.items()):
            continue
        tables[domain] = table if merged is None else {**merged, **table}
        modes[tag] = _VALUES_MODE[domain]
    dtypes = (np.int64, np.uint64, np.float64)
    for domain, table in enumerate(tables):
        if table:
            keys = sorted(table)
            values[2 * domain] = np.array(keys, dtypes[domain])
            values[2 * domain + 1] = np.array([table[k] for k in keys], np.int8)
    return modes, consts, values
