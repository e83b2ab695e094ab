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

from typing import Any, Callable, Mapping, NamedTuple

from .._version import __version__
from . import arith
from .kernel import _Writer

# how a group of tags is answered
CONSTANT, STRINGS, BOOLS, INTS, UINTS, DOUBLES, VALUES_I, VALUES_U, VALUES_F, ONE_STRING = range(10)
"""``STRINGS``: a string tag the atom answers per entry of the batch's dictionary
(its row of the atom's string table). ``ONE_STRING``: string tags it answers by
one constant, given only to codes inside the dictionary. Which is which is the
plan's decision, never the dictionary's: a stream's batches share one kernel."""
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
    elsewhere), ``"x"`` (arithmetic over several fields) or ``"o"`` (an outcome
    column computed apart).
    Each group of string tags has its own string table (string and symbol
    share one where they agree); ``ints``/``uints``/``doubles``: the
    interval count (-1: many); ``specials``: which float specials need the
    atom's own answer, ``special_rows``: checked in the row loop (floats are
    common: intervals or values over them), else per word. An arithmetic atom
    (``source`` ``"x"``) is computed in the loop: ``form`` is its expression's
    shape (``plan/arith.ArithForm.shape``), ``operands`` its field count."""
    source: str
    groups: tuple[Group, ...] = ()
    field: int = -1
    ints: int | None = None
    uints: int | None = None
    doubles: int | None = None
    specials: tuple[int, ...] = ()
    special_rows: bool = False
    form: str = ""
    operands: int = 0


class FieldSignature(NamedTuple):
    """A field some atoms read: where its tag comes from (as an atom's
    ``source``) and the children any of them reads. Its arrays are read once a
    row, whatever number of atoms read it."""
    source: str
    children: tuple[str, ...]


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


def field_parameters(f: int, field: FieldSignature) -> list[str]:
    """Field ``f``'s arrays, in the order ``fused.field_arguments`` gives them."""
    params = [f"dt{f}" if field.source == "t" else f"dtv{f}"]
    for child in field.children:   # (a string child's values are dictionary codes)
        params += [f"d{'c' if child == 's' else child}{f}", f"d{_VALID[child]}{f}"]
    return params


def parameters(n: int, sig: AtomSignature) -> list[str]:
    """Atom ``n``'s own kernel parameters, in the order ``fused.lower`` gives them."""
    if sig.source == "o":
        return [f"a{n}"]
    if sig.source == "x":
        return [f"x{n}ok", f"x{n}ii", f"x{n}dd"] + [
            f"x{n}{a}{j}" for j in range(sig.operands) for a in ("t", "i", "iv", "f", "fv")]
    params = [f"oc{n}"]
    for k, group in enumerate(sig.groups):
        if group.how == STRINGS:
            params += [f"st{n}_{k}", f"width{n}_{k}"]
        elif group.how == ONE_STRING:
            params.append(f"width{n}_{k}")
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


def _membership(tags: tuple[int, ...] | list[int], tg: str) -> str:
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
            terms.append(f"({tg} == {lo})")
        elif lo == 0:
            terms.append(f"({tg} <= {hi})")
        else:
            terms.append(f"(({tg} >= {lo}) & ({tg} <= {hi}))")
    return " | ".join(terms) if terms else "False"


def _hoisted(n: int, sig: AtomSignature) -> list[str]:
    """Loop-invariant loads: constants, unrolled intervals, table sizes."""
    lines = [f"oc{n}_{k} = np.int32(oc{n}[{k}])" for k, g in enumerate(sig.groups)
             if g.how in (CONSTANT, ONE_STRING)]
    for kind, count in (("i", sig.ints), ("u", sig.uints), ("f", sig.doubles)):
        for j in range(count if count is not None and count > 0 else 0):
            lines += [f"{kind}s{n}_{j}_0 = {kind}s{n}[{j}, 0]",
                      f"{kind}s{n}_{j}_1 = {kind}s{n}[{j}, 1]"]
    for k, group in enumerate(sig.groups):   # a string table's last entry: BACK
        if group.how in (STRINGS, ONE_STRING):
            lines.append(f"sz{n}_{k} = np.uint32(width{n}_{k} - 1)")
    if _has(sig, BOOLS):
        lines += [f"bt{n}_0 = np.int32(bt{n}[0])", f"bt{n}_1 = np.int32(bt{n}[1])"]
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


def _lookup(n: int, kind: str, member: str, x: str, tg: str, emit: Emit) -> None:
    """A learned value's outcome (back when not learned yet): a branch, taken
    only by rows of a tag answered per value (rare by construction)."""
    tags, keys, outs = f"{kind}kt{n}", f"{kind}kv{n}", f"{kind}ko{n}"
    emit(f"if {member}:")
    emit("    lo = 0")
    emit(f"    hi = {keys}.shape[0]")
    emit("    while lo < hi:")
    emit("        mid = (lo + hi) >> 1")
    emit(f"        if {tags}[mid] < {tg} or ({tags}[mid] == {tg} and {keys}[mid] < {x}):")
    emit("            lo = mid + 1")
    emit("        else:")
    emit("            hi = mid")
    emit(f"    o = np.int32({outs}[lo]) if lo < {keys}.shape[0] and {tags}[lo] == {tg} "
         f"and {keys}[lo] == {x} else BACK")


