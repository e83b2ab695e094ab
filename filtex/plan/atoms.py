"""What an atom answers for each type tag: the plan's decisions, per tag.

An atom (``skeleton.py``) reads one field, so its answer for a row is a function
of that field's type tag and value. The kernel needs that function in a form
it can evaluate over columns, one *mode* per tag:

- ``CONST``: the same answer for every value of the tag (absent, null, the
  answer of ``IS NULL`` on a number, a string constant compared with a long).
- ``STRINGS``: a table over the batch's string dictionary (``string_table``):
  the atom is run once per distinct string, by the per-message engine, so
  LIKE with escapes, case mapping with language tags and every dialect's
  string rules are exact by construction.
- ``BOOLS``: a two-entry table, the atom run on False and on True.
- ``INTS``/``UINTS``/``DOUBLES``: a numeric comparison with constants,
  compiled into sorted inclusive intervals over the child's own domain with
  exact arithmetic (``intervals.py``); NaN, -0.0 and the infinities are
  separate entries of the constant table (pseudo tags), so they get the
  dialect's own answer whatever its float order.
- ``FALLBACK``: the row goes to the per-message engine.

Nothing here restates a dialect rule. A numeric comparison's intervals, or its
one answer for a tag, come from the dialect's declared number rules
(``dialects/rules.py``, checked against the row code by ``tests/test_rules.py``)
through ``intervals.decide``; nothing is probed. Answers that enumerate run
the atom: absent, null, False and True, the four float specials, a type-only
test on one value of its type, and (per batch) each distinct string or value
present. The atom runs in ``oracle.py`` (its ``CompiledAtom``): this module
decides from the answers it gives and never calls the per-message engine
itself.
"""
from __future__ import annotations

import math
import uuid
from typing import Any

import numpy as np
from proton import (UNDESCRIBED, Array, Data, Described, byte, char, decimal32, decimal64,
                    decimal128, float32, int32, short, symbol, timestamp, ubyte, uint, ulong,
                    ushort)

from ..dialects import rules
from ..functions import REGISTRY
from ..tree import ast
from . import intervals
from .arith import arith_form
from ..table.schema import (ABSENT, ARRAY, BINARY, BOOLEAN, BYTE, CHAR, DECIMAL32, DECIMAL64,
                     DECIMAL128, DESCRIBED, DOUBLE, FLOAT, INT, LIST, LONG, MAP, NULL, SHORT, STRING,
                     SYMBOL, TIMESTAMP, UBYTE, UINT, ULONG, USHORT, UUID)

from .codes import BACK as BACK, FAIL as FAIL, FALSE as FALSE, TRUE as TRUE, UNKNOWN as UNKNOWN
# modes (DATA is decided per batch: VALUES_* with the distinct values present, or CONST)
CONST, STRINGS, BOOLS, INTS, UINTS, DOUBLES, FALLBACK, VALUES_I, VALUES_U, VALUES_F = range(10)
DATA = 10
MAX_DISTINCT = 1 << 16

PSEUDO_BASE = 26
"""Pseudo tags 26..33: (float, double) x (NaN, -0.0, +inf, -inf), set by the kernel."""
_SPECIALS = (math.nan, -0.0, math.inf, -math.inf)

INT_TAGS = {UBYTE: (ubyte, 0, 255), USHORT: (ushort, 0, 65535), UINT: (uint, 0, 2**32 - 1),
            BYTE: (byte, -128, 127), SHORT: (short, -2**15, 2**15 - 1),
            INT: (int32, -2**31, 2**31 - 1), LONG: (int, -2**63, 2**63 - 1),
            TIMESTAMP: (timestamp, -2**63, 2**63 - 1)}
FLOAT_TAGS = {FLOAT: float32, DOUBLE: float}
STRING_TAGS = {CHAR: char, STRING: str, SYMBOL: symbol}
STRING_VARIANT = {CHAR: 0, STRING: 1, SYMBOL: 2}
SAMPLES = {DECIMAL32: (decimal32(0), decimal32(1)), DECIMAL64: (decimal64(0), decimal64(7)),
            DECIMAL128: (decimal128(bytes(16)), decimal128(b"\x01" * 16)),
            UUID: (uuid.UUID(int=0), uuid.UUID(int=5)), BINARY: (b"", b"\x00a"),
            LIST: ([], [1]), MAP: ({}, {"a": 1}),
            ARRAY: (Array(UNDESCRIBED, Data.INT), Array(UNDESCRIBED, Data.INT, 1, 2)),
            DESCRIBED: (Described(symbol("d"), None), Described(symbol("d"), 1))}
