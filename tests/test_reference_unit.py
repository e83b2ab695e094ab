"""Unit tests of the reference evaluator (tests/reference.py), on hand-built trees.

Each test names the rule of docs/amqp-dialect.md or semantics.md it pins down.
"""
from __future__ import annotations

import math
import sys
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from randomness import examples
from proton import (UNDESCRIBED, Array, Data, Described, byte, char, float32, int32,
                    symbol, timestamp, ubyte, uint, ulong, ushort)

sys.path.insert(0, str(Path(__file__).resolve().parent))

import reference  # noqa: E402
from reference import evaluate, value_of  # noqa: E402

from filtex.message import Message  # noqa: E402
from filtex.tree.ast import (And, Between, Binary, Call, Compare, Exists, Field, In,  # noqa: E402
                            Index, IsNull, Like, Literal, MapRef, Not, Or, Unary)
from filtex.runtime.values import encode_decimal  # noqa: E402

LONG_MAX = (1 << 63) - 1
LONG_MIN = -(1 << 63)
ULONG_MAX = (1 << 64) - 1
JAN_1_2025 = 1735689600000  # 2025-01-01T00:00:00Z in milliseconds


# --- tree-building helpers ------------------------------------------------------

def lit(value):
    if value is None:
        typ = "null"
    elif isinstance(value, bool):
        typ = "bool"
    elif isinstance(value, int):
        typ = "int"
    elif isinstance(value, float):
        typ = "float"
    elif isinstance(value, Decimal):
        typ = "decimal"
    elif isinstance(value, str):
        typ = "string"
    else:
        typ = "binary"
    return Literal(value=value, typ=typ)


NULL, TRUE, FALSE = lit(None), lit(True), lit(False)


def node(x):
    """A node as is; any other Python value as a literal."""
    return x if hasattr(x, "offset") else lit(x)


def a(key):
    return Field(section="application_properties", key=key)


def eq(left, right):
    return Compare(op="=", left=node(left), right=node(right))


def cmp(op, left, right):
    return Compare(op=op, left=node(left), right=node(right))


def arith(op, left, right):
    return Binary(op=op, left=node(left), right=node(right))


def call(name, *args):
    return Call(name=name, args=tuple(node(x) for x in args))


def app(**props):
    return Message(application_properties=props)


def run(tree, message=None, now=None):
    return evaluate(tree, message if message is not None else Message(), now=now)


def result(tree, message=None, now=None):
    """The result, asserting evaluation did not fail."""
    value, reason = run(tree, message, now)
    assert reason is None, reason
    return value


def failed(tree, message=None):
    """Assert evaluation failed: unknown result with a reason."""
    value, reason = run(tree, message)
    assert value is None
    assert isinstance(reason, str) and reason
    return reason


def val(tree, message=None, now=None):
    return value_of(tree, message, now)


def is_nan(x):
    return isinstance(x, float) and math.isnan(x)


# A failing expression: comparing a string with a number.
BAD = eq("a", 1)
BAD2 = arith("+", TRUE, 1)  # a failure with a different reason


# =============================================================================
# Three-valued logic and failures
# =============================================================================

@pytest.mark.parametrize("x, y, expected", [
    (TRUE, TRUE, True), (TRUE, FALSE, False), (FALSE, FALSE, False),
    (TRUE, NULL, None), (NULL, TRUE, None), (FALSE, NULL, False), (NULL, FALSE, False),
    (NULL, NULL, None)])
def test_and_three_valued(x, y, expected):
    assert result(And(items=(x, y))) is expected


@pytest.mark.parametrize("x, y, expected", [
    (TRUE, TRUE, True), (TRUE, FALSE, True), (FALSE, FALSE, False),
    (TRUE, NULL, True), (NULL, TRUE, True), (FALSE, NULL, None), (NULL, FALSE, None),
    (NULL, NULL, None)])
def test_or_three_valued(x, y, expected):
    assert result(Or(items=(x, y))) is expected


def test_and_or_of_many_items():
    assert result(And(items=(TRUE, TRUE, NULL, FALSE))) is False
    assert result(Or(items=(FALSE, NULL, FALSE, TRUE))) is True
    assert result(Or(items=(FALSE, NULL, FALSE))) is None


@pytest.mark.parametrize("x, expected", [(TRUE, False), (FALSE, True), (NULL, None)])
def test_not_three_valued(x, expected):
    assert result(Not(operand=x)) is expected


def test_missing_field_is_null_and_flows_through_comparison():
    assert result(eq(a("missing"), 5)) is None
    assert result(Not(operand=eq(a("missing"), 5))) is None
    assert result(Or(items=(eq(a("missing"), 5), TRUE))) is True


def test_failure_is_not_rescued_by_or():
    # TRUE OR <failure> is unknown, never true; the reason is kept.
    failed(Or(items=(TRUE, BAD)))
    failed(Or(items=(BAD, TRUE)))
    failed(And(items=(FALSE, BAD)))  # no short-circuit
    failed(Not(operand=BAD))


def test_first_failure_reason_left_to_right():
    first = failed(BAD)
    second = failed(BAD2)
    assert first != second
    assert failed(Or(items=(BAD, BAD2))) == first
    assert failed(Or(items=(BAD2, BAD))) == second
    assert failed(And(items=(TRUE, Or(items=(FALSE, BAD2)), BAD))) == second


def test_failure_deep_inside_expression_aborts_filter():
    tree = Or(items=(TRUE, IsNull(operand=arith("*", "x", 2))))
    failed(tree)


