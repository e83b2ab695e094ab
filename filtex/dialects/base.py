"""The dialect record and the evaluation rules every dialect starts from.

A dialect is one record (``Dialect``) that owns everything about it: how its
text reads (tokens, names, constructs), its static checks, its hard limits,
and how it evaluates (``semantics``, an object: the operations generated code
calls when the static types did not settle them, the facts the code generator
needs to pick its fast paths, and its reading of property filters). One module
per dialect (``amqp``, ``jms``, ``rabbitmq``) builds its record; no stage
anywhere else tests a dialect's name.

``Semantics`` is the ``amqp`` rules: an evaluation failure raises and makes the
whole filter unknown. ``Lenient`` is the base of the dialects without failures
(semantics.md): what fails in ``amqp`` is NULL there, and comparing values of
unlike types is FALSE.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable

from .. import runtime
from ..runtime import patterns
from ..functions import REGISTRY, STANDARD
from . import rules
from .rules import AMQP_NUMBER_RULES, NumberRules

if TYPE_CHECKING:
    from ..names import Dialect as DialectName

SECTION_QUALIFIERS = {
    "header": "header", "h": "header",
    "delivery_annotations": "delivery_annotations", "d": "delivery_annotations",
    "message_annotations": "message_annotations", "m": "message_annotations",
    "properties": "properties", "p": "properties",
    "application_properties": "application_properties", "a": "application_properties",
    "footer": "footer", "f": "footer",
}

BODY_QUALIFIERS = {"amqp_value": "amqp_value", "amqp_sequence": "amqp_sequence"}
"""The 2018 working draft's body qualifiers, long forms only: CSD01 reads the
draft's ``v.x`` and ``s[0]`` as application properties ``v`` and ``s``."""


AMQP_NUMBERS = ((re.compile(r"\d+"), "INTEGER", int),
                (re.compile(r"\d+\.\d+"), "DECIMAL", Decimal),
                (re.compile(r"(?:\d+\.\d+|\d+)[eE][+-]?\d+"), "APPROX", float))

AMQP_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
                           "EXISTS", "TRUE", "FALSE", "INF", "NAN"})


