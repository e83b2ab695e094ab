"""The plan's per-tag decisions agree with the row engine on the edge values of every tag.

Why this file exists. The batch engines answer an atom (a predicate that reads one field)
from the plan's decision for the field's AMQP type tag (``filtex/plan/atoms.py``): one
constant answer (CONST), a table for False and True (BOOLS), sorted inclusive intervals over
the tag's integer, unsigned or double child (INTS, UINTS, DOUBLES), with NaN, -0.0, +inf and
-inf answered apart (the float pseudo tags). The plan computes those decisions from the
dialect's declared rules (``filtex/dialects/rules.py``) without running the atom on probe
values when a filter is prepared, as it once did; this suite is where the probing went: a
wrong decision (or a wrong rule) fails a test here instead of being caught, or missed, each
time a filter is prepared. ``tests/test_rules.py`` checks the rules themselves cell by cell.

For every dialect, every comparison operator, BETWEEN, NOT BETWEEN, IN, NOT IN, IS NULL and
EXISTS where the dialect has them, and constants of many kinds (small, large and negative
integers, the integers at the ends of the AMQP types, exact and approximate numbers,
strings, booleans, the float specials a dialect can write), it reads every decision the plan
makes for ``x <op> <constant>`` and checks what the decision says for the edge values of each
tag (the ends of the tag's range, the values around each constant, half-way values,
subnormals, float32 values that round, the specials) against the row engine's verdict for a
message holding that value with that exact AMQP type. The row engine is asked through the
filter itself (``Filter.evaluate``), and an unknown verdict is told apart as a failure or a
NULL by ``(<filter>) OR y = 1``: a failure makes the whole filter unknown, a NULL does not.
Long IN lists (where sampled probes once missed a constant), and random constants and values
(hypothesis, derandomised), get the same check.

Decisions that claim nothing are not checked: STRINGS (the engine answers each distinct
string), DATA (each distinct value) and FALLBACK (the row goes to the per-message engine).
"""
from __future__ import annotations

import copy
import math
import re
import uuid
from decimal import Decimal

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("pyarrow")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from proton import (UNDESCRIBED, Array, Data, Described, byte, char, decimal32,  # noqa: E402
                    decimal64, decimal128, float32, int32, short, symbol, timestamp, ubyte, uint,
                    ulong, ushort)
from edges import (as_double, double_edges, finite, float32_edges, int_edges,  # noqa: E402
                   report, single)
from randomness import examples  # noqa: E402

import filtex  # noqa: E402
from filtex.dialects import DIALECTS  # noqa: E402
from filtex.plan.atoms import (BACK, BOOLS, CONST, DOUBLES, FAIL, FALLBACK, FALSE,  # noqa: E402
                               INTS, PSEUDO_BASE, STRINGS, TRUE, UINTS, UNKNOWN)
from filtex.plan.prepared import prepared  # noqa: E402
from filtex.table.schema import (ABSENT, ARRAY, BINARY, BOOLEAN, BYTE, CHAR,  # noqa: E402
                                 DECIMAL32, DECIMAL64, DECIMAL128, DESCRIBED, DOUBLE, FLOAT, INT,
                                 LIST, LONG, MAP, NULL, SHORT, STRING, SYMBOL, TAG_NAMES,
                                 TIMESTAMP, UBYTE, UINT, ULONG, USHORT, UUID)

RANDOM = settings(max_examples=examples(500), deadline=None,
                  suppress_health_check=list(HealthCheck))

CODE_NAMES = {FALSE: "FALSE", TRUE: "TRUE", UNKNOWN: "UNKNOWN", FAIL: "FAIL", BACK: "BACK"}
MODE_NAMES = {CONST: "CONST", BOOLS: "BOOLS", INTS: "INTS", UINTS: "UINTS",
              DOUBLES: "DOUBLES"}
ALL_TAGS = frozenset(range(26))
FIELD = ("application_properties", "x")
MISSING = object()
"""The value of an absent field: a message without ``x``."""

