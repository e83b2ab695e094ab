"""The library's front door: every public entry point answers a programming
error (an argument of the wrong type or shape) with a ``TypeError`` naming what
it accepts, and no position; a filter's definition (its text, a described
filter's value, a bound parameter's value) may be a remote client's, so
whatever it holds only ``FilterError`` leaves (tests/test_hostile.py)."""
from __future__ import annotations

import io
import subprocess
import sys

import pytest

import filtex
from filtex import FilterError, Limits, Message, Subscriptions
from filtex.dialects import DIALECTS
from filtex.names import DIALECT_NAMES

ACCEPTED_DIALECTS = "dialect is one of 'amqp', 'jms', 'rabbitmq'"


def programming_error(call, *words: str) -> TypeError:
    """``call()`` raises a TypeError (not a FilterError, which names a position)
    whose text holds every one of ``words``."""
    with pytest.raises(TypeError) as raised:
        call()
    assert not isinstance(raised.value, FilterError)
    assert "line 1, column 1" not in str(raised.value)
    for word in words:
        assert word in str(raised.value), (word, str(raised.value))
    return raised.value


# --- the public names ----------------------------------------------------------------------

def test_all_is_literal_and_every_name_resolves():
    assert len(set(filtex.__all__)) == len(filtex.__all__)
    assert set(filtex.__all__) == set(filtex._EXPORTS) | {"__version__"}
    for name in filtex.__all__:
        assert getattr(filtex, name) is not None, name
    assert filtex.NotAMessage is filtex.errors.NotAMessage
    assert issubclass(filtex.NotAMessage, TypeError)
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        filtex.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_the_dialect_literal_names_every_dialect():
    assert sorted(DIALECT_NAMES) == sorted(DIALECTS)
    assert set(filtex.Dialect.__args__) == set(DIALECTS)


