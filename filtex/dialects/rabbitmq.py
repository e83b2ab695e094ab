"""The ``rabbitmq`` dialect: the SQL filters of RabbitMQ 4.2 streams
(``rabbit_amqp_sql_lexer.xrl``, ``rabbit_amqp_filter_sql.erl``) and its reading of
property filters (``rabbit_amqp_filter_prop.erl``).

Its values are numbers, booleans and byte strings: strings, symbols, binaries
and uuids are all bytes, so ``'A' = 0x41``; values it cannot represent read as
absent. Evaluation has no failures.
"""
from __future__ import annotations

import re
from typing import Any

from proton import char, symbol, timestamp

from .. import runtime
from ..errors import FilterError
from ..runtime.patterns import PatternError, segments_of, compile_like
from ..runtime.property import FIELD_TYPES, draft_modifier, fits, string_refs, string_rule
from ..runtime.values import (BINARY, BOOL, FLOAT, INT, INT_CLASSES, STRING, TIMESTAMP, UUID,
                              double_value, exact, kind_of)
from ..functions import STANDARD
from .base import Dialect, Lenient
from . import rules as R

RABBITMQ_NUMBER_RULES = R.NumberRules(R.table({
    # Erlang compares integers and floats exactly; a non-finite constant is no
    # Erlang number (unknown); IN is lists:any of =, an unknown item FALSE
    kind: {R.INTEGER: R.EXACT, R.DOUBLE: R.EXACT, R.INFINITY: R.UNKNOWN, R.NAN: R.UNKNOWN}
    for kind in (R.INTEGER, R.TIMESTAMP, R.FLOAT32, R.DOUBLE)}), in_list="or-known",
    other_types={**R.other_types({
        # Erlang's == and /= on unlike terms; no order but between numbers and
        # between byte strings; LIKE and a non-boolean condition unknown
        "string =": "false", "string <>": "true", "string order": "false",
        "boolean =": "false", "boolean <>": "true", "boolean order": "false",
        "null": "unknown", "in strings": "false", "like": "unknown", "condition": "unknown"}),
        # strings, symbols, binaries and uuids are byte strings: unlike numbers and
        # booleans; decimals and composites are dropped: unknown whatever the test
        **R.other_types({
            "boolean =": "false", "boolean <>": "true", "boolean order": "false",
            "number =": "false", "number <>": "true", "number order": "false",
            "null": "unknown", "in numbers": "false", "condition": "unknown",
            "arithmetic": "unknown"}, (R.STRING, R.BINARY, R.UUID)),
        **R.other_types({test: "unknown" for test in R.OTHER_TESTS},
                        (R.DECIMAL_VALUE, *R.COMPOSITES)),
        # a char is its code point: a number, unlike any string or boolean
        **R.other_types({
            "string =": "false", "string <>": "true", "string order": "false",
            "boolean =": "false", "boolean <>": "true", "boolean order": "false",
            "null": "unknown", "in strings": "false", "like": "unknown",
            "condition": "unknown"}, (R.CHAR,)),
        **R.other_types({
            "string =": "false", "string <>": "true", "string order": "false",
            "boolean order": "false", "number =": "false", "number <>": "true",
            "number order": "false", "null": "unknown", "in strings": "false",
            "in numbers": "false", "like": "unknown", "arithmetic": "unknown"}, (R.BOOLEAN,))})
"""rabbitmq: ``RabbitMQ.compare_views``, ``in_values``, ``like``, ``predicate``."""

RABBITMQ_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN",
                               "TRUE", "FALSE"})

RABBITMQ_NUMBERS = ((re.compile(r"\d+"), "INTEGER", int),
                    (re.compile(r"\d+\.\d+(?:E[+-]?\d+)?"), "APPROX", float))

# rabbit_amqp_filter_prop: 1 to 16 entries; content-type/-encoding references are symbols.
RABBITMQ_MAX_ENTRIES = 16
RABBITMQ_FIELD_TYPES = {**FIELD_TYPES["properties"], "content-type": ("symbol",),
                        "content-encoding": ("symbol",)}


RABBITMQ_DEFAULT_PRIORITY = 4   # rabbit_amqp_filter_sql: ?DEFAULT_MSG_PRIORITY


def rabbitmq_priority(header: Any, annotation: Any) -> Any:
    """``h.priority`` as RabbitMQ reads it (``mc_amqp:get_property(priority, _)``,
    ``rabbit_amqp_filter_sql:get_field_value``, v4.2.0 to 4.3): the header's
    priority; else the ``x-basic-priority`` message annotation, where messages
    published over AMQP 0.9.1 keep theirs (any value but a boolean or null,
    which Erlang decodes as atoms); else 4."""
    if header is not None:
        return header
    if annotation is None or annotation is True or annotation is False:
        return RABBITMQ_DEFAULT_PRIORITY
    return annotation


