"""Resource limits (filtex.Limits): each one refuses with
``amqp:resource-limit-exceeded`` naming the limit and its value, as early as it
can, in every engine; the defaults refuse no realistic filter."""
from __future__ import annotations

import pickle

import pytest
from proton import Described, symbol

import filtex
from filtex import Limits, Message

LIMIT = "amqp:resource-limit-exceeded"


def refused(build, name: str, value: int):
    with pytest.raises(filtex.FilterError) as raised:
        build()
    error = raised.value
    assert error.condition == LIMIT, error
    assert f"limit {name} = {value:,}" in error.problem, error.problem
    assert error.line >= 1 and error.column >= 1
    return error


def group(depth: int, width: int):
    if depth == 0:
        return ("amqp:sql-filter", "a = 1")
    return ("amqp:all-filter", [group(depth - 1, width) for _ in range(width)])


SMALL = Limits(max_length=100, max_tokens=20, max_depth=5, max_nodes=30, max_in_items=4,
               max_group_members=3, max_group_depth=2, max_group_filters=6, max_set_entries=2,
               max_property_entries=3, max_topic_length=10, max_value_depth=3)

SQL_CASES = [
    ("max_length", "a = '" + "x" * 200 + "'"),
    ("max_tokens", " + ".join(["1"] * 15) + " = a"),
    ("max_depth", "NOT " * 6 + "a = 1"),
    ("max_nodes", " OR ".join(["a = 1"] * 12)),
    ("max_in_items", "a IN (1, 2, 3, 4, 5)"),
]


@pytest.mark.parametrize("name, text", SQL_CASES, ids=[c[0] for c in SQL_CASES])
def test_each_sql_limit_is_named(engine, name, text):
    only = Limits().replace(**{name: getattr(SMALL, name)})   # just this limit tightened
    refused(lambda: engine.compile_sql(text, limits=only), name, getattr(SMALL, name))


DESCRIBED_CASES = [
    ("max_group_members", lambda e: e.compile_filter(group(1, 4), limits=SMALL)),
    ("max_group_depth", lambda e: e.compile_filter(group(3, 1), limits=SMALL)),
    ("max_group_filters", lambda e: e.compile_filter(group(2, 3), limits=SMALL)),
    ("max_set_entries", lambda e: e.compile_filter_set(
        {f"f{i}": ("amqp:true-filter", None) for i in range(3)}, limits=SMALL)),
    ("max_property_entries", lambda e: e.compile_filter(
        ("amqp:application-properties-filter", {f"k{i}": i for i in range(4)}), limits=SMALL)),
    ("max_property_entries", lambda e: e.compile_filter(
        ("apache.org:legacy-amqp-headers-binding:map", {f"k{i}": i for i in range(4)}),
        limits=SMALL)),
    ("max_topic_length", lambda e: e.compile_filter(
        ("apache.org:legacy-amqp-topic-binding:string", "a.b.c.d.e.f.g"), limits=SMALL)),
    ("max_value_depth", lambda e: e.compile_filter(
        ("amqp:application-properties-filter", {"k": [[[[1]]]]}), limits=SMALL)),
    ("max_nodes", lambda e: e.compile_filter(
        ("amqp:message-annotations-filter", {symbol("k"): list(range(40))}), limits=SMALL)),
    ("max_length", lambda e: e.compile_filter(("amqp:sql-filter", "a = " + "1" * 200),
                                              limits=SMALL)),
]


@pytest.mark.parametrize("name, build", DESCRIBED_CASES, ids=[c[0] for c in DESCRIBED_CASES])
def test_each_described_limit_is_named(engine, name, build):
    refused(lambda: build(engine), name, getattr(SMALL, name))


def test_group_trees_are_limited_in_total_not_only_per_level():
    # 16 x 16 x 16: every level within the members limit, the tree past the total
    refused(lambda: filtex.compile_filter(group(3, 16)), "max_group_filters", 4096)
    assert filtex.compile_filter(group(2, 16)).evaluate(Message(application_properties={"a": 1}))


def test_defaults_accept_realistic_filters():
    customers = ", ".join(str(i) for i in range(2000))
    text = (f"region IN ('EU', 'US') AND customer_id IN ({customers}) AND "
            + " AND ".join(f"p{i} > {i}" for i in range(200)))
    assert len(text) > 4096 * 3
    flt = filtex.compile_sql(text)
    message = Message(application_properties={"region": "EU", "customer_id": 1999,
                                              **{f"p{i}": i + 1 for i in range(200)}})
    assert flt.evaluate(message) is True
    selector = " OR ".join(f"(JMSType = 't{i}' AND JMSPriority > 3)" for i in range(300))
    assert filtex.compile_sql(selector, "jms").evaluate(Message()) is None
    assert filtex.compile_sql(selector, "jms").evaluate(
        Message(properties={"subject": "t299"})) is True


