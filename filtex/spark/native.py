"""A checked filter as native Spark Columns, exact by the same rules as the kernels.

The third reading of the batch engine's plan (``arrow/plan.py``): the boolean
skeleton over atoms, each atom's answer per AMQP type tag learned from the
per-message engine (``arrow/atoms.py``). Where the kernel evaluates an atom's
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
  or ``like`` with an explicit escape; it is used for a tag only after the
  per-message engine, run on probe strings, agreed with the expression's
  meaning.

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
import re
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
from proton import Described, symbol

from ..arrow import atoms as A
from ..arrow import intervals
from ..arrow.strings import TextForm, like_pattern, text_form
from ..sql import ast
from . import arith
from . import sql as S
from .fields import SparkField

_FLOAT_SPECIALS = (math.nan, -0.0, math.inf, -math.inf)


@dataclass
class AtomColumns:
    """One atom as Spark SQL (``None`` where no row can be so). ``true`` and
    ``false`` are the rows where the atom is TRUE and FALSE (readable rows whose
    value the atom does not fail on; exact where ``back`` is false): monotone
    conditions whose null means "not in the set"."""
    value: str
    fail: str | None = None
    back: str | None = None
    unreadable: str | None = None
    implied: str | None = None
    notes: list[str] = field(default_factory=list)
    true: str = "FALSE"
    false: str = "FALSE"


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


def _lit(code: int) -> str:
    return "TRUE" if code == A.TRUE else "FALSE" if code == A.FALSE else S.NULL_BOOLEAN


class _Cases:
    """An atom's per-tag answers: constants per tag, Kleene expressions answering
    whole tags, and sub-cases (a condition within one tag: NaN, a boolean value)
    that come before them."""

    def __init__(self, field: SparkField) -> None:
        self.field = field
        self.tag = field.tag
        self.consts: dict[int, list[int]] = {}      # code -> tags
        self.subs: list[tuple[int, str, int, Any]] = []   # (tag, condition within it,
        # code, the code the tag's own answer gives those rows: None if not known)
        self.answers: dict[str, list[int]] = {}     # Kleene boolean -> the tags it answers
        self.backs: list[str] = []
        self.implied: list[str] = []
        self.implied_exact = True                    # every TRUE tag has an implied condition
        self.back_tags: list[int] = []
        self.guards: dict[str, tuple[str, list[int]]] = {}   # child -> (expression, tags)

    def guard(self, name: str, child: str, tag: int) -> None:
        """A row of ``tag`` whose child is null (a malformed table) is unreadable."""
        self.guards.setdefault(name, (child, []))[1].append(tag)

    def answer(self, tag: int, expr: str) -> None:
        """``expr`` answers every row of ``tag`` not taken by a sub-case before it."""
        self.answers.setdefault(expr, []).append(tag)

    def is_tag(self, tag: int) -> str:
        return self.field.tag_test([tag])

    def const(self, tag: int, code: int) -> None:
        if code == A.BACK:
            self.back_tags.append(tag)
        else:
            self.consts.setdefault(int(code), []).append(tag)
            if code == A.TRUE:
                self.implied_exact = False

    def sub(self, tag: int, condition: str, code: int, natural: Any = None) -> None:
        """A constant answer for the rows of ``condition`` (within ``tag``), where the
        tag's own answer would give them ``natural`` (None: not known)."""
        if code == A.BACK:
            self.backs.append(condition)
        else:
            self.subs.append((tag, condition, int(code), natural))
            if code == A.TRUE:
                self.implied_exact = False

    def columns(self) -> AtomColumns:
        spark_field, tag = self.field, self.tag
        # the sub-cases (NaN, a boolean value) first, then one WHEN per answer for all its tags
        branches = [(c, _lit(A.UNKNOWN if code == A.FAIL else code))
                    for _, c, code, _ in self.subs]
        branches.extend((S.tag_in(tag, tags), expr) for expr, tags in self.answers.items())
        for code in (A.TRUE, A.FALSE):
            if self.consts.get(code):
                branches.append((S.tag_in(tag, self.consts[code]), _lit(code)))
        value = ("CASE " + " ".join(f"WHEN {c} THEN {e}" for c, e in branches) + " END"
                 if branches else S.NULL_BOOLEAN)
        # one test for the failing and the unreadable tags: the row's tag is not
        # one of those that answer (or go to the UDF, which is asked first)
        fail_tags = set(self.consts.get(A.FAIL, []))
        if fail_tags or spark_field.tag_is_data:
            answering = sorted(t for t in spark_field.tags if t not in fail_tags)
            fails = [f"NOT ({S.tag_in(tag, answering)})" if answering else "TRUE"]
        else:
            fails = []
        # a row whose tag names a null child: no engine can read it (unknown)
        guards = [f"({S.tag_in(tag, tags)} AND {child} IS NULL)"
                  for child, tags in self.guards.values()]
        fail = S.any_of(fails + [c for _, c, code, _ in self.subs if code == A.FAIL] + guards)
        back = S.any_of([S.tag_in(tag, self.back_tags) if self.back_tags else None]
                        + self.backs + [spark_field.back])
        implied = None
        if self.implied_exact:   # one condition per child, however many tags share it
            implied = S.any_of(list(dict.fromkeys(self.implied))) or "FALSE"
        return AtomColumns(value, fail, back, spark_field.unreadable, implied,
                           true=self._rows_of(A.TRUE), false=self._rows_of(A.FALSE))

    def _rows_of(self, code: int) -> str:
        """The rows where the atom answers ``code`` (TRUE or FALSE): readable rows of
        a tag answering it (the child not null where the tag has one), less the
        sub-cases that answer otherwise."""
        spark_field = self.field
        guarded = {t: child for child, tags in self.guards.values() for t in tags}
        subs_of: dict[int, list[str]] = {}
        parts = []
        for tag, condition, answer, natural in self.subs:
            if natural is None or (natural == code) != (answer == code):
                subs_of.setdefault(tag, []).append(condition)   # taken out of the tag's answer
                if answer == code:
                    parts.append(condition)

        def rest_of(tags: list[int], expr: str | None) -> None:
            """``tags`` answer by ``expr`` (None: ``code`` itself) but for their sub-cases."""
            by_guard: dict[tuple, list[int]] = {}
            for t in tags:
                child = guarded.get(t)
                reads_child = expr is not None and child is not None and child in expr
                key = (None if reads_child else child, tuple(subs_of.get(t, ())))
                by_guard.setdefault(key, []).append(t)
            for (child, subs), group in by_guard.items():
                items = [spark_field.tag_test(group)]
                if child is not None:
                    items.append(f"{child} IS NOT NULL")
                if expr is not None:
                    items.append(expr if code == A.TRUE else f"NOT {expr}")
                items.extend(f"NOT {c}" for c in subs)
                parts.append(S.all_of(items))
        if self.consts.get(code):
            rest_of(self.consts[code], None)
        for expr, tags in self.answers.items():
            if expr in ("TRUE", "FALSE") or expr.startswith(("(TRUE)", "(FALSE)")):
                literal = expr.strip("()") == "TRUE"
                if literal == (code == A.TRUE):
                    rest_of(tags, None)
            else:
                rest_of(tags, expr if expr.startswith("(") else f"({expr})")
        rows = S.any_of(parts) or "FALSE"
        if spark_field.unreadable is not None and rows != "FALSE":
            rows = f"({rows} AND NOT ({spark_field.unreadable}))"
        return rows


