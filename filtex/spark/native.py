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

from ..arrow import atoms as A
from ..arrow import intervals
from ..arrow.strings import TextForm, like_pattern, text_form
from . import sql as S
from .fields import SparkField

_FLOAT_SPECIALS = (math.nan, -0.0, math.inf, -math.inf)


@dataclass
class AtomColumns:
    """One atom as Spark SQL (``None`` where no row can be so)."""
    value: str
    fail: str | None = None
    back: str | None = None
    unreadable: str | None = None
    implied: str | None = None
    notes: list[str] = field(default_factory=list)


@dataclass
class Translation:
    """A filter's native form, Spark SQL text: ``verdict`` (Kleene boolean, null =
    unknown) is exact where ``back`` is false (``back`` None: everywhere);
    ``implied`` holds conditions every TRUE row with ``back`` false satisfies
    (for Parquet pushdown); ``notes`` say what goes to the Arrow UDF and why."""
    verdict: str
    back: str | None
    implied: list[str]
    notes: list[str]


def _lit(code: int) -> str:
    return "TRUE" if code == A.TRUE else "FALSE" if code == A.FALSE else S.NULL_BOOLEAN


class _Cases:
    """An atom's per-tag answers, collected as (condition, code or expression)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag
        self.consts: dict[int, list[int]] = {}      # code -> tags
        self.exprs: list[tuple[str, str]] = []      # (condition within a tag, Kleene boolean)
        self.answers: dict[str, list[int]] = {}     # Kleene boolean -> the tags it answers
        self.fails: list[str] = []
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
        return f"{self.tag} = {tag}"

    def const(self, tag: int, code: int) -> None:
        if code == A.BACK:
            self.back_tags.append(tag)
        else:
            self.consts.setdefault(int(code), []).append(tag)
            if code == A.TRUE:
                self.implied_exact = False

    def sub(self, condition: str, code: int) -> None:
        """A constant answer for the rows of ``condition`` (within one tag)."""
        if code == A.BACK:
            self.backs.append(condition)
        elif code == A.FAIL:
            self.fails.append(condition)
            self.exprs.append((condition, _lit(A.UNKNOWN)))
        else:
            self.exprs.append((condition, _lit(code)))
            if code == A.TRUE:
                self.implied_exact = False

    def columns(self, spark_field: SparkField) -> AtomColumns:
        tag = self.tag
        # the sub-cases (NaN, a boolean value) first, then one WHEN per answer for all its tags
        branches = list(self.exprs)
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
        fail = S.any_of(fails + self.fails + guards)
        back = S.any_of([S.tag_in(tag, self.back_tags) if self.back_tags else None]
                        + self.backs + [spark_field.back])
        implied = None
        if self.implied_exact:   # one condition per child, however many tags share it
            implied = S.any_of(list(dict.fromkeys(self.implied))) or "FALSE"
        return AtomColumns(value, fail, back, spark_field.unreadable, implied)


def atom_columns(compiled: Any, plan: Any, spark_field: SparkField, rc: Any) -> AtomColumns:
    """The Columns of one single-field atom from its tag plan."""
    cases = _Cases(spark_field.tag)
    notes: list[str] = []
    children = spark_field.children
    for tag in sorted(spark_field.tags):
        mode = int(plan.modes[tag])
        name = _child_of(tag)
        child = children.get(name)
        is_tag = cases.is_tag(tag)
        if child is not None and spark_field.tag_is_data:   # as the kernel
            cases.guard(name, child, tag)
        if tag in A.FLOAT_TAGS and child is not None and mode != A.DOUBLES and not (
                tag == A.FLOAT and mode == A.DATA and _single_precision(compiled, rc)):
            _float_specials(cases, tag, is_tag, child, plan,
                            int(plan.consts[tag]) if mode == A.CONST else None)
        if mode == A.CONST:
            cases.const(tag, int(plan.consts[tag]))
        elif mode == A.BOOLS and child is not None:
            f, t = (int(c) for c in plan.bools)
            if f == t:
                cases.const(tag, f)
            else:
                cases.sub(f"({is_tag} AND {child})", t)
                cases.sub(f"({is_tag} AND NOT {child})", f)
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
        elif mode == A.DATA and tag == A.FLOAT and child is not None and \
                _single_precision(compiled, rc):
            _doubles(cases, tag, is_tag, f"CAST(CAST({child} AS FLOAT) AS DOUBLE)", plan)
        elif mode == A.DATA and (typed := _constant_by_type(compiled, tag, rc)) is not None:
            cases.const(tag, typed)
        else:
            cases.const(tag, A.BACK)
            if tag > 1:
                notes.append(f"{A_TAG_NAME(tag)} values: "
                             + ("per value" if mode == A.DATA else "row by row"))
    out = cases.columns(spark_field)
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


def _truth_of_field(node: Any) -> bool:
    """``x`` or ``NOT x`` in a boolean position: a non-boolean's answer is its type's."""
    from ..sql import ast
    while isinstance(node, ast.Not):
        node = node.operand
    return isinstance(node, ast.Field)


def _constant_by_type(compiled: Any, tag: int, rc: Any) -> int | None:
    """The one answer a string predicate (``x = 'a'``, ``x LIKE 'a%'``) gives for
    every number of ``tag``, if it gives one. The kernel answers such a tag per
    value present in a batch; a native expression needs the answer for every
    value, so it is taken only for predicates over string constants, probed
    on the ends of the range, the usual suspects, and every number a constant
    spells (a dialect that converted strings would answer those apart); never
    for constants with a digit ('2025-06-24T13:37:59Z' is a timestamp to amqp)."""
    if tag in A.STRING_TAGS:   # strings: only where a string's value cannot matter
        if not _truth_of_field(compiled.atom.node):
            return None
        cls = A.STRING_TAGS[tag]
        answers = {A.run(compiled.on_value, p if cls is str else cls(p), rc)
                   for p in _probe_strings(TextForm("in", [], False))
                   if tag != A.CHAR or len(p) == 1}
        return answers.pop() if len(answers) == 1 else None
    form = text_form(compiled.atom.node, compiled.atom.semantics)
    if form is None and _truth_of_field(compiled.atom.node):
        form = TextForm("in", [], False)
    if form is None or tag not in A.VALUE_CLASS:
        return None
    texts = form.arg if form.kind == "in" else [form.arg[1]] if form.kind == "cmp" else \
        ["".join(c for c in seg if c is not None) for seg in form.arg]
    if any(c.isdigit() for text in texts for c in text):
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
    convert = float if tag in A.FLOAT_TAGS else int
    answers = {A.run(compiled.on_value, A.VALUE_CLASS[tag](convert(v)), rc) for v in probes}
    return answers.pop() if len(answers) == 1 else None


def A_TAG_NAME(tag: int) -> str:   # noqa: N802 - reads as a table lookup
    from ..arrow.schema import TAG_NAMES
    return TAG_NAMES[tag] if 0 <= tag < len(TAG_NAMES) else str(tag)


def _child_of(tag: int) -> str | None:
    from ..arrow.schema import CHILD_OF_TAG
    return CHILD_OF_TAG.get(tag)


def _spans(child: str, spans: list, lit: Callable[[Any], str]) -> str:
    """``child`` within one of the sorted inclusive intervals."""
    if not spans:
        return "FALSE"
    return S.any_of([f"{child} = {lit(lo)}" if lo == hi else
                     f"{child} BETWEEN {lit(lo)} AND {lit(hi)}" for lo, hi in spans])


def _numeric(cases: _Cases, tag: int, child: str, spans: Any, unsigned: bool,
             field: SparkField) -> None:
    rows = [(int(lo), int(hi)) for lo, hi in spans.tolist()]
    lit = S.ulong if unsigned else S.long
    cases.answer(tag, _spans(child, rows, lit))
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
    ends = (0, 2**64 - 1) if unsigned else (-2**63, 2**63 - 1)
    bounds = [f"{column} >= {lit(lo)}" if lo is not None and lo != ends[0] else None,
              f"{column} <= {lit(hi)}" if hi is not None and hi != ends[1] else None]
    bounds = [b for b in bounds if b]
    cases.implied.append(S.all_of(bounds) if bounds else f"{column} IS NOT NULL")


_MAX_MILLIS = (2**63 - 1) // 1000
"""Spark timestamps are microseconds in a long: milliseconds past this overflow."""


def _timestamp(millis: int) -> str:
    return f"timestamp_millis({S.long(millis)})"


def _float_specials(cases: _Cases, tag: int, is_tag: str, child: str, plan: Any,
                    otherwise: int | None, zero: int | None = None) -> tuple[int, ...]:
    """NaN, -0.0 and the infinities, each with its own answer (the kernel's
    pseudo tags) where it differs from ``otherwise`` (the answer of the other
    values; None: always; -0.0 also where it answers as ``zero``, 0.0's
    answer). Spark's NaN = NaN and -0.0 = 0.0 never decide anything."""
    base = A.PSEUDO_BASE + 4 * (tag - A.FLOAT)
    nan, negzero, pinf, ninf = codes = tuple(int(plan.consts[base + j]) for j in range(4))
    if nan != otherwise:
        cases.sub(f"({is_tag} AND isnan({child}))", nan)
    if pinf != otherwise:
        cases.sub(f"({is_tag} AND {child} = {S.double(math.inf)})", pinf)
    if ninf != otherwise:
        cases.sub(f"({is_tag} AND {child} = {S.double(-math.inf)})", ninf)
    if negzero != otherwise and negzero != zero:   # the sign of a zero shows in its text
        cases.sub(f"({is_tag} AND {child} = {S.double(0.0)} AND "
                  f"CAST({child} AS STRING) = '-0.0')", negzero)
    return codes