def rabbitmq_priority_without_header(annotation: Any) -> Any:
    """``h.priority`` of a message whose header has no priority."""
    return rabbitmq_priority(None, annotation)


# the same as generated code writes it (a template of this module, never of filter text):
# the annotation read only when the header has no priority
RABBITMQ_INLINE = {rabbitmq_priority: "{0} if {0} is not None else ({tmp} if ({tmp} := {1}) is "
                                      "not None and {tmp} is not True and {tmp} is not False "
                                      f"else {RABBITMQ_DEFAULT_PRIORITY})"}
RABBITMQ_PRIORITY_FIELDS = (("header", "priority"), ("message_annotations", "x-basic-priority"))


def regex_path(segments: list) -> bool:
    """Whether RabbitMQ matches a LIKE pattern by regular expression
    (``rabbit_amqp_filter_sql:transform_pattern``: any ``_``, or two or more
    ``%``), rather than as an exact, prefix or suffix match of bytes."""
    return len(segments) > 2 or any(None in segment for segment in segments)


MATCH_LIMIT = 50_000   # rabbit_re (4.2.8, 4.3.2 on; 4.2.7 and 4.3.1 inline): match_limit


def within_match_limit(segments: list, text: str, limit: int = MATCH_LIMIT) -> bool:
    """Whether PCRE finds a match RabbitMQ's regular expression has within its
    match limit (``re:run`` with ``{match_limit, 50000}``, from 4.2.7 and 4.3.1:
    a hit is ``nomatch``, so FALSE). For ``^...$`` of literals, ``.`` and
    lazy ``.*?`` that matches, each ``%`` stops at the first place its next
    run matches, so the count of PCRE's ``match()`` calls is 2, plus one per
    ``%``, plus one per character the ``%``s absorb (counted on Erlang/OTP 25's
    PCRE 8.45, the library of OTP 26 and 27 too; exact on 264,528 cases).
    The ``k``-th ``%`` runs ``k`` calls deep, under ``match_limit_recursion``
    (the same 50,000: no filter RabbitMQ takes has that many ``%``)."""
    return len(text) <= longest_match(segments, limit)


def longest_match(segments: list, limit: int = MATCH_LIMIT) -> int:
    """The longest subject within the match limit (``2 + wildcards + length - fixed
    <= limit``, fewer wildcards than the limit); -1: none."""
    wildcards = len(segments) - 1
    fixed = sum(len(segment) for segment in segments)
    return limit - 2 - wildcards + fixed if wildcards < limit else -1


def pcre_subject(text: str) -> str | None:
    """The part of ``text`` RabbitMQ's regular expression (``^...$``, PCRE's
    defaults) must match: ``_`` and ``%`` stand for ``.``, which matches no line
    feed, and ``$`` matches before a final line feed too; a pattern holds no
    control character. So one final LF is left out, and a subject with another
    LF matches no such pattern (None)."""
    if text.endswith("\n"):
        text = text[:-1]
    return None if "\n" in text else text