def test_predicate_position_must_hold_boolean_or_null():
    assert result(a("flag"), app(flag=True)) is True
    assert result(a("flag"), app()) is None           # NULL whole filter: unknown, no failure
    failed(a("n"), app(n=1))                           # the whole filter
    failed(lit("true"))
    failed(And(items=(TRUE, lit(1))))
    failed(Or(items=(TRUE, a("s"))), app(s="x"))
    failed(Not(operand=lit(0)))
    failed(arith("/", 1, 0))                           # NaN is not a boolean


def test_booleans_compare_as_values_not_predicates():
    assert result(eq(a("flag"), TRUE), app(flag=True)) is True
    assert result(eq(eq(1, 1), TRUE)) is True


def test_vendor_function_is_null():
    assert result(IsNull(operand=call("acme:thing", 1, "x"))) is True
    assert result(eq(call("acme:thing"), 1)) is None


def test_vendor_function_arguments_are_not_evaluated():
    # READING: "vendor:name(...) is NULL (its arguments are still checked for syntax)".
    assert result(IsNull(operand=Call(name="acme:thing", args=(BAD,)))) is True


# =============================================================================
# Comparison
# =============================================================================

@pytest.mark.parametrize("op", ["=", "<>", "<", "<=", ">", ">="])
def test_null_and_nan_compare_unknown(op):
    assert result(cmp(op, NULL, 1)) is None
    assert result(cmp(op, 1, NULL)) is None
    assert result(cmp(op, NULL, NULL)) is None
    assert result(cmp(op, float("nan"), 1)) is None
    assert result(cmp(op, float("nan"), float("nan"))) is None
    assert result(cmp(op, a("d"), 1), app(d=Decimal("NaN"))) is None
    assert result(cmp(op, float("nan"), "text")) is None  # NaN rule before type rule


def test_not_equal_spelling():
    assert result(cmp("!=", 1, 2)) is True
    assert result(cmp("<>", 1, 1)) is False


@pytest.mark.parametrize("value", [ubyte(5), ushort(5), uint(5), ulong(5), byte(5), 5,
                                   int32(5), timestamp(5)])
def test_integer_types_compare_by_value(value):
    assert result(eq(a("x"), 5), app(x=value)) is True
    assert result(cmp("<", a("x"), 6), app(x=value)) is True


def test_integers_across_signedness_and_range():
    assert result(cmp(">", a("u"), a("s")), app(u=ulong(ULONG_MAX), s=byte(-1))) is True
    assert result(eq(a("u"), a("s")), app(u=ulong(ULONG_MAX), s=-1)) is False
    assert result(eq(a("u"), ULONG_MAX), app(u=ulong(ULONG_MAX))) is True


def test_float_and_integer_compare_as_doubles():
    assert result(eq(a("f"), 1), app(f=float32(1.0))) is True
    assert result(eq(1.5, a("f")), app(f=float32(1.5))) is True
    assert result(cmp("<", 2, 2.5)) is True
    # As doubles: 2^53 + 1 becomes 2^53.
    assert result(eq((1 << 53) + 1, float(1 << 53))) is True
    assert result(cmp(">", float("inf"), ULONG_MAX)) is True


def test_decimal_compares_exactly_with_integers_and_decimals():
    assert result(eq(Decimal("5.0"), 5)) is True
    assert result(eq(a("d"), Decimal("12.5")), app(d=encode_decimal("12.50", 64))) is True
    assert result(eq(a("d"), a("e")), app(d=encode_decimal("1.5", 32),
                                         e=encode_decimal("1.50", 128))) is True
    big = (1 << 53) + 1
    assert result(eq(Decimal(big), big)) is True
    assert result(eq(Decimal(big), big - 1)) is False   # exact, not as doubles
    assert result(cmp("<", Decimal("0.1"), a("n")), app(n=ubyte(1))) is True


def test_decimal_with_float_compares_as_doubles():
    assert result(eq(Decimal("0.1"), 0.1)) is True
    assert result(eq(Decimal("0.10000000000000000001"), 0.1)) is True


def test_string_symbol_char_interchangeable():
    assert result(eq(a("s"), "blue"), app(s=symbol("blue"))) is True
    assert result(eq(a("c"), "x"), app(c=char("x"))) is True
    assert result(eq(a("c"), a("s")), app(c=char("x"), s=symbol("x"))) is True
    assert result(cmp("<", a("c"), "y"), app(c=char("x"))) is True


def test_strings_case_sensitive_by_code_point():
    assert result(eq("a", "A")) is False
    assert result(cmp("<", "Z", "a")) is True
    assert result(cmp("<", "ab", "b")) is True
    assert result(cmp("<", "a", "ab")) is True
    # Code points, not UTF-16 units: U+FFFF < U+10000.
    assert result(cmp("<", "\uffff", "\U00010000")) is True
    assert result(cmp("<", "\u00e9", "f")) is False


def test_timestamp_with_timestamp_and_integers():
    msg = app(t=timestamp(1000), u=timestamp(2000))
    assert result(cmp("<", a("t"), a("u")), msg) is True
    assert result(eq(a("t"), 1000), msg) is True
    assert result(eq(a("t"), a("n")), Message(application_properties={
        "t": timestamp(7), "n": ubyte(7)})) is True


