"""One atom's answers per AMQP type tag, collected and written as Spark SQL.

``native.py`` reads an atom's tag plan (``plan/atoms.py``) and records, per
tag, a constant answer, a Kleene expression answering the tag's rows, or
sub-cases within the tag (NaN, a boolean's two values) that come first.
``Cases.columns`` writes them as one atom's Columns: its three-valued value,
the rows where it fails (the amqp failure rule), the rows the Arrow UDF must
answer, and its TRUE and FALSE sets, the plain conditions ``where`` uses.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..plan import atoms as A
from ..table.schema import DECIMAL32, DECIMAL64, DECIMAL128, UUID
from . import sql as S
from .fields import SparkField

WIDTHS = {UUID: 16, DECIMAL32: 4, DECIMAL64: 8, DECIMAL128: 16}
"""The bytes an ``x`` child holds for each fixed-width tag: any other width is
a malformed row (unknown), as the batch engine reads it."""


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


def _lit(code: int) -> str:
    return "TRUE" if code == A.TRUE else "FALSE" if code == A.FALSE else S.NULL_BOOLEAN


class Cases:
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
        """A row of ``tag`` whose child is null (a malformed table), or of a
        width its type does not have (a uuid or decimal), is unreadable."""
        self.guards.setdefault(name, (child, []))[1].append(tag)

    def _unreadable(self, child: str, tags: list[int]) -> list[str]:
        """Conditions of the rows of ``tags`` whose ``child`` cannot be read."""
        plain = [t for t in tags if t not in WIDTHS]
        out = [f"({S.tag_in(self.field.tag, plain)} AND {child} IS NULL)"] if plain else []
        out += [f"({S.tag_in(self.field.tag, [t])} AND ({child} IS NULL OR "
                f"octet_length({child}) <> {WIDTHS[t]}))" for t in tags if t in WIDTHS]
        return out

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
        guards = [c for child, tags in self.guards.values()
                  for c in self._unreadable(child, tags)]
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
                key = (None if reads_child and t not in WIDTHS else child, WIDTHS.get(t),
                       tuple(subs_of.get(t, ())))
                by_guard.setdefault(key, []).append(t)
            for (child, width, subs), group in by_guard.items():
                items = [spark_field.tag_test(group)]
                if child is not None:
                    items.append(f"{child} IS NOT NULL")
                    if width is not None:
                        items.append(f"octet_length({child}) = {width}")
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
