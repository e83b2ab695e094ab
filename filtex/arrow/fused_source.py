"""The fused kernel's source: a filter's every atom and its skeleton in one loop.

One numba function per *signature* (``fused.py``): the skeleton's shape and,
per atom, where its tag comes from and which kinds of value it reads. The
signature holds no constant and no tag of the filter: what an atom answers per
tag is a 256-entry table argument (``entry``: the constant outcome, the class
of the tag's answer and the child whose validity the row needs), and the
string tables, intervals, boolean table, float specials and learned value
tables are arguments too. So ``color = 'red'`` and ``subject LIKE 'EU-%'``
share a kernel, and the conformance suite needs few of them.

Per row, every atom computes its outcome code (0 false, 1 true, 2 unknown, 4
failure, 8 back to the per-message engine) without a branch: each kind of
answer is computed and the tag's class selects one. Validity bitmaps are read
as one 64-bit word per 64 rows. Value tables (answers learned per distinct
value, rare tags) are the one branch, taken only by rows of such a tag. The
skeleton combines the atoms' (value, known) bits with ``&``/``|`` as the
shape kernels do (``kernel._Writer``); a failure anywhere makes the row
unknown, a row an atom sends back is marked in ``out_b`` and left for the
per-message engine.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from .._version import __version__
from .kernel import _Writer

# the class of a tag's answer (bits 4..7 of an entry)
CONSTANT, STRINGS, BOOLS, INTS, UINTS, DOUBLES, VALUES_I, VALUES_U, VALUES_F, NOT_HERE = (
    0, 1, 2, 3, 4, 5, 6, 7, 8, 15)
# the child whose validity a tag's row needs (bits 8..10)
NO_CHILD, CHILD_I, CHILD_U, CHILD_F, CHILD_B, CHILD_S = range(6)
CHILD_NAMES = {CHILD_I: "i", CHILD_U: "u", CHILD_F: "f", CHILD_B: "b", CHILD_S: "s"}
MAX_UNROLLED = 4
"""Up to this many intervals are compared in line; more are searched."""


class AtomSignature(NamedTuple):
    """What an atom's code depends on. ``source``: ``"t"`` (a tag per row),
    ``"v"`` (a typed field: one tag where the validity bit is set, absent
    elsewhere) or ``"o"`` (an outcome column computed apart: arithmetic).
    ``children``: the children whose validity is read; the rest say which
    kinds of answer occur (``spans``: the interval count, -1 for many)."""
    source: str
    children: tuple[str, ...] = ()
    strings: bool = False
    bools: bool = False
    ints: int | None = None
    uints: int | None = None
    doubles: int | None = None
    specials: tuple[int, ...] = ()
    values: tuple[str, ...] = ()


def _parameters(n: int, sig: AtomSignature) -> list[str]:
    if sig.source == "o":
        return [f"a{n}"]
    params = [f"t{n}" if sig.source == "t" else f"tv{n}", f"tb{n}"]
    for child in sig.children:
        params += {"i": [f"i{n}", f"iv{n}"], "u": [f"u{n}", f"uv{n}"],
                   "f": [f"f{n}", f"fv{n}"], "b": [f"b{n}", f"bv{n}"],
                   "s": [f"c{n}", f"cv{n}"]}[child]
    if sig.strings:
        params += [f"st{n}", f"width{n}"]
    if sig.bools:
        params.append(f"bt{n}")
    for kind, count in (("i", sig.ints), ("u", sig.uints), ("f", sig.doubles)):
        if count is not None:
            params.append(f"{kind}s{n}")
    if sig.specials:
        params.append(f"sp{n}")
    for kind in sig.values:
        params += [f"{kind}kt{n}", f"{kind}kv{n}", f"{kind}ko{n}"]
    return params


_WORDS = ("tv", "iv", "uv", "fv", "bv", "cv", "b")
"""Parameters that are bitmaps, read a word per 64 rows."""


def _hoisted(n: int, sig: AtomSignature) -> list[str]:
    """Loop-invariant loads: unrolled intervals, table sizes."""
    lines = []
    for kind, count in (("i", sig.ints), ("u", sig.uints), ("f", sig.doubles)):
        for j in range(count if count is not None and count > 0 else 0):
            lines += [f"{kind}s{n}_{j}_0 = {kind}s{n}[{j}, 0]",
                      f"{kind}s{n}_{j}_1 = {kind}s{n}[{j}, 1]"]
    if sig.strings:   # the string table flattened: variant * width + code
        lines.append(f"sw{n} = np.uint64(width{n})")
        lines.append(f"sz{n} = sw{n} - np.uint64(1)")
    return lines


Emit = Callable[[str], None]


def _within(n: int, kind: str, count: int | None, x: str, emit: Emit) -> str:
    """An expression (0/1) for ``x`` inside the atom's intervals of ``kind``."""
    spans = f"{kind}s{n}"
    if count == 0:
        return "0"
    if count is not None and count > 0:
        return "(" + " | ".join(f"(({spans}_{j}_0 <= {x}) & ({x} <= {spans}_{j}_1))"
                                for j in range(count)) + ")"
    lo, hi = f"lo{kind}{n}", f"hi{kind}{n}"
    emit(f"{lo} = 0")
    emit(f"{hi} = {spans}.shape[0]")
    emit(f"while {lo} < {hi}:")
    emit(f"    mid = ({lo} + {hi}) >> 1")
    emit(f"    if {spans}[mid, 0] <= {x}:")
    emit(f"        {lo} = mid + 1")
    emit("    else:")
    emit(f"        {hi} = mid")
    return f"(1 if {lo} > 0 and {x} <= {spans}[{lo} - 1, 1] else 0)"


