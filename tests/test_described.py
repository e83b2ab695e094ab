"""Described filters: every matching rule, every filter type, every input form,
filter sets from proton's Data, descriptors and capabilities."""
from __future__ import annotations

import pickle
import uuid
from decimal import Decimal

import pytest
from proton import (Array, Connection, Data, Described, char, float32, int32, symbol, timestamp,
                    ubyte, uint, ulong)

import filtex
from filtex import FilterError, Message
from filtex.described.descriptors import FILTER_TYPES, lookup, parse_code
from filtex.runtime.property import match_value
from filtex.runtime.topic import compile_topic
from filtex.runtime.values import encode_decimal


def app(**props):
    return Message(application_properties=props)


def app_filter(value):
    return filtex.compile_filter((symbol("amqp:application-properties-filter"), value))


# --- 4.1 value matching ------------------------------------------------------------------

@pytest.mark.parametrize("value, ref, expected", [
    ("x", None, True), (None, None, True), (5, None, True),             # null reference
    ("blue", "blue", True), ("blue", "Blue", False),                    # case-sensitive
    (symbol("blue"), "blue", True), ("blue", symbol("blue"), True),     # string/symbol
    (char("b"), "b", True),
    ("test", "&p:te", True), ("test", "&p:st", False),                  # prefix
    ("test", "&s:st", True), ("test", "&s:te", False),                  # suffix
    ("&x", "&&x", True), ("x", "&&x", False),                           # escape
    ("&p:x", symbol("&p:x"), True), ("px", symbol("&p:x"), False),      # symbols literal
    (5, ubyte(5), True), (ulong(5), -5, False), (int32(-5), -5, True),  # integers by value
    (5.0, 5, True), (float32(2.5), 2.5, True), (5, 5.0, True),          # via doubles
    (float32(0.1), 0.1, False), (float32(0.1), float32(0.1), True),     # float32 as on the wire
    (float32(0.1), 0.10000000149011612, True),
    (5.5, 5, False), (float("nan"), float("nan"), False),
    ("5", 5, False), (5, "5", False), (True, 1, False), (1, True, False),  # types differ
    (True, True, True), (False, True, False),
    (encode_decimal("1.50", 64), Decimal("1.5"), True), (Decimal("1.5"), 1.5, False),
    (timestamp(5), timestamp(5), True), (5, timestamp(5), False),
    (b"\x01", b"\x01", True), (uuid.UUID(int=1), uuid.UUID(int=1), True),
    ({"a": 1, "b": 2}, {"a": 1}, True), ({"a": 1}, {"a": 1, "b": None}, True),
    ({"a": 1}, {"a": 1, "b": 2}, False), ({"a": "test"}, {"a": "&p:t"}, True),
    ([1, 2, 3], [1, 2], True), ([1], [1, 2], False), ([2, 1], [1, 2], False),
    (Array(None, Data.INT, 1, 2), Array(None, Data.INT, 1, 2), True),
    (Array(None, Data.INT, 1, 2, 3), Array(None, Data.INT, 1, 2), False),
    (Described(symbol("d"), [1]), Described(symbol("d"), [1]), True),
    (Described(symbol("e"), [1]), Described(symbol("d"), [1]), False),
    ([1], {"a": 1}, False), ({"a": 1}, [1], False),
])
def test_matching_rules(value, ref, expected):
    assert match_value(value, ref) is expected
    if not isinstance(ref, (dict, list, Array, Described)) and ref is not None:
        # The generated inline code agrees with the rule function.
        assert app_filter({"k": ref}).evaluate(app(k=value)) is expected


def test_float32_is_its_single_precision_value_in_sql_too():
    # proton decodes float 0.1 as float32(0.10000000149011612); a hand-built
    # float32(0.1) must read the same, in SQL as in property filters.
    message = app(n=float32(0.1))
    assert filtex.compile_sql("n = 0.1").evaluate(message) is False
    assert filtex.compile_sql("n = 0.10000000149011612").evaluate(message) is True
    assert filtex.compile_sql("n * 10 > 1").evaluate(message) is True
    assert filtex.compile_sql("n = n").evaluate(message) is True
    assert filtex.value_from_json({"@type": "float", "value": 0.1}) == 0.10000000149011612


def test_null_reference_matches_absent_entry_and_defaults_apply():
    assert app_filter({"k": None}).evaluate(app()) is True
    header = filtex.compile_filter(("amqp:header-filter", {"priority": ubyte(4),
                                                           "durable": False}))
    assert header.evaluate(Message()) is True
    assert header.evaluate(Message(header={"priority": ubyte(4), "durable": None})) is True
    assert header.evaluate(Message(header={"priority": ubyte(5)})) is False