def atom_columns(compiled: Any, plan: Any, spark_field: SparkField, rc: Any) -> AtomColumns:
    """The Columns of one single-field atom from its tag plan."""
    cases = _Cases(spark_field)
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
        child = children.get(name)
        is_tag = cases.is_tag(tag)
        if child is not None and spark_field.tag_is_data:   # as the kernel
            cases.guard(name, child, tag)
        single = (tag == A.FLOAT and mode == A.DATA and child is not None
                  and _single_precision(compiled, rc))
        # a DATA tag's one answer for every value, if it has one
        typed = _constant_by_type(compiled, tag, rc) if not single and (
            mode == A.DATA or (mode == A.FALLBACK and tag in _OPAQUE)) else None
        if tag in A.FLOAT_TAGS and child is not None and mode != A.DOUBLES and not single:
            _float_specials(cases, tag, is_tag, child, plan,
                            int(plan.consts[tag]) if mode == A.CONST else typed)
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
            _doubles(cases, tag, is_tag, child, plan)
        elif mode == A.STRINGS and child is not None:
            if _strings(cases, compiled, tag, child, rc, spark_field.pushable.get("s")):
                pass
            elif (typed := _constant_by_type(compiled, tag, rc)) is not None:
                cases.const(tag, typed)
            else:
                cases.const(tag, A.BACK)
                notes.append(f"{A_TAG_NAME(tag)} values: no native string form")
        elif single:
            _doubles(cases, tag, is_tag, f"CAST(CAST({child} AS FLOAT) AS DOUBLE)", plan)
        elif computed is not None and tag in arith_tags:
            cases.answer(tag, arith_test)
            cases.implied_exact = False
        elif typed is not None:
            cases.const(tag, typed)
        else:
            cases.const(tag, A.BACK)
            if tag > 1:
                notes.append(f"{A_TAG_NAME(tag)} values: "
                             + ("per value" if mode == A.DATA else "row by row"))
    out = cases.columns()
    out.notes = notes
    return out