def test_timestamp_with_iso_datetime_strings():
    msg = app(t=timestamp(JAN_1_2025))
    assert result(eq(a("t"), "2025-01-01T00:00:00Z"), msg) is True
    assert result(eq("2025-01-01T00:00:00Z", a("t")), msg) is True
    assert result(eq(a("t"), "2025-01-01T00:00:00"), msg) is True         # unqualified: UTC
    assert result(eq(a("t"), "2025-01-01T01:00:00+01:00"), msg) is True
    assert result(eq(a("t"), "2025-01-01T00:00:00.000Z"), msg) is True
    assert result(cmp("<", a("t"), "2025-01-01T00:00:00.001Z"), msg) is True
    assert result(cmp(">", a("t"), "2024-12-31T23:59:59Z"), msg) is True
    assert result(eq(a("t"), "2025-01-01"), msg) is True                  # READING: date alone


def test_timestamp_with_iso_duration_strings():
    assert result(eq(a("t"), "PT1S"), app(t=timestamp(1000))) is True
    assert result(eq(a("t"), "PT1.5S"), app(t=timestamp(1500))) is True
    assert result(eq(a("t"), "P1W"), app(t=timestamp(7 * 86_400_000))) is True
    assert result(eq(a("t"), "P1DT2H3M4S"),
                  app(t=timestamp(86_400_000 + 2 * 3_600_000 + 3 * 60_000 + 4000))) is True
    assert result(eq(a("t"), "PT0.25S"), app(t=timestamp(250))) is True


@pytest.mark.parametrize("text", ["P1Y", "P1M", "P1Y2M", "PT", "P", "1S", "hello", "",
                                  "2025-01-01x10:00", "2025-13-01", "-PT1S"])
def test_timestamp_with_other_strings_fails(text):
    failed(eq(a("t"), text), app(t=timestamp(0)))


def test_timestamp_with_float_or_decimal_fails():
    failed(eq(a("t"), 1.0), app(t=timestamp(1)))
    failed(eq(a("t"), Decimal(1)), app(t=timestamp(1)))
    failed(eq(a("t"), TRUE), app(t=timestamp(1)))


def test_integer_never_converts_iso_strings():
    failed(eq(JAN_1_2025, "2025-01-01T00:00:00Z"))


def test_boolean_and_uuid_equality_only():
    assert result(eq(TRUE, TRUE)) is True
    assert result(cmp("<>", TRUE, FALSE)) is True
    failed(cmp("<", TRUE, FALSE))
    u1, u2 = uuid.UUID(int=1), uuid.UUID(int=2)
    assert result(eq(a("u"), a("u")), app(u=u1)) is True
    assert result(cmp("<>", a("u"), a("v")), app(u=u1, v=u2)) is True
    failed(cmp(">=", a("u"), a("v")), app(u=u1, v=u2))


@pytest.mark.parametrize("op, expected", [("=", False), ("<", True), (">=", False)])
def test_binary_ordered_bytewise(op, expected):
    assert result(cmp(op, b"\x01\xff", b"\x02")) is expected
    assert result(eq(a("b"), b"\x00"), app(b=b"\x00")) is True


@pytest.mark.parametrize("left, right", [
    ("1", 1), (1, "1"), (TRUE, 1), (1.0, TRUE), ("a", b"a"), (Decimal(1), "1"),
    ("x", a("u")), (a("u"), 1)])
def test_incomparable_pairs_fail(left, right):
    failed(eq(left, right), app(u=uuid.UUID(int=1)))


@pytest.mark.parametrize("holder", [{"k": 1}, [1], Array(UNDESCRIBED, Data.INT, 1),
                                    Described(symbol("d"), 1)])
def test_composite_values_are_incomparable(holder):
    failed(eq(a("c"), 1), app(c=holder))
    failed(eq(a("c"), a("c")), app(c=holder))
    assert result(eq(a("c"), NULL), app(c=holder)) is None  # NULL rule first


# =============================================================================
# Arithmetic
# =============================================================================

def test_division_of_integers():
    assert val(arith("/", 7, 2)) == 3.5
    assert result(eq(arith("/", 7, 2), 3.5)) is True
    six_by_two = val(arith("/", 6, 2))
    assert six_by_two == 3 and type(six_by_two) is int
    assert val(arith("/", -7, 2)) == -3.5
    assert val(arith("/", 1, 3)) == 1 / 3


def test_division_by_zero_is_nan():
    for left, right in [(1, 0), (0, 0), (1.0, 0), (1, 0.0), (Decimal("1.5"), 0),
                        (Decimal(0), Decimal(0)), (-1.0, -0.0)]:
        assert is_nan(val(arith("/", left, right))), (left, right)
    # ... and NaN compares unknown, is not NULL.
    assert result(eq(arith("/", 1, 0), arith("/", 1, 0))) is None
    assert result(IsNull(operand=arith("/", 1, 0))) is False


def test_float_and_decimal_division():
    assert val(arith("/", 1.0, 4)) == 0.25
    assert val(arith("/", Decimal(1), 3)) == Decimal("0." + "3" * 34)
    assert val(arith("/", Decimal(1), 4.0)) == 0.25  # float wins


def test_integer_arithmetic_widens_past_long_into_ulong():
    assert val(arith("+", LONG_MAX, 1)) == LONG_MAX + 1
    assert val(arith("*", a("u"), 1), app(u=ulong(ULONG_MAX))) == ULONG_MAX
    assert val(arith("-", a("b"), 200), app(b=ubyte(100))) == -100
    assert val(arith("*", a("x"), a("x")), app(x=int32((1 << 31) - 1))) == ((1 << 31) - 1) ** 2


