"""Property filters (filtex section 4): the rules that match a map of
reference values against one message section. They are runtime, not front
end: the described front end checks entries with them, and the dialects, the
row engine, the subscription index and Spark read the same rules.

``match_value`` is the complete matching rule set (4.1), used for nested and
unusual references; the generator inlines the common cases (strings with the
``&s:``/``&p:``/``&&`` modifiers and the 2018 draft's ``&S:``/``&P:``/``&i:``,
integers, floats, booleans). Entries are
checked when the filter is defined: header and properties entries must be
well-known fields with values of the field's type.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping

from proton import Array, Described, symbol, ulong

from ..errors import FilterError
from ..message import HEADER_FIELDS, PROPERTIES_FIELDS
from .values import (BINARY, BOOL, DECIMAL, FLOAT, INT, STRING, TIMESTAMP, UUID,
                              decimal_value, double_value, exact, kind_of)


# --- the matching rules -------------------------------------------------------------

# String modifier -> rule. The 2018 draft's ``&S:``/``&P:`` are CSD01's case-sensitive
# ``&s:``/``&p:``; its ``&i:`` is equality ignoring case (full Unicode case folding).
# CSD01 supersedes the draft's case-insensitive ``&s:``/``&p:`` (semantics.md).
CSD01_MODIFIERS = {"&p:": "prefix", "&s:": "suffix"}
DRAFT_MODIFIERS = {"&P:": "prefix", "&S:": "suffix", "&i:": "fold"}
MODIFIERS = {**CSD01_MODIFIERS, **DRAFT_MODIFIERS}


def string_rule(ref: Any) -> tuple[str, str]:
    """(rule, text) of a string reference: ``eq``, ``prefix``, ``suffix`` or
    ``fold`` (equal after ``str.casefold`` of both sides; ``text`` as written).

    Modifiers apply to string references only (a symbol is matched as is)."""
    text = str(ref)
    if ref.__class__ is symbol or not text.startswith("&"):
        return "eq", text
    if text.startswith("&&"):
        return "eq", text[1:]
    rule = MODIFIERS.get(text[:3])
    if rule is None:
        raise FilterError(f"unknown string modifier in {text[:20]!r} (use &p:, &s:, &P:, &S:, "
                          "&i:, or && for a leading &)")
    return rule, text[3:]


def draft_modifier(ref: Any) -> str | None:
    """The 2018 draft modifier a string reference starts with, if any (for the
    dialects that refuse them)."""
    if ref.__class__ is symbol or kind_of(ref) != STRING:
        return None
    head = str(ref)[:3]
    return head if head in DRAFT_MODIFIERS else None


def match_string(value: str, rule: str, text: str) -> bool:
    """Does a plain string value satisfy a string rule?"""
    if rule == "eq":
        return value == text
    if rule == "prefix":
        return value.startswith(text)
    if rule == "suffix":
        return value.endswith(text)
    return value.casefold() == text.casefold()


def match_value(value: Any, ref: Any) -> bool:
    """Does a message value match a reference value (filtex 4.1)?"""
    if ref is None:
        return True
    if value is None:
        return False
    value = exact(value)   # a subclass's own methods never answer for a match
    rk, vk = kind_of(ref), kind_of(value)
    if rk == STRING:
        if vk != STRING:
            return False
        return match_string(str.__str__(value), *string_rule(ref))
    if rk == INT:
        return (vk == INT and int(value) == int(ref)) or (vk == FLOAT and
                                                          double_value(value) == float(ref))
    if rk == FLOAT:
        return vk in (INT, FLOAT) and double_value(value) == double_value(ref)
    if rk == DECIMAL:
        return vk == DECIMAL and decimal_value(value) == decimal_value(ref)
    if rk == BOOL:
        return value is ref or (vk == BOOL and bool(value) == bool(ref))
    if rk in (TIMESTAMP, BINARY, UUID):
        return vk == rk and value == ref
    if isinstance(ref, Described):
        return (isinstance(value, Described) and value.descriptor == ref.descriptor
                and match_value(value.value, ref.value))
    if isinstance(value, Described):
        return False
    if isinstance(ref, Mapping):
        if not isinstance(value, Mapping):
            return False
        return all(r is None or (k in value and match_value(value[k], r))
                   for k, r in ref.items())
    if isinstance(ref, Array):
        items = value.elements if isinstance(value, Array) else None
        return (items is not None and len(items) == len(ref.elements)
                and all(map(match_value, items, ref.elements)))
    if isinstance(ref, (list, tuple)):
        if not isinstance(value, (list, tuple)):
            return False
        return len(value) >= len(ref) and all(map(match_value, value, ref))
    return False


# --- definitional checks ------------------------------------------------------------------

_INTEGER_RANGES = {"ubyte": (0, 0xFF), "uint": (0, 0xFFFFFFFF)}
# Field -> the kinds a reference may have, and for integers the type's range.
FIELD_TYPES = {
    "header": {"durable": ("bool",), "priority": ("ubyte",), "ttl": ("uint",),
               "first-acquirer": ("bool",), "delivery-count": ("uint",)},
    "properties": {
        "message-id": ("ulong", UUID, BINARY, STRING), "user-id": (BINARY,),
        "to": (STRING,), "subject": (STRING,), "reply-to": (STRING,),
        "correlation-id": ("ulong", UUID, BINARY, STRING), "content-type": (STRING,),
        "content-encoding": (STRING,), "absolute-expiry-time": (TIMESTAMP,),
        "creation-time": (TIMESTAMP,), "group-id": (STRING,), "group-sequence": ("uint",),
        "reply-to-group-id": (STRING,)},
}
assert set(FIELD_TYPES["header"]) == set(HEADER_FIELDS)
assert set(FIELD_TYPES["properties"]) == set(PROPERTIES_FIELDS)


def fits(ref: Any, allowed: tuple) -> bool:
    """Can a reference value stand for a field of the given types?"""
    kind = kind_of(ref)
    for option in allowed:
        if option == "symbol" and ref.__class__ is symbol:
            return True
        if option == "bool" and kind == BOOL:
            return True
        if option in _INTEGER_RANGES and kind == INT:
            low, high = _INTEGER_RANGES[option]
            return low <= int(ref) <= high
        if option == "ulong" and kind == INT and 0 <= int(ref) < 1 << 64:
            return True
        if option == kind:
            return True
    return False


def string_refs(ref: Any) -> Iterator[Any]:
    """Every string reference in a reference value, nested ones included."""
    if kind_of(ref) == STRING:
        yield ref
    elif isinstance(ref, Described):
        yield from string_refs(ref.value)
    elif isinstance(ref, Mapping):
        for item in ref.values():
            yield from string_refs(item)
    elif isinstance(ref, (list, tuple)):
        for item in ref:
            yield from string_refs(item)
    elif isinstance(ref, Array):
        for item in ref.elements:
            yield from string_refs(item)


def _check_modifiers(ref: Any) -> None:
    for text in string_refs(ref):
        string_rule(text)


def check_entries(section: str, entries: Any, dialect: Any) -> list[tuple[Any, Any]]:
    """The filter's (key, reference) pairs, checked; FilterError if any is invalid.
    ``entries`` comes from ``normalize``: unwrapped, of exact classes, bounded."""
    if not isinstance(entries, Mapping):
        raise FilterError(f"a {section} filter is a map, not {type(entries).__name__}")
    dialect.semantics.check_property_filter(section, entries)   # the dialect's own rules
    checked = []
    for key, ref in entries.items():
        if section in FIELD_TYPES:
            if not isinstance(key, str) or str(key) not in FIELD_TYPES[section]:
                raise FilterError(f"{key!r} is not a field of the {section} section")
            key = str(key)
            if ref is not None and not fits(ref, FIELD_TYPES[section][key]):
                raise FilterError(f"{section} field {key!r} cannot hold {type(ref).__name__} "
                                  f"{ref!r}")
        elif section == "application_properties":
            if key.__class__ is not str and not (isinstance(key, str) and
                                                  key.__class__ is not symbol):
                raise FilterError(f"application-properties keys are strings, not "
                                  f"{type(key).__name__} {key!r}")
            if isinstance(ref, (Mapping, list, tuple, Array)):
                raise FilterError(f"application property {key!r}: values are simple types, "
                                  f"not {type(ref).__name__}")
        elif not (isinstance(key, str) or isinstance(key, ulong)):
            raise FilterError(f"{section} keys are symbols or ulongs, not {key!r}")
        _check_modifiers(ref)
        checked.append((key, ref))
    return checked