# --- the AMQP types, written out here (not taken from the plan) ----------------------------

INT_TYPES = {UBYTE: (ubyte, 0, 2**8 - 1), USHORT: (ushort, 0, 2**16 - 1),
             UINT: (uint, 0, 2**32 - 1), ULONG: (ulong, 0, 2**64 - 1),
             BYTE: (byte, -2**7, 2**7 - 1), SHORT: (short, -2**15, 2**15 - 1),
             INT: (int32, -2**31, 2**31 - 1), LONG: (int, -2**63, 2**63 - 1),
             TIMESTAMP: (timestamp, -2**63, 2**63 - 1)}
"""Integer tags: the class that is the AMQP type, and its range."""
FLOAT_CLASSES = {FLOAT: float32, DOUBLE: float}
INTERVAL_MODE = {**dict.fromkeys(INT_TYPES, INTS), ULONG: UINTS, FLOAT: DOUBLES, DOUBLE: DOUBLES}
"""The interval mode a tag's child can hold (the kernel reads the i, u or f child)."""
SPECIALS = ("NaN", "-0.0", "+inf", "-inf")

OTHER_VALUES = {
    ABSENT: [MISSING], NULL: [None], BOOLEAN: [False, True],
    DECIMAL32: [decimal32(0), decimal32(0x3280000F), decimal32(0x7C000000),
                decimal32(0xF8000000)],
    DECIMAL64: [decimal64(0), decimal64(0x31C000000000000F), decimal64(0x7C00000000000000)],
    DECIMAL128: [decimal128(bytes(16)), decimal128(b"\x30\x40" + bytes(13) + b"\x0f"),
                 decimal128(b"\x7c" + bytes(15))],
    CHAR: [char("a"), char("0"), char("\U0001f600")],
    STRING: ["", "a", "1", "TRUE", "\U0001f600"],
    SYMBOL: [symbol(""), symbol("a"), symbol("1")],
    UUID: [uuid.UUID(int=0), uuid.UUID(int=5), uuid.UUID(int=2**128 - 1)],
    BINARY: [b"", b"a", b"\xff" * 17],
    LIST: [[], [1], [None, "a"]],
    MAP: [{}, {"a": 1}, {symbol("k"): None}],
    ARRAY: [Array(UNDESCRIBED, Data.INT), Array(UNDESCRIBED, Data.INT, 1, 2),
            Array(UNDESCRIBED, Data.STRING, "a")],
    DESCRIBED: [Described(symbol("d"), None), Described(symbol("x"), 1),
                Described(ulong(7), "a")],
}
"""Values of the tags without numeric edges: their decisions are CONST or BOOLS, if any."""


def kernel_value(tag: int, value: object) -> object:
    """The value the kernel reads from the tag's child for a message value."""
    if tag == FLOAT:
        return single(float(value))
    if tag == DOUBLE:
        return float(value)
    if tag in INT_TYPES:
        return int(value)
    return value


def edge_values(tag: int, numbers: list) -> list:
    """Edge values of ``tag`` as messages hold them (the tag's exact AMQP class)."""
    if tag in INT_TYPES:
        cls, lo, hi = INT_TYPES[tag]
        return [cls(v) for v in int_edges(lo, hi, numbers)]
    if tag == FLOAT:
        return [float32(v) for v in float32_edges(numbers)]
    if tag == DOUBLE:
        return double_edges(numbers)
    return list(OTHER_VALUES[tag])


# --- the plan's claim and the row engine's answer ------------------------------------------

def _inside(spans: np.ndarray, v: object) -> bool:
    return any(lo <= v <= hi for lo, hi in spans.tolist())


def _special(x: float) -> int | None:
    """Which float special (its pseudo tag's offset) the kernel gives a double, if any."""
    if x != x:
        return 0
    if x == 0.0 and math.copysign(1.0, x) < 0:
        return 1
    if x == math.inf:
        return 2
    if x == -math.inf:
        return 3
    return None