def _lookup(n: int, kind: str, cls: int, x: str, emit: Emit) -> None:
    """A learned value's outcome (back when not learned yet), for rows of class ``cls``."""
    tags, keys, outs = f"{kind}kt{n}", f"{kind}kv{n}", f"{kind}ko{n}"
    emit(f"if cl == {cls}:")
    emit("    lo = 0")
    emit(f"    hi = {keys}.shape[0]")
    emit("    while lo < hi:")
    emit("        mid = (lo + hi) >> 1")
    emit(f"        if {tags}[mid] < tg or ({tags}[mid] == tg and {keys}[mid] < {x}):")
    emit("            lo = mid + 1")
    emit("        else:")
    emit("            hi = mid")
    emit(f"    o = {outs}[lo] if lo < {keys}.shape[0] and {tags}[lo] == tg "
         f"and {keys}[lo] == {x} else 8")


def _atom(n: int, sig: AtomSignature, emit: Emit) -> None:
    """Lines putting atom ``n``'s outcome for row ``r`` in ``o``, then its bits."""
    if sig.source == "o":
        emit(f"o = a{n}[r]")
    else:
        # indices are unsigned: numba checks a signed index for wraparound per row
        emit(f"tg = t{n}[r]" if sig.source == "t" else
             f"tg = np.uint64(tc{n} * ((tv{n}w >> j) & 1))")
        emit(f"e = tb{n}[tg]")
        emit("o = e & 15")
        emit("cl = (e >> 4) & 15")
        emit("ch = (e >> 8) & 7")
        emit("bad = 0")
        child_ids = {"i": 1, "u": 2, "f": 3, "b": 4, "s": 5}
        for child in sig.children:
            valid = "cv" if child == "s" else child + "v"
            emit(f"bad |= (ch == {child_ids[child]}) & ((({valid}{n}w >> j) & 1) == 0)")
        if sig.strings:
            emit(f"sx = np.uint64((e >> 12) & 3) * sw{n} "
                 f"+ min(np.uint64(np.uint32(c{n}[r])), sz{n})")
            emit(f"o = st{n}[sx] if cl == {STRINGS} else o")
        if sig.bools:
            emit(f"o = bt{n}[np.uint64((b{n}w >> j) & 1)] if cl == {BOOLS} else o")
        if sig.ints is not None or "i" in sig.values:
            emit(f"xi = i{n}[r]")
        if sig.ints is not None:
            emit(f"o = {_within(n, 'i', sig.ints, 'xi', emit)} if cl == {INTS} else o")
        if "i" in sig.values:
            _lookup(n, "i", VALUES_I, "xi", emit)
        if sig.uints is not None or "u" in sig.values:
            emit(f"xu = u{n}[r]")
        if sig.uints is not None:
            emit(f"o = {_within(n, 'u', sig.uints, 'xu', emit)} if cl == {UINTS} else o")
        if "u" in sig.values:
            _lookup(n, "u", VALUES_U, "xu", emit)
        if sig.doubles is not None or "f" in sig.values or sig.specials:
            emit(f"xf = f{n}[r]")
        if sig.doubles is not None:
            emit(f"o = {_within(n, 'f', sig.doubles, 'xf', emit)} if cl == {DOUBLES} else o")
        if "f" in sig.values:
            _lookup(n, "f", VALUES_F, "xf", emit)
        if sig.specials:   # NaN, -0.0, the infinities: the atom's own answer (pseudo tags)
            tests = {0: "(xf != xf)", 1: "((xf == 0.0) & (math.copysign(1.0, xf) < 0.0))",
                     2: "(xf == math.inf)", 3: "(xf == -math.inf)"}
            emit("special = " + " | ".join(tests[k] for k in sig.specials))
            emit("si = np.uint64(((tg & 1) ^ 1) * 4" + "".join(
                f" + {tests[k]} * {k}" for k in sig.specials if k) + ")")
            emit(f"o = sp{n}[si] if special & (ch == {CHILD_F}) else o")
        emit("o = 8 if bad else o")
    emit(f"val{n} = 1 if o == 1 else 0")
    emit(f"kn{n} = 1 if o < 2 else 0")
    emit("fl |= 1 if o == 4 else 0")
    emit("bk |= 1 if o == 8 else 0")