def _field_row(f: int, field: FieldSignature, sigs: tuple[AtomSignature, ...],
               emit: Emit) -> None:
    """Field ``f``'s reads for row ``r``: its tag, and each child value some
    atom reads (once, whatever number of atoms read them)."""
    atoms = [sig for sig in sigs if sig.field == f]
    hows = {g.how for sig in atoms for g in sig.groups}
    emit(f"tg{f} = dt{f}[r]" if field.source == "t" else
         f"tg{f} = {int(field.source[1:])} * ((dtv{f}w >> j) & 1)")
    if hows & {STRINGS, ONE_STRING}:
        emit(f"cu{f} = np.uint32(dc{f}[r])")
    for kind, kinds in (("i", {INTS, VALUES_I}), ("u", {UINTS, VALUES_U})):
        if hows & kinds:
            emit(f"x{kind}{f} = d{kind}{f}[r]")
    if hows & {DOUBLES, VALUES_F} or any(sig.specials and sig.special_rows for sig in atoms):
        emit(f"xf{f} = df{f}[r]")
    for child in field.children:   # a row of a tag whose child is null is malformed
        tags = sorted({t for sig in atoms for g in sig.groups if g.child == child
                       for t in g.tags})
        emit(f"wc{f}{child} |= np.int64({_membership(tags, f'tg{f}')}) << j")


Names = dict[tuple[int, tuple[int, ...]], str]


def _atom_row(n: int, sig: AtomSignature, own_words: bool, names: Names, emit: Emit,
              forms: Mapping[str, Any]) -> None:
    """Lines putting atom ``n``'s outcome for row ``r`` in ``o`` and packing it;
    ``names``: the membership tests already computed this row, per field;
    ``forms``: the arithmetic forms by shape."""
    f = sig.field
    if sig.source == "o":
        emit(f"o = a{n}[r]")
    elif sig.source == "x":
        emit("o = BACK")
        for line in arith.row_lines(forms[sig.form], f"x{n}", "o"):
            emit(line)
    else:
        members = []
        for k, group in enumerate(sig.groups):
            name = names.get((f, group.tags))
            if name is None:
                name = names[(f, group.tags)] = f"g{n}_{k}"
                emit(f"{name} = {_membership(group.tags, f'tg{f}')}")
            members.append(name)
        emit("o = BACK")
        for k, group in enumerate(sig.groups):
            member = members[k]
            if group.how == CONSTANT:
                emit(f"o = oc{n}_{k} if {member} else o")
            elif group.how == STRINGS:
                emit(f"o = st{n}_{k}[min(cu{f}, sz{n}_{k})] if {member} else o")
            elif group.how == ONE_STRING:
                emit(f"o = (oc{n}_{k} if cu{f} < sz{n}_{k} else BACK) if {member} else o")
            elif group.how == BOOLS:
                emit(f"o = (bt{n}_1 if (db{f}w >> j) & 1 else bt{n}_0) if {member} else o")
            elif group.how in (INTS, UINTS, DOUBLES):
                kind = "iuf"[group.how - INTS]
                count = (sig.ints, sig.uints, sig.doubles)[group.how - INTS]
                within = _within(n, kind, count, f"x{kind}{f}", emit)
                emit(f"o = np.int32({within}) if {member} else o")
            else:
                kind = "iuf"[group.how - VALUES_I]
                _lookup(n, kind, member, f"x{kind}{f}", f"tg{f}", emit)
        floats = " | ".join(members[k] for k, g in enumerate(sig.groups) if g.child == "f") \
            or "False"
        if sig.specials and sig.special_rows:   # floats are common here: in the loop
            tests = [SPECIAL_TESTS[k].replace("xf", f"xf{f}") for k in range(4)]
            emit("special = " + " | ".join(tests[k] for k in sig.specials))
            emit(f"si = np.uint64(((tg{f} & 1) ^ 1) * 4" + "".join(
                f" + {tests[k]} * {k}" for k in sig.specials if k) + ")")
            emit(f"o = np.int32(sp{n}[si]) if special & ({floats}) else o")
        if sig.specials and not sig.special_rows:
            emit(f"wsp{n} |= np.int64({floats}) << j")
    emit(f"wv{n} |= np.int64(o == 1) << j")
    emit(f"wk{n} |= np.int64(o < 2) << j")
    if own_words:
        emit(f"wfl{n} |= np.int64(o == 4) << j")
        emit(f"wbk{n} |= np.int64(o == 8) << j")
    else:
        emit("flr |= o == 4")
        emit("bkr |= o == 8")