def test_every_section_filter():
    m = Message(header={"ttl": uint(10)}, delivery_annotations={symbol("x-d"): 1},
                message_annotations={symbol("x-m"): "v"}, properties={"subject": "s"},
                application_properties={"a": 1}, footer={symbol("x-f"): b"\x00"})
    for name, value in [("amqp:header-filter", {"ttl": uint(10)}),
                        ("amqp:delivery-annotations-filter", {symbol("x-d"): 1}),
                        ("amqp:message-annotations-filter", {symbol("x-m"): "&p:v"}),
                        ("amqp:properties-filter", {"subject": "s"}),
                        ("amqp:application-properties-filter", {"a": 1}),
                        ("amqp:footer-filter", {symbol("x-f"): b"\x00"})]:
        assert filtex.compile_filter((name, value)).evaluate(m) is True, name
        assert filtex.compile_filter((name, value)).evaluate(Message()) is False, name


@pytest.mark.parametrize("name, value, words", [
    ("amqp:properties-filter", {"colour": "x"}, "not a field of the properties"),
    ("amqp:properties-filter", {"group-id": uint(3)}, "cannot hold"),
    ("amqp:header-filter", {"priority": 256}, "cannot hold"),
    ("amqp:header-filter", {"durable": "yes"}, "cannot hold"),
    ("amqp:application-properties-filter", {symbol("k"): 1}, "keys are strings"),
    ("amqp:application-properties-filter", {"k": [1]}, "simple types"),
    ("amqp:application-properties-filter", {"k": "&x:1"}, "unknown string modifier"),
    ("amqp:application-properties-filter", ["k"], "is a map"),
    ("amqp:any-filter", [], "at least one"),
    ("apache.org:not-filter:list", [("amqp:true-filter", True)] * 2, "exactly one"),
    ("apache.org:legacy-amqp-headers-binding:map", {"x-match": "some"}, "x-match"),
    ("amqp:true-filter", "yes", "boolean"),
    ("amqp:sql-filter", 5, "holds a string"),
])
def test_definitional_errors(name, value, words):
    with pytest.raises(FilterError) as raised:
        filtex.compile_filter((name, value))
    assert words in raised.value.problem
    assert raised.value.condition == "amqp:invalid-field"


def test_unknown_descriptor_is_not_implemented_and_named():
    for descriptor in (symbol("acme:filter"), ulong(0x12345678_00000001)):
        with pytest.raises(FilterError) as raised:
            filtex.compile_filter((descriptor, "x"))
        assert raised.value.condition == "amqp:not-implemented"
        assert "acme:filter" in raised.value.problem or "0x12345678:0x00000001" in \
            raised.value.problem


def test_registry_codes_and_capabilities():
    assert lookup(ulong(parse_code("0x0000468C:0x00000004"))).name == \
        "apache.org:selector-filter:string"
    assert lookup("apache.org:jms-selector-filter:string") is lookup(
        "apache.org:selector-filter:string")
    assert lookup("apache.org:jms-no-local-filter:list").code == 0x0000468C_00000003
    assert lookup(0x00000000_00000120).name == "amqp:sql-filter"
    assert len({t.code for t in FILTER_TYPES}) == len(FILTER_TYPES)
    assert set(filtex.capabilities()) == {
        "AMQP_FILTEX_SQL_V1_0", "AMQP_FILTEX_PROP_V1_0", "AMQP_FILTEX_GROUP_V1_0",
        "APACHE.ORG:LEGACY_AMQP_EXCHANGE_FILTERS", "APACHE.ORG:JMS_FILTERS",
        "APACHE.ORG:LOGIC_FILTERS", "APACHE.ORG:SELECTOR", "APACHE.ORG:NO_LOCAL"}
    assert all(type(c) is symbol for c in filtex.capabilities())


# --- groups --------------------------------------------------------------------------------

T, F = ("amqp:true-filter", True), ("amqp:false-filter", False)
UNKNOWN = ("amqp:sql-filter", "missing = 1")
FAILS = ("amqp:sql-filter", "s > 1")


