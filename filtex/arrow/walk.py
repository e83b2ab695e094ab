"""Filters evaluated on encoded messages while walking them: no columns built.

For a binary column of AMQP messages, ``evaluate_walked`` runs one kernel
(``walk_source.py``) that locates each message's sections, finds the fields
the filter reads (header and properties fields by number, application
properties by key), skips every other value by its encoded size, and answers
the atoms and the skeleton in the same pass. A filter can be walked when every
atom reads one header, properties or application-properties field, and every
tag it answers by more than a constant has a byte-level form: booleans,
intervals over integers, unsigned longs and doubles, and strings through their
text form (comparison, IN, LIKE of literal segments and ``%``). Other filters
(bodies, annotations, arithmetic, functions of strings, values answered one by
one) are decoded into columns first (``binary.evaluate_encoded``).

Exactness: the kernel marks every message the column decoder would not decode
and every tag the plan has no answer for; those rows are evaluated as
``evaluate_encoded`` evaluates any row (decoded, then fused, or by the
per-message engine from their bytes).
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..message import HEADER_FIELDS, PROPERTIES_FIELDS
from ..plan import atoms as atom_rules
from ..plan.atoms import BACK, BOOLS, CONST, DOUBLES, INTS, STRINGS, UINTS
from ..plan.prepared import PreparedPlan
from ..plan.text import text_form
from ..table.schema import CHAR, CHILD_OF_TAG, DOUBLE, FLOAT, STRING, SYMBOL
from ..codegen import modules
from . import walk_source as ws
from . import fused_source as fs
from .fused import _spans, _specials
from .parallel import readonly

_SECTIONS = {"header": "h", "properties": "p", "application_properties": "a", "none": "n"}
_SCALAR_TAGS = frozenset(range(22))
"""Absent, null and every scalar tag ``_value`` reads (composites are marked)."""


@functools.cache
def _typed_want() -> dict[tuple[str, str], int]:
    """The tag each header and properties field must have (0: any), as the decoder
    checks it (imported late: the decoder's module needs numba)."""
    from ..table.decode.primitives import _HEADER_WANT, _PROPERTIES_WANT
    return {**{("header", k): t for k, t in _HEADER_WANT.items()},
            **{("properties", k): t for k, t in _PROPERTIES_WANT.items()}}


class Walk(NamedTuple):
    """A filter lowered for the walking kernel: its places and atoms (the
    signature), the wanted header/properties tags, the keys and the atoms'
    arguments."""
    places: tuple[ws.Place, ...]
    atoms: tuple[ws.WalkAtom, ...]
    want: np.ndarray
    keys: np.ndarray
    key_offsets: np.ndarray
    args: list[Any]


class _NoWalk(Exception):
    """The filter has an atom without a byte-level form."""


def _place(field: tuple[str, Any], places: dict[tuple[str, Any], ws.Place],
           want: list[int]) -> ws.Place:
    section, key = field
    kind = _SECTIONS.get(section)
    if kind is None or (kind in "hpa" and not isinstance(key, str)):
        raise _NoWalk
    if field in places:
        return places[field]
    if kind == "h":
        index = HEADER_FIELDS.index(key)
        want[index] = _typed_want()[field]
    elif kind == "p":
        index = PROPERTIES_FIELDS.index(key)
        want[len(HEADER_FIELDS) + index] = _typed_want()[field]
    elif kind == "a":
        index = sum(1 for p in places.values() if p.kind == "a")
    else:
        index = 0
    places[field] = ws.Place(kind, index)
    return places[field]


def _tags_of(field: tuple[str, Any]) -> frozenset[int]:
    typed = _typed_want().get(field)
    if field[0] == "none":
        return frozenset({0})
    if typed is not None and typed != 0:
        return frozenset({0, typed})
    return _SCALAR_TAGS


def _text(compiled: Any) -> tuple[str, list[bytes], bool]:
    """The atom's text form as the kernel's kind, constants and negation."""
    form = text_form(compiled.atom.node, compiled.atom.semantics)
    if form is None or form.single_line is not None:   # lines: the string tables' kernels
        raise _NoWalk
    if form.kind == "cmp":
        op, text = form.arg
        return op, [text.encode("utf-8")], form.negate
    if form.kind == "in":
        return "in", [t.encode("utf-8") for t in form.arg], form.negate
    segments = []
    for segment in form.arg:
        if any(c is None for c in segment):   # ``_``: one character, not one byte
            raise _NoWalk
        segments.append("".join(segment).encode("utf-8"))
    return "like", segments, form.negate


def _atom(ready: PreparedPlan, index: int, f: int, tags: frozenset[int], rc: Any
          ) -> tuple[ws.WalkAtom, list[Any]]:
    compiled = ready.atoms[index]
    if compiled.atom.arith is not None:
        raise _NoWalk
    rules = ready.tag_plan(index, tags, rc)
    ct = np.full(26, BACK, np.int32)
    bools = False
    ints: list[int] = []
    uints: list[int] = []
    doubles: list[int] = []
    strings: list[int] = []
    for tag in sorted(tags):
        mode = int(rules.modes[tag])
        child = CHILD_OF_TAG[tag]
        if mode == CONST:
            ct[tag] = rules.consts[tag]
        elif mode == BOOLS:
            bools = True
        elif mode == INTS and child == "i":
            ints.append(tag)
        elif mode == UINTS and child == "u":
            uints.append(tag)
        elif mode == DOUBLES and tag in (FLOAT, DOUBLE):
            doubles.append(tag)
        elif mode == STRINGS and tag in (STRING, SYMBOL):
            strings.append(tag)
        elif mode == STRINGS and tag == CHAR:
            pass   # a char's code point, not bytes: marked
        elif mode != atom_rules.FALLBACK:
            raise _NoWalk   # answered value by value: the decoder's path learns them
    args: list[Any] = [readonly(ct)]
    if bools:
        args.append(readonly(rules.bools.astype(np.int64)))
    counts: list[int | None] = []
    for spans, present in ((rules.ints, ints), (rules.uints, uints), (rules.doubles, doubles)):
        if present:
            count, array = _spans(spans)
            counts.append(count)
            args.append(array)
        else:
            counts.append(None)
    # the float specials whose answer is not the kernel's own: the fused kernel's rule
    consts = [t for t in (FLOAT, DOUBLE) if t in tags and rules.modes[t] == CONST]
    keyed: dict[tuple[int, str | None, int], list[int]] = {}
    for t in consts:
        keyed.setdefault((fs.CONSTANT, "f", int(ct[t])), []).append(t)
    groups = tuple(fs.Group(tuple(found), how, child) for (how, child, _), found in keyed.items())
    if doubles:
        groups += (fs.Group(tuple(doubles), fs.DOUBLES, "f"),)
    table, needed = _specials(rules, groups, keyed)
    specials = bool(needed)
    floats = tuple(sorted(consts + doubles))
    if specials:
        args.append(readonly(table))
    text = ""
    if strings:
        text, constants, negate = _text(compiled)
        offsets = np.zeros(len(constants) + 1, np.int64)
        offsets[1:] = np.cumsum([len(c) for c in constants])
        args += [readonly(np.frombuffer(b"".join(constants) + b"\0", np.uint8)),
                 readonly(offsets), int(negate)]
        if text == "like":   # its search loops: one compiled C function for every kernel
            from .bytes_text import like_function
            args.append(like_function())
    atom = ws.WalkAtom(f, bools, tuple(ints), tuple(uints), tuple(doubles), counts[0],
                       counts[1], counts[2], floats if specials else (), specials,
                       tuple(strings), text)
    return atom, args


def lower(ready: PreparedPlan, rc: Any) -> Walk | None:
    """The filter's walk, or None when an atom has no byte-level form."""
    if ready.plan.shape is None:
        return None
    places: dict[tuple[str, Any], ws.Place] = {}
    want = [-1] * (len(HEADER_FIELDS) + len(PROPERTIES_FIELDS))
    atoms: list[ws.WalkAtom] = []
    args: list[Any] = []
    try:
        for index, compiled in enumerate(ready.atoms):
            field = compiled.field
            _place(field, places, want)
            f = list(places).index(field)
            atom, own = _atom(ready, index, f, _tags_of(field), rc)
            atoms.append(atom)
            args += own
    except _NoWalk:
        return None
    keys = [str(key).encode("utf-8") for (section, key), p in places.items() if p.kind == "a"]
    offsets = np.zeros(len(keys) + 1, np.int64)
    offsets[1:] = np.cumsum([len(k) for k in keys])
    return Walk(tuple(places.values()), tuple(atoms), readonly(np.array(want, np.int64)),
                readonly(np.frombuffer(b"".join(keys) + b"\0", np.uint8)),
                readonly(offsets), args)


def walked(ready: PreparedPlan, rc: Any) -> Walk | None:
    """``lower``, kept per receiving connection in the plan (a few at most)."""
    try:
        found: Walk | bool | None = ready.walks.get(rc)
    except TypeError:   # an unhashable receiving connection: not kept
        return lower(ready, rc)
    if found is None:
        found = lower(ready, rc) or False
        with ready.lock:
            if len(ready.walks) > 16:
                ready.walks.clear()
            ready.walks[rc] = found
    return found if isinstance(found, Walk) else None


def run(ready: PreparedPlan, walk: Walk, chunk: pa.Array
        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(value, known, marked) words for one binary chunk."""
    from ..table.decode import walker as wk
    from ..table.decode.column import _buffers
    shape = ready.plan.shape
    assert shape is not None
    kernel = modules.cached(("walk", shape, walk.places, walk.atoms),
                            lambda: ws.source(shape, walk.places, walk.atoms), "kernel")
    raw, offs, bits, bit0 = _buffers(chunk)
    n = len(chunk)
    count = max((n + 63) >> 6, 1)
    out_v, out_k, out_b = (np.zeros(count, np.int64) for _ in range(3))
    if not n:
        return out_v, out_k, out_b
    slots = [p for p in walk.places if p.kind != "n"]
    slot_of = np.full(len(walk.want), -1, np.int64)
    key_slot = np.zeros(max(len(walk.key_offsets) - 1, 1), np.int64)
    lists = 0
    for slot, place in enumerate(slots):
        if place.kind == "h":
            slot_of[place.place] = slot
            lists |= wk.HEADER_LIST
        elif place.kind == "p":
            slot_of[len(HEADER_FIELDS) + place.place] = slot
            lists |= wk.PROPERTIES_LIST
        else:
            key_slot[place.place] = slot
            lists |= wk.APPLICATION_MAP
    state = np.zeros(wk.STATE_SIZE, np.int64)
    state[wk.PREV] = -1
    scratch = [np.zeros(64 * max(len(slots), 1), np.int64) for _ in range(4)]
    frame = np.zeros(wk.FRAME, np.int64)
    # (the arrays the frame points at stay alive until this function returns)
    frame[[wk.D, wk.SIZE, wk.OFFS, wk.SKIP, wk.BITS, wk.HAS_BITS, wk.BIT0, wk.WANT,
           wk.SLOT_OF, wk.LISTS, wk.KB, wk.KLIM, wk.KO, wk.NK, wk.KSLOT, wk.STATE,
           wk.OUT_TAG, wk.OUT_V, wk.OUT_S, wk.OUT_N, wk.ROWS, wk.NSLOTS]] = [
        raw.ctypes.data, len(raw), offs.ctypes.data, 0, bits.ctypes.data, int(len(bits) > 0),
        bit0, walk.want.ctypes.data, slot_of.ctypes.data, lists, walk.keys.ctypes.data,
        len(walk.keys), walk.key_offsets.ctypes.data, len(walk.key_offsets) - 1,
        key_slot.ctypes.data, state.ctypes.data, *(a.ctypes.data for a in scratch), n,
        len(slots)]
    kernel(0, count, n, raw, frame, wk.walker(), *scratch, out_v, out_k, out_b, *walk.args)
    return out_v, out_k, out_b