def _shown_spans(spans: np.ndarray) -> str:
    listed = spans.tolist()
    if len(listed) <= 6:
        return str(listed)
    return f"{len(listed)} intervals {listed[:2]} ... {listed[-2:]}"


def _shown_text(text: str) -> str:
    """A filter's text with runs of the long lists' plain integers cut short."""
    return re.sub(r"\b(1\d{3}), (?:1\d{3}, )+(1\d{3})\b", r"\1, ..., \2", text)


def claim(plan, tag: int, value: object) -> tuple[int, str] | None:
    """What the decision for ``tag`` says for ``value`` (an outcome code and how it was
    read), or None where it claims nothing."""
    mode = int(plan.modes[tag])
    if value is MISSING or value is None:
        code, how = int(plan.consts[tag]), "CONST"
        return None if mode != CONST or code == BACK else (code, how)
    x = kernel_value(tag, value)
    j = _special(x) if tag in FLOAT_CLASSES and mode != FALLBACK else None
    if j is not None:
        pseudo = PSEUDO_BASE + 4 * (tag - FLOAT) + j
        assert int(plan.modes[pseudo]) == CONST, f"pseudo tag {pseudo} is not CONST"
        code = int(plan.consts[pseudo])
        return None if code == BACK else (code, f"pseudo tag {SPECIALS[j]}")
    if mode == CONST:
        code = int(plan.consts[tag])
        return None if code == BACK else (code, "CONST")
    if mode == BOOLS:
        code = int(plan.bools[int(bool(x))])
        return None if code == BACK else (code, "BOOLS")
    if mode in (INTS, UINTS, DOUBLES):
        spans = {INTS: plan.ints, UINTS: plan.uints, DOUBLES: plan.doubles}[mode]
        return (TRUE if _inside(spans, x) else FALSE), f"{MODE_NAMES[mode]} {_shown_spans(spans)}"
    return None


def row_code(flt, probe, value: object) -> int:
    """The row engine's outcome for a message holding ``value`` as ``x``: the filter's
    verdict; when unknown, ``(<filter>) OR y = 1`` tells a failure (the whole filter
    unknown) from a NULL (the OR is true)."""
    props = {} if value is MISSING else {"x": value}
    verdict = flt.evaluate(filtex.Message(application_properties=props))
    if verdict is True:
        return TRUE
    if verdict is False:
        return FALSE
    assert verdict is None, verdict
    props["y"] = 1
    return UNKNOWN if probe.evaluate(filtex.Message(application_properties=props)) else FAIL


def check_spans(plan) -> list[str]:
    """The intervals are what the kernel's search needs: sorted, disjoint, lo <= hi."""
    problems = []
    for name in ("ints", "uints", "doubles"):
        spans = getattr(plan, name).tolist()
        for i, (lo, hi) in enumerate(spans):
            if not lo <= hi or (i and not spans[i - 1][1] < lo):
                problems.append(f"{name} are not sorted disjoint intervals: {spans}")
                break
    return problems


class Tally:
    """What a run checked: filters, (filter, tag) decisions and values, per mode."""

    def __init__(self) -> None:
        self.filters = 0
        self.skipped: list[str] = []
        self.decisions: dict[str, int] = {}
        self.values: dict[str, int] = {}

    def count(self, how: str) -> None:
        key = how.split(" ")[0] if not how.startswith("pseudo") else "specials"
        self.values[key] = self.values.get(key, 0) + 1