def _single_precision(compiled: Any, rc: Any) -> bool:
    """Does a numeric comparison answer a float as the intervals answer its
    single-precision value (as it travels on the wire)? Then a float child is
    compared after rounding to single precision (``CAST(f AS FLOAT)``)."""
    if compiled.numeric is None:
        return False
    found = intervals.of_form(compiled.numeric)[2]
    with np.errstate(over="ignore"):
        singles = np.array(intervals.double_probes(compiled.numeric), np.float32)
    for v in singles.astype(float).tolist():
        if math.isfinite(v):
            expected = A.TRUE if intervals.contains(found, v) else A.FALSE
            if A.run(compiled.on_value, A.FLOAT_TAGS[A.FLOAT](v), rc) != expected:
                return False
    return True


def _arithmetic_without_plus(compiled: Any) -> bool:
    """Arithmetic compared with constants and no ``+`` (which joins strings): a
    string operand's answer is its type's (probed on numeric strings too)."""
    from ..arrow.arith import arith_form
    form = arith_form(compiled.atom.node)
    return form is not None and "+" not in form.shape()


def _truth_of_field(node: Any) -> bool:
    """``x`` or ``NOT x`` in a boolean position: a non-boolean's answer is its type's."""
    from ..sql import ast
    while isinstance(node, ast.Not):
        node = node.operand
    return isinstance(node, ast.Field)


