"""The declared number rules (``filtex/dialects/rules.py``) agree with the generated row code.

Why this file exists. Each dialect declares, as a table, how it compares a number a message
holds with a numeric constant: exactly, after rounding both to double or to single precision
(IEEE or Java's total order), or with one answer whatever the numbers (a failure, unknown).
The row generator's fast paths, the plan's intervals and Spark's expressions are built from
that table instead of from probes run when a filter is prepared; the runtime operations the
generated code calls are the definition. This suite enumerates every cell of every dialect's
table (value type x constant kind) with every comparison operator, BETWEEN and IN where the
dialect has them, on the edge values of each AMQP type around each constant, and checks the
table's answer against the row engine's verdict for a message holding that value. A table
cell that is wrong, a constant kind a dialect can write that the table lacks, and a fast path
that rounds where the runtime does not, each fail here.

The table speaks of the finite numbers a message holds, and of -0.0; NaN and the infinities
a message holds are answered apart by every engine (the plan runs the filter on each of the
four, an enumeration), so they are not edge values here.
"""
from __future__ import annotations

import math
import operator
from decimal import Decimal

import pytest
import uuid

from proton import (UNDESCRIBED, Array, Data, Described, byte, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp, ubyte, uint, ulong,
                    ushort)

import filtex
from edges import double_edges, float32_edges, int_edges, report, single
from filtex.dialects import DIALECTS
from filtex.dialects.rules import (CONSTANT_KINDS, DOUBLE, FLOAT32, INTEGER, TIMESTAMP,
                                   VALUE_KINDS, Exact, Outcome, Rounded, constant_kind)
from filtex.tree import ast

TRUE, FALSE, UNKNOWN, FAIL = "TRUE", "FALSE", "UNKNOWN", "FAIL"
OPS = {"=": operator.eq, "<>": operator.ne, "<": operator.lt, "<=": operator.le,
       ">": operator.gt, ">=": operator.ge}

TYPES = {INTEGER: [(ubyte, 0, 2**8 - 1), (ushort, 0, 2**16 - 1), (uint, 0, 2**32 - 1),
                   (ulong, 0, 2**64 - 1), (byte, -2**7, 2**7 - 1), (short, -2**15, 2**15 - 1),
                   (int32, -2**31, 2**31 - 1), (int, -2**63, 2**63 - 1)],
         TIMESTAMP: [(timestamp, -2**63, 2**63 - 1)],
         FLOAT32: [(float32, None, None)], DOUBLE: [(float, None, None)]}
"""The AMQP classes of each value kind of the table, with their ranges."""

CONSTANT_TEXTS = ["0", "7", "-3", "127", "-129", "2147483648", "16777217", "9007199254740993",
                  "9007199254740995", "-9223372036854775808", "9223372036854775807",
                  "18446744073709551615", "1.5", "-0.5", "0.1", "2.0", "-0.0",
                  "9223372036854775807.5", "1.5E3", "-2.5E-3", "1.0E19",
                  "9.007199254740993E15", "3.4028235E38", "4.9E-324", "1.0E400", "-1.0E400",
                  "NaN", "INF", "-INF", "0.0/0", "-(0.0)", "16777217.0",
                  "DATE('2024-01-01')", "DATE('1969-12-31')", "1L", ".5", "0x7FFFFFFFFFFFFFFF"]
"""Constants written in every form the dialects have (each is kept where it compiles)."""


def constants(dialect: str) -> list[tuple[str, object]]:
    """(text, value) of each numeric constant the dialect writes, as its checker makes it."""
    found = []
    for text in CONSTANT_TEXTS:
        try:
            flt = filtex.compile_sql(f"x = {text}", dialect)
        except filtex.FilterError:
            continue
        node = flt.tree.body   # (NaN and INF are property names where they are no keywords)
        if isinstance(node, ast.Compare) and isinstance(node.right, ast.Literal) and \
                constant_kind(node.right.value) is not None:
            found.append((text, node.right.value))
    return found


def values(kind: str, numbers: list) -> list:
    """Finite edge values of a kind's AMQP types around ``numbers``, as messages hold them."""
    if kind == FLOAT32:
        return [float32(v) for v in float32_edges(numbers) if math.isfinite(single(v))]
    if kind == DOUBLE:
        return [v for v in double_edges(numbers) if math.isfinite(v)]
    return [cls(v) for cls, lo, hi in TYPES[kind] for v in int_edges(lo, hi, numbers)]


