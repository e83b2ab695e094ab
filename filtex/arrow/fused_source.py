"""The fused kernel's source: a filter's every atom and its skeleton in one loop.

One numba function per *signature* (``fused.py``): the skeleton's shape and,
per atom, where its tag comes from and its *groups*: the tags the column can
hold, partitioned by how the atom answers them (a constant, the string table,
the boolean table, intervals over a child, learned values) and whose child's
validity a row needs. Tag membership is compiled in as byte compares; the
answers are not: constants, string tables, intervals, the float specials and
learned value tables are arguments. So ``color = 'red'`` and
``color LIKE 'b%'`` over one schema share a kernel, and a new constant never
compiles one.

Per row, each atom computes its outcome code (0 false, 1 true, 2 unknown, 4
failure, 8 back to the per-message engine) without a branch, and the row loop
packs, per atom, a value bit and a known bit into 64-bit words. Everything
else happens once per word of 64 rows: child validity (a row of a group whose
child is null is malformed: back), the float specials where they are rare
(rows of a float tag answered by a constant are visited one by one, by their
bits), and the skeleton itself, combined with ``& | ^`` over whole words
(``kernel._Writer``). A failure anywhere makes the row unknown; a row sent back
is marked in ``out_b`` for the per-message engine.
"""
from __future__ import annotations

from typing import Callable, NamedTuple

from .._version import __version__
from .kernel import _Writer

# how a group of tags is answered
CONSTANT, STRINGS, BOOLS, INTS, UINTS, DOUBLES, VALUES_I, VALUES_U, VALUES_F = range(9)
MAX_UNROLLED = 4
"""Up to this many intervals are compared in line; more are searched."""
SPECIAL_TESTS = {0: "(xf != xf)", 1: "((xf == 0.0) & (math.copysign(1.0, xf) < 0.0))",
                 2: "(xf == math.inf)", 3: "(xf == -math.inf)"}
"""NaN, -0.0, +inf, -inf: the float specials (pseudo tags), by index."""


class Group(NamedTuple):
    """Tags one atom answers the same way; ``child``: the child whose validity
    a row of them needs (None: the tag alone)."""
    tags: tuple[int, ...]
    how: int
    child: str | None


class AtomSignature(NamedTuple):
    """What an atom's code depends on. ``source``: ``"t"`` (a tag per row),
    ``"v<tag>"`` (a typed field: that tag where the validity bit is set, absent
    elsewhere) or ``"o"`` (an outcome column computed apart: arithmetic).
    Each group of string tags has its own string table (string and symbol
    share one where they agree); ``ints``/``uints``/``doubles``: the
    interval count (-1: many); ``specials``: which float specials need the
    atom's own answer, ``special_rows``: checked in the row loop (floats are
    common: intervals or values over them), else per word."""
    source: str
    groups: tuple[Group, ...] = ()
    ints: int | None = None
    uints: int | None = None
    doubles: int | None = None
    specials: tuple[int, ...] = ()
    special_rows: bool = False


Emit = Callable[[str], None]
_VALID = {"i": "iv", "u": "uv", "f": "fv", "b": "bv", "s": "cv"}


def children(sig: AtomSignature) -> tuple[str, ...]:
    """The children an atom reads, in argument order."""
    used = {g.child for g in sig.groups if g.child is not None}
    return tuple(c for c in "iufbs" if c in used)


def _has(sig: AtomSignature, how: int) -> bool:
    return any(g.how == how for g in sig.groups)


def value_kinds(sig: AtomSignature) -> tuple[str, ...]:
    """The children whose learned values an atom looks up."""
    return tuple(k for k, how in (("i", VALUES_I), ("u", VALUES_U), ("f", VALUES_F))
                 if _has(sig, how))


def parameters(n: int, sig: AtomSignature) -> list[str]:
    """Atom ``n``'s kernel parameters, in the order ``fused.lower`` gives them."""
    if sig.source == "o":
        return [f"a{n}"]
    params = [f"t{n}" if sig.source == "t" else f"tv{n}", f"oc{n}"]
    for child in children(sig):
        params += {"i": [f"i{n}"], "u": [f"u{n}"], "f": [f"f{n}"], "b": [f"b{n}"],
                   "s": [f"c{n}"]}[child] + [f"{_VALID[child]}{n}"]
    for k, group in enumerate(sig.groups):
        if group.how == STRINGS:
            params += [f"st{n}_{k}", f"width{n}_{k}"]
    if _has(sig, BOOLS):
        params.append(f"bt{n}")
    for kind, count in (("i", sig.ints), ("u", sig.uints), ("f", sig.doubles)):
        if count is not None:
            params.append(f"{kind}s{n}")
    if sig.specials:
        params.append(f"sp{n}")
    for kind in value_kinds(sig):
        params += [f"{kind}kt{n}", f"{kind}kv{n}", f"{kind}ko{n}"]
    return params


