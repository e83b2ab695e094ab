"""Declared rules: how a dialect compares a number a message holds with a
numeric constant of the filter.

The runtime operations (``runtime/ops.compare``, each dialect's ``compare``)
are what generated row code calls when the static types did not settle a
comparison; they decide one pair of values at a time. An engine that answers
a whole column at once (the plan's intervals, Spark's expressions) and the row
generator's inline fast paths need the same rule as a fact they can reason
with: "a long against a double constant is compared after rounding the long
to double", "a timestamp against a decimal fails". This module is that fact,
one table per dialect, declared beside the dialect's ``Semantics`` and read
by the row generator, the plan and Spark. ``tests/test_rules.py`` enumerates
every (dialect, operator, value type, constant kind) cell on edge values and
checks the table against the generated row code, so the declaration cannot
drift from the runtime.

A rule is one of:

- ``EXACT``: the two numbers as they are (Python's exact comparison of int,
  float and Decimal; Erlang's too).
- ``Rounded(width, order)``: both rounded to ``width`` ("double" or
  "float32", as ``runtime.double_value`` rounds), then ordered by IEEE
  ("ieee") or by Java's ``Double.compareTo`` ("total": -0.0 below 0.0, NaN
  above everything and equal to itself).
- ``Outcome(answer)``: one answer whatever the two numbers ("fail",
  "unknown", "false").

Rounding is monotonic, so under every rule the values ``v`` with ``v op c``
still form intervals of the value's own domain (``plan/intervals.py``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal, Mapping, Union

import uuid

from proton import Array, Described, char, float32, symbol, timestamp

from ..runtime.values import DECIMAL_CLASSES, INT_CLASSES, double_value

# what a message holds (the value kinds of the table)
INTEGER, TIMESTAMP, FLOAT32, DOUBLE = "integer", "timestamp", "float32", "double"
VALUE_KINDS = (INTEGER, TIMESTAMP, FLOAT32, DOUBLE)
# what a constant is (a NaN constant, binary or decimal, is its own kind)
DECIMAL, INFINITY, NAN = "decimal", "infinity", "nan"
CONSTANT_KINDS = (INTEGER, TIMESTAMP, DECIMAL, DOUBLE, INFINITY, NAN)
"""A constant's kind: ``DOUBLE`` is a finite double, ``INFINITY`` either
infinite one; a decimal infinity is a ``DECIMAL``."""

Width = Literal["double", "float32"]
Order = Literal["ieee", "total"]
Answer = Literal["fail", "unknown", "false", "true"]


@dataclass(frozen=True)
class Exact:
    """The two numbers compared as they are."""

    def __repr__(self) -> str:
        return "EXACT"


@dataclass(frozen=True)
class Rounded:
    """Both numbers rounded to ``width``, then ordered by ``order``."""
    width: Width = "double"
    order: Order = "ieee"

    def key(self, number: Any) -> float:
        """A number as this rule compares it (an infinity for an integer past
        the width's range)."""
        if self.width == "float32":
            return double_value(float32(double_value(number)))
        return double_value(number)


@dataclass(frozen=True)
class Outcome:
    """One answer for every pair of numbers."""
    answer: Answer


EXACT = Exact()
AS_DOUBLE = Rounded("double", "ieee")
Rule = Union[Exact, Rounded, Outcome]


def constant_kind(constant: Any) -> str | None:
    """The table's kind of a numeric constant (None: not a number)."""
    cls = constant.__class__
    if cls is timestamp:
        return TIMESTAMP
    if cls in INT_CLASSES:
        return INTEGER
    if cls is float:
        if constant != constant:
            return NAN
        return DOUBLE if constant - constant == 0 else INFINITY
    if cls is Decimal:
        return NAN if constant.is_nan() else DECIMAL
    return None


@dataclass(frozen=True)
class NumberRules:
    """One dialect's comparisons of numbers with numeric constants.

    ``compare`` maps (value kind, constant kind) to a rule; a missing cell
    means the dialect has no such constant (jms writes no decimals). ``in_list``
    says what ``v IN (c1, c2, ...)`` with number constants is: "or" (the
    three-valued OR of ``v = ci``: amqp), "or-known" (the OR of the items whose
    comparison is known, an unknown one counting FALSE: RabbitMQ's
    ``lists:any``), an ``Outcome``, or None where the dialect has no IN list of
    numbers (jms lists strings only). ``between`` is always ``v >= lo AND v <= hi``,
    its negation the three-valued NOT (jms writes NOT BETWEEN as ``v < lo OR v > hi``, the same
    wherever its comparisons are TRUE or FALSE, which for numbers they are)."""
    compare: Mapping[tuple[str, str], Rule]
    in_list: Union[Literal["or", "or-known"], Outcome, None] = "or"
    time_strings: bool = False
    """A timestamp against a string compares with the time the string reads as
    (an ISO 8601 date-time or duration), and fails when it reads as none (amqp)."""
    other_types: Mapping[tuple[str, str], Answer] = field(default_factory=dict)
    """(value kind, test) -> the answer of a test for every value of the kind,
    where the types alone decide it: a number against a string constant, a
    string against a number, a list against anything. The kinds are the number
    kinds and ``OTHER_KINDS``; the tests ``OTHER_TESTS``: ``string =``,
    ``string <>``, ``string order`` (< <= > >=), the same with ``boolean`` and
    ``number`` constants, ``null`` (any comparison with NULL), ``in strings``,
    ``in numbers``, ``like``, ``condition`` (the value itself where a condition
    is expected) and ``arithmetic`` (the value an operand of ``- * %`` or unary
    minus, compared with numbers), ``function`` (the value the subject of
    a function that takes a string: ``Function.subject``, compared with
    constants), and ``between numbers`` and ``not between numbers`` (NOT BETWEEN
    is not always the negation of BETWEEN: jms writes it as ``v < lo OR v > hi``,
    FALSE for a string). A missing cell: the answer depends on the
    value or the constant (amqp reads a string as a time against a timestamp;
    a string's own tests are its text)."""

    def answer(self, kind: str, test: str, constant: Any = None) -> Answer | None:
        """The declared answer of ``test`` for every value of ``kind``
        (``other_types``), given the test's string constant or constants (a
        tuple, for IN) when it has them; None when the values decide."""
        if kind == TIMESTAMP and self.time_strings and \
                (test.startswith("string ") or test == "in strings"):
            from ..runtime.ops import parse_datetime_ms, parse_duration_ms
            texts = (constant,) if type(constant) is str else constant
            if not isinstance(texts, tuple) or not texts or \
                    any(type(t) is not str for t in texts):
                return None
            # one string that reads as no time fails the comparison (in IN too)
            return "fail" if any(parse_datetime_ms(t) is None and parse_duration_ms(t) is None
                                 for t in texts) else None
        return self.other_types.get((kind, test))

    def failing(self, test: str, constant: Any = None) -> frozenset[type]:
        """The exact classes of the values for which ``test`` (with its string
        constant or constants, as ``answer`` takes them) is declared to fail:
        the classes of every kind whose answer is "fail" (``KIND_CLASSES``).
        Generated code stops at a value of one of them (the evaluation's verdict
        is unknown) without asking the runtime, which writes the reason only
        where one is wanted. A test that compares (all but ``COMPARING_NOTHING``)
        is unknown for a NaN before types are considered, so the kinds that hold
        NaNs are left to the runtime there."""
        nan_first = test not in COMPARING_NOTHING
        return frozenset(cls for kind, classes in KIND_CLASSES.items()
                         if not (nan_first and kind in NAN_KINDS)
                         and self.answer(kind, test, constant) == "fail" for cls in classes)

    def failing_unless_nan(self, test: str, constant: Any = None) -> frozenset[type]:
        """The classes of the doubles (``float32``, ``float``) for which a test
        that compares is declared to fail, where the value is no NaN (a NaN is
        unknown first): what ``failing`` leaves out, that generated code tests
        with the value (``x == x``)."""
        if test in COMPARING_NOTHING:
            return frozenset()
        return frozenset(cls for kind in (FLOAT32, DOUBLE)
                         if self.answer(kind, test, constant) == "fail"
                         for cls in KIND_CLASSES[kind])

    def double_operand(self, constant: Any) -> Any:
        """What a double compares with for a numeric ``constant`` (its value
        neither NaN nor, in a total order, a zero): the constant rounded to
        double where the rule rounds to double, the constant itself where the
        two compare exactly (Erlang); None under any other rule."""
        rule = self.rule(DOUBLE, constant)
        if isinstance(rule, Rounded) and rule.width == "double":
            return double_value(constant)
        return constant if isinstance(rule, Exact) else None

    def rule(self, value: str, constant: Any) -> Rule | None:
        """The rule for a value of kind ``value`` against ``constant``."""
        kind = constant_kind(constant)
        if kind is None:
            return None
        return self.compare.get((value, kind))


def table(rows: Mapping[str, Mapping[str, Rule]]) -> dict[tuple[str, str], Rule]:
    """A table written as rows (value kind -> constant kind -> rule)."""
    return {(value, constant): rule
            for value, row in rows.items() for constant, rule in row.items()}


FAIL, UNKNOWN = Outcome("fail"), Outcome("unknown")


def comparison_test(other: str, op: str) -> str:
    """The ``other_types`` test of a comparison by ``op`` with a value that is
    ``other`` ("string", "boolean" or "number"): ``=``, ``<>`` or an order."""
    return f"{other} {op}" if op in ("=", "<>") else f"{other} order"


def negation(answer: str) -> str:
    """NOT of an answer, in three-valued logic (a failure stays a failure)."""
    return {"true": "false", "false": "true"}.get(answer, answer)

OTHER_TESTS = ("string =", "string <>", "string order", "boolean =", "boolean <>",
               "boolean order", "number =", "number <>", "number order", "null",
               "in strings", "in numbers", "like", "condition", "arithmetic", "function",
               "between numbers", "not between numbers")
"""The tests of ``NumberRules.other_types``."""
STRING, CHAR, BOOLEAN, BINARY, UUID, DECIMAL_VALUE, LIST, MAP, ARRAY, DESCRIBED = (
    "string", "char", "boolean", "binary", "uuid", "decimal", "list", "map", "array",
    "described")
OTHER_KINDS = (STRING, CHAR, BOOLEAN, BINARY, UUID, DECIMAL_VALUE, LIST, MAP, ARRAY, DESCRIBED)
"""The value kinds of ``other_types`` besides the numbers: a string or symbol,
a char (a one-character string where ``Semantics.char_is_string``, else the
dialect's own: declared here), a boolean, a binary, a uuid, a
decimal32/64/128, and the composites."""
COMPOSITES = (LIST, MAP, ARRAY, DESCRIBED)

KIND_CLASSES: dict[str, frozenset[type]] = {
    INTEGER: INT_CLASSES, TIMESTAMP: frozenset({timestamp}), FLOAT32: frozenset({float32}),
    DOUBLE: frozenset({float}), STRING: frozenset({str, symbol}), CHAR: frozenset({char}),
    BOOLEAN: frozenset({bool}), BINARY: frozenset({bytes}), UUID: frozenset({uuid.UUID}),
    DECIMAL_VALUE: DECIMAL_CLASSES, LIST: frozenset({list}), MAP: frozenset({dict}),
    ARRAY: frozenset({Array}), DESCRIBED: frozenset({Described})}
"""The exact classes of the values of each kind (``runtime.values.kind_of``'s, and
the composites ``runtime.ops.type_name`` names): a value of another class (a
subclass) belongs to no kind here."""
NAN_KINDS = (FLOAT32, DOUBLE, DECIMAL_VALUE)
"""The kinds that hold NaNs."""
COMPARING_NOTHING = ("like", "condition", "arithmetic", "function")
"""The tests of ``OTHER_TESTS`` that compare no two values (a NaN fails them as
any number does)."""


def other_types(rows: Mapping[str, Answer], kinds: tuple[str, ...] = VALUE_KINDS
                ) -> dict[tuple[str, str], Answer]:
    """The same answers (test -> answer) for every value kind of ``kinds``."""
    return {(kind, test): answer for kind in kinds for test, answer in rows.items()}

AMQP_NUMBER_RULES = NumberRules(table({
    # integers compare exactly with integers and decimals; a double on either
    # side makes both doubles; a timestamp orders only against integers and
    # timestamps; NaN, binary or decimal, makes any comparison unknown
    INTEGER: {INTEGER: EXACT, TIMESTAMP: EXACT, DECIMAL: EXACT, DOUBLE: AS_DOUBLE,
              INFINITY: AS_DOUBLE, NAN: UNKNOWN},
    TIMESTAMP: {INTEGER: EXACT, TIMESTAMP: EXACT, DECIMAL: FAIL, DOUBLE: FAIL, INFINITY: FAIL,
                NAN: UNKNOWN},
    FLOAT32: {INTEGER: AS_DOUBLE, TIMESTAMP: FAIL, DECIMAL: AS_DOUBLE, DOUBLE: AS_DOUBLE,
              INFINITY: AS_DOUBLE, NAN: UNKNOWN},
    DOUBLE: {INTEGER: AS_DOUBLE, TIMESTAMP: FAIL, DECIMAL: AS_DOUBLE, DOUBLE: AS_DOUBLE,
             INFINITY: AS_DOUBLE, NAN: UNKNOWN},
}), time_strings=True, other_types={
    # a number against a string, a boolean, LIKE or as a condition: a failure;
    # a string against a timestamp is read as a time (no cell: per value)
    **other_types({test: "fail" for test in OTHER_TESTS if test.startswith("boolean")}),
    **other_types({"like": "fail", "condition": "fail", "null": "unknown"}),
    **other_types({"string =": "fail", "string <>": "fail", "string order": "fail",
                   "in strings": "fail"}, (INTEGER, FLOAT32, DOUBLE)),
    # a string (a char too) compares only with strings (and a timestamp); arithmetic fails
    **other_types({**{test: "fail" for test in OTHER_TESTS if test.startswith(("boolean",
                                                                              "number"))},
                   "null": "unknown", "in numbers": "fail", "condition": "fail",
                   "arithmetic": "fail", "between numbers": "fail",
                   "not between numbers": "fail"}, (STRING, CHAR)),
    # a boolean compares only with booleans, and orders with nothing
    **other_types({**{test: "fail" for test in OTHER_TESTS if test.startswith(("string",
                                                                              "number"))},
                   "boolean order": "fail", "null": "unknown", "in strings": "fail",
                   "in numbers": "fail", "like": "fail", "arithmetic": "fail",
                   "function": "fail", "between numbers": "fail",
                   "not between numbers": "fail"}, (BOOLEAN,)),
    # binaries, uuids and composites compare with nothing a filter can write
    **other_types({**{test: "fail" for test in OTHER_TESTS}, "null": "unknown"},
                  (BINARY, UUID, *COMPOSITES)),
    # a decimal's comparisons depend on it (a NaN is unknown); it is no text
    **other_types({"like": "fail", "condition": "fail", "null": "unknown", "function": "fail"},
                  (DECIMAL_VALUE,)),
    # a string function of anything but a string fails
    **other_types({"function": "fail"}, VALUE_KINDS),
})
"""amqp: ``runtime/ops.compare``, ``in_values``, ``like``, ``predicate``."""