def disagreements(dialect: str, text: str, plan, values: dict, tally: Tally) -> list[str]:
    """Every value where ``plan`` (a TagPlan of ``text``'s one atom) says another outcome
    than the row engine: ``values`` maps tags to message values."""
    flt = filtex.compile_sql(text, dialect)
    probe = filtex.compile_sql(f"({text}) OR y = 1", dialect)
    where = f"{dialect}: {_shown_text(text)!r}"
    problems = [f"{where}: {p}" for p in check_spans(plan)]
    for tag, tag_values in values.items():
        mode = int(plan.modes[tag])
        name = TAG_NAMES[tag]
        if tag in (CHAR, STRING, SYMBOL) and mode not in (STRINGS, CONST):
            problems.append(f"{where}: {name} has mode {mode}, not STRINGS or CONST")
        if mode in (INTS, UINTS, DOUBLES) and mode != INTERVAL_MODE.get(tag):
            problems.append(f"{where}: {name} has interval mode {MODE_NAMES[mode]}, not the "
                            "one of its child")
            continue
        if mode in MODE_NAMES:
            tally.decisions[MODE_NAMES[mode]] = tally.decisions.get(MODE_NAMES[mode], 0) + 1
        for value in tag_values:
            said = claim(plan, tag, value)
            if said is None:
                continue
            code, how = said
            tally.count(how)
            got = row_code(flt, probe, value)
            if got != code:
                shown = "absent" if value is MISSING else repr(value)
                problems.append(f"{where}: tag {name}, value {shown}: plan says "
                                f"{CODE_NAMES.get(code, code)} ({how}), row engine says "
                                f"{CODE_NAMES.get(got, got)}")
    return problems


def one_field_plan(text: str, dialect: str):
    """The TagPlan of a filter that is one atom over ``x``, or None (the filter does not
    compile in the dialect, or is no such atom: ``x = NaN`` compares two fields in jms)."""
    try:
        flt = filtex.compile_sql(text, dialect)
    except filtex.FilterError:
        return None
    ready = prepared(flt)
    if ready.plan.shape is None or len(ready.plan.atoms) != 1 or \
            ready.plan.atoms[0].field != FIELD or ready.plan.atoms[0].arith is not None:
        return None
    return ready.tag_plan(0, ALL_TAGS, None)


def check_filter(dialect: str, text: str, numbers: list, tally: Tally,
                 values: dict | None = None) -> list[str]:
    plan = one_field_plan(text, dialect)
    if plan is None:
        tally.skipped.append(text)
        return []
    tally.filters += 1
    if values is None:
        values = {tag: edge_values(tag, numbers) for tag in range(26)}
    return disagreements(dialect, text, plan, values, tally)


# --- the filters ---------------------------------------------------------------------------

OPS = ("=", "<>", "<", "<=", ">", ">=")
D = Decimal
CONSTANTS = [
    # integers: small, negative, and at the ends of the AMQP integer types
    ("0", 0), ("1", 1), ("7", 7), ("-1", -1), ("-5", -5), ("-0", 0), ("127", 127),
    ("128", 128), ("-128", -128), ("-129", -129), ("255", 255), ("256", 256),
    ("32767", 2**15 - 1), ("-32768", -2**15), ("65535", 2**16 - 1), ("65536", 2**16),
    ("2147483647", 2**31 - 1), ("-2147483648", -2**31), ("2147483648", 2**31),
    ("4294967295", 2**32 - 1), ("4294967296", 2**32), ("9007199254740993", 2**53 + 1),
    ("9007199254740995", 2**53 + 3),
    ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -2**63),
    ("9223372036854775808", 2**63), ("18446744073709551615", 2**64 - 1),
    ("18446744073709551616", 2**64),
    # exact decimals
    ("1.5", D("1.5")), ("2.0", D("2.0")), ("-0.5", D("-0.5")), ("0.1", D("0.1")),
    ("0.0", D("0.0")), ("-0.0", D("-0.0")), ("127.5", D("127.5")), ("-128.5", D("-128.5")),
    ("255.0", D("255.0")), ("9223372036854775807.5", D("9223372036854775807.5")),
    ("18446744073709551615.0", D("18446744073709551615.0")),
    # approximate numbers
    ("1.5E3", D("1.5E3")), ("-2.5E-3", D("-2.5E-3")), ("1.0E19", D("1.0E19")),
    ("9.223372036854775807E18", D("9.223372036854775807E18")),
    ("3.4028235E38", D("3.4028235E38")), ("1.4E-45", D("1.4E-45")),
    ("4.9E-324", D("4.9E-324")), ("1.0E-400", D("1.0E-400")), ("1.0E400", D("1.0E400")),
    ("-1.0E400", D("-1.0E400")),
    # the float specials where a dialect writes them
    ("NaN", math.nan), ("INF", math.inf), ("-INF", -math.inf),
    # no numbers
    ("'a'", None), ("''", None), ("'1'", None), ("TRUE", None), ("FALSE", None),
    ("NULL", None),
]
"""(text, value) of each constant; the value gives the edges around it (None: none)."""
JMS_CONSTANTS = [("0x10", 16), ("0xFF", 255), ("010", 8), ("1L", 1), (".5", D("0.5")),
                 ("2.", D("2")), ("1e3", D("1e3")), ("0x7FFFFFFFFFFFFFFF", 2**63 - 1)]