def _membership(tags: tuple[int, ...]) -> str:
    """A test of the row's tag ``tg`` against ``tags``, runs merged into ranges."""
    runs: list[list[int]] = []
    for t in sorted(tags):
        if runs and t == runs[-1][1] + 1:
            runs[-1][1] = t
        else:
            runs.append([t, t])
    terms = []
    for lo, hi in runs:
        if lo == hi:
            terms.append(f"(tg == {lo})")
        elif lo == 0:
            terms.append(f"(tg <= {hi})")
        else:
            terms.append(f"((tg >= {lo}) & (tg <= {hi}))")
    return " | ".join(terms) if terms else "False"


def _hoisted(n: int, sig: AtomSignature) -> list[str]:
    """Loop-invariant loads: constants, unrolled intervals, table sizes."""
    lines = [f"oc{n}_{k} = oc{n}[{k}]" for k, g in enumerate(sig.groups) if g.how == CONSTANT]
    for kind, count in (("i", sig.ints), ("u", sig.uints), ("f", sig.doubles)):
        for j in range(count if count is not None and count > 0 else 0):
            lines += [f"{kind}s{n}_{j}_0 = {kind}s{n}[{j}, 0]",
                      f"{kind}s{n}_{j}_1 = {kind}s{n}[{j}, 1]"]
    for k, group in enumerate(sig.groups):   # a string table's last entry: BACK
        if group.how == STRINGS:
            lines.append(f"sz{n}_{k} = np.uint64(width{n}_{k} - 1)")
    if _has(sig, BOOLS):
        lines += [f"bt{n}_0 = bt{n}[0]", f"bt{n}_1 = bt{n}[1]"]
    return lines


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


def _lookup(n: int, kind: str, member: str, x: str, emit: Emit) -> None:
    """A learned value's outcome (back when not learned yet): a branch, taken
    only by rows of a tag answered per value (rare by construction)."""
    tags, keys, outs = f"{kind}kt{n}", f"{kind}kv{n}", f"{kind}ko{n}"
    emit(f"if {member}:")
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


def _float_groups(n: int, sig: AtomSignature) -> str:
    names = [f"g{n}_{k}" for k, g in enumerate(sig.groups) if g.child == "f"]
    return " | ".join(names) if names else "False"


def _atom_row(n: int, sig: AtomSignature, own_words: bool, emit: Emit) -> None:
    """Lines putting atom ``n``'s outcome for row ``r`` in ``o`` and packing it."""
    if sig.source == "o":
        emit(f"o = a{n}[r]")
    else:
        if sig.source == "t":
            emit(f"tg = t{n}[r]")
        else:
            emit(f"tg = {int(sig.source[1:])} * ((tv{n}w >> j) & 1)")
        for k, group in enumerate(sig.groups):
            emit(f"g{n}_{k} = {_membership(group.tags)}")
        emit("o = 8")
        if _has(sig, STRINGS):
            emit(f"cu = np.uint64(np.uint32(c{n}[r]))")
        for k, group in enumerate(sig.groups):
            member = f"g{n}_{k}"
            if group.how == CONSTANT:
                emit(f"o = oc{n}_{k} if {member} else o")
            elif group.how == STRINGS:
                emit(f"o = st{n}_{k}[min(cu, sz{n}_{k})] if {member} else o")
            elif group.how == BOOLS:
                emit(f"o = (bt{n}_1 if (b{n}w >> j) & 1 else bt{n}_0) if {member} else o")
            elif group.how in (INTS, UINTS, DOUBLES):
                kind = "iuf"[group.how - INTS]
                count = (sig.ints, sig.uints, sig.doubles)[group.how - INTS]
                emit(f"x{kind} = {kind}{n}[r]")
                emit(f"o = {_within(n, kind, count, f'x{kind}', emit)} if {member} else o")
            else:
                kind = "iuf"[group.how - VALUES_I]
                emit(f"x{kind} = {kind}{n}[r]")
                _lookup(n, kind, member, f"x{kind}", emit)
        if sig.specials and sig.special_rows:   # floats are common here: in the loop
            emit(f"xf = f{n}[r]")
            emit("special = " + " | ".join(SPECIAL_TESTS[k] for k in sig.specials))
            emit("si = np.uint64(((tg & 1) ^ 1) * 4" + "".join(
                f" + {SPECIAL_TESTS[k]} * {k}" for k in sig.specials if k) + ")")
            emit(f"o = sp{n}[si] if special & ({_float_groups(n, sig)}) else o")
        for child in children(sig):
            members = " | ".join(f"g{n}_{k}" for k, g in enumerate(sig.groups)
                                 if g.child == child)
            emit(f"wc{n}{child} |= np.int64({members}) << j")
    emit(f"wv{n} |= np.int64(o == 1) << j")
    emit(f"wk{n} |= np.int64(o < 2) << j")
    if own_words:
        emit(f"wfl{n} |= np.int64(o == 4) << j")
        emit(f"wbk{n} |= np.int64(o == 8) << j")
    else:
        emit("flr |= o == 4")
        emit("bkr |= o == 8")