class Undecided:
    """The answer a dialect leaves to its runtime operation."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNDECIDED"


UNDECIDED = Undecided()


class Semantics:
    """The ``amqp`` rules: the runtime's functions, failures and all."""

    name = "amqp"
    failures = True
    # Python's str ordering is the dialect's for these operators (fast paths).
    string_ops = frozenset({"=", "<>", "<", "<=", ">", ">="})
    decimal_fast_paths = True      # Decimal compares with ints by value
    char_is_string = True          # a char compares as a one-character string
    int_division = "exact"         # inline int /: 7 / 2 = 3.5, 6 / 2 = 3 ("true": always float)
    int_range: tuple | None = (runtime.LONG_MIN, runtime.ULONG_MAX)   # else NaN
    null_view = False              # IS NULL tests the value as read
    never_dropped: frozenset[type] = frozenset()   # null_view: classes never read as absent
    finite_numbers = False         # NaN and infinities are no numbers (RabbitMQ drops them)
    arithmetic = "exact"           # inline int and float arithmetic: "exact" (Python's
    #                                integers, then int_range), "java" (Integer and Long
    #                                widths, / in double: jms)
    like_escapes = "escape-any"    # the escape escapes any character ("escape-wildcards":
    #                                only _, % and itself; see patterns.segments_of)
    non_boolean_condition = None   # (lenient dialects) what a non-boolean condition is
    float_order = "ieee"           # "total": NaN and -0.0 order as Java's Double.compareTo
    string_concatenation = True    # string + string (jms: string + anything) makes a string
    property_match = "spec"        # property filters as filtex 4.1 reads them; "present":
    #                                an absent value never matches (RabbitMQ)
    numbers: NumberRules = AMQP_NUMBER_RULES   # numbers against numeric constants (rules.py)

    def other_type(self, test: str, op: str = "=", negated: bool = False,
                   kinds: tuple[str, ...] | None = None) -> Any:
        """The result of a test against string constants (``compare-string``,
        ``in-strings``, ``like``; ``negated`` for NOT IN and NOT LIKE) for a present
        value that is not a string, and of [NOT] BETWEEN two number constants for
        a string (``between-numbers``): True, False or None where the declared
        table (``numbers.other_types``) gives every such value one answer, else
        ``UNDECIDED`` (the runtime decides; an amqp failure is never inlined).
        ``kinds``: the answer for values of those kinds only."""
        if test == "between-numbers":
            tested: tuple[str, ...] = (rules.STRING,)
            key = "not between numbers" if negated else "between numbers"
        else:
            tested = kinds or NON_STRING_KINDS
            key = {"compare-string": rules.comparison_test("string", op),
                   "in-strings": "in strings", "like": "like"}[test]
        answers = {self.numbers.answer(kind, key) for kind in tested}
        answer = answers.pop() if len(answers) == 1 else None
        if answer is None:
            return UNDECIDED
        said = rules.negation(answer) if negated and test != "between-numbers" else answer
        return {"true": True, "false": False, "unknown": None}.get(said, UNDECIDED)

    def plain_like(self, segments: list) -> bool:
        """Whether LIKE with a pattern of these segments is plain text matching
        (``_`` any one character, ``%`` any run: Arrow's and Spark's LIKE, the
        generator's string tests); the dialect's own ``like_matcher`` otherwise."""
        return True

    def single_line_like(self, segments: list) -> int | None:
        """For a pattern that is no ``plain_like``: if the dialect's match is plain
        LIKE on one line (PCRE's ``^...$``: one final line feed left out, any other
        failing the match), the longest such line that can match; None otherwise.
        The batch engines and Spark write it with their own string kernels."""
        return None

    def like_inline(self, segments: list) -> str | None:
        """For a pattern that is no ``plain_like``, a Python expression template
        of the dialect's match (``{s}`` the subject, ``{needle}`` its one literal
        run) where it has one; None: ``like_matcher`` is called."""
        return None

    def like_matcher(self, pattern: str, escape: str | None) -> Callable[[str], bool]:
        """A function ``str -> bool``: the dialect's LIKE of a string with a
        constant pattern. Raises ``PatternError``."""
        return patterns.compile_like(pattern, escape, self.like_escapes)

    def inline_derived(self, compute: Callable) -> str | None:
        """A Python expression template computing a derived value (a JMS header)
        inline: ``{0}``, ``{1}``... are the fields' values (one used once is read
        where it is used), ``{slow}`` the call of ``compute`` itself, ``{tmp}`` a
        fresh temporary; None when only the call does it."""
        return None

    def first_present_rest(self, compute: Callable) -> Callable | None:
        """For a derived value that is its first field where that field is not null,
        and otherwise a function of the other fields, that function (the batch
        engines split a predicate of it into the two cases, one field each); None
        for any other."""
        return None

    def check_property_filter(self, section: str, entries: Any) -> None:
        """What the dialect refuses in a property filter beyond filtex 4.1."""

    def match_property(self, value: Any, ref: Any) -> bool:
        """(``property_match == "present"``) does a present value match a reference?"""
        raise NotImplementedError

    def namespace(self) -> dict[str, Callable]:
        """The operations generated code calls, by their generated names."""
        return {"_compare": self.compare, "_arith": self.arith, "_negate": self.negate,
                "_plus": self.plus, "_predicate": self.predicate, "_in": self.in_values,
                "_like": self.like, "_between": self.between, "_view": self.view,
                **{f"_fn_{f.ident}": f.run for f in REGISTRY.values()}}

    view = staticmethod(lambda value: value)
    compare = staticmethod(runtime.compare)
    arith = staticmethod(runtime.arith)
    negate = staticmethod(runtime.negate)
    plus = staticmethod(runtime.plus)
    predicate = staticmethod(runtime.predicate)
    in_values = staticmethod(runtime.in_values)
    like = staticmethod(runtime.like)
    between = staticmethod(runtime.between)


class Lenient(Semantics):
    """No failures: NULL instead, and FALSE for values of unlike types. A
    subclass says how it sees AMQP values (``view``) and compares them."""

    name = "lenient"
    failures = False

    def compare(self, op: str, left: Any, right: Any) -> bool | None:  # type: ignore[override]
        if left is None or right is None:
            return None
        left, right = self.view(left), self.view(right)
        if left is None or right is None:
            return None
        return self.compare_views(op, left, right)

    def compare_views(self, op: str, left: Any, right: Any) -> bool:
        """Two present values, as the dialect sees them."""
        raise NotImplementedError

    def between(self, value: Any, low: Any, high: Any,  # type: ignore[override]
                negate: bool = False) -> bool | None:
        return runtime.between(value, low, high, negate, self.compare)