@pytest.mark.parametrize("group, members, expected", [
    ("amqp:all-filter", [T, T], True), ("amqp:all-filter", [T, F], False),
    ("amqp:all-filter", [T, UNKNOWN], None), ("amqp:all-filter", [F, UNKNOWN], False),
    ("amqp:any-filter", [F, T], True), ("amqp:any-filter", [F, F], False),
    ("amqp:any-filter", [T, UNKNOWN], True), ("amqp:any-filter", [F, UNKNOWN], None),
    ("amqp:not-filter", [F, F], True), ("amqp:not-filter", [F, T], False),
    ("amqp:not-filter", [UNKNOWN], None),
    ("apache.org:and-filter:list", [T, F], False), ("apache.org:or-filter:list", [F, T], True),
    ("apache.org:not-filter:list", [F], True),
    ("amqp:any-filter", [T, FAILS], None), ("amqp:all-filter", [F, FAILS], None),
])
def test_group_logic(group, members, expected):
    flt = filtex.compile_filter((group, members))
    assert flt.evaluate(app(s="text")) is expected


def test_group_failure_reports_first_failing_member():
    flt = filtex.compile_filter(("amqp:any-filter", [T, FAILS, ("amqp:sql-filter", "s + 1 = 2")]))
    outcome = flt.outcome(app(s="text"))
    assert outcome.result is None
    assert outcome.reason == "cannot compare string with integer"


def test_nesting_depth_is_limited():
    flt = T
    for _ in range(20):
        flt = ("amqp:not-filter", [flt])
    assert filtex.compile_filter(flt).evaluate(Message()) is True
    for _ in range(20):
        flt = ("amqp:not-filter", [flt])
    with pytest.raises(FilterError):
        filtex.compile_filter(flt)


# --- Apache filters ------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, subject, expected", [
    ("*.stock.#", "usd.stock", True), ("*.stock.#", "eur.stock.db", True),
    ("*.stock.#", "stock.nasdaq", False), ("#", None, True), ("a", None, False),
    ("#", "", True), ("a.#.b", "a.b", True), ("a.#.b", "a.x.y.b", True),
    ("a.#.b", "a.x.y.c", False), ("#.a.#", "x.a.y", True), ("#.a.#", "x.b.y", False),
    ("*", "a", True), ("*", "a.b", False), ("*.*", "a.b", True), ("#.#", "a.b.c", True),
    ("a.*.#.c.#", "a.b.c", True), ("a.*.#.c.#", "a.c", False),
])
def test_topic_binding(pattern, subject, expected):
    assert compile_topic(pattern)(subject) is expected
    flt = filtex.compile_filter(("apache.org:legacy-amqp-topic-binding:string", pattern))
    props = {} if subject is None else {"subject": subject}
    assert flt.evaluate(Message(properties=props)) is expected


def test_topic_binding_is_linear():
    match = compile_topic("#.a.#.a.#.a.#.a.#.b")
    assert match(".".join(["a"] * 20000)) is False


def test_direct_and_headers_bindings():
    direct = filtex.compile_filter(("apache.org:legacy-amqp-direct-binding:string", "orders"))
    assert direct.evaluate(Message(properties={"subject": "orders"})) is True
    assert direct.evaluate(Message(properties={"subject": "orders.eu"})) is False
    headers = "apache.org:legacy-amqp-headers-binding:map"
    any_ = filtex.compile_filter((headers, {"x-match": symbol("any"), "a": 1, "b": "x"}))
    all_ = filtex.compile_filter((headers, {"x-match": symbol("all"), "a": 1, "b": None,
                                            "x-ignored": 5}))
    assert any_.evaluate(app(a=2, b="x")) is True
    assert any_.evaluate(app(a=2, b=symbol("x"))) is True
    assert any_.evaluate(app(a="1")) is False
    assert all_.evaluate(app(a=ubyte(1), b=None)) is True
    assert all_.evaluate(app(a=1)) is False          # b must be present
    assert filtex.compile_filter((headers, {"x-match": "any"})).evaluate(app()) is False
    assert filtex.compile_filter((headers, {})).evaluate(app()) is True


def test_no_local_takes_the_receiving_connection():
    flt = filtex.compile_filter(("apache.org:jms-no-local-filter:list", []))
    mine, other = Message(connection="c1"), Message(connection="c2")
    assert flt.evaluate(mine, receiving_connection="c1") is False
    assert flt.evaluate(other, receiving_connection="c1") is True
    assert flt.matches(other, receiving_connection="c1") is True
    assert flt.evaluate(Message(), receiving_connection="c1") is True
    outcome = flt.outcome(mine)
    assert outcome.result is None and "receiving connection" in outcome.reason


# --- forms, sets, proton ------------------------------------------------------------------------------

def test_input_forms_agree():
    forms = [Described(symbol("amqp:application-properties-filter"), {"k": "v"}),
             (symbol("amqp:application-properties-filter"), {"k": "v"}),
             (ulong(0x174), {"k": "v"}),
             {"described": "amqp:application-properties-filter", "value": {"k": "v"}},
             {"code": "0x00000000:0x00000174", "value": {"k": "v"}}]
    for form in forms:
        flt = filtex.compile_filter(form)
        assert flt.evaluate(app(k="v")) is True and flt.evaluate(app(k="w")) is False


