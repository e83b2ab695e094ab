"""The walking kernel's source: a filter evaluated while it walks encoded messages.

One numba function per *signature* (``walk.py``): the skeleton's shape, where each
field is (a header or properties field by number, an application property by
slot), and per atom which tags it answers by a constant, the boolean table,
intervals over the integer, unsigned or double value, or a text form on the
string bytes. Keys, constants, intervals and tables are arguments: a new
constant never compiles a kernel.

Per word of 64 messages the kernel calls the walk (``table/decode/walker.py``,
compiled once, called through its address), which finds the fields in the
bytes, checks what the column decoder checks and leaves each field's tag,
value and string bytes' place in small arrays that stay in the first-level
cache; then runs every atom on them: strings compared as bytes
(``bytes_text.py``), numbers as the decoder reads them. The outcomes are
packed into bit words and combined by the skeleton, as in the fused kernel
(``fused_source.py``). A message the decoder would not decode, or a tag the
plan leaves to the per-message engine, is marked in ``out_b``.
"""
from __future__ import annotations

from typing import NamedTuple

from .._version import __version__
from . import fused_source as fs

TEXT_KINDS = ("=", "<>", "<", "<=", ">", ">=", "in", "like")


class Place(NamedTuple):
    """Where a field is: ``"h"``/``"p"`` (header/properties field number ``place``),
    ``"a"`` (application property number ``place``) or ``"n"`` (no field: absent)."""
    kind: str
    place: int


class WalkAtom(NamedTuple):
    """What an atom's code depends on: its field, and the tags it answers by
    the boolean table, intervals over a child (with their count, -1: many), a
    text form (``text``: one of ``TEXT_KINDS``, or "" for none); ``specials``:
    whether a float or double row may be NaN, -0.0 or infinite with an answer of
    its own (checked per row). Every other tag is answered by the constant
    table (BACK where the plan has no answer)."""
    field: int
    bools: bool
    ints: tuple[int, ...]
    uints: tuple[int, ...]
    doubles: tuple[int, ...]
    icount: int | None
    ucount: int | None
    dcount: int | None
    floats: tuple[int, ...]
    specials: bool
    strings: tuple[int, ...]
    text: str


def parameters(n: int, atom: WalkAtom) -> list[str]:
    """Atom ``n``'s kernel parameters, in the order ``walk.lower`` gives them."""
    params = [f"ct{n}"]
    if atom.bools:
        params.append(f"bt{n}")
    for kind, count in (("i", atom.icount), ("u", atom.ucount), ("f", atom.dcount)):
        if count is not None:
            params.append(f"{kind}s{n}")
    if atom.specials:
        params.append(f"sp{n}")
    if atom.text:
        params += [f"tb{n}", f"to{n}", f"tn{n}"] + ([f"tlike{n}"] if atom.text == "like" else [])
    return params


def _hoisted(n: int, atom: WalkAtom) -> list[str]:
    lines = []
    for kind, count in (("i", atom.icount), ("u", atom.ucount), ("f", atom.dcount)):
        for j in range(count if count is not None and count > 0 else 0):
            lines += [f"{kind}s{n}_{j}_0 = {kind}s{n}[{j}, 0]",
                      f"{kind}s{n}_{j}_1 = {kind}s{n}[{j}, 1]"]
    if atom.bools:
        lines += [f"bt{n}_0 = np.int32(bt{n}[0])", f"bt{n}_1 = np.int32(bt{n}[1])"]
    if atom.text:
        lines += [f"tbp{n} = tb{n}.ctypes.data", f"top{n} = to{n}.ctypes.data",
                  f"tlim{n} = tb{n}.shape[0]", f"tcount{n} = to{n}.shape[0] - 1",
                  f"tneg{n} = tn{n} != 0"]
    return lines


def _text(n: int, f: int, kind: str) -> str:
    args = f"d, s{f}, n{f}, size, tbp{n}"
    if kind == "in":
        return f"text_in({args}, top{n}, tcount{n}, tlim{n})"
    if kind == "like":
        return f"(call_text(tlike{n}, {args}, top{n}, tcount{n}, tlim{n}) != 0)"
    compare = f"text_compare({args}, to{n}[0], to{n}[1], tlim{n})"
    return f"({compare} {'!=' if kind == '<>' else ('==' if kind == '=' else kind)} 0)"


