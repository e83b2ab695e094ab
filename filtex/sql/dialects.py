"""SQL dialects as data: what one lexer, parser, checker and generator read
differently for each peer. Adding a dialect is adding a ``Dialect`` here."""
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


@dataclass(frozen=True)
class Dialect:
    """One reading of SQL filter text."""
    name: str
    keywords_case_insensitive: bool = True
    identifier_start: str = r"[^\W\d_]"           # a Unicode letter
    identifier_rest: str = r"\w"                   # letters, digits, underscore
    hyphenated_sections: bool = True               # application-properties.x
    section_qualifiers: tuple = tuple(SECTION_QUALIFIERS.items())
    functions: tuple = tuple(FUNCTION_ARITY.items())
    vendor_functions: bool = True
    allow_between: bool = True
    allow_exists: bool = True
    allow_composite_references: bool = True
    max_depth: int = 128
    max_nodes: int = 10_000
    max_length: int | None = None
    max_tokens: int | None = None


AMQP = Dialect("amqp")

DIALECTS = {d.name: d for d in (AMQP,)}


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name``, or a ``FilterError`` naming the known ones."""
    try:
        return DIALECTS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(DIALECTS))
        raise FilterError(f"unknown SQL dialect {name!r} (known: {known})",
                          condition="amqp:not-implemented") from None