def test_filter_set_from_proton_data_round_trip():
    """Build a source filter set with proton, encode it, decode it, compile it, run it."""
    terminus_data = Data()
    terminus_data.put_map()
    terminus_data.enter()
    for name, descriptor, value in [
            ("sql", "amqp:sql-filter", "color = 'blue' AND h.priority > 4"),
            ("props", "amqp:properties-filter", {symbol("subject"): "&p:order."}),
            ("topic", 0x0000468C_00000001, "order.#")]:
        terminus_data.put_symbol(symbol(name))
        terminus_data.put_described()
        terminus_data.enter()
        if isinstance(descriptor, int):
            terminus_data.put_ulong(descriptor)
        else:
            terminus_data.put_symbol(symbol(descriptor))
        terminus_data.put_object(value)
        terminus_data.exit()
    terminus_data.exit()
    wire = terminus_data.encode()
    decoded = Data()
    decoded.decode(wire)
    flt = filtex.compile_filter_set(decoded)
    hit = Message(header={"priority": ubyte(7)}, properties={"subject": "order.created"},
                  application_properties={"color": "blue"})
    miss = Message(header={"priority": ubyte(7)}, properties={"subject": "invoice.sent"},
                   application_properties={"color": "blue"})
    assert flt.evaluate(hit) is True
    assert flt.evaluate(miss) is False
    # And straight from a link's source terminus, as an attach carries it.
    receiver = Connection().session().receiver("r")
    receiver.source.filter.decode(wire)
    from_link = filtex.compile_filter_set(receiver.source)
    assert from_link.evaluate(hit) is True and from_link.evaluate(miss) is False
    assert filtex.compile_filter_set(receiver.source.filter).evaluate(miss) is False


def test_empty_filter_set_passes_everything_and_sets_pickle():
    assert filtex.compile_filter_set({}).evaluate(Message()) is True
    flt = filtex.compile_filter_set({"a": ("amqp:sql-filter", "x = 1"),
                                     "b": ("amqp:application-properties-filter", {"y": 2})})
    again = pickle.loads(pickle.dumps(flt))
    assert again.evaluate(app(x=1, y=2)) is True and again.evaluate(app(x=1, y=3)) is False
    single = pickle.loads(pickle.dumps(filtex.compile_filter(("amqp:any-filter", [T, F]))))
    assert single.evaluate(Message()) is True


def test_groups_and_sets_are_one_function_over_one_tree():
    """Described filters lower into the tree SQL filters check into: a group or a
    set is one generated function that calls no member's function, and its tree
    keeps each SQL member's dialect in a Scope, under a root Scope of amqp (the
    rules of the described filter types' own nodes)."""
    from filtex.tree import ast
    group = filtex.compile_filter(("amqp:any-filter", [
        ("amqp:sql-filter", "a = 1"), ("apache.org:selector-filter:string", "b > 2"),
        ("amqp:application-properties-filter", {"c": "&p:x"}),
        ("apache.org:legacy-amqp-topic-binding:string", "a.#")]))
    assert group.source.count("def evaluate") == 1 and "_member" not in group.source
    assert isinstance(group.tree, ast.Scope) and isinstance(group.tree.body, ast.Or)
    scopes = [node for node in ast.walk(group.tree) if isinstance(node, ast.Scope)]
    assert [scope.dialect.name for scope in scopes] == ["amqp", "amqp", "jms"]
    jms_group = filtex.compile_filter(("amqp:all-filter", [("amqp:true-filter", None)]), "jms")
    assert jms_group.dialect == "jms" and jms_group.tree.dialect.name == "amqp"
    assert "_jms_compare(" in group.source   # the selector keeps JMS's comparison
    message = Message(application_properties={"a": 2, "b": 3})
    assert group.evaluate(message) is True
    assert filtex.compile_sql("a = 1").tree.dialect.name == "amqp"
    filter_set = filtex.compile_filter_set({"s": ("amqp:sql-filter", "a = 2"),
                                            "p": ("amqp:application-properties-filter",
                                                  {"b": 3})})
    assert filter_set.source.count("def evaluate") == 1 and filter_set.evaluate(message) is True
    assert filter_set.source == filtex.compile_filter_set(
        {"s": ("amqp:sql-filter", "a = 2"),
         "p": ("amqp:application-properties-filter", {"b": 3})}).source   # deterministic