def edges_of(c: object) -> list:
    return [] if isinstance(c, (float, Decimal)) and c != c else [c]


# --- what the table says ---------------------------------------------------------------------

def number(value: object) -> object:
    """A message value as the number it is (a float32 at its single-precision value)."""
    if isinstance(value, float32):
        return single(float(value))
    if isinstance(value, float):
        return float(value)
    return int(value)   # the integer classes and timestamp


def rounded(width: str, x: object) -> float:
    try:
        d = float(x)
    except OverflowError:
        d = math.inf if x > 0 else -math.inf
    return single(d) if width == "float32" else d


def total_key(x: float) -> tuple:
    """``Double.compareTo``'s order: -0.0 below 0.0, NaN above everything."""
    if x != x:
        return (2, 0.0, 0.0)
    return (1, x, math.copysign(1.0, x) if x == 0 else 0.0)


def declared(rule: object, op: str, value: object, c: object) -> str:
    """The table's answer for ``value op c`` under ``rule``."""
    if isinstance(rule, Outcome):
        return {"fail": FAIL, "unknown": UNKNOWN, "false": FALSE}[rule.answer]
    if isinstance(rule, Exact):
        return TRUE if OPS[op](number(value), c) else FALSE
    assert isinstance(rule, Rounded), rule
    a, b = rounded(rule.width, number(value)), rounded(rule.width, c)
    if rule.order == "total":
        return TRUE if OPS[op](total_key(a), total_key(b)) else FALSE
    if a != a or b != b:
        return UNKNOWN
    return TRUE if OPS[op](a, b) else FALSE


def junction(parts: list[str], decisive: str) -> str:
    """Three-valued AND (decisive FALSE) or OR (TRUE) in a dialect where a failure
    anywhere fails the whole evaluation."""
    if FAIL in parts:
        return FAIL
    if decisive in parts:
        return decisive
    return UNKNOWN if UNKNOWN in parts else (TRUE if decisive == FALSE else FALSE)


def negation(answer: str) -> str:
    return {TRUE: FALSE, FALSE: TRUE}.get(answer, answer)


# --- what the row engine says ----------------------------------------------------------------

class Row:
    """A filter over ``x`` and the probe that tells its failures from its NULLs
    (``prefix``: the options the text begins with, Artemis's)."""

    def __init__(self, text: str, dialect: str, prefix: str = "") -> None:
        self.text = prefix + text
        self.filter = filtex.compile_sql(prefix + text, dialect)
        self.probe = filtex.compile_sql(f"{prefix}({text}) OR y = 1", dialect)


    def answer(self, value: object) -> str:
        verdict = self.filter.evaluate(filtex.Message(application_properties={"x": value}))
        if verdict is not None:
            return TRUE if verdict else FALSE
        either = self.probe.evaluate(filtex.Message(application_properties={"x": value, "y": 1}))
        return UNKNOWN if either else FAIL


# Each dialect's rules, and the rules its options choose (jms with Artemis's
# convert_string_expressions:): (dialect, prefix)
RULES = {name: (name, "") for name in DIALECTS}
RULES["jms-convert"] = ("jms", "convert_string_expressions:")


def declared_rules(ruleset: str) -> tuple[str, str, object]:
    """(dialect, prefix, the declared rules), read when the test runs: a test that alters
    a table sees the alteration."""
    dialect, prefix = RULES[ruleset]
    tree = filtex.compile_sql(f"{prefix}x = 1", dialect).tree
    return dialect, prefix, tree.dialect.semantics.numbers


def disagreements(row: Row, values: list, expect) -> list[str]:
    found = []
    for v in values:
        want, got = expect(v), row.answer(v)
        if want != got:
            found.append(f"{row.text} with x = {type(v).__name__}({number(v)!r}): "
                         f"the table says {want}, the row engine {got}")
    return found