def _constant_by_type(compiled: Any, tag: int, rc: Any) -> int | None:
    """The one answer a string predicate (``x = 'a'``, ``x LIKE 'a%'``), or a
    numeric one the tag's values do not compare with, gives for every value of
    ``tag``, if it gives one. The kernel answers such a tag per
    value present in a batch; a native expression needs the answer for every
    value, so it is taken only for predicates over string constants, probed
    on the ends of the range, the usual suspects, and every number a constant
    spells (a dialect that converted strings would answer those apart); never
    for constants with a digit ('2025-06-24T13:37:59Z' is a timestamp to amqp)."""
    if tag in A.STRING_TAGS:   # strings: only where a string's value cannot matter
        if not (_truth_of_field(compiled.atom.node) or _arithmetic_without_plus(compiled)):
            return None
        cls = A.STRING_TAGS[tag]
        answers = {A.run(compiled.on_value, p if cls is str else cls(p), rc)
                   for p in _probe_strings(TextForm("in", [], False))
                   if tag != A.CHAR or len(p) == 1}
        return answers.pop() if len(answers) == 1 else None
    if tag in _OPAQUE:
        return _opaque_constant(compiled, tag, rc)
    if tag not in A.VALUE_CLASS:
        return None
    convert = float if tag in A.FLOAT_TAGS else int
    lo, hi = A.INT_TAGS.get(tag, (None, 0, 2**64 - 1))[1:]
    if compiled.numeric is not None:   # a comparison with numbers the tag does not
        # answer by value (a timestamp with a decimal): probed around the constants
        probes = intervals.double_probes(compiled.numeric) if tag in A.FLOAT_TAGS else \
            intervals.int_probes(compiled.numeric, lo, hi)
        answers = {A.run(compiled.on_value, A.VALUE_CLASS[tag](convert(v)), rc)
                   for v in probes}
        return answers.pop() if len(answers) == 1 else None
    from ..arrow.arith import arith_form
    form = arith_form(compiled.atom.node)
    if form is not None:   # arithmetic refusing the type (amqp's double % 2 fails):
        # only a failure or unknown for every probe is taken (a value can always
        # bring a computed result to the constants)
        spread = [c * k + d for c in intervals.constants(form.comparison)
                  for k in (1, -1, 2, 0.5) for d in (0, 1, -1)
                  if isinstance(c, (int, float))] + [0, 1, -1, 2, -2, 7]
        if tag in A.FLOAT_TAGS:
            probes = intervals.double_probes(None) + [float(v) for v in spread]
        else:
            probes = intervals.int_probes(None, lo, hi) + [
                int(v) for v in spread if float(v).is_integer() and lo <= v <= hi]
        answers = {A.run(compiled.on_value, A.VALUE_CLASS[tag](convert(v)), rc)
                   for v in probes}
        found = answers.pop() if len(answers) == 1 else None
        return found if found in (A.FAIL, A.UNKNOWN) else None
    node = compiled.atom.node
    form = text_form(node, compiled.atom.semantics)
    if form is None and _truth_of_field(node):
        form = TextForm("in", [], False)
    if isinstance(node, ast.PropertyMatch) and isinstance(node.ref, str):
        # a property filter's string pattern: numbers never match one, but probe
        # every number it spells too
        texts, digits_allowed = re.findall(r"-?\d+(?:\.\d+)?", node.ref), True
    elif form is None:
        return None
    else:
        texts, digits_allowed = (
            form.arg if form.kind == "in" else [form.arg[1]] if form.kind == "cmp" else
            ["".join(c for c in seg if c is not None) for seg in form.arg]), False
    if not digits_allowed and any(c.isdigit() for text in texts for c in text):
        return None   # a number, a date or a duration: a dialect may read it as one
    numbers: list[Any] = []
    for text in texts:
        for parse in (int, float):
            try:
                numbers.append(parse(text.strip()))
            except (ValueError, OverflowError):
                pass
    if tag in A.FLOAT_TAGS:
        probes = intervals.double_probes(None) + [float(n) for n in numbers if
                                                   math.isfinite(float(n))]
    else:
        cls, lo, hi = A.INT_TAGS.get(tag, (None, 0, 2**64 - 1))
        probes = intervals.int_probes(None, lo, hi) + [
            int(n) for n in numbers if (type(n) is int or float(n).is_integer())
            and lo <= int(n) <= hi]
    answers = {A.run(compiled.on_value, A.VALUE_CLASS[tag](convert(v)), rc) for v in probes}
    return answers.pop() if len(answers) == 1 else None


_OPAQUE = {A.BINARY: lambda t: [t.encode()], A.UUID: lambda t: [],
           A.LIST: lambda t: [[t], [t, t], [1]], A.MAP: lambda t: [{t: t}, {"k": t}],
           A.ARRAY: lambda t: [], A.DESCRIBED: lambda t: [Described(symbol(t), t)],
           A.DECIMAL32: lambda t: [], A.DECIMAL64: lambda t: [], A.DECIMAL128: lambda t: []}
"""Tags with no child the expressions compare (bytes, composites), and probe
values spelling a constant ``t`` the way such a value could hold it."""
_DECIMALS = (A.DECIMAL32, A.DECIMAL64, A.DECIMAL128)


