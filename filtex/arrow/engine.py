"""The batch engine: any filter over a message table, kernels where they exist.

``evaluate(filter, data)`` plans the filter once (``plan/prepared.py``), takes
each atom's decisions per type tag from the plan (``plan/atoms.py``), runs
the compiled kernel of the filter's shape over every record batch, and
evaluates the rows the kernel handed back (residual entries, tags whose
values it cannot read, tables whose tags and children disagree) with the
per-message engine over row views. A filter with no kernel form runs row by
row. The result says how many rows took the per-message path, and why when
the whole filter did.

A table may come from a stranger: each batch is first cut down to the columns
and struct members the filter reads, and each of them validated by Arrow
(``guard.sound``: sizes and lengths, no values read). A batch where one of
them is broken (a child shorter than its struct, a buffer too small, a
section that is not a struct, a key twice) cannot be read at all: every row
is unknown. Values are checked where they are read (``columns.py``,
``rows.py``): a malformed row is unknown.
"""
from __future__ import annotations

from typing import Any, Literal, Mapping, NamedTuple, TypedDict, Unpack

import numpy as np
import pyarrow as pa

from ..plan import intervals, oracle
from ..plan import atoms as atom_rules
from ..plan.prepared import PreparedPlan, prepared
from . import kernel as kernels
from ..table import guard
from .columns import back_rows, field_arrays, possible_tags
from ..table.rows import Malformed, read_rows
from ..table.schema import METADATA_KEY, check_version
from .strings import string_table
from ..tree.compiled import CompiledFilter



class BatchOptions(TypedDict, total=False):
    """The keyword options of ``evaluate_batch`` and ``filter_table``: how a flat
    table's columns map to fields (``filtex.arrow``), and threads per batch."""
    mapping: Mapping[str, str | tuple[str, str]] | None
    nulls: Literal["absent", "null"]
    threads: int


class BatchResult(NamedTuple):
    """A filter's verdicts over a table: ``verdicts`` is true, false or null
    (unknown) per row; ``fallback_rows`` counts the rows the per-message engine
    evaluated; ``reason`` says why the filter has no kernel form (None when it
    has one)."""
    verdicts: pa.BooleanArray
    fallback_rows: int
    reason: str | None = None

    @property
    def kernel(self) -> bool:
        return self.reason is None


def _readonly(array: np.ndarray) -> np.ndarray:
    """One array type per argument (numba compiles per signature)."""
    if array.flags.writeable:
        array = array.view()
        array.flags.writeable = False
    return array


def _batches(data: pa.Table | pa.RecordBatch, mapping: Any, nulls: str) -> list[pa.RecordBatch]:
    """The message table batches of ``data``; a flat table (no message table
    metadata, or a ``mapping`` given) is laid out as one first (``flat.py``)."""
    if not isinstance(data, (pa.Table, pa.RecordBatch)):
        raise TypeError(f"a message table is a pyarrow Table or RecordBatch, "
                        f"not {type(data).__name__}")
    meta = data.schema.metadata or {}
    if mapping is not None or METADATA_KEY not in meta:
        from ..table.flat import message_batch_of
        batches = data.to_batches() if isinstance(data, pa.Table) else [data]
        return [message_batch_of(b, mapping, nulls=nulls) for b in batches]
    check_version(data.schema)
    return data.to_batches() if isinstance(data, pa.Table) else [data]


def evaluate(flt: CompiledFilter, data: pa.Table | pa.RecordBatch,
             receiving_connection: object = None,
             *, mapping: Mapping[str, str | tuple[str, str]] | None = None,
             nulls: Literal["absent", "null"] = "absent", threads: int = 1) -> BatchResult:
    """The filter's verdict for every row of a message table, or of a flat table
    whose columns are fields (``mapping``, ``nulls``: see ``flat.py``). ``threads``
    splits large batches among that many threads (the kernels release the GIL;
    1 by default, as in a Spark task or a broker already using its cores)."""
    batches = _batches(data, mapping, nulls)
    ready = prepared(flt)
    parts, held = [], 0
    for batch in batches:
        batch, broken = _narrow(batch, ready.columns)
        if broken is not None:   # nothing of it can be read: every row is unknown
            parts.append(pa.nulls(batch.num_rows, pa.bool_()))
        elif ready.plan.shape is None:
            verdicts = _row_by_row(flt, batch, np.arange(batch.num_rows), receiving_connection)
            parts.append(pa.array(verdicts, pa.bool_()))
            held += batch.num_rows
        else:
            verdicts, count = _kernel_batch(flt, ready, batch, receiving_connection, threads)
            parts.append(verdicts)
            held += count
    if not parts:
        verdicts = pa.array([], pa.bool_())
    elif len(parts) == 1:
        verdicts = parts[0]
    else:
        verdicts = pa.concat_arrays(parts)
    return BatchResult(verdicts, held, ready.plan.reason)