def test_integer_overflow_is_nan():
    assert is_nan(val(arith("+", ULONG_MAX, 1)))
    assert is_nan(val(arith("-", LONG_MIN, 1)))
    assert is_nan(val(arith("*", LONG_MAX, 4)))
    assert is_nan(val(arith("/", ULONG_MAX, -1)))
    assert is_nan(val(Unary(op="-", operand=lit(ULONG_MAX))))
    assert val(Unary(op="-", operand=lit(LONG_MIN))) == LONG_MAX + 1


def test_double_overflow_is_nan_but_infinity_stays():
    assert is_nan(val(arith("*", 1e308, 10)))
    assert is_nan(val(arith("+", 1.7e308, 1.7e308)))
    assert is_nan(val(arith("/", 1e308, 1e-10)))
    assert val(arith("+", float("inf"), 1)) == float("inf")
    assert is_nan(val(arith("-", float("inf"), float("inf"))))


def test_decimal128_arithmetic_precision_and_overflow():
    assert val(arith("+", Decimal("0.1"), Decimal("0.2"))) == Decimal("0.3")
    assert val(arith("+", Decimal("1E+40"), 1)) == Decimal("1E+40")  # 34 digits
    assert is_nan(val(arith("*", Decimal("9E+6144"), 10)))
    assert val(arith("*", Decimal("1.5"), 2)) == Decimal("3.0")
    assert val(arith("-", a("d"), 1), app(d=encode_decimal("2.5", 64))) == Decimal("1.5")
    assert is_nan(val(arith("+", a("d"), 1), app(d=Decimal("NaN"))))


def test_float_with_integer_or_decimal_is_double():
    assert val(arith("+", 1, 0.5)) == 1.5
    assert type(val(arith("+", Decimal("1"), 0.5))) is float


@pytest.mark.parametrize("left, right, expected", [
    (7, 2, 1), (-7, 2, -1), (7, -2, 1), (-7, -2, -1), (6, 3, 0), (LONG_MIN, -1, 0)])
def test_remainder_has_the_sign_of_the_dividend(left, right, expected):
    assert val(arith("%", left, right)) == expected


def test_remainder_rules():
    assert is_nan(val(arith("%", 7, 0)))
    assert val(arith("%", a("b"), a("u")), app(b=byte(-9), u=ulong(4))) == -1
    failed(eq(arith("%", 7.0, 2), 1))
    failed(eq(arith("%", 7, 2.0), 1))
    failed(eq(arith("%", Decimal(7), 2), 1))
    failed(eq(arith("%", "7", 2), 1))
    # READING: a timestamp in arithmetic is a long, hence an integer.
    assert val(arith("%", a("t"), 1000), app(t=timestamp(1500))) == 500


def test_string_concatenation():
    assert val(arith("+", "ab", "cd")) == "abcd"
    assert val(arith("+", a("s"), a("c")), app(s=symbol("ab"), c=char("c"))) == "abc"
    assert result(eq(arith("+", "a", "b"), "ab")) is True


@pytest.mark.parametrize("op", ["-", "*", "/", "%"])
def test_other_string_arithmetic_fails(op):
    failed(eq(arith(op, "ab", "cd"), "x"))


@pytest.mark.parametrize("left, right", [
    ("a", 1), (1, "a"), (TRUE, 1), (1, FALSE), (b"\x01", 1), (a("m"), 1), (a("u"), 1)])
def test_arithmetic_on_non_numbers_fails(left, right):
    failed(IsNull(operand=arith("+", left, right)), app(m={"k": 1}, u=uuid.UUID(int=1)))


def test_arithmetic_with_null_is_null():
    assert val(arith("+", NULL, 1)) is None
    assert val(arith("*", 1.5, NULL)) is None
    assert val(arith("+", NULL, "x")) is None
    assert val(arith("%", NULL, 0)) is None
    assert val(arith("+", a("missing"), TRUE)) is None


def test_timestamp_arithmetic_gives_a_long():
    value = val(arith("+", a("t"), 1000), app(t=timestamp(JAN_1_2025)))
    assert value == JAN_1_2025 + 1000 and type(value) is int
    assert val(arith("-", a("t"), a("t")), app(t=timestamp(5))) == 0
    assert val(arith("*", a("t"), 0.5), app(t=timestamp(5))) == 2.5
    # A long does not convert ISO strings: comparing it with one fails.
    failed(eq(arith("+", a("t"), 0), "2025-01-01T00:00:00Z"), app(t=timestamp(JAN_1_2025)))


def test_unary_operators():
    assert val(Unary(op="-", operand=lit(5))) == -5
    assert val(Unary(op="-", operand=a("b")), app(b=ubyte(200))) == -200
    assert val(Unary(op="-", operand=lit(1.5))) == -1.5
    assert val(Unary(op="-", operand=lit(Decimal("1.5")))) == Decimal("-1.5")
    assert val(Unary(op="+", operand=lit(Decimal("1.5")))) == Decimal("1.5")
    assert val(Unary(op="-", operand=NULL)) is None
    assert val(Unary(op="+", operand=NULL)) is None
    neg_ts = val(Unary(op="-", operand=a("t")), app(t=timestamp(5)))
    assert neg_ts == -5 and type(neg_ts) is int
    assert is_nan(val(Unary(op="-", operand=lit(float("nan")))))
    for bad in ("x", True, b"\x01"):
        failed(IsNull(operand=Unary(op="-", operand=lit(bad))))
        failed(IsNull(operand=Unary(op="+", operand=lit(bad))))