# --- the tests -------------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_constant_kind_a_dialect_writes_has_a_rule_for_every_value_kind(dialect):
    rules = DIALECTS[dialect].semantics.numbers
    written = {constant_kind(c) for _, c in constants(dialect)}
    assert written <= set(CONSTANT_KINDS)
    # not vacuous: integers, doubles and more (rabbitmq writes only those two: no
    # decimals, and a literal beyond a double's range is refused, as RabbitMQ's lexer does)
    assert len(written) >= (2 if dialect == "rabbitmq" else 3), written
    for kind in VALUE_KINDS:
        for constant in written:
            assert (kind, constant) in rules.compare, (dialect, kind, constant)


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", sorted(RULES))
def test_comparisons_follow_the_declared_rules(ruleset):
    """Every (value kind, constant kind) cell, every operator, both sides of the operator."""
    dialect, prefix, rules = declared_rules(ruleset)
    problems: list[str] = []
    checked = 0
    for text, c in constants(dialect):
        for kind in VALUE_KINDS:
            rule = rules.rule(kind, c)
            edge_values = values(kind, edges_of(c))
            for op in OPS:
                for filter_text, flip in ((f"x {op} {text}", False),
                                          (f"{text} {ast.MIRROR[op]} x", False),
                                          (f"NOT (x {op} {text})", True)):
                    row = Row(filter_text, dialect, prefix)

                    def expect(v, op=op, flip=flip, rule=rule, c=c):
                        answer = declared(rule, op, v, c)
                        return negation(answer) if flip else answer
                    problems += disagreements(row, edge_values, expect)
                    checked += len(edge_values)
    assert not problems, report(problems)
    assert checked > 50_000, checked


@pytest.mark.slow
@pytest.mark.parametrize("dialect", [d for d in sorted(DIALECTS) if DIALECTS[d].allow_between])
def test_between_is_the_and_of_two_declared_comparisons(dialect):
    rules = DIALECTS[dialect].semantics.numbers
    written = constants(dialect)
    picks = [pair for pair in written if pair[0] in
             ("-3", "7", "1.5", "2.0", "16777217", "9007199254740993", "1.5E3", "NaN",
              "-0.0", "INF", "DATE('2024-01-01')", "0.0/0")]
    problems: list[str] = []
    for lo_text, lo in picks:
        for hi_text, hi in picks:
            for kind in VALUE_KINDS:
                lo_rule, hi_rule = rules.rule(kind, lo), rules.rule(kind, hi)
                for negated in (False, True):
                    row = Row(f"x {'NOT ' if negated else ''}BETWEEN {lo_text} AND {hi_text}",
                              dialect)

                    def expect(v, lo=lo, hi=hi, lo_rule=lo_rule, hi_rule=hi_rule,
                               negated=negated):
                        inside = junction([declared(lo_rule, ">=", v, lo),
                                           declared(hi_rule, "<=", v, hi)], FALSE)
                        return negation(inside) if negated else inside
                    problems += disagreements(row, values(kind, edges_of(lo) + edges_of(hi)),
                                              expect)
    assert not problems, report(problems)


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_in_lists_follow_the_declared_rule(dialect):
    rules = DIALECTS[dialect].semantics.numbers
    written = constants(dialect)
    picks = [pair for pair in written if pair[0] in
             ("7", "-3", "1.5", "16777217", "9007199254740993", "1.5E3", "NaN", "INF",
              "1.0E400", "-0.0", "DATE('2024-01-01')")]
    lists = [picks[i:i + 2] for i in range(len(picks) - 1)] + [picks[:1], picks[::-1]]
    compiled = 0
    problems: list[str] = []
    for items in lists:
        listed = ", ".join(text for text, _ in items)
        for negated in (False, True):
            try:
                row = Row(f"x {'NOT ' if negated else ''}IN ({listed})", dialect)
            except filtex.FilterError:
                continue
            compiled += 1
            assert rules.in_list is not None, f"{dialect} compiles numeric IN lists"
            for kind in VALUE_KINDS:
                def expect(v, items=items, kind=kind, negated=negated):
                    if isinstance(rules.in_list, Outcome):
                        found = declared(rules.in_list, "=", v, None)
                    else:
                        parts = [declared(rules.rule(kind, c), "=", v, c) for _, c in items]
                        if rules.in_list == "or-known":
                            parts = [TRUE if p == TRUE else FALSE for p in parts]
                        found = junction(parts, TRUE)
                    return negation(found) if negated else found
                numbers = [c for _, c in items for c in edges_of(c)]
                problems += disagreements(row, values(kind, numbers), expect)
    assert not problems, report(problems)
    if rules.in_list is None:
        assert compiled == 0, f"{dialect} declares no numeric IN but compiles one"
    else:
        assert compiled >= len(lists), compiled


