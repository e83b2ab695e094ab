"""The fused batch engine: one kernel pass per batch, whatever the filter.

Lowered from the predicate plan (``plan/``), like the pass-per-atom engine
(``passes.py``), which stays as the reference it is checked against. Per batch:

1. every field the atoms read becomes a *view* of its Arrow buffers, without a
   copy: a tag per row (a VALUE struct) or a validity bitmap and one tag (a
   typed header or properties field, read in its own width), its children,
   validity bitmaps as 64-bit words;
2. every atom's tag plan (``plan/atoms.TagPlan``) becomes *groups*: the tags it
   answers the same way (one constant, the string tags' table over the batch's
   dictionary, the boolean table, intervals over a child, learned values) and
   the child whose validity their rows need: the groups depend on the schema
   and the plan, never on the batch's values, so a stream's batches share one
   kernel; each group's parameters are arguments (constants, tables, intervals,
   the float specials' answers, the value tables learned so far);
3. the fused kernel of the filter's signature (``fused_source.py``: the shape,
   the fields, the groups) computes every row's verdict in one pass and marks
   the rows it cannot answer;
4. rows of a tag answered per value (``DATA``) whose value is not learned yet
   are the only ones whose values are read apart: their distinct values are
   run once by the per-message engine (``oracle.value_outcomes``), kept in the
   plan for later batches, and the kernel runs again if any was new;
5. the rows still marked (residual entries, malformed rows, tags the plan
   leaves to the per-message engine) are evaluated by the per-message engine
   over row views, as in the pass-per-atom engine: the same rows, the same
   count in ``fallback_rows``.
"""
from __future__ import annotations

import hashlib
import math
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..plan import atoms as atom_rules
from ..plan import intervals, oracle
from ..plan.atoms import (BACK, BOOLS, CONST, DATA, DOUBLES, INTS, STRING_TAGS, STRING_VARIANT,
                          UINTS)
from ..plan.prepared import PreparedPlan
from ..table import guard
from ..table.schema import (CHILD_OF_TAG, DOUBLE, FLOAT, HEADER_TYPES, PROPERTIES_TYPES,
                            SCALAR_TAGS, TIMESTAMP)
from . import fused_source as fs
from ..codegen import modules
from .columns import (FieldArrays, _bits, _column, _member, _strings, _Unreadable, _values,
                      back_rows, checked_children, field_arrays, possible_tags,
                      residuals)
from .parallel import (bit_of, in_parallel, readonly, rows_of_words, set_verdicts,
                       verdict_array)
from .row_path import row_by_row
from .strings import string_table

_TYPED = {**HEADER_TYPES, **PROPERTIES_TYPES}
_CLASS_OF_MODE = {INTS: fs.INTS, UINTS: fs.UINTS, DOUBLES: fs.DOUBLES, BOOLS: fs.BOOLS}
_VALUES_CLASS = {"i": fs.VALUES_I, "u": fs.VALUES_U, "f": fs.VALUES_F}
_VALUES_KINDS = set(_VALUES_CLASS.values())
_DTYPES = {"i": np.int64, "u": np.uint64, "f": np.float64}
_VALUE_CHILD = {tag: child for tag, child in CHILD_OF_TAG.items() if child in _DTYPES}
"""The child of each tag answerable per value (``DATA``)."""
_FLOAT_SPECIALS = [(tag, j) for tag in (FLOAT, DOUBLE) for j in range(4)]