def test_lazy_loading_is_kept():
    code = ("import sys, filtex; import filtex.filter; "
            "print(sorted(m for m in sys.modules if m.startswith('filtex')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert loaded.strip() == ("['filtex', 'filtex._version', 'filtex.errors', 'filtex.filter', "
                              "'filtex.names']")


# --- compiling ------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [123, b"a = 1", None, ["a = 1"]])
def test_compile_sql_text_of_another_type(text):
    programming_error(lambda: filtex.compile_sql(text),
                      "compile_sql takes the filter text as a str", f"not {type(text).__name__}")


@pytest.mark.parametrize("dialect", [None, 5, b"amqp", ["amqp"]])
def test_a_dialect_of_another_type(dialect):
    wrong = f"not {type(dialect).__name__}"
    programming_error(lambda: filtex.compile_sql("a = 1", dialect), ACCEPTED_DIALECTS, wrong)
    programming_error(lambda: filtex.compile_filter(("amqp:sql-filter", "a = 1"), dialect),
                      ACCEPTED_DIALECTS, wrong)
    programming_error(lambda: filtex.compile_filter_set({}, dialect), ACCEPTED_DIALECTS, wrong)
    programming_error(lambda: filtex.quote_identifier("k", dialect), ACCEPTED_DIALECTS, wrong)
    programming_error(lambda: Subscriptions(dialect=dialect), ACCEPTED_DIALECTS, wrong)
    if dialect is not None:   # add's None: the set's dialect
        programming_error(lambda: Subscriptions().add("s", "a = 1", dialect),
                          ACCEPTED_DIALECTS, wrong)


def test_an_unknown_dialect_name_is_a_filter_error_not_implemented():
    """As documented: an unknown name may come with a filter's definition."""
    for call in (lambda: filtex.compile_sql("a = 1", "sql92"),
                 lambda: filtex.compile_filter(("amqp:sql-filter", "a = 1"), "sql92"),
                 lambda: filtex.compile_filter_set({}, "sql92"),
                 lambda: filtex.quote_identifier("k", "sql92"),
                 lambda: Subscriptions(dialect="sql92")):
        with pytest.raises(FilterError) as raised:
            call()
        assert raised.value.condition == "amqp:not-implemented"
        assert "unknown SQL dialect 'sql92'" in raised.value.problem


@pytest.mark.parametrize("limits", ["x", {"max_depth": 3}, 5, Limits])
def test_limits_of_another_type(limits):
    wrong = f"not {type(limits).__name__}"
    for call in (lambda: filtex.compile_sql("a = 1", limits=limits),
                 lambda: filtex.compile_filter(("amqp:sql-filter", "a = 1"), limits=limits),
                 lambda: filtex.compile_filter_set({}, limits=limits),
                 lambda: Subscriptions(limits=limits)):
        programming_error(call, "limits is a filtex.Limits or None", wrong)


@pytest.mark.parametrize("parameters", [[("p", 1)], "p", 5])
def test_parameters_that_are_no_mapping(parameters):
    programming_error(lambda: filtex.compile_sql("a = @p", parameters=parameters),
                      "parameters is a mapping of names to values or None",
                      f"not {type(parameters).__name__}")


def test_a_described_value_of_any_type_is_still_the_filters_fault():
    for value in (123, None, b"x", ["a = 1"], object()):
        with pytest.raises(FilterError):
            filtex.compile_filter(value)
        with pytest.raises(FilterError):
            filtex.compile_filter(("amqp:sql-filter", value))
        if value is None:   # a null entry of a set acts as if absent (AMQP 3.5.8)
            assert filtex.compile_filter_set({"f": value}).matches(filtex.Message())
            continue
        with pytest.raises(FilterError, match="^filter f: "):   # the entry is named
            filtex.compile_filter_set({"f": value})
    with pytest.raises(FilterError, match="cannot be bound"):
        filtex.compile_sql("a = @p", parameters={"p": object()})


def test_a_compiled_filter_passed_again_checks_the_arguments_too():
    f = filtex.compile_sql("a = 1")
    assert filtex.compile_filter(f) is f
    programming_error(lambda: filtex.compile_filter(f, None), ACCEPTED_DIALECTS)


# --- Limits ---------------------------------------------------------------------------------

def test_limits_values():
    programming_error(lambda: Limits("x"), "Limits.max_length is a positive int", "not str")
    programming_error(lambda: Limits(max_depth=True), "Limits.max_depth", "not bool")
    programming_error(lambda: Limits(max_string=1.5), "a positive int or None", "not float")
    with pytest.raises(ValueError, match="Limits.max_length is a positive int, not 0"):
        Limits(max_length=0)
    programming_error(lambda: filtex.DEFAULT_LIMITS.replace(max_lenght=5),
                      "Limits has no limit 'max_lenght'", "max_length")
    assert filtex.DEFAULT_LIMITS.replace(max_string=None).max_string is None


# --- Subscriptions --------------------------------------------------------------------------

@pytest.mark.parametrize("filters, words", [
    (["a = 1"], "item 0 is a str"),
    ([("s", "a = 1"), ("t", "b = 2", "amqp")], "item 1 is a tuple of 3 items"),
    ("a = 1", "not str"),
    (5, "not int"),
])
def test_subscriptions_take_a_mapping_or_pairs(filters, words):
    programming_error(lambda: Subscriptions(filters),
                      "Subscriptions takes a mapping of names to filters or an iterable of "
                      "(name, filter) pairs", words)


def test_subscriptions_accept_both_shapes_and_check_names():
    by_map = Subscriptions({"a": "a = 1", "b": "b = 2"})
    by_pairs = Subscriptions(iter([("a", "a = 1"), ["b", "b = 2"]]))
    message = Message(application_properties={"a": 1, "b": 2})
    assert by_map.match(message) == by_pairs.match(message) == ["a", "b"]
    programming_error(lambda: Subscriptions({1: "a = 1"}), "named by a str", "not int")
    programming_error(lambda: by_map.remove(1), "named by a str", "not int")
    with pytest.raises(KeyError):
        by_map.remove("zz")
    with pytest.raises(FilterError):   # the filter's content: its fault
        by_map.add("c", 123)
    assert list(by_map) == ["a", "b"]


def test_subscriptions_refuse_what_is_no_message():
    subscriptions = Subscriptions({"a": "a = 1"})
    for call in (lambda: subscriptions.match({}), lambda: subscriptions.evaluate_all(3)):
        programming_error(call, "a filter evaluates a filtex.Message")


# --- messages and files ---------------------------------------------------------------------

def test_messages_and_views():
    programming_error(lambda: Message(header=5), "Message header must be a mapping", "not int")
    programming_error(lambda: filtex.view(5), "a filter evaluates a filtex.Message", "not int")
    f = filtex.compile_sql("a = 1")
    for call in (lambda: f.evaluate({}), lambda: f.outcome(5), lambda: f.explain(5)):
        error = programming_error(call, "a filter evaluates a filtex.Message")
        assert isinstance(error, filtex.NotAMessage)


def test_read_messages_checks_its_arguments_at_the_call():
    # refused when called, before anything is read (a generator would wait for next())
    programming_error(lambda: filtex.read_messages(5),
                      "a message source is a path, '-' or a binary file", "not int")
    programming_error(lambda: filtex.read_messages(io.BytesIO(b""), 5),
                      "format is one of jsonl, amqp or None")
    with pytest.raises(ValueError, match="format is one of jsonl, amqp or None, not 'xml'"):
        filtex.read_messages(io.BytesIO(b""), "xml")
    from filtex.files import read_records
    programming_error(lambda: read_records(io.BytesIO(b""), max_frame="big"), "max_frame")
    with pytest.raises(ValueError, match="max_frame is a positive int"):
        read_records(io.BytesIO(b""), max_frame=0)
    assert list(filtex.read_messages(io.BytesIO(b""))) == []


def test_quoting_and_typed_json():
    programming_error(lambda: filtex.quote_string(5), "quote_string takes a str", "not int")
    programming_error(lambda: filtex.quote_identifier(5), "quote_identifier takes a str")
    programming_error(lambda: filtex.value_from_json(1, max_depth="9"), "max_depth is an int")
    programming_error(lambda: filtex.value_from_json(1, symbol_keys=1), "symbol_keys is a bool")
    with pytest.raises(FilterError):   # the JSON itself is input: its fault
        filtex.message_from_json(5)