OTHER_TEXTS = {
    "string =": ["x = 'a'", "'1' = x", "x = ''"],
    "string <>": ["x <> 'a'", "'1' <> x"],
    "string order": ["x < 'a'", "x >= '1'", "'b' > x", "x <= ''"],
    "boolean =": ["x = TRUE", "FALSE = x"],
    "boolean <>": ["x <> FALSE", "TRUE <> x"],
    "boolean order": ["x < TRUE", "x >= FALSE"],
    "null": ["x = NULL", "x <> NULL", "x < NULL", "NULL >= x"],
    "in strings": ["x IN ('a', '1')", "x IN ('')"],
    "like": ["x LIKE 'a%'", "x LIKE '1%'", "x LIKE '_' ESCAPE '!'"],
    "condition": ["x"],
    "number =": ["x = 1", "2.5 = x", "x = 1.0E0", "x = 0"],
    "number <>": ["x <> 1", "x <> 2.5"],
    "number order": ["x < 1", "x >= 2.5", "1.5E0 < x", "x > -1"],
    "in numbers": ["x IN (1, 2.5)", "x IN (0)"],
    "arithmetic": ["x - 1 > 0", "x * 2 = 4", "-x < 0", "x % 2 = 1", "x - 1 BETWEEN 0 AND 5"],
    "between numbers": ["x BETWEEN 1 AND 5", "x BETWEEN -2.5 AND 1.0E3"],
    "not between numbers": ["x NOT BETWEEN 1 AND 5", "x NOT BETWEEN 0 AND 0.5"],
    "function": ["LOWER(x) = 'a'", "filtex:length(x) = 1", "LEFT(x, 2) IN ('ab')",
                 "SUBSTRING(x, 1, 2) LIKE 'a%'", "UPPER(LOWER(x)) = 'A'", "DATE(x) > 0",
                 "RIGHT(x, 1) <> 'a'", "UPPER(x, 'tr') BETWEEN 'A' AND 'B'"],
}
"""Filters of each test of ``NumberRules.other_types`` (each also negated)."""


OTHER_VALUES = {
    "string": ["", "a", "1", "2.5", "TRUE", "true", "2024-01-01", "P1D", "\U0001f600", "NaN",
               symbol("a"), symbol("1"), symbol("")],
    "char": [char("a"), char("1"), char("\x01"), char("\U0001f600"), char("T")],
    "boolean": [True, False],
    "binary": [b"", b"a", b"1", b"\x00\xff" * 9],
    "uuid": [uuid.UUID(int=0), uuid.UUID(int=5), uuid.UUID(int=2**128 - 1)],
    "decimal": [decimal32(0x3280000F), decimal64(0x31C000000000000F), decimal128(bytes(16)),
                decimal32(0x7C000000), decimal64(0x7C00000000000000)],
    "list": [[], [1], ["a"], [None]],
    "map": [{}, {"a": 1}, {symbol("k"): None}],
    "array": [Array(UNDESCRIBED, Data.INT), Array(UNDESCRIBED, Data.INT, 1, 2),
              Array(UNDESCRIBED, Data.STRING, "a")],
    "described": [Described(symbol("d"), None), Described(symbol("x"), 1),
                  Described(ulong(7), "a")],
}
"""Values of the kinds beside the numbers: text that reads as a number, a boolean, a time
or a duration, NaN decimals, empty and nested composites."""


def kind_values(kind: str) -> list:
    return OTHER_VALUES[kind] if kind in OTHER_VALUES else values(kind, [0, 1])


