"""SQL dialects as data: what the one lexer, parser, checker, code generator and
runtime read differently for each peer. Adding a dialect is adding a
``Dialect`` here; no stage has a copy of another's code for it.

- ``amqp``: the filtex grammar in full plus BETWEEN; failures make the filter unknown.
- ``jms``: Jakarta Messaging 3.1 selectors as ActiveMQ, Artemis and Qpid read
  them; JMS header names map to AMQP fields; AMQP values seen as JMS types.
- ``rabbitmq``: the SQL filters of RabbitMQ 4.2 streams.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import FilterError

SECTION_QUALIFIERS = {
    "header": "header", "h": "header",
    "delivery_annotations": "delivery_annotations", "d": "delivery_annotations",
    "message_annotations": "message_annotations", "m": "message_annotations",
    "properties": "properties", "p": "properties",
    "application_properties": "application_properties", "a": "application_properties",
    "footer": "footer", "f": "footer",
}

FUNCTION_ARITY = {"LOWER": (1, 2), "UPPER": (1, 2), "LEFT": (2, 2), "RIGHT": (2, 2),
                  "SUBSTRING": (2, 3), "UTC": (0, 0), "DATE": (1, 1)}

AMQP_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
                           "EXISTS", "TRUE", "FALSE", "INF", "NAN"})
JMS_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
                          "TRUE", "FALSE"})
RABBITMQ_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN",
                               "TRUE", "FALSE"})

# The JMS header identifiers (Apache filters document, figure 1) and the JMSX
# properties of the AMQP JMS mapping: (section, field, how the value is seen).
JMS_HEADERS = {
    "JMSCorrelationID": (("properties", "correlation-id"),),
    "JMSDeliveryMode": (("header", "durable"),),
    "JMSDestination": (("properties", "to"),),
    "JMSExpiration": (("properties", "absolute-expiry-time"),),
    "JMSMessageID": (("properties", "message-id"),),
    "JMSPriority": (("header", "priority"),),
    "JMSRedelivered": (("header", "delivery-count"),),
    "JMSReplyTo": (("properties", "reply-to"),),
    "JMSTimestamp": (("properties", "creation-time"),),
    # The Apache table names the x-opt-jms-type annotation; the AMQP JMS mapping
    # (Qpid JMS, the peers' suites) carries JMSType in subject: the annotation
    # wins when present.
    "JMSType": (("message_annotations", "x-opt-jms-type"), ("properties", "subject")),
    "JMSXGroupID": (("properties", "group-id"),),
    "JMSXGroupSeq": (("properties", "group-sequence"),),
    "JMSXUserID": (("properties", "user-id"),),
}


@dataclass(frozen=True)
class Dialect:
    """One reading of SQL filter text, from characters to evaluation."""
    name: str
    # --- tokens ---------------------------------------------------------------------
    keywords: frozenset = AMQP_KEYWORDS
    keyword_case: str = "any"          # "upper": keywords only in upper case, else an error
    reserved: frozenset = frozenset()  # words refused as identifiers in any case (but the
    #                                    upper-case name of one of the dialect's functions)
    identifier: str = r"[^\W\d_]\w*"   # a Unicode letter, then letters, digits, _
    string_quotes: str = "'\""
    numbers: str = "amqp"              # number literal forms: amqp | jms | rabbitmq
    binary_constants: str | None = "any"   # any | upper (hex digits) | None: 0x.. is an integer
    delimited_identifiers: str | None = "nonempty"   # nonempty | any | None
    quoted_identifiers: bool = False   # "name" is an identifier (Artemis, Qpid)
    comments: bool = False             # /* */ and -- line comments
    not_equal_bang: bool = True        # != as well as <>
    modulo: bool = True
    max_integer: int | None = (1 << 64) - 1
    hyphenated_sections: bool = True   # application-properties.x
    # --- names and constructs ---------------------------------------------------------
    section_qualifiers: tuple = tuple(SECTION_QUALIFIERS.items())
    header_fields: tuple | None = None        # None: every header field
    field_spellings: str = "all"              # all: reply-to, reply_to, replyTo | underscore
    jms_headers: bool = False
    functions: tuple = tuple(FUNCTION_ARITY.items())
    vendor_functions: bool = True
    allow_between: bool = True
    allow_exists: bool = True
    allow_composite_references: bool = True
    typed_predicates: bool = False     # a constant or arithmetic as a condition is an error
    literal_patterns: bool = False     # LIKE pattern and ESCAPE are string constants
    unary_on_primary_only: bool = False   # - -x is a syntax error (-(-x) is not)
    pattern_control_characters: bool = True   # in a LIKE pattern
    whitespace: str = " \t\n\r\f\v"
    # --- evaluation -----------------------------------------------------------------------
    semantics: str = "amqp"            # amqp | jms | rabbitmq: see filtex/semantics.py
    # --- the dialect's own hard limits (filtex.Limits holds the operator's) ------------------
    max_length: int | None = None
    max_tokens: int | None = None


AMQP = Dialect("amqp")

JMS = Dialect(
    "jms", keywords=JMS_KEYWORDS, reserved=frozenset({"XPATH", "XQUERY"}),
    identifier=r"[A-Za-z_$][A-Za-z0-9_$]*", string_quotes="'", numbers="jms",
    binary_constants=None, delimited_identifiers=None, quoted_identifiers=True, comments=True,
    not_equal_bang=False, max_integer=None, hyphenated_sections=False,
    whitespace=" \t\n\r\f",
    section_qualifiers=(), jms_headers=True, functions=(), vendor_functions=False,
    allow_exists=False, allow_composite_references=False, typed_predicates=True,
    literal_patterns=True, semantics="jms")

RABBITMQ = Dialect(
    "rabbitmq", keywords=RABBITMQ_KEYWORDS, keyword_case="upper",
    reserved=frozenset({"EXISTS", "INF", "NAN", *FUNCTION_ARITY}),
    identifier=r"[A-Za-z][A-Za-z0-9_]*", numbers="rabbitmq", binary_constants="upper",
    max_integer=None,
    delimited_identifiers="any", hyphenated_sections=False,
    section_qualifiers=(("header", "header"), ("h", "header"), ("properties", "properties"),
                        ("p", "properties"), ("application_properties", "application_properties"),
                        ("a", "application_properties")),
    header_fields=("priority",), field_spellings="underscore", literal_patterns=True,
    unary_on_primary_only=True, pattern_control_characters=False, whitespace=" \t\n\r\f",
    functions=(("UTC", (0, 0)),), vendor_functions=False, allow_between=False,
    allow_exists=False, allow_composite_references=False, semantics="rabbitmq",
    max_length=4096, max_tokens=200)

DIALECTS = {d.name: d for d in (AMQP, JMS, RABBITMQ)}


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name``, or a ``FilterError`` naming the known ones."""
    try:
        return DIALECTS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(DIALECTS))
        raise FilterError(f"unknown SQL dialect {name!r} (known: {known})",
                          condition="amqp:not-implemented") from None