def source(shape: tuple[object, ...], sigs: tuple[AtomSignature, ...]) -> str:
    """The module source of the fused kernel for ``shape`` over atoms ``sigs``."""
    body: list[str] = []

    def emit(line: str) -> None:
        body.append("            " + line)

    params: list[str] = []
    hoists: list[str] = []
    loads: list[str] = []
    for n, sig in enumerate(sigs):
        own = _parameters(n, sig)
        params += own
        if sig.source == "v":
            params.append(f"tc{n}")
        hoists += _hoisted(n, sig)
        loads += [f"{p}w = {p}[w]" for p in own if p.rstrip("0123456789") in _WORDS]
    emit("fl = 0")
    emit("bk = 0")
    for n, sig in enumerate(sigs):
        _atom(n, sig, emit)
    writer = _Writer()
    value, known = writer.node(shape, list(range(len(sigs))))
    body += writer.lines
    emit(f"kn = ({known}) & (1 - (fl | bk))")
    emit(f"wv |= (({value}) & kn) << j")
    emit("wk |= kn << j")
    emit("wb |= bk << j")
    hoist = "\n".join("    " + line for line in hoists)
    load = "\n".join("        " + line for line in loads)
    return f'''"""filtex fused kernel (filtex {__version__}) for {shape!r}
over {sigs!r}."""
import math
import numpy as np
from filtex.codegen.jit import njit


@njit(cache=True, nogil=True)
def kernel(w0, w1, n, back, out_v, out_k, out_b, {", ".join(params)}):
{hoist}
    held = 0
    for w in range(w0, w1):
        base = w << 6
        m = min(64, n - base)
        wv = 0
        wk = 0
        wb = 0
{load}
        for j in range(m):
            r = base + j
{chr(10).join(body)}
        wb |= back[w]
        out_v[w] = wv & ~wb
        out_k[w] = wk & ~wb
        out_b[w] = wb
        if wb != 0:
            held += 1
    return held
'''