def words(bitmap: np.ndarray, n: int) -> np.ndarray:
    """A byte bitmap (bit r = row r) as int64 words, zero-padded to whole words."""
    count = max((n + 63) >> 6, 1)
    if len(bitmap) >= 8 * count and bitmap.ctypes.data % 8 == 0:
        return readonly(bitmap[:8 * count].view(np.int64))
    base = bitmap.base   # a view of an Arrow buffer (padded to 64 bytes): read in place
    if isinstance(base, np.ndarray) and base.dtype == np.uint8 and base.ndim == 1 \
            and bitmap.ctypes.data % 8 == 0:
        start = bitmap.ctypes.data - base.ctypes.data
        if 0 <= start and start + 8 * count <= len(base):   # the bits past n are never read
            return readonly(base[start:start + 8 * count].view(np.int64))
    out = np.zeros(8 * count, np.uint8)
    size = min(len(bitmap), 8 * count)
    out[:size] = bitmap[:size]
    return readonly(out.view(np.int64))


class View(NamedTuple):
    """What the kernel reads of one field: ``tags`` (uint8 per row), or for a
    typed field ``valid`` (words) and its one ``tag``; ``children``: name ->
    (values, validity words), for ``b`` (value words, validity words)."""
    tags: np.ndarray | None
    valid: np.ndarray | None
    tag: int
    children: dict[str, tuple[np.ndarray, np.ndarray]]
    dictionary: pa.Array | None


def _typed_view(member: pa.Array, tag: int, layout: pa.DataType) -> View:
    """A typed header or properties field, zero-copy: raises ``_Unreadable``
    for a column of another type (then it is read as ``columns.py`` reads it)."""
    n = len(member)
    valid = words(_bits(None if member.null_count == 0 else member.buffers()[0],
                        member.offset, n), n)
    typ = member.type
    if tag in (16, 20, 21):
        c, cv, dictionary = _strings(member)
        return View(None, valid, tag, {"s": (readonly(c), words(cv, n))}, dictionary)
    if tag == 2:
        if not pa.types.is_boolean(typ):
            raise _Unreadable
        return View(None, valid, tag, {"b": (words(_bits(member.buffers()[1], member.offset, n),
                                                   n), valid)}, None)
    if tag == TIMESTAMP:
        if not pa.types.is_timestamp(typ) or typ.unit != "ms":
            raise _Unreadable
        return View(None, valid, tag, {"i": (readonly(_values(member, np.int64)), valid)}, None)
    if typ != layout or not pa.types.is_integer(typ):
        raise _Unreadable
    return View(None, valid, tag, {"i": (readonly(_values(member, typ.to_pandas_dtype())),
                                         valid)}, None)


def _view_of(arrays: FieldArrays, n: int) -> View:
    children: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, values, valid in (("i", arrays.i, arrays.iv), ("u", arrays.u, arrays.uv),
                                ("f", arrays.f, arrays.fv), ("s", arrays.c, arrays.cv)):
        if len(values) == n:
            children[name] = (readonly(values), words(valid, n))
    if len(arrays.b):
        children["b"] = (words(arrays.b, n), words(arrays.bv, n))
    return View(readonly(arrays.tags), None, 0, children, arrays.dictionary)


FieldRef = tuple[str, Any]


def view(batch: pa.RecordBatch, field: FieldRef, deep: set[str] | None) -> View:
    """The kernel's view of ``field`` in ``batch`` (its columns sound: ``guard``)."""
    n = batch.num_rows
    section, key = field
    if section in ("header", "properties") and key in _TYPED and not deep:
        struct = _column(batch, section)
        member = None if struct is None else _member(struct, key)
        if member is not None:
            try:
                return _typed_view(member, SCALAR_TAGS[_TYPED[key][0]], _TYPED[key][1])
            except _Unreadable:
                pass   # read below: every row to the per-message engine
    return _view_of(field_arrays(batch, field, deep), n)


class Lowered(NamedTuple):
    """One atom's kernel signature and arguments for a batch."""
    signature: fs.AtomSignature
    args: list[Any]
    data_tags: list[int]


def _spans(array: np.ndarray) -> tuple[int, np.ndarray]:
    count = len(array)
    kept = array if count else np.zeros((1, 2), array.dtype)
    return (count if count <= fs.MAX_UNROLLED else -1), readonly(np.ascontiguousarray(kept))