def test_rabbitmq_keeps_its_exact_limits_whatever_the_operator_allows():
    generous = Limits(max_length=1_000_000, max_tokens=1_000_000)
    refused(lambda: filtex.compile_sql("x" * 4097, "rabbitmq", limits=generous),
            "rabbitmq max_length", 4096)
    refused(lambda: filtex.compile_sql(" OR ".join(["a = 1"] * 51), "rabbitmq",
                                       limits=generous), "rabbitmq max_tokens", 200)
    filtex.compile_sql("x" * 4096, "rabbitmq")
    # a stricter operator limit wins over RabbitMQ's own
    refused(lambda: filtex.compile_sql("a = 1 OR b = 2", "rabbitmq",
                                       limits=Limits(max_tokens=5)), "max_tokens", 5)


def test_tokens_are_counted_while_lexing():
    # an error that only the end of the text shows is never reached: the
    # token limit refuses the text first
    text = "a = 1" + " OR a = 1" * 30 + " 'unterminated"
    error = refused(lambda: filtex.compile_sql(text, limits=Limits(max_tokens=20)),
                    "max_tokens", 20)
    assert error.column < len(text) // 2


def test_nodes_and_depth_are_counted_while_parsing():
    limits = Limits(max_nodes=30, max_depth=5)
    text = " OR ".join(["a = 1"] * 12) + " OR )"   # a syntax error at the very end
    refused(lambda: filtex.compile_sql(text, limits=limits), "max_nodes", 30)
    text = "NOT " * 6 + "a = 1 )"
    refused(lambda: filtex.compile_sql(text, limits=limits), "max_depth", 5)


def test_length_is_checked_before_anything_is_read():
    huge = "a = '" + "x" * 2_000_000   # unterminated: never lexed
    refused(lambda: filtex.compile_sql(huge), "max_length", 65_536)


def test_limits_are_validated():
    with pytest.raises(ValueError):
        Limits(max_depth=0)
    with pytest.raises(TypeError):
        Limits(max_tokens=True)   # type: ignore[arg-type]
    with pytest.raises(TypeError, match="limits is a filtex.Limits or None, not dict"):
        filtex.compile_sql("a = 1", limits={"max_depth": 3})  # type: ignore[arg-type]
    assert Limits(max_string=None).max_string is None
    assert filtex.DEFAULT_LIMITS == Limits()


def test_limits_key_the_cache_and_survive_pickling():
    text = " OR ".join(["a = 1"] * 12)
    assert filtex.compile_sql(text).evaluate(Message()) is None
    refused(lambda: filtex.compile_sql(text, limits=Limits(max_nodes=30)), "max_nodes", 30)
    limits = Limits(max_string=10)
    flt = filtex.compile_sql("a + a = 'xxxxxxxxxxxx'", limits=limits)
    copy = pickle.loads(pickle.dumps(flt))
    assert copy.options["limits"] == limits
    long_a = Message(application_properties={"a": "xxxxxx"})
    assert copy.outcome(long_a).result is None
    assert "max_string" in copy.outcome(long_a).reason
    group_filter = filtex.compile_filter(Described(symbol("amqp:any-filter"),
                                                   [("amqp:sql-filter", "a = 1")]),
                                         limits=limits)
    assert pickle.loads(pickle.dumps(group_filter)).options["limits"] == limits


@pytest.mark.parametrize("dialect, text, expected", [
    ("amqp", "a + a = 'x'", None), ("amqp", "LOWER(a + a) = 'x'", None),
    ("jms", "a + a = 'x'", None), ("amqp", "LEFT(a + a, 1) = 'x'", None),
])
def test_max_string_bounds_computed_strings(engine, dialect, text, expected):
    limits = Limits(max_string=100)
    flt = engine.compile_sql(text, dialect, limits=limits)
    message = Message(application_properties={"a": "x" * 60})
    assert engine.evaluate(flt, [message]) == [expected]
    outcome = flt.outcome(message)
    if dialect == "amqp":
        assert "longer than 100 characters (limit max_string)" in outcome.reason
    else:
        assert outcome.reason == "no value: a + a is NULL"   # NULL in jms, not a failure
    unbounded = engine.compile_sql(text, dialect, limits=Limits(max_string=None))
    assert engine.evaluate(unbounded, [message])[0] is not None
    short = Message(application_properties={"a": "x"})
    assert engine.evaluate(flt, [short])[0] in (True, False)
