"""The 2018 working draft's property-filter string modifiers (semantics.md):
``&i:`` equal ignoring case (full Unicode case folding), ``&S:``/``&P:`` the
case-sensitive suffix and prefix; CSD01's ``&s:``/``&p:`` stay case-sensitive,
and the rabbitmq dialect refuses the draft's three."""
from __future__ import annotations

import uuid

import pytest
from proton import Described, char, symbol, ubyte

import filtex
from filtex import FilterError, Message
from filtex.runtime.property import match_value, string_rule

APP = symbol("amqp:application-properties-filter")


def app_filter(refs: dict, dialect: str = "amqp") -> filtex.Filter:
    return filtex.compile_filter((APP, refs), dialect)


def generated(value, ref) -> bool:
    """The generated code's answer for one application property."""
    return app_filter({"k": ref}).evaluate(Message(application_properties={"k": value}))


# --- the rules -----------------------------------------------------------------------

@pytest.mark.parametrize("ref, rule, text", [
    ("&i:Blue", "fold", "Blue"), ("&S:ue", "suffix", "ue"), ("&P:bl", "prefix", "bl"),
    ("&s:ue", "suffix", "ue"), ("&p:bl", "prefix", "bl"), ("&&i:x", "eq", "&i:x"),
    (symbol("&i:x"), "eq", "&i:x"), ("&i:", "fold", ""),
])
def test_string_rule(ref, rule, text):
    assert string_rule(ref) == (rule, text)


@pytest.mark.parametrize("value, ref, expected", [
    ("BLUE", "&i:blue", True), ("blue", "&i:BLUE", True), ("Blue", "&i:bLUE", True),
    ("blues", "&i:blue", False), ("blu", "&i:blue", False), ("", "&i:", True),
    ("STRASSE", "&i:straße", True), ("straße", "&i:STRASSE", True),   # full folding
    ("ΟΔΟΣ", "&i:οδος", True), ("οδοσ", "&i:ΟΔΟΣ", True),            # final sigma
    ("ﬁle", "&i:FILE", True), ("İ", "&i:i", False),                   # ligature; no locale
    (symbol("Blue"), "&i:blue", True), (char("Q"), "&i:q", True),     # symbol and char values
    ("orders", "&P:ord", True), ("Orders", "&P:ord", False), ("orders", "&P:ers", False),
    ("orders", "&S:ers", True), ("ordERS", "&S:ers", False), ("orders", "&S:ord", False),
    ("orders", "&P:", True), ("orders", "&S:", True),
    ("Orders", "&p:ord", False), ("ORDERS", "&s:ers", False),         # CSD01: case-sensitive
    ("&i:x", "&&i:x", True), ("X", "&&i:x", False),                   # escaped: literal
    ("X", symbol("&i:x"), False), ("&i:x", symbol("&i:x"), True),     # a symbol is literal
])
def test_modifiers_match(value, ref, expected):
    assert match_value(value, ref) is expected
    assert generated(value, ref) is expected


@pytest.mark.parametrize("value", [1, ubyte(1), 1.0, True, b"1", b"a", uuid.UUID(int=1),
                                   ["a"], {"a": "a"}, Described(symbol("d"), "a"), None])
@pytest.mark.parametrize("ref", ["&i:a", "&i:1", "&S:a", "&P:a", "&i:true", "&i:", "&P:"])
def test_non_string_values_never_match(value, ref):
    assert match_value(value, ref) is False
    assert generated(value, ref) is False


def test_absent_entry_never_matches():
    assert app_filter({"k": "&i:"}).evaluate(Message(application_properties={})) is False


def test_properties_filter_field():
    flt = filtex.compile_filter(("amqp:properties-filter", {"subject": "&i:ORDERS"}))
    assert flt.evaluate(Message(properties={"subject": "Orders"})) is True
    assert flt.evaluate(Message(properties={"subject": "Order"})) is False


# --- nested references (match_value is the rule) -------------------------------------------