# =============================================================================
# IS NULL, LIKE, IN, BETWEEN, EXISTS
# =============================================================================

def test_is_null():
    assert result(IsNull(operand=a("missing"))) is True
    assert result(IsNull(operand=a("x")), app(x=None)) is True
    assert result(IsNull(operand=a("x")), app(x=0)) is False
    assert result(IsNull(operand=a("x"), negated=True), app(x=0)) is True
    assert result(IsNull(operand=lit(float("nan")))) is False
    assert result(IsNull(operand=call("acme:f"))) is True
    assert result(IsNull(operand=a("m")), app(m={})) is False


def like(operand, pattern, escape=None, negated=False):
    return Like(operand=node(operand), pattern=node(pattern),
                escape=None if escape is None else node(escape), negated=negated)


@pytest.mark.parametrize("text, pattern, expected", [
    ("blue", "bl_e", True), ("blue", "bl_", False), ("blue", "%ue", True),
    ("blue", "%", True), ("", "%", True), ("", "_", False), ("", "", True),
    ("blue", "b%e", True), ("blue", "b%x", False), ("abcabc", "%abc", True),
    ("aXbXc", "a%b%c", True), ("aXbXc", "a%c%b", False), ("a.c", "a.c", True),
    ("abc", "a.c", False), ("a*c", "a*%", True), ("BLUE", "blue", False),
    ("\U0001f600x", "_x", True), ("line\nbreak", "line_break", True),
    ("line\nbreak", "%break", True), ("100%", "100%", True), ("a_b", "a_b", True)])
def test_like_wildcards(text, pattern, expected):
    assert result(like(text, pattern)) is expected
    assert result(like(text, pattern, negated=True)) is (not expected)


def test_like_escape():
    assert result(like("ABC%", "ABC\\%", "\\")) is True
    assert result(like("ABCD", "ABC\\%", "\\")) is False
    assert result(like("a_b", "a!_b", "!")) is True
    assert result(like("axb", "a!_b", "!")) is False
    assert result(like("a!b", "a!!b", "!")) is True         # escape escapes itself
    assert result(like("ab", "a!b", "!")) is True           # escaping an ordinary character
    assert result(like("a%b", "a%%b", "%")) is True         # '%' as the escape is literal after it
    assert result(like("axb", "a%%b", "%")) is False


def test_like_escape_at_end_fails():
    failed(like("abc", "abc!", "!"))
    failed(like("x%y", "%%%", "%"))


def test_like_type_rules():
    assert result(like(a("s"), "bl%"), app(s=symbol("blue"))) is True
    assert result(like(a("c"), "_"), app(c=char("x"))) is True
    assert result(like(a("missing"), "%")) is None
    assert result(like("abc", NULL)) is None
    assert result(like("abc", "%", NULL)) is None
    assert result(like(a("missing"), "%", negated=True)) is None
    failed(like(a("n"), "1%"), app(n=1))
    failed(like(TRUE, "%"))
    failed(like("abc", a("n")), app(n=1))
    failed(like("abc", "%", a("n")), app(n=1))
    failed(like("abc", "%", "!!"))
    failed(like("abc", "%", ""))


def test_like_with_computed_pattern():
    tree = like("blue", arith("+", "bl", "%"))
    assert result(tree) is True


def in_(operand, *items, negated=False):
    return In(operand=node(operand), items=tuple(node(i) for i in items), negated=negated)


def test_in():
    assert result(in_("b", "a", "b", "c")) is True
    assert result(in_("d", "a", "b", "c")) is False
    assert result(in_("d", "a", "b", negated=True)) is True
    assert result(in_(a("s"), "x", "y"), app(s=symbol("y"))) is True
    assert result(in_(2, 1.0, 2.0)) is True


def test_in_with_null():
    assert result(in_(1, NULL, 1)) is True
    assert result(in_(2, NULL, 1)) is None
    assert result(in_(2, NULL, 1, negated=True)) is None
    assert result(in_(1, NULL, 1, negated=True)) is False
    assert result(in_(NULL, 1, 2)) is None
    assert result(in_(a("missing"), "a", negated=True)) is None


def test_in_comparison_failure_fails_even_after_a_match():
    failed(in_("a", "a", 1))
    failed(in_("a", 1, "a", negated=True))


def between(operand, low, high, negated=False):
    return Between(operand=node(operand), low=node(low), high=node(high), negated=negated)


def test_between():
    assert result(between(5, 1, 10)) is True
    assert result(between(1, 1, 10)) is True
    assert result(between(10, 1, 10)) is True
    assert result(between(11, 1, 10)) is False
    assert result(between(11, 1, 10, negated=True)) is True
    assert result(between(5, 10, 1)) is False
    assert result(between("b", "a", "c")) is True
    assert result(between(a("u"), 1.5, Decimal("2.5")), app(u=ubyte(2))) is True


def test_between_three_valued():
    assert result(between(5, NULL, 10)) is None
    assert result(between(5, NULL, 4)) is False          # x <= 4 is false
    assert result(between(5, NULL, 4, negated=True)) is True
    assert result(between(NULL, 1, 10)) is None
    assert result(between(5, 1, float("nan"))) is None


def test_between_failure():
    failed(between(5, "a", 10))
    failed(between("b", "a", 10))


