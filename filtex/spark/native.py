"""A checked filter as native Spark Columns, exact by the same rules as the kernels.

The third reading of the batch engine's plan (``plan/skeleton.py``): the boolean
skeleton over atoms, each atom's answer per AMQP type tag from the dialect's
declared rules (``plan/atoms.py``). Where the kernel evaluates an atom's
mode with numba, this module writes it as a Spark expression over the field's
tag and typed child (``fields.py``):

- a constant answer per tag becomes a literal under ``tag IN (...)``;
- a numeric comparison becomes the exact intervals over the child's own type
  (``intervals.py``: no implicit cast, ulong as decimal(20,0)), with NaN, -0.0
  and the infinities given their own answers (Spark's NaN = NaN and -0.0 = 0.0
  never decide anything);
- a boolean a two-way CASE;
- a string predicate whose answer is plain text matching (``strings.text_form``:
  ``=``/``<>``/ordering by code point, ``IN``, ``LIKE`` under the dialect's
  escape rule) becomes ``=``, ``isin``, ``startswith``/``endswith``/``contains``
  or ``like`` with an explicit escape (``strings.py``).

Everything is Spark SQL text (``sql.py``), parsed once per filter. Each atom
yields a Kleene boolean (``value``), the rows where it fails (the
amqp failure rule: any failure makes the row unknown), the rows it cannot
answer natively (``back``: residual entries, values of types with no native
form, functions, a tag whose child is missing) and the rows no engine can read
(``unreadable``: unknown). Spark's AND, OR and NOT are Kleene logic, as
filtex's. The expressions use no arithmetic and no casts that ANSI mode could
make raise, compare strings in binary order and read timestamps with
``unix_millis``, so they do not depend on ANSI mode or the session time zone.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..plan import atoms as A
from . import arith
from . import sql as S
from .cases import AtomColumns, Cases
from .fields import SparkField
from .strings import string_answers

_FLOAT_SPECIALS = (math.nan, -0.0, math.inf, -math.inf)
COMPOSITES = frozenset((A.LIST, A.MAP, A.ARRAY, A.DESCRIBED))
"""Tags whose value is AMQP-encoded bytes (the ``e`` child): a row of one is
answered by the Arrow UDF, which decodes it (bytes that do not decode make
the row unknown; no Spark expression can tell)."""

@dataclass
class Translation:
    """A filter's native form, Spark SQL text: ``verdict`` (Kleene boolean, null =
    unknown) is exact where ``back`` is false (``back`` None: everywhere);
    ``matched`` is the rows whose verdict is TRUE (there too), a plain condition
    for ``where``; ``implied`` holds conditions every TRUE row with ``back`` false
    satisfies (for Parquet pushdown); ``notes`` say what goes to the Arrow UDF
    and why."""
    verdict: str
    back: str | None
    implied: list[str]
    notes: list[str]
    matched: str = "FALSE"


def atom_columns(compiled: Any, plan: Any, spark_field: SparkField, rc: Any) -> AtomColumns:
    """The Columns of one single-field atom from its tag plan."""
    cases = Cases(spark_field)
    notes: list[str] = []
    children = spark_field.children
    computed = None   # the atom as arithmetic, for the number tags answered per value
    if any(int(plan.modes[t]) == A.DATA for t in spark_field.tags if t in A.VALUE_CLASS):
        single = arith.single_field_form(compiled)
        if single is not None:
            form, arith_tags = single
            computed = arith.compute(form, [spark_field], arith_tags)
            arith_test = computed.within(form)
            arith_tags = frozenset(t for t in arith_tags if t in spark_field.tags
                                   and int(plan.modes[t]) == A.DATA)
            if arith_tags:
                cases.backs.append(f"({spark_field.tag_test(arith_tags)} AND {computed.bad})")
    for tag in sorted(spark_field.tags):
        mode = int(plan.modes[tag])
        name = _child_of(tag)
        if tag in COMPOSITES:   # only decoding tells a composite's bytes from garbage
            cases.const(tag, A.BACK)
            notes.append(f"{A_TAG_NAME(tag)} values: checked by the Arrow UDF")
            continue
        child = children.get(name)
        is_tag = cases.is_tag(tag)
        if child is not None and spark_field.tag_is_data:   # as the kernel
            cases.guard(name, child, tag)
        # a DATA tag with intervals of its own (the rules' for its kind, which its
        # child does not hold for the kernel)
        own = plan.own.get(tag) if mode == A.DATA and child is not None else None
        if tag in A.FLOAT_TAGS and child is not None and mode != A.DOUBLES and own is None:
            _float_specials(cases, tag, is_tag, child, plan,
                            int(plan.consts[tag]) if mode == A.CONST else None)
        if mode == A.CONST:
            cases.const(tag, int(plan.consts[tag]))
        elif mode == A.BOOLS and child is not None:
            f, t = (int(c) for c in plan.bools)
            if f == t:
                cases.const(tag, f)
            else:
                cases.sub(tag, f"({is_tag} AND {child})", t)
                cases.sub(tag, f"({is_tag} AND NOT {child})", f)
        elif mode in (A.INTS, A.UINTS) and child is not None:
            spans = plan.ints if mode == A.INTS else plan.uints
            _numeric(cases, tag, child, spans, mode == A.UINTS, spark_field)
        elif mode == A.DOUBLES and child is not None:
            _doubles(cases, tag, is_tag, child, plan, plan.doubles)
        elif mode == A.STRINGS and child is not None:
            if not string_answers(cases, compiled, tag, child, spark_field.pushable.get("s")):
                cases.const(tag, A.BACK)
                notes.append(f"{A_TAG_NAME(tag)} values: no native string form")
        elif own is not None and tag in A.FLOAT_TAGS:   # a float at single precision
            single = f"CAST(CAST({child} AS FLOAT) AS DOUBLE)" if tag == A.FLOAT else child
            _doubles(cases, tag, is_tag, single, plan, own)
        elif own is not None:
            _numeric(cases, tag, child, own, tag == A.ULONG, spark_field)
        elif computed is not None and tag in arith_tags:
            cases.answer(tag, arith_test)
            cases.implied_exact = False
        else:
            cases.const(tag, A.BACK)
            if tag > 1:
                notes.append(f"{A_TAG_NAME(tag)} values: "
                             + ("per value" if mode == A.DATA else "row by row"))
    out = cases.columns()
    out.notes = notes
    return out


def A_TAG_NAME(tag: int) -> str:   # noqa: N802 - reads as a table lookup
    from ..table.schema import TAG_NAMES
    return TAG_NAMES[tag] if 0 <= tag < len(TAG_NAMES) else str(tag)


def _child_of(tag: int) -> str | None:
    from ..table.schema import CHILD_OF_TAG
    return CHILD_OF_TAG.get(tag)


def _numeric(cases: Cases, tag: int, child: str, spans: Any, unsigned: bool,
             field: SparkField) -> None:
    rows = [(int(lo), int(hi)) for lo, hi in spans.tolist()]
    lit = S.ulong if unsigned else S.long
    ends = (0, 2**64 - 1) if unsigned else (-2**63, 2**63 - 1)
    cases.answer(tag, S.within_spans(child, rows, lit, ends))
    if not rows:
        return
    lo, hi = rows[0][0], rows[-1][1]
    if "timestamp" in field.pushable:   # compare the timestamp column itself: pushable
        column, lit = field.pushable["timestamp"], _timestamp
        lo, hi = (v if abs(v) <= _MAX_MILLIS else None for v in (lo, hi))
        if lo is None and hi is None:
            cases.implied_exact = False
            return
    else:
        column = field.pushable.get("u" if unsigned else "i")
    if column is None:
        cases.implied_exact = False
        return
    bounds = [f"{column} >= {lit(lo)}" if lo is not None and lo != ends[0] else None,
              f"{column} <= {lit(hi)}" if hi is not None and hi != ends[1] else None]
    bounds = [b for b in bounds if b]
    cases.implied.append(S.all_of(bounds) if bounds else f"{column} IS NOT NULL")


_MAX_MILLIS = (2**63 - 1) // 1000
"""Spark timestamps are microseconds in a long: milliseconds past this overflow."""


def _timestamp(millis: int) -> str:
    return f"timestamp_millis({S.long(millis)})"


def _float_specials(cases: Cases, tag: int, is_tag: str, child: str, plan: Any,
                    otherwise: Any) -> tuple[int, ...]:
    """NaN, -0.0 and the infinities, each with its own answer (the kernel's
    pseudo tags) where it differs from ``otherwise``: the answer the tag's
    other rows get for it (one code, or the codes (NaN, -0.0, +inf, -inf)
    Spark's expression for the other values gives them; None: always).
    Spark's NaN = NaN and -0.0 = 0.0 never decide anything."""
    base = A.PSEUDO_BASE + 4 * (tag - A.FLOAT)
    codes = tuple(int(plan.consts[base + j]) for j in range(4))
    if not isinstance(otherwise, tuple):
        otherwise = (otherwise,) * 4
    nan, negzero, pinf, ninf = codes
    if nan != otherwise[0]:
        cases.sub(tag, f"({is_tag} AND isnan({child}))", nan, otherwise[0])
    if pinf != otherwise[2]:
        cases.sub(tag, f"({is_tag} AND {child} = {S.double(math.inf)})", pinf, otherwise[2])
    if ninf != otherwise[3]:
        cases.sub(tag, f"({is_tag} AND {child} = {S.double(-math.inf)})", ninf, otherwise[3])
    if negzero != otherwise[1]:   # the sign of a zero shows in its text
        cases.sub(tag, f"({is_tag} AND {child} = {S.double(0.0)} AND "
                  f"CAST({child} AS STRING) = '-0.0')", negzero, otherwise[1])
    return codes


def _doubles(cases: Cases, tag: int, is_tag: str, child: str, plan: Any, held: Any) -> None:
    """The intervals ``held``; NaN, -0.0 and the infinities apart where Spark
    would answer them otherwise than the per-message engine."""
    spans = [(float(lo), float(hi)) for lo, hi in held.tolist()]

    def within(test: Callable[[float, float], bool]) -> int:
        return A.TRUE if any(test(lo, hi) for lo, hi in spans) else A.FALSE
    # what the spans answer in Spark for NaN (never within: above every bound
    # but NaN), -0.0 (as 0.0), +inf and -inf
    spark = (A.FALSE, within(lambda lo, hi: lo <= 0.0 <= hi),
             within(lambda lo, hi: hi == math.inf), within(lambda lo, hi: lo == -math.inf))
    specials = _float_specials(cases, tag, is_tag, child, plan, spark)
    cases.answer(tag, S.within_spans(child, spans, S.double))
    if spans and A.TRUE not in specials:
        lo, hi = spans[0][0], spans[-1][1]
        bounds = [f"{child} >= {S.double(lo)}" if lo != -math.inf else None,
                  f"{child} <= {S.double(hi)}" if hi != math.inf else None]
        bounds = [b for b in bounds if b]
        cases.implied.append(S.all_of(bounds) if bounds else f"{child} IS NOT NULL")
    elif spans:
        cases.implied_exact = False


# --- the whole filter ---------------------------------------------------------------

def translate(ready: Any, field_of: Callable[[tuple], SparkField], rc: Any) -> Translation | None:
    """The filter's native form, or None when no part of it is native (no kernel
    plan, or arithmetic: it runs entirely through the Arrow UDF)."""
    plan = ready.plan
    if plan.shape is None:
        return None
    atoms: list[AtomColumns] = []
    notes: list[str] = []
    for index, compiled in enumerate(ready.atoms):
        atom = compiled.atom
        if atom.arith is not None:   # arithmetic over several fields
            accepted = frozenset(np.flatnonzero(ready.operand_tags[index]).tolist())
            atoms.append(arith.answer(atom.arith, [field_of(ref) for ref in atom.arith.fields],
                                      accepted, AtomColumns))
            continue
        spark_field = field_of(atom.field)
        tag_plan = ready.tag_plan(index, frozenset(spark_field.tags), rc)
        columns = atom_columns(compiled, tag_plan, spark_field, rc)
        where = f"predicate {index + 1} (offset {atom.node.offset})"
        notes.extend(f"{where}: {n}" for n in columns.notes)
        atoms.append(columns)
    shape = _shape_of(plan)
    value = _skeleton(shape, [a.value for a in atoms])
    poison = _poison(atoms)
    verdict = value if poison is None else f"CASE WHEN {poison} THEN NULL ELSE {value} END"
    back = S.any_of(list(dict.fromkeys(a.back for a in atoms if a.back)))
    implied = [a.implied for a in _necessary(plan, atoms) if a.implied is not None]
    # TRUE: the skeleton's TRUE set, and no failure in an atom it does not decide
    decided = _decided(shape, True)
    rest = _poison([a for i, a in enumerate(atoms) if i not in decided])
    matched = _rows(shape, atoms, True)
    if rest is not None:
        matched = f"{matched} AND NOT ({rest})"
    return Translation(verdict, back, list(dict.fromkeys(implied)), notes, matched)


def _poison(atoms: list[AtomColumns]) -> str | None:
    """Rows where one of ``atoms`` fails or cannot be read: unknown (the amqp rule)."""
    return S.any_of(list(dict.fromkeys(
        [a.fail for a in atoms if a.fail] + [a.unreadable for a in atoms if a.unreadable])))


def _rows(shape: tuple, atoms: list[AtomColumns], want: bool) -> str:
    """The rows where the skeleton is ``want`` (TRUE or FALSE), from the atoms' sets
    (failures aside): AND is TRUE where all items are, FALSE where one is."""
    kind = shape[0]
    if kind == "atom":
        atom = atoms[shape[1]]
        return atom.true if want else atom.false
    if kind == "not":
        return _rows(shape[1], atoms, not want)
    items = [_rows(s, atoms, want) for s in shape[1]]
    return S.all_of(items) if (kind == "and") == want else S.any_of(items)


def _decided(shape: tuple, want: bool) -> set[int]:
    """The atoms every row where the skeleton is ``want`` has decided (TRUE or
    FALSE): being in their set, they did not fail there."""
    kind = shape[0]
    if kind == "atom":
        return {shape[1]}
    if kind == "not":
        return _decided(shape[1], not want)
    if (kind == "and") == want:
        return set().union(*(_decided(s, want) for s in shape[1]))
    return set()


def _shape_of(plan: Any) -> tuple:
    """The skeleton with atom indexes (``Plan.shape`` drops them: positional)."""
    counter = iter(range(len(plan.atoms)))

    def walk(shape: tuple) -> tuple:
        if shape[0] == "atom":
            return ("atom", next(counter))
        if shape[0] == "not":
            return ("not", walk(shape[1]))
        return (shape[0], tuple(walk(s) for s in shape[1]))
    return walk(plan.shape)


def _skeleton(shape: tuple, values: list) -> Any:
    kind = shape[0]
    if kind == "atom":
        return values[shape[1]]
    if kind == "not":
        return f"(NOT {_skeleton(shape[1], values)})"
    items = [_skeleton(s, values) for s in shape[1]]
    return "(" + f" {kind.upper()} ".join(items) + ")"


def _necessary(plan: Any, atoms: list[AtomColumns]) -> list[AtomColumns]:
    """The atoms a TRUE verdict needs TRUE: the top-level conjuncts."""
    shape = _shape_of(plan)
    if shape[0] == "atom":
        return [atoms[shape[1]]]
    if shape[0] == "and":
        return [atoms[s[1]] for s in shape[1] if s[0] == "atom"]
    return []