def digest(array: pa.Array) -> bytes:
    """A digest of a string array's content (entries and nulls), whatever its
    offset in its buffers: equal content, equal digest."""
    n = len(array)
    validity = np.packbits(guard.valid_rows(array), bitorder="little")
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, np.int32)[array.offset: array.offset + n + 1]
    hasher = hashlib.blake2b(digest_size=20)
    hasher.update(n.to_bytes(8, "little"))
    hasher.update(validity.tobytes())
    hasher.update((offsets - offsets[0]).astype("<i8").tobytes())
    if data_buffer is not None and n:
        hasher.update(memoryview(data_buffer)[int(offsets[0]):int(offsets[-1])])
    return hasher.digest()


def _string_rows(ready: PreparedPlan, index: int, rules: Any, tags: list[int],
                 dictionary: pa.Array | None, rc: Any) -> np.ndarray:
    """``_string_table``, kept per dictionary content (``PreparedPlan.tables``)."""
    if dictionary is None or not len(dictionary):
        return _string_table(ready.atoms[index], rules, tags, dictionary, rc)
    try:
        key = ("strings", index, tuple(tags), rc, digest(dictionary))
        hash(key)
    except TypeError:   # an unhashable receiving connection: not kept
        return _string_table(ready.atoms[index], rules, tags, dictionary, rc)
    found: np.ndarray | None = ready.tables.get(key)
    if found is None:
        found = _string_table(ready.atoms[index], rules, tags, dictionary, rc)
        ready.tables.put(key, found)
    return found


def _string_table(compiled: Any, rules: Any, tags: list[int], dictionary: pa.Array | None,
                  rc: Any) -> np.ndarray:
    """The atom's outcome per (tag of ``tags``, dictionary entry), a row per tag
    in their order and a last column of BACK for codes outside the dictionary."""
    size = 0 if dictionary is None else len(dictionary)
    # int32 lets the kernel's loop gather entries in vector lanes; a large
    # dictionary's table in bytes stays in cache
    table = np.full((len(tags), size + 1), BACK,
                    np.int32 if size <= LARGE_DICTIONARY else np.int8)
    if size:
        variants = string_table(compiled, rules, dictionary, rc)
        for k, tag in enumerate(tags):
            table[k, :size] = variants[STRING_VARIANT[tag], :size]
    return table


def _how(tag: int, rules: Any) -> tuple[int, str | None, int] | None:
    """How the atom answers ``tag``: (group kind, child, constant), or None
    when the per-message engine does (FALLBACK)."""
    mode = int(rules.modes[tag])
    child = CHILD_OF_TAG[tag]
    if tag in STRING_TAGS and mode == CONST:
        return fs.ONE_STRING, "s", int(rules.consts[tag])
    if tag in STRING_TAGS and mode == atom_rules.STRINGS:
        return fs.STRINGS, "s", 0
    if mode == CONST:
        return fs.CONSTANT, (child if child in _DTYPES or child == "b" else None), \
            int(rules.consts[tag])
    if mode in _CLASS_OF_MODE:
        return _CLASS_OF_MODE[mode], child, 0
    if mode == DATA and child in _DTYPES:
        return _VALUES_CLASS[child], child, 0
    return None