"""Java's integer and approximate number forms (hexadecimal, octal, L, .5, 2.)."""
BETWEENS = [("1", "5"), ("-1", "1"), ("1.5", "2.5"), ("0", "255"), ("-128", "127"),
            ("5", "1"), ("1", "1"), ("1.5E3", "2.0E3"), ("-INF", "INF"), ("NaN", "1"),
            ("0", "18446744073709551615"), ("-9223372036854775808", "9223372036854775807"),
            ("-0.5", "0.5"), ("'a'", "'b'"), ("1", "'b'")]
IN_LISTS = ["1, 2, 3", "0, 255, 256", "-1, 1.5, 2.0", "1.5E3", "127, 128, -128, -129",
            "9223372036854775807, 18446744073709551615", "NaN, 1", "INF, -INF", "0.1, 0.5",
            "'a', 'b'", "1, 'a'", "TRUE", "-0.0"]
TYPE_ONLY = ["x IS NULL", "x IS NOT NULL", "EXISTS(x)", "NOT EXISTS(x)", "NOT (x IS NULL)"]
OTHERS = ["x", "NOT x", "x LIKE 'a%'", "x NOT LIKE '1%'", "x - 1 > 0", "x % 2 = 1",
          "x + 1 > 0", "-x < 0", "x * 2 BETWEEN 1 AND 4", "x - 1 IN (0, 1)", "LOWER(x) = 'a'",
          "LEFT(x, NULL) = 'a'", "filtex:length(x) = 1", "UPPER(x) LIKE 'A%'",
          "UPPER(LOWER(x)) IN ('A', 'B')", "DATE(x) > 0", "x IN (1, 2.5)", "x IN (1, 'a')",
          "NOT (x IN (0))", "x = 1.0E400"]
FOLDED = [("x = 2 * 50", [100]), ("x < 1 + 0.5", [D("1.5")]), ("x >= 10 / 4", [2, D("2.5")]),
          ("x > -(-5)", [5]), ("x BETWEEN 1 - 3 AND 2 * 3", [-2, 6])]
"""Operands that read no field, folded into constants by the plan."""


def _numbers(*texts: str, table: dict) -> list:
    found = []
    for text in texts:
        for item in text.split(","):
            value = table.get(item.strip())
            if value is not None:
                found.append(value)
    return found


def cases(dialect: str) -> list[tuple[str, list]]:
    """Every filter of the suite for ``dialect`` (some do not compile in it: skipped),
    with the numbers whose edges it is checked on."""
    constants = CONSTANTS + (JMS_CONSTANTS if dialect == "jms" else [])
    table = {text: value for text, value in constants}
    found: list[tuple[str, list]] = []
    for text, value in constants:
        numbers = [] if value is None else [value]
        for op in OPS:
            found.append((f"x {op} {text}", numbers))
            found.append((f"NOT (x {op} {text})", numbers))
        found += [(f"{text} < x", numbers), (f"{text} >= x", numbers),
                  (f"{text} = x", numbers)]
    for lo, hi in BETWEENS:
        numbers = _numbers(lo, hi, table=table)
        found += [(f"x BETWEEN {lo} AND {hi}", numbers),
                  (f"x NOT BETWEEN {lo} AND {hi}", numbers)]
    for items in IN_LISTS:
        numbers = _numbers(items, table=table)
        found += [(f"x IN ({items})", numbers), (f"x NOT IN ({items})", numbers)]
    found += [(text, [1]) for text in TYPE_ONLY + OTHERS]
    return found + FOLDED