"""Values of the tags whose child the kernel does not read: only answers that
depend on the type alone (IS NULL, EXISTS) are taken from them."""


_LITERAL_TESTS = {"string": "string", "bool": "boolean", "int": "number", "decimal": "number",
                  "float": "number"}
_NUMBER_TYPES = ("int", "decimal", "float")


def other_type_test(node: ast.Node, semantics: Any) -> tuple[str, bool] | None:
    """The test of ``NumberRules.other_types`` an atom is (and whether the atom
    is its negation): a comparison of the field itself with a string, boolean,
    number or NULL constant, IN a list of strings or of numbers, LIKE a
    constant pattern, the field as a condition, or arithmetic on the field
    (no ``+``, which joins strings) compared with numbers; None for any other
    atom."""
    negated = False
    while isinstance(node, ast.Not):
        node, negated = node.operand, not negated
    if _function_of_field(node):
        return "function", negated
    if not isinstance(node, (ast.Field, ast.Like)) and not _reads_field_itself(node):
        form = arith_form(node, semantics)
        if form is not None and len(form.fields) == 1 and "+" not in form.shape():
            return "arithmetic", negated
        return None
    if isinstance(node, ast.Field):
        return "condition", negated
    if isinstance(node, ast.Compare):
        left, right, op = node.left, node.right, node.op
        if isinstance(left, ast.Literal):
            left, right = right, left
        if not isinstance(left, ast.Field) or not isinstance(right, ast.Literal):
            return None
        if right.typ == "null":
            return "null", negated
        kind = _LITERAL_TESTS.get(right.typ)
        if kind is None or (kind == "number" and not _finite(right.value)):
            return None   # NaN and the infinities: each dialect's own (amqp: unknown)
        return rules.comparison_test(kind, op), negated
    if isinstance(node, ast.Between) and isinstance(node.operand, ast.Field) and all(
            isinstance(b, ast.Literal) and b.typ in _NUMBER_TYPES and _finite(b.value)
            for b in (node.low, node.high)):
        return ("not between numbers" if node.negated else "between numbers"), negated
    if isinstance(node, ast.In) and isinstance(node.operand, ast.Field) and node.items and \
            all(isinstance(i, ast.Literal) for i in node.items):
        types = {i.typ for i in node.items}
        if types == {"string"}:
            return "in strings", negated != node.negated
        if types <= set(_NUMBER_TYPES) and all(_finite(i.value) for i in node.items):
            return "in numbers", negated != node.negated
        return None
    if isinstance(node, ast.Like) and isinstance(node.operand, ast.Field) and \
            isinstance(node.pattern, ast.Literal) and node.pattern.typ == "string" and \
            (node.escape is None or isinstance(node.escape, ast.Literal) and
             node.escape.typ == "string"):
        return "like", negated != node.negated
    return None


def _function_of_field(node: ast.Node) -> bool:
    """A comparison, IN, BETWEEN or LIKE of a function of the field (through
    functions whose other arguments are constants, none NULL) with constants,
    the innermost function one that takes a string (``Function.subject``)."""
    if isinstance(node, ast.Compare):
        operand, others = (node.right, [node.left]) if isinstance(node.left, ast.Literal) \
            else (node.left, [node.right])
    elif isinstance(node, (ast.In, ast.Between, ast.Like)):
        operand = node.operand
        others = list(node.items) if isinstance(node, ast.In) else \
            [node.low, node.high] if isinstance(node, ast.Between) else \
            [node.pattern] + ([node.escape] if node.escape is not None else [])
    else:
        return False
    if not isinstance(operand, ast.Call) or not all(isinstance(o, ast.Literal) for o in others):
        return False
    while isinstance(operand, ast.Call) and operand.args:
        function = REGISTRY.get(operand.name)
        if function is None or function.volatile or not all(
                isinstance(a, ast.Literal) and a.value is not None for a in operand.args[1:]):
            return False
        inner = operand.args[0]
        if isinstance(inner, ast.Field):
            return function.subject == "string"
        operand = inner
    return False


def _finite(number: Any) -> bool:
    try:
        return math.isfinite(number)
    except (TypeError, ValueError, OverflowError):
        return False


def _reads_field_itself(node: ast.Node) -> bool:
    """A comparison, IN or BETWEEN whose operand is the field itself."""
    if isinstance(node, ast.Compare):
        return isinstance(node.left, ast.Field) or isinstance(node.right, ast.Field)
    if isinstance(node, (ast.In, ast.Between)):
        return isinstance(node.operand, ast.Field)
    return isinstance(node, (ast.IsNull, ast.Exists))