def _doubles(cases: _Cases, tag: int, is_tag: str, child: str, plan: Any) -> None:
    """The specials first; then the intervals (which never meet them)."""
    spans = [(float(lo), float(hi)) for lo, hi in plan.doubles.tolist()]
    zero = A.TRUE if any(lo <= 0.0 <= hi for lo, hi in spans) else A.FALSE
    specials = _float_specials(cases, tag, is_tag, child, plan, None, zero)
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


def _model(form: TextForm) -> Callable[[str], bool]:
    """What the Spark expression answers for a string (binary, code-point order)."""
    if form.kind == "like":
        regex = re.compile("".join(
            "".join("." if c is None else re.escape(c) for c in seg) if i == 0
            else ".*" + "".join("." if c is None else re.escape(c) for c in seg)
            for i, seg in enumerate(form.arg)), re.DOTALL)
        test = lambda s: regex.fullmatch(s) is not None   # noqa: E731
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
        segments = form.arg
        plain = all(c is not None for seg in segments for c in seg)
        texts = ["".join(seg) for seg in segments] if plain else []
        if plain and len(texts) == 1:
            test = f"{child} = {S.string(texts[0])}"
        elif plain and len(texts) == 2 and texts[0] and not texts[1]:
            test = f"startswith({child}, {S.string(texts[0])})"
        elif plain and len(texts) == 2 and not texts[0] and texts[1]:
            test = f"endswith({child}, {S.string(texts[1])})"
        elif plain and len(texts) == 3 and not texts[0] and not texts[2] and texts[1]:
            test = f"contains({child}, {S.string(texts[1])})"
        elif plain and all(not t for t in texts):
            test = "TRUE"
        else:   # an explicit escape: Spark's default one is the backslash
            test = f"{child} LIKE {S.string(like_pattern(segments, '!'))} ESCAPE '!'"
    return f"NOT ({test})" if form.negate else f"({test})"


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
        if atom.arith is not None:
            return None
        spark_field = field_of(atom.field)
        tag_plan = ready.tag_plan(index, frozenset(spark_field.tags), rc)
        columns = atom_columns(compiled, tag_plan, spark_field, rc)
        where = f"predicate {index + 1} (offset {atom.node.offset})"
        notes.extend(f"{where}: {n}" for n in columns.notes)
        atoms.append(columns)
    value = _skeleton(_shape_of(plan), [a.value for a in atoms])
    poison = S.any_of(list(dict.fromkeys(
        [a.fail for a in atoms if a.fail] + [a.unreadable for a in atoms if a.unreadable])))
    verdict = value if poison is None else f"CASE WHEN {poison} THEN NULL ELSE {value} END"
    back = S.any_of(list(dict.fromkeys(a.back for a in atoms if a.back)))
    implied = [a.implied for a in _necessary(plan, atoms) if a.implied is not None]
    return Translation(verdict, back, list(dict.fromkeys(implied)), notes)


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