class RabbitMQ(Lenient):
    """RabbitMQ 4.2's evaluation of SQL filters (``rabbit_amqp_filter_sql``).

    Its values are numbers, booleans and byte strings: strings, symbols,
    binaries and uuids are all bytes, so ``'A' = 0x41``. Application property
    values it cannot represent (null, decimals, NaN and infinities, maps,
    lists, described values) are dropped: they read as absent."""

    name = "rabbitmq"
    decimal_fast_paths = False     # decimals are dropped, not compared
    char_is_string = False         # a char is its code point, a number
    int_division = "true"          # / always divides exactly: 5 / 2 = 2.5
    int_range = None               # Erlang integers do not overflow
    string_concatenation = False   # + is for numbers only
    null_view = True               # IS NULL sees dropped values as absent
    # classes ``view`` never drops: IS NULL needs no call for them
    never_dropped = frozenset(INT_CLASSES | {timestamp, str, symbol, char, bool, bytes})
    finite_numbers = True          # NaN and infinities are dropped
    numbers = RABBITMQ_NUMBER_RULES

    def inline_derived(self, compute: Any) -> str | None:
        return RABBITMQ_INLINE.get(compute)

    def first_present_rest(self, compute: Any) -> Any:
        return rabbitmq_priority_without_header if compute is rabbitmq_priority else None

    def plain_like(self, segments: list) -> bool:
        return not regex_path(segments)

    def single_line_like(self, segments: list) -> int | None:
        return longest_match(segments)

    def like_inline(self, segments: list) -> str | None:
        if len(segments) == 3 and not segments[0] and not segments[2] and segments[1] \
                and None not in segments[1]:   # '%x%': x somewhere, no LF but a final one
            longest = longest_match(segments)
            return ("{needle} in {s} and ('\\n' not in {s} and "
                    f"len({{s}}) <= {longest} or {{s}}[-1:] == '\\n' and "
                    f"'\\n' not in {{s}}[:-1] and len({{s}}) <= {longest + 1})")
        return None

    def like_matcher(self, pattern: str, escape: str | None) -> Any:
        matcher = compile_like(pattern, escape, self.like_escapes)
        segments = segments_of(pattern, escape, self.like_escapes)
        if not regex_path(segments):
            return matcher

        def regex(subject: str) -> bool:
            text = pcre_subject(subject)
            return text is not None and matcher(text) and within_match_limit(segments, text)
        return regex

    def view(self, value: Any) -> Any:  # type: ignore[override]
        value = exact(value)
        cls = type(value)
        if cls is int or cls is str or cls is bool or cls is bytes or value is None:
            return value
        kind = kind_of(value)
        if kind == INT or kind == TIMESTAMP:
            return int(value)
        if kind == FLOAT:
            number = double_value(value)
            return number if number - number == 0 else None  # NaN and infinities: dropped
        if kind == STRING:
            return ord(value) if isinstance(value, char) else str(value)
        if kind == BOOL:
            return bool(value)
        if kind == UUID:
            return value.bytes
        if kind == BINARY:
            return bytes(value)
        return None   # decimals, maps, lists, arrays, described: dropped

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        if left.__class__ is str and right.__class__ is bytes:
            left = left.encode("utf-8", "surrogatepass")
        elif left.__class__ is bytes and right.__class__ is str:
            right = right.encode("utf-8", "surrogatepass")
        lk, rk = kind_of(left), kind_of(right)
        same = lk == rk or (lk in (INT, FLOAT) and rk in (INT, FLOAT))
        if op == "=":
            return same and left == right
        if op == "<>":
            return not same or left != right   # Erlang /=: unlike kinds differ
        if not same or lk == BOOL:
            return False   # ordering is for numbers and byte strings only
        return runtime.OPS[op](left, right)

    def in_values(self, value: Any, items: tuple) -> bool | None:  # type: ignore[override]
        if value is None or self.view(value) is None:
            return None
        return any(self.compare("=", value, item) for item in items)

    def number(self, value: Any) -> Any:
        """The value as an Erlang number, or None."""
        value = self.view(value)
        return value if value.__class__ in (int, float) else None

    def predicate(self, value: Any) -> bool | None:  # type: ignore[override]
        return value if value is True or value is False else None

    def arith(self, op: str, left: Any, right: Any) -> Any:  # type: ignore[override]
        if left is None or right is None:
            return None
        a, b = self.number(left), self.number(right)
        if a is None or b is None:
            return None
        try:
            if a.__class__ is int and b.__class__ is int:
                return self.int_arith(op, a, b)
            return self.float_arith(op, float(a), float(b))
        except (ArithmeticError, ValueError):
            return None

    def int_arith(self, op: str, a: int, b: int) -> Any:
        if op in runtime.RING:
            return runtime.RING[op](a, b)
        if b == 0:
            return None
        if op == "%":
            rem = abs(a) % abs(b)
            return -rem if a < 0 else rem
        return a / b

    def float_arith(self, op: str, a: float, b: float) -> Any:
        if op == "%" or (op == "/" and b == 0):
            return None   # rem is for integers only; no division by zero
        result = a / b if op == "/" else runtime.RING[op](a, b)
        # Erlang raises badarith rather than produce an infinity
        return result if result - result == 0 else None

    def negate(self, value: Any) -> Any:  # type: ignore[override]
        number = None if value is None else self.number(value)
        return None if number is None else -number

    def plus(self, value: Any) -> Any:  # type: ignore[override]
        return None if value is None else self.number(value)

    def like(self, value: Any, pattern: Any, negated: bool,  # type: ignore[override]
             *escape: Any) -> bool | None:
        if value is None or pattern is None or (escape and escape[0] is None):
            return None
        subject = self.view(value)
        if kind_of(pattern) != STRING or \
                (escape and (kind_of(escape[0]) != STRING or len(escape[0]) != 1)):
            return None
        pattern, escape_char = str(pattern), str(escape[0]) if escape else None
        if subject.__class__ is bytes:
            return self.like_bytes(subject, pattern, escape_char, negated)
        if subject.__class__ is not str:
            return None   # LIKE on a number or boolean is unknown
        try:
            return self.like_matcher(pattern, escape_char)(subject) != negated
        except PatternError:
            return None

    def like_bytes(self, subject: bytes, pattern: str, escape: str | None,
                   negated: bool) -> bool | None:
        """A binary subject: patterns with no ``_`` and at most one ``%`` match its
        bytes; any other pattern needs it to be UTF-8 text (else unknown), matched
        as a string is."""
        segments = segments_of(pattern, escape, self.like_escapes)
        if not regex_path(segments):
            parts = ["".join(seg).encode("utf-8", "surrogatepass") for seg in segments]
            if len(parts) == 1:
                found = subject == parts[0]
            else:
                found = (len(subject) >= len(parts[0]) + len(parts[1])
                         and subject.startswith(parts[0]) and subject.endswith(parts[1]))
            return found != negated
        try:
            text = subject.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return self.like_matcher(pattern, escape)(text) != negated

    # --- property filters (rabbit_amqp_filter_prop) ------------------------------------------

    property_match = "present"     # an absent (or dropped) value never matches

    def check_property_filter(self, section: str, entries: Any) -> None:
        """What RabbitMQ refuses beyond the specification's checks: 1 to 16 entries;
        the 2018 draft's ``&i:``/``&S:``/``&P:`` modifiers; properties keys are
        symbols, content-type/-encoding references symbols, and there are no
        null references there."""
        if section not in ("properties", "application_properties"):
            raise FilterError(f"RabbitMQ has no {section} filter",
                              condition="amqp:not-implemented")
        if not 1 <= len(entries) <= RABBITMQ_MAX_ENTRIES:
            raise FilterError(f"a RabbitMQ property filter has 1 to {RABBITMQ_MAX_ENTRIES} "
                              f"entries, not {len(entries)}")
        self.refuse_draft_modifiers(entries)
        if section != "properties":
            return
        for key, ref in entries.items():
            if key.__class__ is not symbol:
                raise FilterError(f"RabbitMQ properties filter keys are symbols, not {key!r}")
            if ref is None:
                raise FilterError(f"RabbitMQ refuses a null reference for {str(key)!r}")
            allowed = RABBITMQ_FIELD_TYPES.get(str(key))
            if allowed is not None and not fits(ref, allowed):
                raise FilterError(f"properties field {str(key)!r} cannot hold "
                                  f"{type(ref).__name__} {ref!r} in RabbitMQ")

    @staticmethod
    def refuse_draft_modifiers(entries: Any) -> None:
        """RabbitMQ knows CSD01's ``&p:``/``&s:`` only (semantics.md): a draft
        modifier, nested or not, is a definitional error naming it."""
        for ref in entries.values():
            for text in string_refs(ref):
                modifier = draft_modifier(text)
                if modifier is not None:
                    raise FilterError(f"RabbitMQ has no {modifier} string modifier (in "
                                      f"{str(text)[:20]!r}; use &p:, &s:, or && for a "
                                      "leading &)")

    def match_property(self, value: Any, ref: Any) -> bool:
        """RabbitMQ's match of a message value with a reference: an absent (or
        dropped) value never matches; a null reference matches any present value;
        ``&p:``/``&s:`` on string references match byte strings; else Erlang ``==``
        (numbers across types, strings, symbols and binaries as bytes)."""
        value = None if value is None else self.view(value)
        if value is None:
            return False
        if ref is None:
            return True
        if ref.__class__ is str:
            rule, text = string_rule(ref)
            if rule != "eq":
                if value.__class__ is str:
                    value = value.encode("utf-8", "surrogatepass")
                if value.__class__ is not bytes:
                    return False
                affix = text.encode("utf-8", "surrogatepass")
                return value.startswith(affix) if rule == "prefix" else value.endswith(affix)
            ref = text
        return self.compare("=", value, ref) is True