def test_exists_in_maps():
    msg = Message(application_properties={"color": "blue", "empty": None},
                  message_annotations={symbol("x-opt-a"): 1},
                  delivery_annotations={symbol("d"): None},
                  footer={symbol("f"): 0})
    assert result(Exists(ref=a("color")), msg) is True
    assert result(Exists(ref=a("shape")), msg) is False
    assert result(Exists(ref=a("empty")), msg) is True   # value does not matter
    assert result(Exists(ref=Field(section="message_annotations", key="x-opt-a")), msg) is True
    assert result(Exists(ref=Field(section="delivery_annotations", key="d")), msg) is True
    assert result(Exists(ref=Field(section="footer", key="f")), msg) is True
    assert result(Exists(ref=Field(section="footer", key="g")), msg) is False


def test_exists_ignores_header_defaults():
    priority = Field(section="header", key="priority", default=4)
    assert result(Exists(ref=priority), Message()) is False
    assert val(priority, Message()) == 4
    assert result(Exists(ref=priority), Message(header={"priority": ubyte(4)})) is True
    # READING: a null in the composite header/properties sections is no value.
    assert result(Exists(ref=priority), Message(header={"priority": None})) is False
    assert result(Exists(ref=Field(section="properties", key="to")),
                  Message(properties={"to": None})) is False
    assert result(Exists(ref=Field(section="properties", key="to")),
                  Message(properties={"to": "q"})) is True


def test_exists_composite_references():
    order = {"lines": [{"sku": "A1"}, {"qty": 2}]}
    msg = Message(message_annotations={symbol("x-opt-order"): order})
    base = Field(section="message_annotations", key="x-opt-order")
    line = lambda i: Index(base=MapRef(base=base, key="lines"), index=lit(i))  # noqa: E731
    assert result(Exists(ref=MapRef(base=line(0), key="sku")), msg) is True
    assert result(Exists(ref=MapRef(base=line(1), key="sku")), msg) is False
    assert result(Exists(ref=MapRef(base=line(2), key="sku")), msg) is False
    assert result(Exists(ref=line(1)), msg) is True
    assert result(Exists(ref=MapRef(base=base, key="nope")), msg) is False
    assert result(Exists(ref=MapRef(base=a("x"), key="y")), app(x=1)) is False
    assert result(Exists(ref=MapRef(base=a("m"), key="k")), app(m={"k": None})) is True
    assert result(Exists(ref=Index(base=a("l"), index=NULL)), app(l=[1])) is False


def test_exists_composite_index_failure():
    failed(Exists(ref=Index(base=a("l"), index=lit("0"))), app(l=[1]))


# =============================================================================
# Fields: header defaults, map and positional references
# =============================================================================

@pytest.mark.parametrize("key, default", [("durable", False), ("priority", 4),
                                          ("first-acquirer", False), ("delivery-count", 0)])
def test_header_defaults_when_absent_or_null(key, default):
    field = Field(section="header", key=key, default=default)
    assert result(eq(field, default), Message()) is True
    assert result(eq(field, default), Message(header={key: None})) is True
    assert result(IsNull(operand=field), Message()) is False


def test_header_value_wins_over_default():
    field = Field(section="header", key="priority", default=4)
    assert result(eq(field, 7), Message(header={"priority": ubyte(7)})) is True
    durable = Field(section="header", key="durable", default=False)
    assert result(durable, Message(header={"durable": True})) is True
    assert result(durable, Message()) is False


def test_header_field_without_default_is_null():
    ttl = Field(section="header", key="ttl")
    assert result(IsNull(operand=ttl), Message()) is True
    assert result(eq(ttl, 1000), Message(header={"ttl": uint(1000)})) is True


def test_sections_are_separate():
    msg = Message(properties={"to": "q1"}, application_properties={"to": "q2"})
    assert result(eq(Field(section="properties", key="to"), "q1"), msg) is True
    assert result(eq(a("to"), "q2"), msg) is True
    assert result(eq(Field(section="properties", key="reply-to"), "x"), msg) is None


def test_annotation_symbol_keys_found_by_name():
    msg = Message(message_annotations={symbol("x-opt-k"): 5})
    assert result(eq(Field(section="message_annotations", key="x-opt-k"), 5), msg) is True


def test_map_references():
    msg = app(m={"k": 1, "inner": {"z": "deep"}})
    assert result(eq(MapRef(base=a("m"), key="k"), 1), msg) is True
    assert result(eq(MapRef(base=MapRef(base=a("m"), key="inner"), key="z"), "deep"), msg)
    assert result(IsNull(operand=MapRef(base=a("m"), key="missing")), msg) is True
    assert result(IsNull(operand=MapRef(base=MapRef(base=a("m"), key="missing"), key="z")),
                  msg) is True
    assert result(IsNull(operand=MapRef(base=a("m"), key="k")), app(m=[1])) is True
    assert result(IsNull(operand=MapRef(base=a("m"), key="k")), app(m="text")) is True
    assert result(IsNull(operand=MapRef(base=a("m"), key="k")),
                  app(m=Described(symbol("d"), {"k": 1}))) is True
    assert result(eq(MapRef(base=a("m"), key="k"), 1), app(m={symbol("k"): 1})) is True