def _opaque_constant(compiled: Any, tag: int, rc: Any) -> int | None:
    """The one answer a comparison with constants gives every value of an opaque
    tag, if it gives one: a string or number compared with bytes or a list is a
    type mismatch whatever the bytes or items. Probed on samples, and on values
    holding each constant; never for decimals against numbers or digits (a
    decimal's answer depends on its value)."""
    form = text_form(compiled.atom.node, compiled.atom.semantics)
    if form is not None:
        texts = form.arg if form.kind == "in" else [form.arg[1]] if form.kind == "cmp" else \
            ["".join(c for c in seg if c is not None) for seg in form.arg]
        if tag in _DECIMALS and any(c.isdigit() for text in texts for c in text):
            return None
    elif compiled.numeric is not None and tag not in _DECIMALS:
        texts = [str(c) for c in intervals.constants(compiled.numeric)]
    elif _truth_of_field(compiled.atom.node):
        texts = []
    else:
        return None
    probes = list(A.SAMPLES[tag]) + [v for t in texts[:32] for v in _OPAQUE[tag](t)]
    answers = {A.run(compiled.on_value, v, rc) for v in probes}
    return answers.pop() if len(answers) == 1 else None


def A_TAG_NAME(tag: int) -> str:   # noqa: N802 - reads as a table lookup
    from ..arrow.schema import TAG_NAMES
    return TAG_NAMES[tag] if 0 <= tag < len(TAG_NAMES) else str(tag)


def _child_of(tag: int) -> str | None:
    from ..arrow.schema import CHILD_OF_TAG
    return CHILD_OF_TAG.get(tag)


def _spans(child: str, spans: list, lit: Callable[[Any], str], ends: tuple = ()) -> str:
    """``child`` within one of the sorted inclusive intervals (``ends``: the least
    and the greatest value of the child's type, which need no test)."""
    if not spans:
        return "FALSE"
    least, greatest = ends or (None, None)

    def within(lo: Any, hi: Any) -> str:
        if lo == hi:
            return f"{child} = {lit(lo)}"
        if lo == least:
            return f"{child} <= {lit(hi)}" if hi != greatest else f"{child} IS NOT NULL"
        return f"{child} >= {lit(lo)}" if hi == greatest else \
            f"{child} BETWEEN {lit(lo)} AND {lit(hi)}"
    return S.any_of([within(lo, hi) for lo, hi in spans])


def _numeric(cases: _Cases, tag: int, child: str, spans: Any, unsigned: bool,
             field: SparkField) -> None:
    rows = [(int(lo), int(hi)) for lo, hi in spans.tolist()]
    lit = S.ulong if unsigned else S.long
    ends = (0, 2**64 - 1) if unsigned else (-2**63, 2**63 - 1)
    cases.answer(tag, _spans(child, rows, lit, ends))
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