RABBITMQ_SEMANTICS = RabbitMQ()

RABBITMQ = Dialect(
    "rabbitmq", keywords=RABBITMQ_KEYWORDS, keyword_case="upper",
    number_forms=RABBITMQ_NUMBERS, decimal_constants=False, non_finite_constants=False,
    # rabbit_amqp_sql_lexer: list_to_float fails on 1.0E400 (badarg ends the session)
    finite_literals=True,
    reserved=frozenset({"EXISTS", "INF", "NAN", *STANDARD}),
    identifier=r"[A-Za-z][A-Za-z0-9_]*", binary_constants="upper",
    max_integer=None,
    delimited_identifiers="any", hyphenated_sections=False,
    section_qualifiers=(("header", "header"), ("h", "header"), ("properties", "properties"),
                        ("p", "properties"), ("application_properties", "application_properties"),
                        ("a", "application_properties")),
    header_fields=("priority",), field_spellings="underscore", literal_patterns=True,
    section_fields=((("header", "priority"), RABBITMQ_PRIORITY_FIELDS, "any", rabbitmq_priority),),
    unary_on_primary_only=True, pattern_control_characters=False, whitespace=" \t\n\r\f",
    functions=("UTC",), vendor_functions=False, allow_between=False,
    allow_exists=False, allow_composite_references=False, semantics=RABBITMQ_SEMANTICS,
    max_length=4096, max_tokens=200)