def lower(ready: PreparedPlan, index: int, field_view: View, tags: frozenset[int],
          rc: Any) -> Lowered:
    """Atom ``index``'s signature and arguments over ``field_view``: its tags
    grouped by how they are answered, and each group's parameters."""
    rules = ready.tag_plan(index, tags, rc)
    has = field_view.children
    keyed: dict[tuple[int, str | None, int], list[int]] = {}
    strings = []
    for tag in sorted(t for t in tags if t < 26):
        how = _how(tag, rules)
        if how is None or (how[1] is not None and how[1] not in has):
            continue
        if how[0] == fs.STRINGS:
            strings.append(tag)
        else:
            keyed.setdefault(how, []).append(tag)
    table = None   # the string tags answered per entry: a group each, its row of the table
    if strings:
        table = _string_rows(ready, index, rules, strings, field_view.dictionary, rc)
        for k, tag in enumerate(strings):
            keyed[(fs.STRINGS, "s", k)] = [tag]
    dictionary = field_view.dictionary
    size = 0 if dictionary is None else len(dictionary)
    # a string tag answered by a constant: for the codes inside the dictionary (none when
    # the dictionary holds a null entry: malformed, the per-message engine says so)
    inside = size + 1 if dictionary is None or not dictionary.null_count else 1
    order = sorted(keyed, key=lambda k: keyed[k])
    groups = tuple(fs.Group(tuple(keyed[key]), key[0], key[1]) for key in order)
    source = "t" if field_view.tags is not None else f"v{field_view.tag}"
    args: list[Any] = [readonly(np.array(
        [key[2] if key[0] in (fs.CONSTANT, fs.ONE_STRING) else 0 for key in order] or [0],
        np.int64))]
    kinds = {g.how for g in groups}
    for key in order:
        if key[0] == fs.STRINGS and table is not None:   # its tag's row
            args += [readonly(table[key[2]]), table.shape[1]]
        elif key[0] == fs.ONE_STRING:
            args.append(inside)
    if fs.BOOLS in kinds:
        args.append(readonly(rules.bools.astype(np.int64)))
    ints = uints = doubles = None
    if fs.INTS in kinds:
        ints, spans = _spans(rules.ints)
        args.append(spans)
    if fs.UINTS in kinds:
        uints, spans = _spans(rules.uints)
        args.append(spans)
    if fs.DOUBLES in kinds:
        doubles, spans = _spans(rules.doubles)
        args.append(spans)
    specials, which = _specials(rules, groups, keyed)
    if which:
        args.append(readonly(specials))
    data_tags = [t for g in groups if g.how in _VALUES_KINDS for t in g.tags]
    signature = fs.AtomSignature(source, groups, -1, ints, uints, doubles, which,
                                 any(g.child == "f" and g.how in (fs.DOUBLES, fs.VALUES_F)
                                     for g in groups))
    for child in fs.value_kinds(signature):
        args += _value_table(ready, index, [t for t in data_tags if _VALUE_CHILD[t] == child],
                             child, rc)
    return Lowered(signature, args, data_tags)


LARGE_DICTIONARY = 1 << 14
"""Past this many entries a string table is held in bytes (cache), not in int32s."""

_SPECIAL_VALUES = (math.nan, -0.0, math.inf, -math.inf)


def _specials(rules: Any, groups: tuple[fs.Group, ...],
              keyed: dict[tuple[int, str | None, int], list[int]]
              ) -> tuple[np.ndarray, tuple[int, ...]]:
    """The atom's outcome for NaN, -0.0 and the infinities of a float and a
    double (pseudo tags), and which of the four the kernel must look for: those
    where the kernel's own answer (the group's constant, or the intervals,
    where NaN is in none) is not the atom's."""
    table = np.full(8, BACK, np.int64)
    for k, (tag, j) in enumerate(_FLOAT_SPECIALS):
        pseudo = atom_rules.PSEUDO_BASE + 4 * (tag - FLOAT) + j
        if rules.modes[pseudo] == CONST:
            table[k] = rules.consts[pseudo]
    constant = {t: const for (how, _, const), found in keyed.items()
                if how == fs.CONSTANT for t in found}   # (strings: never float tags)
    how_of = {t: g.how for g in groups for t in g.tags}
    needed: set[int] = set()
    for k, (tag, j) in enumerate(_FLOAT_SPECIALS):
        how = how_of.get(tag)
        if how is None:
            continue
        if how == fs.CONSTANT:
            normal = constant[tag]
        elif how == fs.DOUBLES:
            value = _SPECIAL_VALUES[j]
            inside = any(lo <= value <= hi for lo, hi in rules.doubles.tolist())
            normal = atom_rules.TRUE if inside else atom_rules.FALSE
        else:
            normal = -1   # answered per value: a special is never in the value table
        if int(table[k]) != normal:
            needed.add(j)
    return table, tuple(sorted(needed))


