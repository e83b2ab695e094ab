"""Growth ratios: compiling is linear in the filter text right up to the limits,
and evaluating is linear in the message's values, for every stage, operator
and function. Each test times size n and 10n in the same run and bounds the
ratio (linear is about 10, quadratic about 100), so a quadratic regression
fails CI without asserting absolute times on a shared machine."""
from __future__ import annotations

import pytest

import filtex
from filtex import Limits, Message
from timing import growth

pytestmark = pytest.mark.slow
LINEAR = 30          # a ratio a linear operation stays under, noise included
BIG = Limits(max_length=650_000, max_tokens=200_000, max_nodes=100_000, max_in_items=50_000)


def ratio(make, run, n: int) -> float:
    """time(run(make(10 n))) / time(run(make(n))), best of several repeats."""
    def operation(size: int):
        made = make(size)
        return lambda: run(made)
    return growth(operation, n)


# --- compiling ---------------------------------------------------------------------------------

def compile_fresh(dialect: str, limits: Limits = BIG):
    def run(text: str):
        filtex.cache_clear()
        try:
            filtex.compile_sql(text, dialect, limits=limits)
        except filtex.FilterError:
            pass   # refusing must be linear too
    return run


COMPILE_SHAPES = {
    # name: (dialect, text of size ~n)
    "or-chain": ("amqp", lambda n: " OR ".join(f"a{i} = {i}" for i in range(n // 10))),
    "and-chain-jms": ("jms", lambda n: " AND ".join(f"a{i} <> 'x'" for i in range(n // 12))),
    "in-list": ("amqp", lambda n: "a IN (" + ", ".join(str(i) for i in range(n // 6)) + ")"),
    "in-strings": ("rabbitmq", lambda n: "a IN (" + ",".join(f"'{i}'" for i in range(n // 8))
                   + ")"),
    "string": ("amqp", lambda n: "a = '" + "x''y" * (n // 4) + "'"),
    "unterminated-string": ("amqp", lambda n: "a = '" + "x" * n),
    "identifier": ("amqp", lambda n: "a" * n + " = 1"),
    "delimited": ("amqp", lambda n: "[" + "a]]b" * (n // 4) + "] = 1"),
    "binary": ("amqp", lambda n: "a = 0x" + "0A" * (n // 2)),
    "minus-run": ("amqp", lambda n: "a = " + "-" * n + "1"),
    "minus-run-jms": ("jms", lambda n: "a = " + "-" * n + "1"),
    "comment-openers-jms": ("jms", lambda n: "a = 1 " + "/*" * (n // 2)),
    "line-comments-jms": ("jms", lambda n: "a = 1 " + "-- c\n" * (n // 5)),
    "parens": ("amqp", lambda n: "(" * (n // 2) + "a" + ")" * (n // 2)),
    "not-chain": ("amqp", lambda n: "NOT " * (n // 4) + "a"),
    "whitespace": ("amqp", lambda n: "a" + " " * n + "= 1"),
    "arith-chain": ("amqp", lambda n: " + ".join(["a"] * (n // 4)) + " > 1"),
    "syntax-error-at-end": ("amqp", lambda n: " AND ".join(["a = 1"] * (n // 10)) + " AND )"),
}


@pytest.mark.parametrize("shape", sorted(COMPILE_SHAPES))
def test_compiling_is_linear_up_to_the_limits(shape):
    dialect, make = COMPILE_SHAPES[shape]
    found = ratio(make, compile_fresh(dialect), 6_000)
    assert found < LINEAR, (shape, found)


def test_default_limits_refuse_in_linear_time():
    run = compile_fresh("amqp", filtex.DEFAULT_LIMITS)
    assert ratio(lambda n: " OR ".join(["a = 1"] * n), run, 20_000) < LINEAR
    assert ratio(lambda n: "a IN (" + ",".join(["1"] * n) + ")", run, 20_000) < LINEAR


def test_described_filters_compile_linearly():
    def prop(n):
        return ("amqp:application-properties-filter", {f"k{i}": f"&p:v{i}" for i in range(n)})

    def headers(n):
        return ("apache.org:legacy-amqp-headers-binding:map", {f"k{i}": i for i in range(n)})

    def group(n):
        return ("amqp:any-filter", [("amqp:sql-filter", f"a = {i}") for i in range(n)])

    limits = Limits(max_property_entries=10_000, max_group_members=10_000,
                    max_group_filters=10_000, max_nodes=100_000)

    def run(spec):
        filtex.cache_clear()
        filtex.compile_filter(spec, limits=limits)

    for make, n in ((prop, 300), (headers, 300), (group, 60)):
        assert ratio(make, run, n) < LINEAR, make.__name__


# --- evaluating --------------------------------------------------------------------------------

def evaluate_on(engine, text: str, dialect: str = "amqp", limits: Limits | None = None):
    flt = engine.compile_sql(text, dialect, limits=limits)

    def run(message):
        engine.evaluate(flt, [message])
    return run


def app(**values) -> Message:
    return Message(application_properties=values)


EVAL_CASES = {
    # name: (dialect, filter, message of size ~n)
    "like-prefix": ("amqp", "a LIKE 'x%'", lambda n: app(a="y" * n)),
    "like-contains": ("amqp", "a LIKE '%xyz%'", lambda n: app(a="xy" * (n // 2))),
    "like-underscores": ("amqp", "a LIKE '%a_a_a_a_a_a_a_a_b%'", lambda n: app(a="a" * n)),
    "like-long-segment": ("amqp", "a LIKE '%" + "a_" * 200 + "b%'", lambda n: app(a="a" * n)),
    "like-many-segments": ("amqp", "a LIKE '%a%b%a%b%c'", lambda n: app(a="ab" * (n // 2))),
    "like-escape": ("jms", "a LIKE '%!%x!_%' ESCAPE '!'", lambda n: app(a="%x" * (n // 2))),
    "like-computed": ("amqp", "a LIKE b", lambda n: app(a="a" * n, b="%" + "a_" * 100 + "b%")),
    "like-bytes-rabbitmq": ("rabbitmq", "a LIKE '%a_b%'", lambda n: app(a=b"a" * n)),
    "not-like": ("amqp", "a NOT LIKE '%a_c%'", lambda n: app(a="ab" * (n // 2))),
    "in-strings": ("amqp", "a IN ('x', 'y', 'z')", lambda n: app(a="x" * n)),
    "equal-strings": ("amqp", "a = b", lambda n: app(a="x" * n, b="x" * n)),
    "order-strings-jms": ("jms", "a < b", lambda n: app(a="\u00e9" * n, b="\u00e9" * n + "a")),
    "order-strings-rabbitmq": ("rabbitmq", "a < b", lambda n: app(a="x" * n, b=b"x" * n)),
    "lower-tr": ("amqp", "LOWER(a, 'tr') = 'x'", lambda n: app(a="I\u0307" * (n // 2))),
    "lower-lt": ("amqp", "LOWER(a, 'lt') = 'x'", lambda n: app(a="I" + "\u0316" * n)),
    "upper-lt": ("amqp", "UPPER(a, 'lt') = 'x'", lambda n: app(a="i\u0307" * (n // 2))),
    "lower-computed-tag": ("amqp", "LOWER(a, t) = 'x'", lambda n: app(a="I" * n, t="lt")),
    "malformed-tag": ("amqp", "LOWER(a, t) = 'x'", lambda n: app(a="I", t="x-" * (n // 2))),
    "substring": ("amqp", "SUBSTRING(a, 2, 5) = 'x'", lambda n: app(a="y" * n)),
    "left-right": ("amqp", "LEFT(a, 3) = RIGHT(a, 3)", lambda n: app(a="y" * n)),
    "concatenation": ("amqp", "a + a + a + a = b", lambda n: app(a="y" * n, b="z")),
    "concatenation-jms": ("jms", "a + b + a = 'x'", lambda n: app(a="y" * n, b=7)),
    "timestamp-string": ("amqp", "p.creation_time > a",
                         lambda n: Message(properties={"creation-time": filtex_ts(0)},
                                           application_properties={"a": "P" + "1" * n + "D"})),
    "date": ("amqp", "DATE(a) > 0", lambda n: app(a="2" * n)),
    "nested-references": ("amqp", "a.k.k.k.k[0] = 1", lambda n: app(a=nested(n))),
    "map-lookup": ("amqp", "a.[x-y] = 1", lambda n: app(a={str(i): i for i in range(n // 10)})),
    "in-list-of-fields": ("rabbitmq", "a IN (b, c, 'x')", lambda n: app(a="q" * n, b="r" * n,
                                                                        c="s" * n)),
}


def filtex_ts(value: int):
    from proton import timestamp
    return timestamp(value)


def nested(n: int) -> dict:
    return {"k": {"k": {"k": {"k": list(range(n))}}}}


@pytest.mark.parametrize("case", sorted(EVAL_CASES))
def test_evaluating_is_linear_in_the_message(engine, case):
    dialect, text, make = EVAL_CASES[case]
    found = ratio(make, evaluate_on(engine, text, dialect, Limits(max_string=None)), 20_000)
    assert found < LINEAR, (case, found)


def test_topic_bindings_are_linear_in_the_subject(engine):
    for pattern in ("#.a.b.#", "#." + "*.a." * 50 + "b.#", "*.#.x"):
        flt = engine.compile_filter(("apache.org:legacy-amqp-topic-binding:string", pattern))

        def run(message):
            engine.evaluate(flt, [message])
        found = ratio(lambda n: Message(properties={"subject": "a." * n}), run, 10_000)
        assert found < LINEAR, (pattern, found)


def test_property_filters_are_linear_in_the_message(engine):
    from proton import symbol
    flt = engine.compile_filter_set({
        "app": ("amqp:application-properties-filter", {"a": "&p:xyz", "b": "&s:xyz"}),
        "annotations": ("amqp:message-annotations-filter",
                        {symbol("c"): [1, "&p:q"], symbol("d"): {"k": "&s:q"}})})

    def message(n):
        return Message(application_properties={"a": "xyz" + "q" * n, "b": "q" * n + "xyz"},
                       message_annotations={symbol("c"): [1, "q" * n],
                                            symbol("d"): {"k": "q" * n}})

    def run(message):
        assert engine.evaluate(flt, [message]) == [True]
    found = ratio(message, run, 50_000)
    assert found < LINEAR, found