def long_in_lists(dialect: str) -> list[tuple[str, list]]:
    """IN and NOT IN lists of 80 constants: 79 plain integers and one constant of
    ``LONG_CONSTANTS`` (each the dialect accepts) at five neighbouring places of the list.
    Long lists are where probing a sample of the constants (as the plan once did) missed
    the one constant whose comparisons differ from exact intervals. The edges are those of
    that constant and of the list's ends (the plain integers' own edges are the short
    filters')."""
    fillers = [str(1000 + i) for i in range(LONG_LIST - 1)]
    table = dict(CONSTANTS)
    found: list[tuple[str, list]] = []
    for text in LONG_CONSTANTS:
        if one_field_plan(f"x = {text}", dialect) is None:
            continue
        for place in LONG_PLACES:
            listed = ", ".join(fillers[:place] + [text] + fillers[place:])
            numbers = [table[text], 1000, 1000 + LONG_LIST - 2]
            found += [(f"x IN ({listed})", numbers), (f"x NOT IN ({listed})", numbers)]
    return found


LONG_LIST = 80
LONG_PLACES = (40, 41, 42, 43, 44)
LONG_CONSTANTS = ["9007199254740993", "9007199254740995", "-9223372036854775808",
                  "9223372036854775807", "18446744073709551615", "0.1", "1.5", "-0.0", "127.5",
                  "1.5E3", "1.0E19", "9.223372036854775807E18", "3.4028235E38", "4.9E-324",
                  "1.0E400", "NaN", "INF"]
"""Constants whose comparisons with some tag's values are not exact (rounding to double,
float order, the specials), and some exact ones."""


MUST_COMPILE = {
    "amqp": ["x = 1", "x <> -1", "x < 1.5", "x <= 2.0", "x > 1.5E3", "x >= 18446744073709551615",
             "x BETWEEN 1 AND 5", "x NOT BETWEEN 1 AND 5", "x IN (1, 2, 3)", "x NOT IN (1, 2, 3)",
             "x IS NULL", "EXISTS(x)", "x = TRUE", "x = 'a'", "x = NaN", "x < INF",
             "x > -INF"],
    "jms": ["x = 1", "x <> -1", "x < 1.5", "x <= 2.0", "x > 1.5E3", "x >= 9223372036854775807",
            "x BETWEEN 1 AND 5", "x NOT BETWEEN 1 AND 5", "x IN ('a', 'b')", "x IS NULL",
            "x = TRUE", "x = 'a'", "x > 1.0E400", "x = 0x10", "x = 010", "x = .5"],
    "rabbitmq": ["x = 1", "x <> -1", "x < 1.5", "x <= 2.0", "x > 1.5E3",
                 "x >= 18446744073709551615", "x IN (1, 2, 3)", "x NOT IN (1, 2, 3)",
                 "x IS NULL", "x = TRUE", "x = 'a'"],
}
"""Filters each dialect must accept as one atom over x: the suite is not vacuous."""


PLAN_AND_ROW = "between the plan and the row engine"


# --- the tests -----------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_decisions_agree_with_the_row_engine_on_edge_values(dialect):
    """Every decision the plan makes, for every filter of the suite, on every edge value
    of every tag."""
    for text in MUST_COMPILE[dialect]:
        assert one_field_plan(text, dialect) is not None, f"{dialect}: {text!r} has no plan"
    tally = Tally()
    problems: list[str] = []
    for text, numbers in cases(dialect):
        problems += check_filter(dialect, text, numbers, tally)
    assert not problems, report(problems, 40, PLAN_AND_ROW)
    # not vacuous: every kind of decision was met and checked
    assert tally.filters >= 200, (tally.filters, tally.skipped[:20])
    for kind in ("CONST", "BOOLS", "INTS", "UINTS", "DOUBLES", "specials"):
        assert tally.values.get(kind, 0) > 0, (kind, tally.values)