def _value_table(ready: PreparedPlan, index: int, tags: list[int], child: str,
                 rc: Any) -> list[np.ndarray]:
    """The values learned for the atom's tags of one child, sorted by (tag, value)."""
    keys_t: list[int] = []
    keys_v: list[Any] = []
    outs: list[int] = []
    for tag in sorted(tags):
        learned = ready.learned.get((index, tag, rc), {})
        for value in sorted(learned):
            keys_t.append(tag)
            keys_v.append(value)
            outs.append(learned[value])
    return [readonly(np.array(keys_t, np.int64)), readonly(np.array(keys_v, _DTYPES[child])),
            readonly(np.array(outs, np.int64))]


def _learn(ready: PreparedPlan, index: int, lowered: Lowered, field_view: View,
           rows: np.ndarray, rc: Any) -> bool:
    """Learn the outcomes of the distinct values the marked ``rows`` hold under
    the atom's per-value tags; whether any was new."""
    if field_view.tags is not None:
        tags_at = field_view.tags[rows]
    else:
        tags_at = np.where(bit_of(field_view.valid, rows), field_view.tag, 0)
    new_any = False
    compiled = ready.atoms[index]
    for tag in lowered.data_tags:
        child = _VALUE_CHILD[tag]
        values, valid = field_view.children[child]
        at = rows[tags_at == tag]
        at = at[bit_of(valid, at)]
        if not len(at):
            continue
        present = values[at]
        if child == "f":   # the specials have their own entries (pseudo tags)
            present = present[np.isfinite(present) & ~((present == 0) & np.signbit(present))]
        key = (index, tag, rc)
        with ready.lock:
            learned = ready.learned.setdefault(key, {})
        new = [v for v in np.unique(present).tolist() if v not in learned]
        if not new or len(learned) + len(new) > atom_rules.MAX_DISTINCT:
            continue
        outcomes = oracle.value_outcomes(compiled, tag, np.array(new, _DTYPES[child]), rc)
        with ready.lock:
            learned.update(zip(new, outcomes.tolist()))
        new_any = True
    return new_any


def _deep(ready: PreparedPlan, schema: pa.Schema, rc: Any) -> dict[FieldRef, set[str]]:
    """Per field: its ``x``/``e`` children some atom answers by tag alone (their
    bytes are checked, as ``columns.field_arrays`` does)."""
    deep: dict[FieldRef, set[str]] = {}
    for index, compiled in enumerate(ready.atoms):
        if compiled.atom.arith is not None:
            continue
        rules = ready.tag_plan(index, frozenset(possible_tags(schema, compiled.field)), rc)
        found = checked_children(rules.modes, atom_rules.FALLBACK)
        if found:
            deep.setdefault(compiled.field, set()).update(found)
    return deep


def _fields(fields: dict[FieldRef, int], views: dict[FieldRef, View], lowered: list[Lowered]
            ) -> tuple[tuple[fs.FieldSignature, ...], list[Any]]:
    """Each field's signature (the children any of its atoms reads) and arrays."""
    signatures, args = [], []
    for field, f in fields.items():
        field_view = views[field]
        used = {c for low in lowered if low.signature.field == f
                for c in fs.children(low.signature)}
        order = tuple(c for c in "iufbs" if c in used)
        signatures.append(fs.FieldSignature(
            "t" if field_view.tags is not None else f"v{field_view.tag}", order))
        args.append(field_view.tags if field_view.tags is not None else field_view.valid)
        for child in order:
            args += list(field_view.children[child])
    return tuple(signatures), args