def test_nested_references():
    assert match_value({"a": "STRASSE"}, {"a": "&i:straße"}) is True
    assert match_value({"a": "Strasse"}, {"a": "&S:asse"}) is True
    assert match_value({"a": "Strasse"}, {"a": "&P:str"}) is False
    assert match_value(["X", "y"], ["&i:x", "&P:y"]) is True
    assert match_value(Described(symbol("d"), "ΟΔΟΣ"), Described(symbol("d"), "&i:οδος")) is True
    flt = filtex.compile_filter(("amqp:message-annotations-filter",
                                 {symbol("x-opt-m"): {"a": "&i:straße", "b": "&S:z"}}))
    annotated = lambda m: Message(message_annotations={symbol("x-opt-m"): m})   # noqa: E731
    assert flt.evaluate(annotated({"a": "STRASSE", "b": "xyz"})) is True
    assert flt.evaluate(annotated({"a": "STRASSE", "b": "xyZ"})) is False
    assert flt.evaluate(annotated({"a": 5, "b": "xyz"})) is False


def test_nested_unknown_modifier_is_refused():
    with pytest.raises(FilterError, match="unknown string modifier"):
        filtex.compile_filter(("amqp:message-annotations-filter",
                               {symbol("x-opt-m"): {"a": "&I:x"}}))


# --- the generated code and the rule function agree ----------------------------------------

VALUES = ["", "a", "A", "abc", "ABC", "aBc", "abcd", "xabc", "STRASSE", "straße", "Straße",
          "ΟΔΟΣ", "οδος", "οδοσ", "ﬁle", "FILE", "&i:abc", "ǅ", "ǆ", "Ǆ", "\ud800",
          symbol("ABC"), symbol("abc"), char("a"), char("A"), 5, 5.0, True, b"abc", None]
REFS = ["&i:abc", "&i:ABC", "&i:straße", "&i:ΟΔΟΣ", "&i:file", "&i:ǆ", "&i:", "&i:\ud800",
        "&S:bc", "&S:BC", "&P:ab", "&P:AB", "&S:", "&P:", "&s:bc", "&p:AB", "&&i:abc", "abc"]


@pytest.mark.parametrize("ref", REFS)
def test_generated_code_agrees_with_match_value(ref):
    flt = app_filter({"k": ref})
    for value in VALUES:
        expected = match_value(value, ref)
        assert flt.evaluate(Message(application_properties={"k": value})) is expected, value


# --- the rabbitmq dialect ---------------------------------------------------------------------

@pytest.mark.parametrize("modifier", ["&i:", "&S:", "&P:"])
def test_rabbitmq_refuses_the_draft_modifiers(modifier):
    with pytest.raises(FilterError, match=modifier) as raised:
        app_filter({"k": modifier + "x"}, "rabbitmq")
    assert "RabbitMQ" in raised.value.problem
    with pytest.raises(FilterError, match=modifier):
        filtex.compile_filter(("amqp:properties-filter", {symbol("subject"): modifier + "x"}),
                              "rabbitmq")
    with pytest.raises(FilterError, match=modifier):   # nested in a described reference
        app_filter({"k": Described(symbol("d"), modifier + "x")}, "rabbitmq")
    assert app_filter({"k": modifier + "x"}).evaluate(Message()) is False   # amqp reads it


def test_rabbitmq_keeps_csd01_modifiers_and_literals():
    flt = app_filter({"k": "&p:ord", "j": "&s:ERS", "l": "&&i:x", "m": symbol("&i:y")},
                     "rabbitmq")
    message = Message(application_properties={"k": "orders", "j": "ORDERS", "l": "&i:x",
                                              "m": "&i:y"})
    assert flt.evaluate(message) is True
    assert app_filter({"k": "&p:ORD"}, "rabbitmq").evaluate(
        Message(application_properties={"k": "orders"})) is False
    with pytest.raises(FilterError, match="unknown string modifier"):
        app_filter({"k": "&x:a"}, "rabbitmq")