@pytest.mark.parametrize("ruleset", sorted(RULES))
def test_tests_against_other_types_follow_the_declared_answers(ruleset):
    """A number against a string, a boolean or NULL constant, IN a list of strings,
    LIKE a pattern, or as a condition: one declared answer for every number of a kind."""
    from filtex.dialects.rules import OTHER_KINDS, OTHER_TESTS
    dialect, prefix, rules = declared_rules(ruleset)
    assert {kind for kind, _ in rules.other_types} <= set(VALUE_KINDS) | set(OTHER_KINDS)
    assert set(OTHER_TEXTS) == set(OTHER_TESTS)
    problems: list[str] = []
    checked = 0
    for test, texts in OTHER_TEXTS.items():
        for text in texts:
            variants = [(text, False), (f"NOT ({text})", True)]
            if " IN " in text or " LIKE " in text:
                variants.append((text.replace(" IN ", " NOT IN ").replace(" LIKE ", " NOT LIKE "),
                                 True))
            for filter_text, negated in variants:
                try:
                    row = Row(filter_text, dialect, prefix)
                except filtex.FilterError:
                    continue   # not in this dialect (jms orders no strings, has no NULL =)
                for kind in VALUE_KINDS + OTHER_KINDS:
                    answer = rules.other_types.get((kind, test))
                    if answer is None:
                        continue
                    want = {"fail": FAIL, "unknown": UNKNOWN, "false": FALSE,
                            "true": TRUE}[answer]
                    if negated:
                        want = negation(want)
                    edge_values = kind_values(kind)
                    problems += disagreements(row, edge_values, lambda v, want=want: want)
                    checked += len(edge_values)
    assert not problems, report(problems)
    assert checked > 5_000, checked


@pytest.mark.slow
@pytest.mark.parametrize("dialect, cell, wrong", [
    ("amqp", ("integer", "double"), Exact()),            # a long against 1.0E19 rounds
    ("jms", ("float32", "integer"), Rounded("double", "total")),   # Float vs int: single
    ("jms", ("integer", "double"), Rounded("double", "ieee")),     # -0.0 below 0 in Java
    ("rabbitmq", ("double", "integer"), Rounded("double", "ieee")),   # Erlang: exactly
    ("amqp", ("timestamp", "decimal"), Outcome("unknown")),   # a failure, not NULL
])
def test_a_wrong_rule_fails(monkeypatch, dialect, cell, wrong):
    """The enumeration finds a wrong cell of each kind (the dialect's table, altered)."""
    import dataclasses
    semantics = DIALECTS[dialect].semantics
    numbers = semantics.numbers
    assert numbers.compare[cell] != wrong
    # the row code compiled under the declared rules (the row generator inlines some
    # comparisons by them), then the table altered: the enumeration must see the difference
    test_comparisons_follow_the_declared_rules(dialect)
    monkeypatch.setattr(type(semantics), "numbers",
                        dataclasses.replace(numbers, compare={**numbers.compare, cell: wrong}))
    try:
        with pytest.raises(AssertionError, match="disagreements"):
            test_comparisons_follow_the_declared_rules(dialect)
    finally:   # the filters compiled and planned under the altered rule: forgotten
        filtex.cache_clear()


def test_a_wrong_other_type_answer_fails(monkeypatch):
    import dataclasses
    semantics = DIALECTS["rabbitmq"].semantics
    numbers = semantics.numbers
    wrong = {**numbers.other_types, ("double", "in strings"): "unknown"}
    test_tests_against_other_types_follow_the_declared_answers("rabbitmq")   # compiled first
    monkeypatch.setattr(type(semantics), "numbers",
                        dataclasses.replace(numbers, other_types=wrong))
    try:
        with pytest.raises(AssertionError, match="disagreements"):
            test_tests_against_other_types_follow_the_declared_answers("rabbitmq")
    finally:   # the filters compiled and planned under the altered rule: forgotten
        filtex.cache_clear()


# --- strings: the text forms the batch engines compute without the row engine -------------

TEXT_CONSTANTS = ["'a'", "''", "'é'", "'\U0001f600'", "'a%'", "'A'", "'it''s'", "'b_c'"]
LIKE_PATTERNS = ["'a%'", "'%a'", "'%a%'", "'a_c'", "'_'", "'%'", "''", "'a!%%' ESCAPE '!'",
                 "'!_%' ESCAPE '!'", "'a\\%'", "'%\U0001f600%'", "'__'", "'%b_c'",
                 "'a%%c' ESCAPE '%'"]
IN_LISTS = ["('a', 'b')", "('', 'é')", "('A')", "('a%', 'it''s')"]
EDGE_STRINGS = ["", "a", "A", "ab", "abc", "ac", "b", "a%", "a_", "%", "_", "\\", "a\\b", "a\\%",
                "a\nc", "é", "e\u0301", "\U0001f600", "\U0001f600x", "x\U0001f600y", "ß", "İ",
                "z" * 50, "Ab", " a", "a ", "0", "10", "!", "it's", "b_c", "bxc", "a%c", "a%%c",
                "\U0001f600\U0001f600", "a\x00", "\uffff", "\ue000", "a\n", "\n", "ab\n",
                "b_c\n", "a\n\n", "\na", "a" * 49_997, "a" * 49_998, "a" * 49_997 + "\n"]