def _fixup(n: int, sig: AtomSignature) -> list[str]:
    """Per word: the float rows of atom ``n`` whose value is a special get the
    atom's own answer for it, visited one by one by their bits."""
    tests = " | ".join(SPECIAL_TESTS[k] for k in sig.specials)
    index = "".join(f" + {SPECIAL_TESTS[k]} * {k}" for k in sig.specials if k)
    return [
        f"x = wc{n}f",   # the rows of the float groups
        "while x != 0:",
        "    low = x & -x",
        "    j = _DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]",
        "    x ^= low",
        f"    xf = f{n}[base + j]",
        f"    if {tests}:",
        f"        o = sp{n}[((t{n}[base + j] & 1) ^ 1) * 4{index}]",
        f"        wv{n} = (wv{n} & ~low) | (low if o == 1 else 0)",
        f"        wk{n} = (wk{n} & ~low) | (low if o < 2 else 0)",
        f"        wfl{n} = (wfl{n} & ~low) | (low if o == 4 else 0)",
        f"        wbk{n} = (wbk{n} & ~low) | (low if o == 8 else 0)",
    ]


_DEBRUIJN_TABLE = [0] * 64
for _i in range(64):
    _DEBRUIJN_TABLE[(((1 << _i) * 0x03F79D71B4CB0A89) & ((1 << 64) - 1)) >> 58] = _i


def source(shape: tuple[object, ...], sigs: tuple[AtomSignature, ...]) -> str:
    """The module source of the fused kernel for ``shape`` over atoms ``sigs``."""
    body: list[str] = []

    def emit(line: str) -> None:
        body.append("            " + line)

    params: list[str] = []
    hoists: list[str] = []
    loads: list[str] = []
    after: list[str] = []
    own = [bool(sig.specials and not sig.special_rows) for sig in sigs]
    shared = not all(own)   # atoms without words of their own share the row's flags
    starts: list[str] = ["flr = False", "bkr = False"] if shared else []
    for n, sig in enumerate(sigs):
        params += parameters(n, sig)
        hoists += _hoisted(n, sig)
        words = [f"wv{n}", f"wk{n}"] + ([f"wfl{n}", f"wbk{n}"] if own[n] else [])
        words += [f"wc{n}{c}" for c in children(sig)]
        loads += [f"{w} = 0" for w in words]
        if sig.source.startswith("v"):
            loads.append(f"tv{n}w = tv{n}[w]")
        if "b" in children(sig):
            loads.append(f"b{n}w = b{n}[w]")
        for child in children(sig):
            after.append(f"wbk |= wc{n}{child} & ~{_VALID[child]}{n}[w]")
        if own[n]:
            after += _fixup(n, sig)
            after += [f"wfl |= wfl{n}", f"wbk |= wbk{n}"]
    for n, sig in enumerate(sigs):
        _atom_row(n, sig, own[n], emit)
    if shared:
        emit("wfl |= np.int64(flr) << j")
        emit("wbk |= np.int64(bkr) << j")
    writer = _Writer()   # the skeleton over whole words: NOT is ``^ -1``
    value, known = writer.node(shape, list(range(len(sigs))))
    combined = [_rename(line.strip().replace(" ^ 1)", " ^ -1)"), len(sigs))
                for line in writer.lines]
    value, known = _rename(value, len(sigs)), _rename(known, len(sigs))
    indent = "        "
    return f'''"""filtex fused kernel (filtex {__version__}) for {shape!r}
over {sigs!r}."""
import math
import numpy as np
from filtex.codegen.jit import njit

_DEBRUIJN = np.array({_DEBRUIJN_TABLE!r}, np.int64)


@njit(cache=True, nogil=True)
def kernel(w0, w1, n, back, out_v, out_k, out_b, {", ".join(params)}):
{chr(10).join("    " + h for h in hoists)}
    held = 0
    for w in range(w0, w1):
        base = w << 6
        m = min(64, n - base)
        wfl = 0
        wbk = 0
{chr(10).join(indent + line for line in loads)}
        for j in range(m):
            r = base + j
{chr(10).join("            " + s for s in starts)}
{chr(10).join(body)}
{chr(10).join(indent + line for line in after)}
{chr(10).join(indent + line for line in combined)}
        wb = wbk | back[w]
        known = ({known}) & ~(wfl | wb)
        out_v[w] = ({value}) & known
        out_k[w] = known
        out_b[w] = wb
        if wb != 0:
            held += 1
    return held
'''


def _rename(expression: str, count: int) -> str:
    """The writer's per-atom names (``val3``, ``kn3``) as the atoms' words."""
    for n in reversed(range(count)):   # val10 before val1
        expression = expression.replace(f"val{n}", f"wv{n}").replace(f"kn{n}", f"wk{n}")
    return expression