def test_positional_references():
    msg = app(l=["a", "b", "c"], arr=Array(UNDESCRIBED, Data.INT, 10, 20), i=ubyte(1))
    assert result(eq(Index(base=a("l"), index=lit(0)), "a"), msg) is True
    assert result(eq(Index(base=a("l"), index=lit(2)), "c"), msg) is True
    assert result(eq(Index(base=a("arr"), index=lit(1)), 20), msg) is True
    assert result(eq(Index(base=a("l"), index=a("i")), "b"), msg) is True
    assert result(eq(Index(base=a("l"), index=arith("+", 1, 1)), "c"), msg) is True
    for out_of_range in (3, -1, ULONG_MAX):
        assert result(IsNull(operand=Index(base=a("l"), index=lit(out_of_range))), msg) is True
    assert result(IsNull(operand=Index(base=a("l"), index=NULL)), msg) is True
    assert result(IsNull(operand=Index(base=a("missing"), index=lit(0))), msg) is True
    assert result(IsNull(operand=Index(base=a("i"), index=lit(0))), msg) is True
    assert result(IsNull(operand=Index(base=lit("abc"), index=lit(0))), msg) is True


def test_positional_reference_needs_an_integer():
    # READING: a non-integer index is a failure.
    for bad in ("0", 0.0, Decimal(0), True):
        failed(IsNull(operand=Index(base=a("l"), index=lit(bad))), app(l=[1]))


def test_composite_chain():
    order = {"lines": [{"sku": "A1"}, {"sku": "B2"}]}
    msg = Message(message_annotations={symbol("x-opt-order"): order})
    tree = MapRef(base=Index(base=MapRef(base=Field(section="message_annotations",
                                                    key="x-opt-order"),
                                         key="lines"), index=lit(1)), key="sku")
    assert result(eq(tree, "B2"), msg) is True
    assert result(eq(tree, "B2"), Message()) is None


# =============================================================================
# Functions
# =============================================================================

def test_lower_upper_default():
    assert val(call("LOWER", "HeLLo")) == "hello"
    assert val(call("UPPER", "HeLLo")) == "HELLO"
    assert val(call("UPPER", "straße")) == "STRASSE"           # full case mapping
    assert val(call("LOWER", "\u0130")) == "i\u0307"          # default: dotted I -> i + dot
    assert val(call("LOWER", "ΟΔΟΣ")) == "οδος"                 # final sigma
    assert val(call("LOWER", a("s")), app(s=symbol("ABC"))) == "abc"
    assert val(call("LOWER", "I", "en-US")) == "i"
    assert val(call("UPPER", "i", "de")) == "I"
    assert result(eq(call("LOWER", a("c")), "blue"), app(c="BLUE")) is True


@pytest.mark.parametrize("tag", ["tr", "TR", "tr-TR", "az", "az-Latn-AZ"])
def test_lower_upper_turkic(tag):
    assert val(call("LOWER", "I", tag)) == "\u0131"
    assert val(call("LOWER", "\u0130", tag)) == "i"
    assert val(call("LOWER", "I\u0307", tag)) == "i"           # I + combining dot above
    assert val(call("LOWER", "ISTANBUL", tag)) == "\u0131stanbul"
    assert val(call("UPPER", "i", tag)) == "\u0130"
    assert val(call("UPPER", "\u0131", tag)) == "I"
    assert val(call("UPPER", "istanbul", tag)) == "\u0130STANBUL"
    assert val(call("LOWER", "ΟΔΟΣ I", tag)) == "οδος \u0131"   # final sigma still applies


def test_lower_upper_lithuanian():
    assert val(call("LOWER", "\u00cc", "lt")) == "i\u0307\u0300"
    assert val(call("LOWER", "\u00cd", "lt")) == "i\u0307\u0301"
    assert val(call("LOWER", "\u0128", "lt")) == "i\u0307\u0303"
    assert val(call("LOWER", "I\u0301", "lt")) == "i\u0307\u0301"  # More_Above
    assert val(call("LOWER", "J\u0303", "lt-LT")) == "j\u0307\u0303"
    assert val(call("LOWER", "I", "lt")) == "i"
    assert val(call("UPPER", "i\u0307", "lt")) == "I"             # After_Soft_Dotted
    assert val(call("UPPER", "j\u0307x", "lt")) == "JX"
    assert val(call("UPPER", "a\u0307", "lt")) == "A\u0307"
    assert val(call("UPPER", "i\u0307", "en")) == "I\u0307"


@pytest.mark.parametrize("tag", ["", "e", "tr_TR", "toolongtag", "en-", "-en", "en--US",
                                 "123", "tr TR", "en-US-x"])
def test_lower_upper_malformed_tag_fails(tag):
    failed(IsNull(operand=call("LOWER", "A", tag)))
    failed(IsNull(operand=call("UPPER", "A", tag)))


@pytest.mark.parametrize("tag", ["i-klingon", "x-private", "zh-Hant-TW", "sl-rozaj-biske",
                                 "de-CH-1901", "en-a-bbb-x-a-ccc", "es-419", "zh-yue-HK"])
def test_lower_upper_other_well_formed_tags_map_as_default(tag):
    assert val(call("LOWER", "I\u0130", tag)) == "ii\u0307"
    assert val(call("UPPER", "i", tag)) == "I"


def test_lower_upper_argument_rules():
    assert val(call("LOWER", NULL)) is None
    assert val(call("UPPER", "A", NULL)) is None
    failed(IsNull(operand=call("LOWER", 1)))
    failed(IsNull(operand=call("UPPER", "a", 1)))
    failed(IsNull(operand=call("LOWER", b"A")))