"""Strings around the constants and patterns: prefixes, case, combining marks, characters
outside the BMP, the pattern characters themselves, NUL and the BMP's end, line feeds
(RabbitMQ's regular expressions leave out one at the end) and lengths at RabbitMQ's
match limit ('%a%': 49,997 characters)."""


def text_atoms(dialect: str) -> list[str]:
    found = [f"x {op} {c}" for op in OPS for c in TEXT_CONSTANTS]
    found += [f"{c} < x" for c in TEXT_CONSTANTS]
    found += [f"x {neg}LIKE {p}" for neg in ("", "NOT ") for p in LIKE_PATTERNS]
    found += [f"x {neg}IN {items}" for neg in ("", "NOT ") for items in IN_LISTS]
    return found + [f"NOT ({text})" for text in list(found)]


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_text_forms_are_what_the_row_engine_answers_for_strings_and_symbols(dialect):
    """A String or Symbol value against string constants is plain text matching in the
    dialect's terms (``Semantics.string_ops``, ``like_escapes``): the batch engine
    computes such an atom with Arrow's kernels over a whole dictionary
    (``arrow/strings.vectorised``), trusting the form, so every form agrees with the
    row engine here, on strings around every constant and pattern."""
    pa = pytest.importorskip("pyarrow")
    from proton import symbol

    from filtex.arrow.strings import vectorised
    semantics = DIALECTS[dialect].semantics
    strings = sorted(set(EDGE_STRINGS) | {t.strip("'").replace("''", "'") for t in
                                          TEXT_CONSTANTS})
    dictionary = pa.array(strings, pa.string())
    forms = 0
    problems: list[str] = []
    for text in text_atoms(dialect):
        try:
            row = Row(text, dialect)
        except filtex.FilterError:
            continue
        fast = vectorised(row.filter.tree.body, semantics, dictionary)
        if fast is None:
            continue
        forms += 1
        for s, want in zip(strings, fast.tolist()):
            chars = [char(s)] if semantics.char_is_string and len(s) == 1 else []
            for value in (s, symbol(s), *chars):
                got = row.answer(value)
                if got != (TRUE if want else FALSE):
                    problems.append(f"{text} with x = {type(value).__name__}({s!r}): "
                                    f"the text form says {want}, the row engine {got}")
    assert not problems, report(problems)
    assert forms >= 60, forms


# --- arithmetic: the kernel's model on the operand tags the dialect declares it holds for ----

ARITH_FILTERS = ["a + b > 5", "a - b = 0", "a * b = 0", "a * b >= 9007199254740993",
                 "a + b >= 9007199254740993", "a % b = 0", "a % b >= 0", "a % 2 = 1",
                 "-a + b < 2.5", "a - b < -0.5", "a = b", "a < b", "a >= b", "a * 2 + b <> 7",
                 "a + b BETWEEN 1 AND 10", "a - b IN (0, 1)", "NOT (a + b > 5)",
                 "a * b < 1.0E19", "a + b > 0.1", "a - b <= 1.5E0", "a * b > -0.0",
                 "a + b = 2147483647", "a % b <> 1"]
OPERAND_VALUES = {"int": [-2, -1, 0, 1, 2, 3, 7, 127, -128, 255, 9999, 46340, 65535,
                          2**31 - 1, -2**31],
                  "double": [0.0, -0.0, 0.5, -2.25, 3.0, -1.0, 7.0, 2.5, 1e6, 9007199254740992.0,
                             1e300, -1e300, 0.1, 1.4999999999999998]}
"""Operands where signs, zeros, remainders, int/double mixing and rounding to double show."""


def _operand_values(cls: type) -> list:
    if cls is float:
        return OPERAND_VALUES["double"]
    lo, hi = {ubyte: (0, 255), ushort: (0, 65535), uint: (0, 2**32 - 1), byte: (-128, 127),
              short: (-2**15, 2**15 - 1), int32: (-2**31, 2**31 - 1)}.get(cls, (-2**63, 2**63 - 1))
    return [cls(v) for v in OPERAND_VALUES["int"] if lo <= v <= hi]