def _type_only(node: ast.Node) -> bool:
    """IS NULL / EXISTS of the field itself: the answer depends on the type alone."""
    while isinstance(node, ast.Not):
        node = node.operand
    if isinstance(node, ast.IsNull):
        return isinstance(node.operand, ast.Field)
    return isinstance(node, ast.Exists) and isinstance(node.ref, ast.Field)


class TagPlan:
    """One atom's modes and parameters for the tags a column can hold."""

    def __init__(self) -> None:
        self.modes = np.full(256, FALLBACK, np.int8)
        self.consts = np.full(256, BACK, np.int8)
        self.bools = np.full(2, BACK, np.int8)
        self.ints = intervals.EMPTY_INT
        self.uints = intervals.EMPTY_UINT
        self.doubles = intervals.EMPTY_DOUBLE
        self.string_tags: list[int] = []
        self.own: dict[int, np.ndarray] = {}
        """A DATA tag's own intervals, where the rules give intervals but the
        tag's child holds another kind's (jms: a float against an integer
        constant rounds both to single precision, a double does not): the
        kernel answers such a tag per value, an engine with a per-tag
        expression (Spark) can use them."""

    @property
    def data_tags(self) -> list[int]:
        return [int(t) for t in np.flatnonzero(self.modes == DATA)]


def plan_tags(compiled: Any, tags: set[int], rc: Any) -> TagPlan:
    """Modes for ``tags`` (the tags the field's column can hold)."""
    p = TagPlan()
    atom = compiled.atom
    p.modes[ABSENT] = CONST
    p.consts[ABSENT] = compiled.absent(rc)
    if NULL in tags:
        p.modes[NULL] = CONST
        p.consts[NULL] = compiled.on(None, rc)
    if BOOLEAN in tags:
        p.modes[BOOLEAN] = BOOLS
        p.bools[:] = [compiled.on(False, rc), compiled.on(True, rc)]
    declared = _TypeTest(atom.node, atom.semantics)
    for tag, cls in STRING_TAGS.items():
        if tag not in tags or _declared(p, declared, tag):
            continue
        if _type_only(atom.node):   # IS NULL, EXISTS: the type decides
            _constant_tag(p, compiled, tag, [cls("a"), cls("b")], rc)
        if p.modes[tag] != CONST:
            p.modes[tag] = STRINGS
            p.string_tags.append(tag)
    for tag in tags:
        if tag in SAMPLES and not _declared(p, declared, tag) and \
                _type_only(atom.node):
            _constant_tag(p, compiled, tag, SAMPLES[tag], rc)
    numeric = [tag for tag in tags if tag in KIND_OF_TAG]
    if compiled.numeric is not None:
        _numeric_tags(p, compiled, numeric)
    else:
        for tag in numeric:
            if _declared(p, declared, tag):
                pass
            elif _type_only(atom.node):
                _constant_tag(p, compiled, tag, [VALUE_CLASS[tag](v) for v in (0, 1)], rc)
            elif compiled.on_value is not None:
                p.modes[tag] = DATA   # answered per distinct value present (engine.py)
    for tag, cls in FLOAT_TAGS.items():
        if tag in tags:
            for j, special in enumerate(_SPECIALS):
                pseudo = PSEUDO_BASE + 4 * (tag - FLOAT) + j
                p.modes[pseudo] = CONST
                p.consts[pseudo] = compiled.on(cls(special), rc)
    return p


KIND_OF_TAG = {**{tag: rules.INTEGER for tag in INT_TAGS}, TIMESTAMP: rules.TIMESTAMP,
               ULONG: rules.INTEGER, FLOAT: rules.FLOAT32, DOUBLE: rules.DOUBLE}
"""The number rules' value kind of each numeric tag (``dialects/rules.py``)."""
_PREFERRED = (rules.INTEGER, rules.DOUBLE, rules.TIMESTAMP, rules.FLOAT32)
"""Which kind's intervals a domain's child holds when two kinds' differ."""