def test_left_right():
    assert val(call("LEFT", "hello", 2)) == "he"
    assert val(call("LEFT", "hello", 0)) == ""
    assert val(call("LEFT", "hi", 5)) == "hi"
    assert val(call("RIGHT", "hello", 2)) == "lo"
    assert val(call("RIGHT", "hello", 0)) == ""
    assert val(call("RIGHT", "hi", 5)) == "hi"
    assert val(call("LEFT", a("s"), a("n")), app(s=symbol("abc"), n=ubyte(1))) == "a"
    assert val(call("LEFT", "hello", ULONG_MAX)) == "hello"
    assert val(call("LEFT", NULL, -1)) is None       # NULL first
    assert val(call("RIGHT", "x", NULL)) is None


@pytest.mark.parametrize("name", ["LEFT", "RIGHT"])
@pytest.mark.parametrize("args", [("hello", -1), ("hello", 1.0), ("hello", Decimal(1)),
                                  ("hello", "1"), (1, 1), ("hello", TRUE)])
def test_left_right_argument_failures(name, args):
    failed(IsNull(operand=call(name, *args)))


def test_substring():
    assert val(call("SUBSTRING", "hello", 2, 3)) == "ell"
    assert val(call("SUBSTRING", "hello", 1, 5)) == "hello"
    assert val(call("SUBSTRING", "hello", 2)) == "ello"
    assert val(call("SUBSTRING", "hello", 4, 10)) == "lo"
    assert val(call("SUBSTRING", "hello", 6)) == ""
    assert val(call("SUBSTRING", "hello", 99, 1)) == ""
    assert val(call("SUBSTRING", "hello", 2, 0)) == ""
    assert val(call("SUBSTRING", NULL, 0)) is None
    assert val(call("SUBSTRING", "hello", 1, NULL)) is None


@pytest.mark.parametrize("args", [("hello", 0), ("hello", -1), ("hello", 1, -1),
                                  ("hello", 1.0), ("hello", 1, 2.0), (5, 1), ("hello", "1")])
def test_substring_argument_failures(args):
    failed(IsNull(operand=call("SUBSTRING", *args)))


def test_utc():
    value = val(call("UTC"), now=JAN_1_2025)
    assert value == JAN_1_2025 and isinstance(value, timestamp)
    assert result(cmp(">", call("UTC"), "2020-01-01T00:00:00Z")) is True   # real clock
    assert result(eq(call("UTC"), "2025-01-01T00:00:00Z"), now=JAN_1_2025) is True


def test_date():
    value = val(call("DATE", "2025-01-01"))
    assert value == JAN_1_2025 and isinstance(value, timestamp)
    assert val(call("DATE", "2025-01-01T00:00:00Z")) == JAN_1_2025
    assert val(call("DATE", "2025-01-01T00:00:00")) == JAN_1_2025          # UTC assumed
    assert val(call("DATE", "2025-01-01T02:00:00+02:00")) == JAN_1_2025
    assert val(call("DATE", "2025-01-01T00:00:01.5Z")) == JAN_1_2025 + 1500
    assert val(call("DATE", "1969-12-31T23:59:59Z")) == -1000
    assert val(call("DATE", NULL)) is None
    msg = app(t=timestamp(JAN_1_2025), s="2025-01-01T00:00:00Z")
    assert result(eq(a("t"), call("DATE", "2025-01-01")), msg) is True
    assert result(eq(a("t"), call("DATE", a("s"))), msg) is True
    assert result(cmp("<", call("DATE", "2024-12-31"), call("DATE", "2025-01-01"))) is True


@pytest.mark.parametrize("arg", ["", "tomorrow", "2025-13-01", "2025-01-32", "01/01/2025",
                                 "2025-01-01x00:00", "PT1S", 1, JAN_1_2025 + 0.5])
def test_date_unparsable_or_wrong_type_fails(arg):
    failed(IsNull(operand=call("DATE", arg)))


def test_function_name_case():
    assert val(Call(name="lower", args=(lit("A"),))) == "a"


def test_functions_are_expressions_in_predicates():
    tree = And(items=(eq(call("LEFT", a("s"), 3), "abc"),
                      like(call("UPPER", a("s")), "ABC%")))
    assert result(tree, app(s="abcdef")) is True


def test_reference_module_has_no_engine_imports():
    imports = [line for line in Path(reference.__file__).read_text().splitlines()
               if line.startswith(("import ", "from "))]
    engine = [line for line in imports if "filtex" in line]
    allowed = ("filtex.errors", "filtex.message", "filtex.tree import ast", "filtex.runtime.values")
    assert all(any(ok in line for ok in allowed) for line in engine), engine


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(["en", "EN", "zh", "Hant", "de", "419", "CH", "1996", "x", "X",
                                 "a", "u", "co", "phonebk", "abc", "i", "klingon", "sgn",
                                 "1abc", "tr", "az", "lt", "q", "toolongsubtag", ""]),
                min_size=1, max_size=7).map("-".join))
def test_language_tags_read_alike_by_reference_and_engine(tag):
    """Two independent readings of RFC 5646 (the engine's regular expression,
    the reference's subtag walk) agree on well-formedness and the language."""
    from filtex.runtime.casing import primary_language
    from filtex.errors import EvaluationFailure
    try:
        expected = reference.language_of_tag(tag)
    except EvaluationFailure:
        expected = None
    assert primary_language(tag) == expected, tag