def evaluate_batch(flt: Any, ready: PreparedPlan, batch: pa.RecordBatch, rc: Any,
                   threads: int = 1) -> tuple[pa.BooleanArray, int]:
    """(verdicts, rows the per-message engine evaluated) for one narrowed batch."""
    n = batch.num_rows
    if not n:
        return pa.array([], pa.bool_()), 0
    schema = batch.schema
    deep = _deep(ready, schema, rc)
    views: dict[FieldRef, View] = {}
    arith_columns: dict[FieldRef, FieldArrays] = {}
    forms: dict[str, Any] = {}
    lowered: list[Lowered] = []
    fields: dict[FieldRef, int] = {}   # the fields atoms read, in first-read order
    for index, compiled in enumerate(ready.atoms):
        form = compiled.atom.arith
        if form is not None:   # computed in the kernel's loop from its operands' arrays
            args: list[Any] = [readonly(ready.operand_tags[index]),
                               readonly(intervals.as_arrays(form.intervals[0], np.int64)),
                               readonly(intervals.as_arrays(form.intervals[2], np.float64))]
            for f in form.fields:
                if f not in arith_columns:
                    arith_columns[f] = field_arrays(batch, f, None)
                a = arith_columns[f]
                args += [readonly(x) for x in (a.tags, a.i, a.iv, a.f, a.fv)]
            forms[form.shape()] = form
            lowered.append(Lowered(fs.AtomSignature("x", form=form.shape(),
                                                    operands=len(form.fields)), args, []))
            continue
        field = compiled.field
        if field not in views:
            views[field] = view(batch, field, deep.get(field))
            fields[field] = len(fields)
        low = lower(ready, index, views[field], frozenset(possible_tags(schema, field)), rc)
        lowered.append(low._replace(signature=low.signature._replace(field=fields[field])))
    field_sigs, field_args = _fields(fields, views, lowered)
    signatures = tuple(low.signature for low in lowered)
    shape = ready.plan.shape
    assert shape is not None
    kernel = modules.cached(("fused", shape, field_sigs, signatures),
                            lambda: fs.source(shape, field_sigs, signatures, forms), "kernel")
    count = (n + 63) >> 6
    residual = np.zeros(8 * count, np.uint8)   # rows with residual entries: back
    if residuals(batch, ready.plan.fields):   # (rare: no pass over the rows otherwise)
        residual[:(n + 7) >> 3] = np.packbits(back_rows(batch, ready.plan.fields),
                                              bitorder="little")
    residual_words = readonly(residual.view(np.int64))
    out_v, out_k, out_b = (np.zeros(count, np.int64) for _ in range(3))

    def run(args: list[Any]) -> None:
        def words_of(lo: int, hi: int) -> int:
            return int(kernel(lo >> 6, (hi + 63) >> 6, n, residual_words, out_v, out_k, out_b,
                              *args))
        in_parallel(words_of, n, threads)

    run(field_args + [a for low in lowered for a in low.args])
    if any(low.data_tags for low in lowered) and out_b.any():
        rows = rows_of_words(out_b)
        new = False
        for index, low in enumerate(lowered):
            if low.data_tags:
                field_view = views[ready.atoms[index].field]
                new |= _learn(ready, index, low, field_view, rows, rc)
        if new:   # the value tables grew: once more, with them
            lowered = [low if not low.data_tags else low._replace(args=lower(
                ready, index, views[ready.atoms[index].field],
                frozenset(possible_tags(schema, ready.atoms[index].field)), rc).args)
                for index, low in enumerate(lowered)]
            run(field_args + [a for low in lowered for a in low.args])
    rows = rows_of_words(out_b)
    rows = rows[rows < n]
    if len(rows):
        set_verdicts(out_v, out_k, rows, row_by_row(flt, batch, rows, rc))
    return verdict_array(n, out_v, out_k), len(rows)