def _atom_row(n: int, atom: WalkAtom, emit: fs.Emit) -> None:
    f = atom.field
    tg = f"tg{f}"
    emit(f"o = np.int32(ct{n}[{tg}])")
    if atom.bools:
        emit(f"o = (bt{n}_1 if v{f} != 0 else bt{n}_0) if {tg} == 2 else o")
    if atom.ints:
        within = fs._within(n, "i", atom.icount, f"v{f}", emit)
        emit(f"o = np.int32({within}) if {fs._membership(atom.ints, tg)} else o")
    if atom.uints:
        emit(f"xu = np.uint64(v{f})")
        within = fs._within(n, "u", atom.ucount, "xu", emit)
        emit(f"o = np.int32({within}) if {fs._membership(atom.uints, tg)} else o")
    if atom.doubles or atom.specials:
        emit(f"xf = as_double(v{f})")
    if atom.doubles:
        within = fs._within(n, "f", atom.dcount, "xf", emit)
        emit(f"o = np.int32({within}) if {fs._membership(atom.doubles, tg)} else o")
    if atom.specials:
        tests = [fs.SPECIAL_TESTS[k] for k in range(4)]
        emit(f"if ({fs._membership(atom.floats, tg)}) and ({' | '.join(tests)}):")
        emit(f"    o = np.int32(sp{n}[(({tg} & 1) ^ 1) * 4"
             + "".join(f" + {tests[k]} * {k}" for k in range(1, 4)) + "])")
    if atom.strings:
        emit(f"if {fs._membership(atom.strings, tg)}:")
        emit(f"    o = np.int32({_text(n, f, atom.text)} != tneg{n})")
    emit(f"wv{n} |= np.int64(o == 1) << j")
    emit(f"wk{n} |= np.int64(o < 2) << j")
    emit("flr |= o == 4")
    emit("bkr |= o == 8")


def source(shape: tuple[object, ...], places: tuple[Place, ...],
           atoms: tuple[WalkAtom, ...]) -> str:
    """The module source of the walking kernel for ``shape`` over ``places`` and ``atoms``."""
    params: list[str] = []
    hoists: list[str] = []
    body: list[str] = []

    def emit(line: str) -> None:
        body.append("            " + line)

    for n, atom in enumerate(atoms):
        params += parameters(n, atom)
        hoists += _hoisted(n, atom)
    slot = 0
    for f, place in enumerate(places):   # the walk's slots: every field but "n"
        if place.kind == "n":
            emit(f"tg{f} = 0; v{f} = 0; s{f} = 0; n{f} = 0")
            continue
        at = f"{slot * 64} + j"
        emit(f"tg{f} = tga[{at}]; v{f} = va[{at}]; s{f} = sa[{at}]; n{f} = na[{at}]")
        slot += 1
    emit("flr = False")
    emit("bkr = False")
    for n, atom in enumerate(atoms):
        _atom_row(n, atom, emit)
    emit("wfl |= np.int64(flr) << j")
    emit("wbk |= np.int64(bkr) << j")
    words = "; ".join(f"wv{n} = 0; wk{n} = 0" for n in range(len(atoms)))
    indent = "        "
    return f'''"""filtex walking kernel (filtex {__version__}) for {shape!r}
over {places!r}
and {atoms!r}."""
import math
import numpy as np
from filtex.codegen.jit import njit
from filtex.table.decode.walker import BASE, COUNT, call_walker
from filtex.arrow.bytes_text import as_double, call_text, text_compare, text_in


@njit(cache=True, nogil=True)
def kernel(w0, w1, n, data, frame, fn, tga, va, sa, na, out_v, out_k, out_b{"".join(", " + p for p in params)}):
{chr(10).join("    " + h for h in hoists)}
    d = data.ctypes.data
    size = data.shape[0]
    fp = frame.ctypes.data
    held = 0
    for w in range(w0, w1):
        base = w << 6
        m = min(64, n - base)
        frame[BASE] = base
        frame[COUNT] = m
        wb = call_walker(fn, fp)
        wfl = 0
        wbk = 0
        {words}
        for j in range(m):
            if (wb >> j) & 1:
                continue
{chr(10).join(body)}
        wb |= wbk
{chr(10).join(indent + line for line in fs.word_end(shape, len(atoms)))}
    return held
'''
