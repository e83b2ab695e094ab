"""The kernel generator: a filter's skeleton as one numba function over columns.

The second code generator beside the per-message one (``row/generator.py``),
over the same checked tree (split by ``plan/skeleton.py``). Each atom's outcome column
comes from ``atompass.atom_outcomes`` (compiled once for every filter); the
generated kernel, one per skeleton *shape*, walks the rows 64 at a time,
combines the outcomes as (value, known) bit pairs with the failure rule (any
atom's failure makes the row unknown), and writes the two bitmaps of an Arrow
``BooleanArray``. Rows an atom cannot answer are marked in ``back`` for the
per-message engine.

Why two steps and not one fused loop: a fused loop holding every atom's
tag dispatch took numba 5-15 s to compile for a five-atom filter, and each
filter shape needed its own; the shared atom pass compiles once, and a
combining kernel compiles in well under a second. A fused loop with only the
branches each atom's modes need was measured too: on the RabbitMQ filter over
2 million orders it took 117 ms against 97 ms for the split (the branchy
per-atom code fused into one loop runs worse, not better), so it was dropped.

The source holds no constant of the filter: modes, intervals and tables are
the atom pass's arguments. The modules are loaded and kept by
``codegen/modules.py``, with every other kernel filtex generates.
"""
from __future__ import annotations

from typing import Any, Callable

from .._version import __version__
from ..codegen.modules import cached
from . import arith
from . import atomcode

__all__ = ["atom_pass", "arith_pass", "compiled", "pass_source", "source"]



class _Writer:
    """Straight-line integer code: each node's value and known bits as 0/1
    ints combined with ``& | ^`` (no short-circuit, so no branch per node)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.temps = 0

    def temp(self) -> str:
        self.temps += 1
        return f"node{self.temps}"

    def emit(self, line: str) -> None:
        self.lines.append("            " + line)

    def node(self, shape: tuple, atoms: list[int]) -> tuple[str, str]:
        """(value, known) names of a skeleton node; value implies known."""
        kind = shape[0]
        if kind == "atom":
            n = atoms.pop(0)
            return f"val{n}", f"kn{n}"
        v, k = self.temp(), self.temp()
        if kind == "not":
            cv, ck = self.node(shape[1], atoms)
            self.emit(f"{v} = {ck} & ({cv} ^ 1)")
            self.emit(f"{k} = {ck}")
            return v, k
        items = [self.node(item, atoms) for item in shape[1]]
        vs, ks = [i[0] for i in items], [i[1] for i in items]
        if kind == "and":   # true if all true; known if all known or one is false
            self.emit(f"{v} = {' & '.join(vs)}")
            self.emit(f"{k} = ({' & '.join(ks)}) | "
                      + " | ".join(f"({kk} & ({vv} ^ 1))" for vv, kk in items))
        else:               # true if one is true; known if all known or one is true
            self.emit(f"{v} = {' | '.join(vs)}")
            self.emit(f"{k} = ({' & '.join(ks)}) | {v}")
        return v, k


def atom_count(shape: tuple) -> int:
    if shape[0] == "atom":
        return 1
    if shape[0] == "not":
        return atom_count(shape[1])
    return sum(atom_count(item) for item in shape[1])


def pass_source() -> str:
    """The module of the shared atom pass: every mode, one outcome column."""
    body = "\n".join("        " + line for line in atomcode.block())
    return f'''"""filtex atom pass (filtex {__version__}): one atom's outcome per row."""
import math
import numpy as np
from filtex.codegen.jit import njit


@njit(cache=True, nogil=True)
def atom_outcomes(out, {", ".join(atomcode.ARGS)}):
    for r in range(t.shape[0]):
{body}
'''


def source(shape: tuple) -> str:
    """The module source of the kernel for one skeleton shape: it combines the
    atoms' outcome columns."""
    count = atom_count(shape)
    writer = _Writer()
    for a in range(count):
        writer.emit(f"o{a} = a{a}[r]")
        writer.emit(f"val{a} = 1 if o{a} == 1 else 0")
        writer.emit(f"kn{a} = 1 if o{a} < 2 else 0")
    special = " | ".join(f"o{a}" for a in range(count))
    fail = " or ".join(f"o{a} == 4" for a in range(count))
    back = " or ".join(f"o{a} == 8" for a in range(count))
    value, known = writer.node(shape, list(range(count)))
    params = ", ".join(f"a{a}" for a in range(count))
    body = "\n".join(writer.lines)
    return f'''"""filtex kernel, generated for the shape {shape!r} (filtex {__version__})."""
import math
import numpy as np
from filtex.codegen.jit import njit


@njit(cache=True, nogil=True)
def kernel(n, back, out_v, out_k, {params}):
    held = 0
    for w in range((n + 63) >> 6):
        base = w << 6
        end = min(base + 64, n)
        wv = 0
        wk = 0
        for r in range(base, end):
{body}
            value = {value}
            known = {known}
            if back[r] != 0 or ({special}) > 3:   # outcomes 4 (failure), 8 (back) are rare
                if back[r] != 0 or {back}:
                    back[r] = 1
                    held += 1
                    continue
                if {fail}:
                    continue
            wk |= known << (r - base)
            wv |= value << (r - base)
        out_v[w] = wv
        out_k[w] = wk
    return held
'''


def compiled(shape: tuple) -> Callable:
    """The compiled kernel of ``shape``: from memory, the disk cache, or numba."""
    return cached(shape, lambda: source(shape), "kernel")


def atom_pass() -> Callable:
    """The shared atom pass (compiled once for every filter)."""
    return cached("pass", pass_source, "atom_outcomes")


def arith_pass(form: Any) -> Callable:
    """The compiled pass of an arithmetic atom (``arith.py``), per expression."""
    return cached(("arith", form.shape()), lambda: arith.source(form), "expr_pass")