@pytest.mark.slow
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_the_arithmetic_model_is_the_row_engine_on_the_declared_operand_tags(dialect):
    """The kernel (and Spark) compute arithmetic over several fields by ``plan/arith.model``
    on the operand tags ``operand_tags`` accepts, compared through the declared number
    rules; on every pair of those tags and edge operands, where the model has an answer
    (it sends the rest to the row engine), it is the row engine's."""
    from itertools import product

    from filtex.plan.arith import OPERAND_CLASSES, _Bad, arith_form, model, operand_tags
    semantics = DIALECTS[dialect].semantics
    problems: list[str] = []
    checked = forms = 0
    for text in ARITH_FILTERS:
        try:
            row = Row(text, dialect)
        except filtex.FilterError:
            continue
        form = arith_form(row.filter.tree.body, semantics)
        if form is None:
            continue
        forms += 1
        probe = compile_probe(text, dialect)
        classes = [OPERAND_CLASSES[t] for t in sorted(operand_tags(form, semantics))]
        for ca, cb in product(classes, repeat=2):
            for a, b in product(_operand_values(ca), _operand_values(cb)):
                by_field = {"a": a, "b": b}
                numbers = [float(by_field[key]) if type(by_field[key]) is float
                           else int(by_field[key]) for _, key in form.fields]
                try:
                    want = {TRUE_CODE: TRUE, FALSE_CODE: FALSE, UNKNOWN_CODE: UNKNOWN}[
                        model(form, numbers)]
                except _Bad:
                    continue   # not the model's: the kernel sends the row to the row engine
                got = answer_of(row.filter, probe, {k: v for k, v in by_field.items()
                                                    if (None, k) in [(None, f[1]) for f in
                                                                     form.fields]})
                checked += 1
                if want != got:
                    problems.append(f"{text} with a = {ca.__name__}({a!r}), "
                                    f"b = {cb.__name__}({b!r}): the model says {want}, "
                                    f"the row engine {got}")
    assert not problems, report(problems)
    assert forms >= 12 and checked > 20_000, (forms, checked)


def compile_probe(text: str, dialect: str):
    return filtex.compile_sql(f"({text}) OR y = 1", dialect)


def answer_of(flt, probe, props: dict) -> str:
    verdict = flt.evaluate(filtex.Message(application_properties=props))
    if verdict is not None:
        return TRUE if verdict else FALSE
    either = probe.evaluate(filtex.Message(application_properties={**props, "y": 1}))
    return UNKNOWN if either else FAIL


TRUE_CODE, FALSE_CODE, UNKNOWN_CODE = 1, 0, 2


@pytest.mark.slow
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_the_batch_engine_computes_arithmetic_as_the_row_engine(dialect):
    """The same filters through the batch engine's arithmetic pass, on one table of every
    pair of operand types and edge values (and nulls, absent operands, strings), against
    the row engine message by message."""
    from itertools import product

    pytest.importorskip("pyarrow")
    import filtex.arrow
    from filtex.plan.arith import OPERAND_CLASSES
    operands = [v for cls in OPERAND_CLASSES.values()
                for v in _operand_values(cls)[::1 if cls is float else 3]]
    operands += [None, "1", float32(2.5)]
    messages = [filtex.Message(application_properties={
        k: v for k, v in (("a", a), ("b", b)) if v is not None}) for a, b in
        product(operands, repeat=2)]
    table = filtex.arrow.message_table(messages)
    problems: list[str] = []
    for text in ARITH_FILTERS:
        try:
            flt = filtex.compile_sql(text, dialect)
        except filtex.FilterError:
            continue
        batch = flt.evaluate_batch(table).to_pylist()
        for message, got in zip(messages, batch):
            want = flt.evaluate(message)
            if want != got:
                problems.append(f"{text} on {message.application_properties}: row {want}, "
                                f"batch {got}")
    assert not problems, report(problems)
    assert len(messages) > 2_000