NUMBER_IN = [name for name in sorted(DIALECTS) if one_field_plan("x IN (1, 2)", name)]
"""The dialects with IN lists of numbers (jms lists strings only)."""


@pytest.mark.slow
@pytest.mark.parametrize("dialect", NUMBER_IN)
def test_long_in_lists_agree_with_the_row_engine(dialect):
    """IN and NOT IN lists longer than the plan's probes once sampled, with one constant
    whose comparisons are not exact among plain integers."""
    tally = Tally()
    problems: list[str] = []
    for text, numbers in long_in_lists(dialect):
        problems += check_filter(dialect, text, numbers, tally)
    assert tally.filters >= 50 and not tally.skipped, (tally.filters, tally.skipped[:3])
    assert not problems, report(problems, 40, PLAN_AND_ROW)


def test_a_wrong_decision_fails():
    """The checks find a wrong decision of each kind (a copy of a real plan, altered)."""
    plan = one_field_plan("x < 1.5", "amqp")
    assert plan is not None
    values = {tag: edge_values(tag, [D("1.5")]) for tag in range(26)}
    assert not disagreements("amqp", "x < 1.5", plan, values, Tally())

    def altered(change) -> list[str]:
        wrong = copy.deepcopy(plan)
        change(wrong)
        return disagreements("amqp", "x < 1.5", wrong, values, Tally())

    def shift_ints(p):   # x <= 2 instead of x <= 1 over the integer tags
        p.ints = p.ints.copy()
        p.ints[-1, 1] += 1

    def shift_doubles(p):   # one ulp too far
        p.doubles = p.doubles.copy()
        p.doubles[-1, 1] = math.nextafter(1.5, math.inf)

    def uints_all(p):
        p.uints = np.array([[0, 2**64 - 1]], np.uint64)

    def const_absent(p):
        p.consts[ABSENT] = FAIL

    def special(p):   # NaN < 1.5 is unknown in amqp, not false
        p.consts[PSEUDO_BASE] = FALSE

    def const_long(p):
        p.modes[LONG] = CONST
        p.consts[LONG] = FALSE

    for change in (shift_ints, shift_doubles, uints_all, const_absent, special, const_long):
        assert altered(change), change.__name__


# --- random constants and values -----------------------------------------------------------

BOUNDARIES = [0, 2**7, 2**8, 2**15, 2**16, 2**31, 2**32, 2**53, 2**63, 2**64 - 1]


def _int_text(n: int) -> str:
    return f"-{-n}" if n < 0 else str(n)


def _decimal_text(d: Decimal) -> str:
    text = format(abs(d), "f")
    if "." not in text:
        text += ".0"
    return f"-{text}" if d.is_signed() else text


def _approx_text(x: float) -> str:
    text = "%.17E" % abs(x)
    return f"-{text}" if math.copysign(1.0, x) < 0 else text


@st.composite
def constants(draw) -> tuple[str, object]:
    """A numeric constant's text and value: an integer (anywhere, small, or by a type's
    end), an exact decimal, or an approximate number."""
    kind = draw(st.sampled_from(["int", "small", "boundary", "decimal", "approx", "single"]))
    if kind in ("int", "small", "boundary"):
        if kind == "int":
            n = draw(st.integers(-(2**64) + 1, 2**64 - 1))
        elif kind == "small":
            n = draw(st.integers(-300, 300))
        else:
            n = draw(st.sampled_from(BOUNDARIES)) * draw(st.sampled_from([1, -1]))
            n += draw(st.integers(-2, 2))
            n = max(-(2**64) + 1, min(n, 2**64 - 1))
        return _int_text(n), n
    if kind == "decimal":
        d = Decimal(draw(st.integers(-(10**21), 10**21))).scaleb(-draw(st.integers(0, 4)))
        return _decimal_text(d), d
    x = draw(st.floats(allow_nan=False, allow_infinity=False,
                       width=32 if kind == "single" else 64))
    return _approx_text(x), x