def _numeric_tags(p: TagPlan, compiled: Any, tags: list[int]) -> None:
    """The numeric tags' modes from the declared rules: intervals over the tag's
    child (shared by the tags of one domain), one answer, or per value."""
    numbers = compiled.atom.semantics.numbers
    answers: dict[tuple[str, int], intervals.Answer] = {}
    for tag in tags:
        key = (KIND_OF_TAG[tag], DOMAIN_OF_TAG[tag])
        if key not in answers:
            answers[key] = intervals.decide(compiled.numeric, numbers, key[0],
                                            intervals.DOMAINS[key[1]])
    held: list[Any] = [None, None, None]   # the intervals each domain's child holds
    for kind in _PREFERRED:
        for (k, domain), answer in answers.items():
            if k == kind and isinstance(answer, list) and held[domain] is None:
                held[domain] = answer
    for tag in tags:
        domain = DOMAIN_OF_TAG[tag]
        answer = answers[(KIND_OF_TAG[tag], domain)]
        if isinstance(answer, str):
            p.modes[tag] = CONST
            p.consts[tag] = OUTCOME_CODES[answer]
        elif isinstance(answer, list) and answer == held[domain]:
            p.modes[tag] = (INTS, UINTS, DOUBLES)[domain]
        elif compiled.on_value is not None:
            p.modes[tag] = DATA   # answered per distinct value present (engine.py)
            if isinstance(answer, list):
                p.own[tag] = intervals.as_arrays(answer, (np.int64, np.uint64,
                                                          np.float64)[domain])
    p.ints, p.uints, p.doubles = (intervals.as_arrays(held[0] or [], np.int64),
                                  intervals.as_arrays(held[1] or [], np.uint64),
                                  intervals.as_arrays(held[2] or [], np.float64))


OUTCOME_CODES = {"true": TRUE, "false": FALSE, "unknown": UNKNOWN, "fail": FAIL}

OTHER_KIND_OF_TAG = {**KIND_OF_TAG, STRING: rules.STRING, SYMBOL: rules.STRING,
                     CHAR: rules.CHAR, BINARY: rules.BINARY, UUID: rules.UUID,
                     DECIMAL32: rules.DECIMAL_VALUE, DECIMAL64: rules.DECIMAL_VALUE,
                     DECIMAL128: rules.DECIMAL_VALUE, LIST: rules.LIST, MAP: rules.MAP,
                     ARRAY: rules.ARRAY, DESCRIBED: rules.DESCRIBED}
"""The ``other_types`` kind of each tag that has one."""


class _TypeTest:
    """The test of ``NumberRules.other_types`` an atom is (``other_type_test``),
    with the string constants it compares with (against a timestamp, amqp
    reads them as times): the declared outcome for a tag's kind, if any."""

    def __init__(self, node: ast.Node, semantics: Any) -> None:
        found = other_type_test(node, semantics)
        self.test: str | None = None if found is None else found[0]
        self.negated = found is not None and found[1]
        self.numbers: rules.NumberRules = semantics.numbers
        self.texts = _text_constants(node) if found is not None else None

    def code(self, tag: int) -> int | None:
        kind = OTHER_KIND_OF_TAG.get(tag)
        if self.test is None or kind is None:
            return None
        answer = self.numbers.answer(kind, self.test, self.texts)
        if answer is None:
            return None
        return OUTCOME_CODES[rules.negation(answer) if self.negated else answer]


def _text_constants(node: ast.Node) -> tuple | None:
    """The string constants an atom compares the field with (one, or an IN list's)."""
    while isinstance(node, ast.Not):
        node = node.operand
    if isinstance(node, ast.Compare):
        constant = node.right if isinstance(node.left, ast.Field) else node.left
        if isinstance(constant, ast.Literal) and type(constant.value) is str:
            return (constant.value,)
    elif isinstance(node, ast.In) and all(isinstance(i, ast.Literal) and type(i.value) is str
                                          for i in node.items):
        return tuple(i.value for i in node.items)
    return None


def _declared(p: TagPlan, declared: _TypeTest, tag: int) -> bool:
    """CONST from the dialect's declared answer of the atom's test for the tag's
    kind (``NumberRules.answer``), if it declares one."""
    code = declared.code(tag)
    if code is None:
        return False
    p.modes[tag] = CONST
    p.consts[tag] = code
    return True


def _constant_tag(p: TagPlan, compiled: Any, tag: int, values: Any, rc: Any) -> None:
    """CONST when the atom gives one answer for every sample value of the tag."""
    answers = {compiled.on(v, rc) for v in values}
    if len(answers) == 1:
        p.modes[tag] = CONST
        p.consts[tag] = answers.pop()


VALUE_CLASS = {**{tag: spec[0] for tag, spec in INT_TAGS.items()}, ULONG: ulong, **FLOAT_TAGS}
DOMAIN_OF_TAG = {**dict.fromkeys(INT_TAGS, 0), ULONG: 1, FLOAT: 2, DOUBLE: 2}