def _float_specials(cases: _Cases, tag: int, is_tag: str, child: str, plan: Any,
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


def _doubles(cases: _Cases, tag: int, is_tag: str, child: str, plan: Any) -> None:
    """The intervals; NaN, -0.0 and the infinities apart where Spark would answer
    them otherwise than the per-message engine."""
    spans = [(float(lo), float(hi)) for lo, hi in plan.doubles.tolist()]

    def within(test: Callable[[float, float], bool]) -> int:
        return A.TRUE if any(test(lo, hi) for lo, hi in spans) else A.FALSE
    # what the spans answer in Spark for NaN (never within: above every bound
    # but NaN), -0.0 (as 0.0), +inf and -inf
    spark = (A.FALSE, within(lambda lo, hi: lo <= 0.0 <= hi),
             within(lambda lo, hi: hi == math.inf), within(lambda lo, hi: lo == -math.inf))
    specials = _float_specials(cases, tag, is_tag, child, plan, spark)
    cases.answer(tag, _spans(child, spans, S.double))
    if spans and A.TRUE not in specials:
        lo, hi = spans[0][0], spans[-1][1]
        bounds = [f"{child} >= {S.double(lo)}" if lo != -math.inf else None,
                  f"{child} <= {S.double(hi)}" if hi != math.inf else None]
        bounds = [b for b in bounds if b]
        cases.implied.append(S.all_of(bounds) if bounds else f"{child} IS NOT NULL")
    elif spans:
        cases.implied_exact = False


# --- strings --------------------------------------------------------------------------

def _probe_strings(form: TextForm, numbers: Any = None) -> list[str]:
    """Strings around a text form's constants, and the ones where engines differ
    (case, combining marks, astral and halfwidth characters, newlines)."""
    texts: list[str] = []
    if form.kind == "like":
        for fill, one in (("", "x"), ("zz", "\n"), ("%", "\U0001F600"), ("_", "_")):
            texts.append(fill.join("".join(one if c is None else c for c in seg)
                                   for seg in form.arg))
        texts.extend("".join(c for c in seg if c is not None) for seg in form.arg)
    elif form.kind == "cmp":
        texts.append(form.arg[1])
    else:
        texts.extend(form.arg[:32])
    for c in (intervals.constants(numbers) if numbers is not None else []):
        texts.extend({str(c), repr(c)})
    found = {"0", "1", "-1", "1.5", "1e3", "NaN", "true", "", " ", "a", "A", "z", "\n", "\uFF61", "\U0001F600", "\u00e9", "e\u0301", "%", "_",
             "\\"}
    for t in texts:
        found.update({t, t + "x", "x" + t, t[:-1], t[1:], t.upper(), t.lower(), t.swapcase(),
                      t + "\n", t + "\U0001F600", t + "\x00"})
    return sorted(found)


def _like(segments: list, s: str) -> bool:
    """A LIKE pattern's segments (between ``%``; None is ``_``, any one code point)
    match all of ``s``: the first at the start, the last at the end, the others
    leftmost in order (greedy is exact for such patterns; a backtracking regex
    is exponential in the number of ``%``)."""
    def at(seg: list, i: int) -> bool:
        return i + len(seg) <= len(s) and all(c is None or s[i + k] == c
                                              for k, c in enumerate(seg))
    first = segments[0]
    if len(segments) == 1:
        return len(s) == len(first) and at(first, 0)
    last = segments[-1]
    pos, end = len(first), len(s) - len(last)
    if end < pos or not at(first, 0) or not at(last, end):
        return False
    for seg in segments[1:-1]:
        while pos + len(seg) <= end and not at(seg, pos):
            pos += 1
        if pos + len(seg) > end:
            return False
        pos += len(seg)
    return True


def _model(form: TextForm) -> Callable[[str], bool]:
    """What the Spark expression answers for a string (binary, code-point order)."""
    if form.kind == "like":
        segments = form.arg
        test = lambda s: _like(segments, s)   # noqa: E731
    elif form.kind == "cmp":
        op, text = form.arg
        test = {"=": lambda s: s == text, "<>": lambda s: s != text,
                "<": lambda s: s < text, "<=": lambda s: s <= text,
                ">": lambda s: s > text, ">=": lambda s: s >= text}[op]
    else:
        members = set(form.arg)
        test = lambda s: s in members   # noqa: E731
    return (lambda s: not test(s)) if form.negate else test


def _spark_text(form: TextForm, child: str) -> str:
    if form.kind == "in":
        test = f"{child} IN ({', '.join(S.string(t) for t in form.arg)})"
    elif form.kind == "cmp":
        op, text = form.arg
        test = f"{child} {op} {S.string(text)}"
    else:
        test = _like_text(form.arg, child)
    return f"NOT ({test})" if form.negate else f"({test})"


def _like_text(segments: list, child: str) -> str:
    """LIKE as Spark SQL that runs in linear time. Spark's LIKE is a backtracking
    regular expression (``'%a%a%a%b'`` over a long string of ``a`` never ends),
    so it is used only where at most one ``%`` can backtrack; plain segments are
    ``=``/``startswith``/``endswith``/``contains``, and the middle segments of a
    longer pattern are found leftmost, in order, by ``locate`` (greedy is exact).
    A middle ``_`` in such a pattern has no linear form (``NotWritable``)."""
    def plain(seg: list) -> bool:
        return all(c is not None for c in seg)

    def text(seg: list) -> str:
        return S.string("".join(seg))

    def like(pattern: list) -> str:   # an explicit escape: Spark's default is the backslash
        return f"{child} LIKE {S.string(like_pattern(pattern, '!'))} ESCAPE '!'"
    if len(segments) == 1:
        return f"{child} = {text(segments[0])}" if plain(segments[0]) else like(segments)
    first, last = segments[0], segments[-1]
    middle = [seg for seg in segments[1:-1] if seg]
    if not all(plain(seg) for seg in segments) and (
            len(segments) == 2 or (len(segments) == 3 and not last)):
        return like(segments)   # 'x%y', 'x%y%': only one % can backtrack
    tests = []
    if first:
        tests.append(f"startswith({child}, {text(first)})" if plain(first) else like([first, []]))
    if last:
        tests.append(f"endswith({child}, {text(last)})" if plain(last) else like([[], last]))
    if first and last:
        tests.append(f"char_length({child}) >= {len(first) + len(last)}")
    if len(middle) == 1 and not first and not last and plain(middle[0]):
        tests.append(f"contains({child}, {text(middle[0])})")
    elif middle:
        if not all(plain(seg) for seg in middle):
            raise S.NotWritable("a LIKE pattern with '_' between several '%' has no linear "
                                "Spark form")
        found = (f"aggregate(array({', '.join(text(seg) for seg in middle)}), "
                 f"{len(first) + 1}, (filtex_p, filtex_m) -> CASE WHEN filtex_p = 0 THEN 0 "
                 f"WHEN locate(filtex_m, {child}, filtex_p) = 0 THEN 0 "
                 f"ELSE locate(filtex_m, {child}, filtex_p) + char_length(filtex_m) END)")
        tests.append(f"{found} BETWEEN 1 AND char_length({child}) - {len(last) - 1}")
    return S.all_of(tests) if tests else "TRUE"


def _implied_text(form: TextForm, pushable: str | None) -> str | None:
    """A condition every string making the form TRUE satisfies, Parquet-pushable."""
    if form.negate or pushable is None:
        return None
    if form.kind == "in":
        return f"{pushable} IN ({', '.join(S.string(t) for t in form.arg)})"
    if form.kind == "cmp":
        op, text = form.arg
        return None if op == "<>" else f"{pushable} {op} {S.string(text)}"
    prefix = ""
    for c in form.arg[0]:
        if c is None:
            break
        prefix += c
    if len(form.arg) == 1 and len(prefix) == len(form.arg[0]):
        return f"{pushable} = {S.string(prefix)}"
    return f"startswith({pushable}, {S.string(prefix)})" if prefix else None


def _strings(cases: _Cases, compiled: Any, tag: int, child: Any, rc: Any,
             pushable: Any) -> bool:
    """The tag's string answers natively, if the engine agrees with the text form
    (or gives one answer for every probe: ``IS NULL``, a type refusal)."""
    cls = A.STRING_TAGS[tag]
    probes = _probe_strings(text_form(compiled.atom.node, compiled.atom.semantics)
                            or TextForm("in", [], False), compiled.numeric)
    if tag == A.CHAR:
        probes = [p for p in probes if len(p) == 1]
    answers = [A.run(compiled.on_value, p if cls is str else cls(p), rc) for p in probes]
    if len(set(answers)) == 1 and (A._type_only(compiled.atom.node)
                                   or compiled.numeric is not None):
        cases.const(tag, answers[0])
        return True
    form = text_form(compiled.atom.node, compiled.atom.semantics)
    if form is None:
        return False
    model = _model(form)
    if any(answer != (A.TRUE if model(p) else A.FALSE) for p, answer in zip(probes, answers)):
        return False
    try:
        text = _spark_text(form, child)
        implied = _implied_text(form, pushable)
    except S.NotWritable:
        return False
    cases.answer(tag, text)
    if implied is None:
        cases.implied_exact = False
    else:
        cases.implied.append(implied)
    return True


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