def test_spark_function_models_are_the_runtime_operations():
    """A string function Spark computes natively (``Function.spark``) gives the runtime
    operation's result wherever its ``accepts`` takes the constant arguments (on ASCII
    text where the model says ``ascii_only``: Java's case mappings differ beyond it)."""
    from itertools import product

    from filtex.functions import REGISTRY
    strings = sorted(set(EDGE_STRINGS) | {"abcdef", "ÉTÉ", "straße", "ǅ", "ﬁ"})
    checked = 0
    problems = []
    for function in REGISTRY.values():
        form = function.spark
        if form is None:
            continue
        low, high = function.arity
        for count in range(low - 1, high):
            for args in product(range(-2, 5), repeat=count):
                if not form.accepts(args):
                    continue
                for text in strings:
                    if form.ascii_only and not text.isascii():
                        continue
                    try:
                        want = function.run(text, *args)
                    except filtex.EvaluationFailure as failure:
                        want = f"a failure ({failure})"
                    got = form.model(text, args)
                    checked += 1
                    if want != got:
                        problems.append(f"{function.name}({text!r}, {args}): runtime {want!r}, "
                                        f"Spark's model {got!r}")
    assert not problems, report(problems)
    assert checked > 1_000, checked


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_a_timestamp_against_a_string_that_reads_as_no_time(dialect):
    """Where the dialect reads a string as a time against a timestamp
    (``NumberRules.time_strings``), one that reads as none fails for every timestamp; one
    that reads as a time is left to the values."""
    rules = DIALECTS[dialect].semantics.numbers
    stamps = kind_values(TIMESTAMP)
    problems: list[str] = []
    for text in ("yesterday", "2024-13-01", "P1Y", "", "2024-01-01", "2024-01-01T10:00:00Z",
                 "P1D", "PT5M"):
        for op in OPS:
            test = f"string {op}" if op in ("=", "<>") else "string order"
            declared_answer = rules.answer(TIMESTAMP, test, text)
            try:
                row = Row(f"x {op} '{text}'", dialect)
            except filtex.FilterError:
                continue
            if declared_answer is None:
                continue
            want = {"fail": FAIL, "unknown": UNKNOWN, "false": FALSE, "true": TRUE}[
                declared_answer]
            problems += disagreements(row, stamps, lambda v, want=want: want)
        for others in ("'P1D'", "'nothing'"):   # an IN list: one string that reads as no
            try:                                 # time fails the comparison
                row = Row(f"x IN ('{text}', {others})", dialect)
            except filtex.FilterError:
                continue
            items = (text, others.strip("'"))
            declared_answer = rules.answer(TIMESTAMP, "in strings", items)
            if declared_answer is None:
                continue
            want = {"fail": FAIL, "unknown": UNKNOWN, "false": FALSE, "true": TRUE}[
                declared_answer]
            problems += disagreements(row, stamps, lambda v, want=want: want)
    assert not problems, report(problems)
    if rules.time_strings:
        assert rules.answer(TIMESTAMP, "string =", "yesterday") == "fail"
        assert rules.answer(TIMESTAMP, "string =", "2024-01-01") is None
        assert rules.answer(TIMESTAMP, "in strings", ("2024-01-01", "x")) == "fail"


@pytest.mark.slow
@pytest.mark.parametrize("text, dialect", [
    ("x IS NULL", "amqp"), ("EXISTS(x)", "amqp"), ("x > 3", "amqp"), ("x = 'a'", "jms"),
    ("x < 2.5", "rabbitmq"), ("x = TRUE", "rabbitmq"), ("x IS NOT NULL", "jms")])
def test_declared_constants_are_answered_by_the_kernel_on_every_tag(text, dialect):
    """A tag the plan answers with one declared constant (a string against a number, a
    list against anything, a type-only test) is answered in the kernel, not handed back
    to the per-message engine: no fallback row, and the row engine's verdicts."""
    pytest.importorskip("pyarrow")
    import filtex.arrow
    values = [None, True, "a", symbol("b"), char("c"), 7, ubyte(1), int32(-3), ulong(2**64 - 1),
              2.5, float32(1.5), timestamp(5), b"x", uuid.UUID(int=3), [1], {"k": 1},
              decimal64(0x31C000000000000F)]
    messages = [filtex.Message(application_properties={"x": v}) for v in values * 3]
    messages.append(filtex.Message())
    flt = filtex.compile_sql(text, dialect)
    result = filtex.arrow.evaluate(flt, filtex.arrow.message_table(messages))
    assert result.verdicts.to_pylist() == [flt.evaluate(m) for m in messages]
    per_value = {"x > 3": 0, "x < 2.5": 0}   # decimals: per value or row by row
    assert result.fallback_rows <= 3 * (text in per_value), result.fallback_rows