FORMS = ["x {op} {0}", "NOT (x {op} {0})", "{0} {op} x", "x BETWEEN {0} AND {1}",
         "x NOT BETWEEN {0} AND {1}", "x IN ({0}, {1})", "x NOT IN ({0}, {1}, {2})",
         "x IN ({0})"]


@st.composite
def random_filters(draw) -> tuple[str, list]:
    form = draw(st.sampled_from(FORMS))
    op = draw(st.sampled_from(OPS))
    picked = [draw(constants()) for _ in range(3)]
    return form.format(*(t for t, _ in picked), op=op), [v for _, v in picked]


@st.composite
def typed_values(draw, numbers: list) -> dict:
    """Random values of random tags, many of them near the filter's constants."""
    near_ints = [math.floor(c) for c in numbers if finite(c)] + [0]
    near_doubles = [as_double(c) for c in numbers]
    found: dict = {}
    for _ in range(draw(st.integers(1, 40))):
        tag = draw(st.sampled_from(sorted(INT_TYPES) + [FLOAT, DOUBLE, BOOLEAN, NULL, ABSENT]))
        if tag in INT_TYPES:
            cls, lo, hi = INT_TYPES[tag]
            if draw(st.booleans()):
                v = draw(st.integers(lo, hi))
            else:
                v = max(lo, min(hi, draw(st.sampled_from(near_ints)) + draw(st.integers(-2, 2))))
            value = cls(v)
        elif tag in FLOAT_CLASSES:
            how = draw(st.sampled_from(["any", "single", "near"]))
            if how == "near":
                x = draw(st.sampled_from(near_doubles))
                for _ in range(draw(st.integers(0, 3))):
                    x = math.nextafter(x, draw(st.sampled_from([math.inf, -math.inf])))
                x += draw(st.sampled_from([0.0, 0.5, -0.5, 1.0, -1.0]))
            else:
                x = draw(st.floats(width=32 if how == "single" else 64))
            value = FLOAT_CLASSES[tag](x)
        else:
            value = draw(st.sampled_from(OTHER_VALUES[tag]))
        found.setdefault(tag, []).append(value)
    return found


@pytest.mark.slow
@RANDOM
@given(st.data())
def test_random_constants_and_values_agree(data):
    """Random numeric constants in random forms, on random values of every numeric type."""
    dialect = data.draw(st.sampled_from(sorted(DIALECTS)), label="dialect")
    text, numbers = data.draw(random_filters(), label="filter")
    plan = one_field_plan(text, dialect)
    assume(plan is not None)
    values = data.draw(typed_values(numbers), label="values")
    problems = disagreements(dialect, text, plan, values, Tally())
    assert not problems, report(problems, 40, PLAN_AND_ROW)


@pytest.mark.slow
@pytest.mark.parametrize("constant, value", [
    ("1.0E19", ulong(9999999999999999999)), ("18446744073709551615", 2.0**64),
    ("0.1", 0.1), ("9007199254740995", 9007199254740996.0)])
def test_a_long_in_list_is_exact_in_the_batch_engine_whatever_constant_it_holds(constant, value):
    """Regression: the probes sampled 64 of a long IN list's constants, and the
    kernel's exact intervals were taken although the row engine compares these
    constants after rounding (amqp: a ulong with 1.0E19, a double with 0.1)."""
    import filtex.arrow as fa
    fillers = [str(1000 + i) for i in range(79)]
    message = filtex.Message(application_properties={"x": value})
    for negation in ("", "NOT "):
        text = f"x {negation}IN ({', '.join(fillers[:44] + [constant] + fillers[44:])})"
        flt = filtex.compile_sql(text)
        row = flt.evaluate(message)
        assert row is (negation == ""), text
        assert fa.evaluate(flt, fa.message_table([message])).verdicts.to_pylist() == [row], text