def _kernel_batch(flt: Any, ready: PreparedPlan, batch: pa.RecordBatch,
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
        for child, tags in _BYTES_TAGS.items():
            if (rules.modes[tags] != atom_rules.FALLBACK).any():
                deep.setdefault(compiled.field, set()).add(child)
    for index, compiled in enumerate(ready.atoms):
        field = compiled.field
        if compiled.atom.arith is not None:   # arithmetic over several fields
            args.append(_ArithArgs(compiled.atom.arith, ready.operand_tags[index], [
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
                if isinstance(atom_args, _ArithArgs):
                    atom_args.run(out[lo:hi], lo, hi)
                else:
                    atom_pass(out[lo:hi], *_rows_of(atom_args, lo, hi))
            return combine(hi - lo, back[lo:hi], out_v[lo >> 6:], out_k[lo >> 6:],
                           *[_readonly(out[lo:hi]) for out in outcomes])
        held = _in_parallel(rows, n, threads)
    if held:
        rows = np.flatnonzero(back)
        verdicts = _row_by_row(flt, batch, rows, rc)
        known = np.array([v is not None for v in verdicts], bool)
        true = np.array([v is True for v in verdicts], bool)
        kb, vb = out_k.view(np.uint8), out_v.view(np.uint8)
        for bits, which in ((kb, rows[known]), (vb, rows[true])):
            np.bitwise_or.at(bits, which >> 3, (1 << (which & 7)).astype(np.uint8))
    array = pa.BooleanArray.from_buffers(pa.bool_(), n, [pa.py_buffer(out_k),
                                                         pa.py_buffer(out_v)])
    return array, int(held)


_BYTES_TAGS = {"x": [13, 14, 15, 18, 19], "e": [22, 23, 24, 25]}
"""Tags of the ``x`` and ``e`` children, which the kernels never read."""


def _arrays(columns: dict, batch: pa.RecordBatch, field: tuple, deep: set | None) -> Any:
    """A field's arrays, made once per batch whatever number of atoms read it."""
    found = columns.get(field)
    if found is None:
        found = columns[field] = field_arrays(batch, field, deep)
    return found


class _ArithArgs:
    """An arithmetic atom's pass and its fields' arrays."""

    def __init__(self, form: Any, ok: np.ndarray, fields: list) -> None:
        self.form, self.ok, self.fields = form, ok, fields

    def run(self, out: np.ndarray, lo: int, hi: int) -> None:
        ints = intervals.as_arrays(self.form.intervals[0], np.int64)
        doubles = intervals.as_arrays(self.form.intervals[2], np.float64)
        arrays = [_readonly(a) for f in self.fields for a in _rows_of(
            (f.tags, f.i, f.iv, f.f, f.fv), lo, hi, (0, 1, 3), (2, 4))]
        kernels.arith_pass(self.form)(out, _readonly(self.ok), _readonly(ints),
                                      _readonly(doubles), *arrays)


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
        out.append(_readonly(array))
    return out


PARALLEL_ROWS = 1 << 18
"""A batch is split among threads only past this many rows a thread."""


def _in_parallel(rows: Any, n: int, threads: int) -> int:
    """``rows(lo, hi)`` over 0..n in ``threads`` ranges at once (the kernels
    release the GIL), summing what they return."""
    threads = max(1, min(threads, n // PARALLEL_ROWS))
    if threads == 1:
        return rows(0, n)
    from concurrent.futures import ThreadPoolExecutor
    step = ((n + threads - 1) // threads + 63) & ~63
    bounds = [(lo, min(lo + step, n)) for lo in range(0, n, step)]
    with ThreadPoolExecutor(len(bounds)) as pool:
        return sum(pool.map(lambda b: rows(*b), bounds))


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


def _narrow(batch: pa.RecordBatch, columns: dict[str, set | None] | None
            ) -> tuple[pa.RecordBatch, str | None]:
    """The batch with only the columns, and struct members, a filter reads (all
    when ``columns`` is None), each validated by Arrow; and why it cannot be
    read at all (None when it can). Row views of it read exactly what the
    filter would read of the whole row."""
    n = batch.num_rows
    arrays, fields = [], []
    for index, field in enumerate(batch.schema):
        if columns is not None and field.name not in columns:
            continue
        array = batch.column(index)
        wanted = None if columns is None else columns[field.name]
        if len(array) != n:
            return batch, f"column {field.name!r} is not as long as the batch"
        if wanted is not None:   # a section: a struct, of which some members
            if not pa.types.is_struct(field.type):
                return batch, f"column {field.name!r} is {field.type}, not a struct"
            array, why = _members(array, field.name, wanted)
            if why is not None:
                return batch, why
            if array is None:
                continue
            field = field.with_type(array.type)
        else:
            why = guard.sound(array)
            if why is not None:
                return batch, f"column {field.name!r}: {why}"
        arrays.append(array)
        fields.append(field)
    if not arrays:   # a filter that reads nothing: a column keeps the row count
        arrays, fields = [pa.nulls(n, pa.null())], [pa.field("none", pa.null())]
    return pa.RecordBatch.from_arrays(
        arrays, schema=pa.schema(fields, metadata=batch.schema.metadata)), None


def _members(array: pa.Array, name: str, wanted: set) -> tuple[pa.Array | None, str | None]:
    """The members ``wanted`` of a struct column, each validated by Arrow (None
    when it has none of them), or why they cannot be read."""
    typ = array.type
    names = [typ.field(i).name for i in range(typ.num_fields)]
    keep = [i for i, member in enumerate(names) if member in wanted]
    if not keep:
        return None, None
    twice = next((names[i] for i in keep if names.count(names[i]) > 1), None)
    if twice is not None:
        return None, f"column {name!r} has the key {twice!r} twice"
    bitmap = array.buffers()[0]
    if bitmap is not None and bitmap.size * 8 < array.offset + len(array):
        return None, f"column {name!r}: its validity bitmap is too small"
    children = []
    for i in keep:
        child = array.field(i)
        why = ("shorter than the column" if len(child) != len(array)
               else guard.sound(child))
        if why is not None:
            return None, f"column {name!r}, key {names[i]!r}: {why}"
        children.append(child)
    narrowed = pa.StructArray.from_arrays(
        children, fields=[typ.field(i) for i in keep],
        mask=array.is_null() if array.null_count else None)
    return narrowed, None


def _row_by_row(flt: Any, batch: pa.RecordBatch, rows: np.ndarray, rc: Any) -> list:
    """The per-message engine on some rows of a (narrowed) batch; a row that
    cannot be read is unknown."""
    evaluate = flt.evaluate
    out: list[bool | None] = []
    for view in read_rows(batch, rows):
        if isinstance(view, Malformed):
            out.append(None)
            continue
        try:
            out.append(evaluate(view, rc))
        except Exception:   # the per-message function does not raise; if it did: unknown
            out.append(None)
    return out


def evaluate_batch(flt: CompiledFilter, data: pa.Table | pa.RecordBatch,
                   receiving_connection: object = None,
                   **options: Unpack[BatchOptions]) -> pa.BooleanArray:
    """True, false or null (unknown) per row."""
    return evaluate(flt, data, receiving_connection, **options).verdicts


def filter_table(flt: CompiledFilter, table: pa.Table | pa.RecordBatch,
                 receiving_connection: object = None,
                 **options: Unpack[BatchOptions]) -> pa.Table:
    """The rows the filter matches (true; false and unknown are dropped), as they
    are in ``table`` (a flat table stays flat). A matching row that cannot be
    copied (a column the filter does not read whose offsets lie there) is a
    ``ValueError`` naming it, never a read out of bounds."""
    verdicts = evaluate(flt, table, receiving_connection, **options).verdicts
    rows = np.flatnonzero(verdicts.fill_null(False).to_numpy(zero_copy_only=False))
    why = guard.uncopyable(table, rows)
    if why is not None:
        raise ValueError(f"a matching row cannot be copied: {why}")
    try:
        return table.filter(verdicts)
    except pa.ArrowNotImplementedError as exc:   # a type pyarrow cannot take (views in structs)
        raise ValueError(f"the matching rows cannot be copied: {exc}") from None