def _fixup(n: int, sig: AtomSignature) -> list[str]:
    f = sig.field
    """Per word: the float rows of atom ``n`` whose value is a special get the
    atom's own answer for it, visited one by one by their bits."""
    tests = " | ".join(SPECIAL_TESTS[k] for k in sig.specials)
    index = "".join(f" + {SPECIAL_TESTS[k]} * {k}" for k in sig.specials if k)
    return [
        f"x = wsp{n}",   # the rows of the atom's float groups
        "while x != 0:",
        "    low = x & -x",
        "    j = _DEBRUIJN[((low * 0x03F79D71B4CB0A89) >> 58) & 63]",
        "    x ^= low",
        f"    xf = df{f}[base + j]",
        f"    if {tests}:",
        f"        o = sp{n}[((dt{f}[base + j] & 1) ^ 1) * 4{index}]",
        f"        wv{n} = (wv{n} & ~low) | (low if o == 1 else 0)",
        f"        wk{n} = (wk{n} & ~low) | (low if o < 2 else 0)",
        f"        wfl{n} = (wfl{n} & ~low) | (low if o == 4 else 0)",
        f"        wbk{n} = (wbk{n} & ~low) | (low if o == 8 else 0)",
    ]


_DEBRUIJN_TABLE = [0] * 64
for _i in range(64):
    _DEBRUIJN_TABLE[(((1 << _i) * 0x03F79D71B4CB0A89) & ((1 << 64) - 1)) >> 58] = _i


def source(shape: tuple[object, ...], fields: tuple[FieldSignature, ...],
           sigs: tuple[AtomSignature, ...], forms: Mapping[str, Any] | None = None) -> str:
    """The module source of the fused kernel for ``shape`` over ``fields`` and
    atoms ``sigs`` (``forms``: the arithmetic atoms' forms by shape)."""
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
    for f, field in enumerate(fields):
        params += field_parameters(f, field)
        loads += [f"wc{f}{c} = 0" for c in field.children]
        if field.source.startswith("v"):
            loads.append(f"dtv{f}w = dtv{f}[w]")
        if "b" in field.children:
            loads.append(f"db{f}w = db{f}[w]")
        after += [f"wbk |= wc{f}{c} & ~d{_VALID[c]}{f}[w]" for c in field.children]
    for n, sig in enumerate(sigs):
        params += parameters(n, sig)
        hoists += _hoisted(n, sig)
        words = [f"wv{n}", f"wk{n}"] + ([f"wfl{n}", f"wbk{n}", f"wsp{n}"] if own[n] else [])
        loads += [f"{w} = 0" for w in words]
        if own[n]:
            after += _fixup(n, sig)
            after += [f"wfl |= wfl{n}", f"wbk |= wbk{n}"]
    for f, field in enumerate(fields):
        _field_row(f, field, sigs, emit)
    names: Names = {}
    for n, sig in enumerate(sigs):
        _atom_row(n, sig, own[n], names, emit, forms or {})
    if shared:
        emit("wfl |= np.int64(flr) << j")
        emit("wbk |= np.int64(bkr) << j")
    after.append("wb = wbk | back[w]")
    indent = "        "
    return f'''"""filtex fused kernel (filtex {__version__}) for {shape!r}
over {fields!r}
and {sigs!r}."""
import math
import numpy as np
from filtex.codegen.jit import njit
{arith.WITHIN if any(sig.source == "x" for sig in sigs) else ""}
_DEBRUIJN = np.array({_DEBRUIJN_TABLE!r}, np.int64)


@njit(cache=True, nogil=True)
def kernel(w0, w1, n, back, out_v, out_k, out_b, {", ".join(params)}):
{chr(10).join("    " + h for h in hoists)}
    BACK = np.int32(8)
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
{chr(10).join(indent + line for line in word_end(shape, len(sigs)))}
    return held
'''


def word_end(shape: tuple[object, ...], count: int) -> list[str]:
    """Once per word, after the row loop: the skeleton over the atoms' whole words
    (``kernel._Writer``; NOT is ``^ -1``) and the verdict words written, given
    ``wfl`` (failures) and ``wb`` (the rows marked for the per-message engine)."""
    writer = _Writer()
    value, known = writer.node(shape, list(range(count)))
    lines = [_rename(line.strip().replace(" ^ 1)", " ^ -1)"), count) for line in writer.lines]
    value, known = _rename(value, count), _rename(known, count)
    return lines + [f"known = ({known}) & ~(wfl | wb)", f"out_v[w] = ({value}) & known",
                    "out_k[w] = known", "out_b[w] = wb", "if wb != 0:", "    held += 1"]


def _rename(expression: str, count: int) -> str:
    """The writer's per-atom names (``val3``, ``kn3``) as the atoms' words."""
    for n in reversed(range(count)):   # val10 before val1
        expression = expression.replace(f"val{n}", f"wv{n}").replace(f"kn{n}", f"wk{n}")
    return expression