NON_STRING_KINDS = (*rules.VALUE_KINDS, rules.BOOLEAN, rules.BINARY, rules.UUID,
                    rules.DECIMAL_VALUE, *rules.COMPOSITES)
"""The kinds of value that are no ``str`` (a symbol and a char are: the row
engine's inline test sends those to the runtime)."""

AMQP_SEMANTICS = Semantics()


@dataclass(frozen=True)
class Dialect:
    """One reading of SQL filter text, from characters to evaluation."""
    name: DialectName
    # --- tokens ---------------------------------------------------------------------
    keywords: frozenset = AMQP_KEYWORDS
    keyword_case: str = "any"          # "upper": keywords only in upper case, else an error
    reserved: frozenset = frozenset()  # words refused as identifiers in any case (but the
    #                                    upper-case name of one of the dialect's functions)
    identifier: str = r"[^\W\d_]\w*"   # a Unicode letter, then letters, digits, _
    string_quotes: str = "'\""
    # number literal forms: (pattern, token kind, value from text), the first that
    # fits the whole number wins
    number_forms: tuple = AMQP_NUMBERS
    octal_integers: bool = False       # a leading 0 is octal, and a long at most (Java)
    binary_constants: str | None = "any"   # any | upper (hex digits) | None: 0x.. is an integer
    delimited_identifiers: str | None = "nonempty"   # nonempty | any | None
    quoted_identifiers: bool = False   # "name" is an identifier (Artemis, Qpid)
    hyphenated_identifiers: bool = False   # a-b is one identifier (Artemis's hyphenated_props:)
    # the text's leading options (Artemis's hyphenated_props: and convert_string_expressions:):
    # (text with them blanked out, the dialect they choose), or None for none
    read_prefixes: Callable[[str], tuple[str, Any]] | None = None
    comments: bool = False             # /* */ and -- line comments
    not_equal_bang: bool = True        # != as well as <>
    modulo: bool = True
    max_integer: int | None = (1 << 64) - 1
    hyphenated_sections: bool = True   # application-properties.x
    # --- names and constructs ---------------------------------------------------------
    section_qualifiers: tuple = tuple(SECTION_QUALIFIERS.items())
    body_qualifiers: tuple = ()   # (qualifier, body section): the 2018 draft's body references
    header_fields: tuple | None = None        # None: every header field
    field_spellings: str = "all"              # all: reply-to, reply_to, replyTo | underscore
    header_names: tuple = ()   # (identifier, ((section, field), ...), type, compute or None):
    #                            names for message fields beside application properties
    section_fields: tuple = ()  # ((section, field), ((section, field), ...), type, compute):
    #                             a qualified field the dialect computes from several fields
    qualified_names: tuple = ()  # (qualifier, ((member, header name), ...)): other names of
    #                              header_names (the Apache registry's amqp.correlation_id)
    functions: tuple[str, ...] = (*STANDARD, "filtex:LENGTH")   # by name (functions/)
    vendor_functions: bool = True
    allow_between: bool = True
    allow_exists: bool = True
    allow_composite_references: bool = True
    typed_predicates: bool = False     # a constant or arithmetic as a condition is an error
    literal_patterns: bool = False     # LIKE pattern and ESCAPE are string constants
    unary_on_primary_only: bool = False   # - -x is a syntax error (-(-x) is not)
    pattern_control_characters: bool = True   # in a LIKE pattern
    whitespace: str = " \t\n\r\f\v"
    # --- constants a program may bind as parameters ------------------------------------------
    integer_constant: Callable[[int], Any] = int   # an int as the dialect's integer constant
    parameter_integers: tuple = (-(1 << 63), (1 << 64) - 1)   # the range a parameter may hold
    decimal_constants: bool = True
    non_finite_constants: bool = True  # INF and NAN
    finite_literals: bool = False      # a number literal beyond a double's range is an error
    # --- evaluation -----------------------------------------------------------------------
    semantics: Semantics = AMQP_SEMANTICS
    sql_descriptor: str = "amqp:sql-filter"   # the descriptor of an SQL filter in the dialect
    # --- the dialect's own hard limits (filtex.Limits holds the operator's) ------------------
    max_length: int | None = None
    max_tokens: int | None = None
