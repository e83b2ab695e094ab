"""filtex.lint: each warning kind fires on its example, stays quiet on correct
filters, and rarely fires on the conformance suites' filters."""
from __future__ import annotations

import pytest

import filtex
from conformance_cases import load_cases
from filtex.lint import LintWarning, Warning, lint, looks_like_file_name


def warnings(text: str, dialect: str = "amqp") -> list[Warning]:
    return lint(filtex.compile_sql(text, dialect))


def only(text: str, dialect: str = "amqp") -> Warning:
    found = warnings(text, dialect)
    assert len(found) == 1, found
    return found[0]


# --- other systems' names ---------------------------------------------------------------

@pytest.mark.parametrize("text, meant", [
    ("sys.Label = 'x'", "p.subject"),
    ("sys.MessageId = 'm-1'", "p.[message-id]"),
    ("sys.SessionId = 's'", "p.[group-id]"),
    ("user.color = 'blue'", "color"),
    ("amqp.annotation.[x-opt-offset] > 5", "m.[x-opt-offset]"),
    ("amqp.header.priority > 4", "h.priority"),
    ("amqp.properties.subject = 'a'", "p.subject"),
    ("property.subject = 'a'", "p.subject"),
    ("props.reply_to = 'q'", "p.[reply-to]"),
    ("headers.color = 'x'", "color"),
    ("annotations.[x-opt-partition] = 1", "m.[x-opt-partition]"),
    ("jms.priority > 4", "h.priority"),
    ("message.subject = 'a'", "p.subject"),
    ("SYS.Label = 'x'", "p.subject"),
])
def test_another_systems_qualifier_says_what_it_reads_and_what_was_meant(text, meant):
    warning = only(text)
    base = text.split(".")[0]
    assert f"application property {base!r}" in warning.message
    assert f"did you mean {meant}?" in warning.message
    assert (warning.offset, warning.line, warning.column) == (0, 1, 1)
    assert warning.text == text


def test_qualifier_warning_points_at_the_reference_on_its_line():
    warning = only("color = 'blue'\n  AND sys.Label = 'x'")
    assert (warning.line, warning.column) == (2, 7)


def test_a_qualifier_lookalike_without_a_known_field_still_says_what_it_reads():
    warning = only("sys.NoSuchThing = 1")
    assert "entry 'NoSuchThing' of the application property 'sys'" in warning.message
    assert "did you mean" not in warning.message


def test_jms_header_names_outside_the_jms_dialect():
    warning = only("JMSPriority > 4")
    assert "h.priority" in warning.message and "--dialect jms" in warning.message
    assert warnings("JMSPriority > 4", "jms") == []


@pytest.mark.parametrize("text", [
    "a.order.id = 5", "order.customer.name = 'ann'", "p.subject = 'x'",
    "m.[x-opt-offset] > 5", "h.priority > 4", "a.color = 'blue'", "EXISTS(o.k)",
    "system.x = 1", "amqp_value.total > 5",
])
def test_map_references_that_look_like_nothing_else_are_quiet(text):
    assert warnings(text) == []


# --- comparisons the types decide ------------------------------------------------------

@pytest.mark.parametrize("text, dialect, fragment, column", [
    ("x = NULL", "amqp", "write x IS NULL", 5),
    ("x <> NULL", "amqp", "write x IS NOT NULL", 6),
    ("NULL = x", "rabbitmq", "write x IS NULL", 1),
])
def test_comparison_with_null(text, dialect, fragment, column):
    warning = only(text, dialect)
    assert "always unknown" in warning.message and fragment in warning.message
    assert warning.column == column


@pytest.mark.parametrize("text, dialect, outcome", [
    ("h.priority = 'high'", "amqp", "always unknown"),
    # (rabbitmq's h.priority may be a string: the x-basic-priority annotation's)
    ("p.group_sequence = 'high'", "rabbitmq", "always false"),
    ("p.subject > 5", "amqp", "always unknown"),
    ("h.durable = 1", "amqp", "always unknown"),
    ("p.creation_time > 'yesterday'", "amqp", "always unknown"),
    ("LOWER(x) = 5", "amqp", "always unknown"),
    ("JMSPriority = 'high'", "jms", "always false"),
    ("JMSDeliveryMode = 1", "jms", "always false"),
    ("'5' > 3", "amqp", "always unknown"),
    ("'5' > 3", "rabbitmq", "always false"),
    ("h.priority BETWEEN 'a' AND 'z'", "amqp", "always unknown"),
])
def test_comparison_of_types_that_never_compare(text, dialect, outcome):
    warning = only(text, dialect)
    assert outcome in warning.message and "never compares" in warning.message


def test_type_warning_points_at_the_constant():
    warning = only("color = 'blue' AND h.priority = 'high'")
    assert warning.column == len("color = 'blue' AND h.priority = ") + 1


def test_like_on_a_field_that_is_never_a_string():
    warning = only("p.[creation-time] LIKE 'x%'")
    assert "always unknown" in warning.message and "LIKE reads strings" in warning.message
    assert "LIKE reads strings" in only("p.group_sequence NOT LIKE 'x%'", "rabbitmq").message
    assert warnings("h.priority NOT LIKE 'x%'", "rabbitmq") == []   # may be the annotation's


@pytest.mark.parametrize("text", [
    "p.user_id = 'guest'",          # RabbitMQ: a binary equals the string of its bytes
    "p.user_id LIKE 'g%'",
    "'A' = 0x41",
])
def test_what_a_lenient_dialect_compares_its_own_way_is_quiet(text):
    assert warnings(text, "rabbitmq") == []


@pytest.mark.parametrize("text, fragment", [
    ("x IN ('a', 1)", "IN mixes a string constant ('a') and an integer constant (1)"),
    ("x BETWEEN 1 AND 'z'", "BETWEEN mixes an integer constant (1) and a string constant"),
    ("p.subject IN ('a', 5)", "5 in p.subject IN ('a', 5) never matches"),
    ("x IN ('a', NULL)", "NULL in an IN list never matches"),
    ("x NOT IN ('a', NULL)", "NOT IN is never true"),
])
def test_lists_and_ranges(text, fragment):
    assert fragment in only(text).message


@pytest.mark.parametrize("text", [
    "h.priority > 4", "h.priority = 4.5", "p.message_id = 5", "p.message_id = 'abc'",
    "p.creation_time > '2025-06-24T13:30:00Z'", "p.creation_time > 1750772279000",
    "h.durable = TRUE", "x IN ('a', 'b')", "x BETWEEN 1 AND 2.5", "total > '100'",
    "x IS NULL", "p.subject LIKE 'order.%'", "LOWER(x) = 'a'", "h.ttl BETWEEN 1 AND 10",
])
def test_comparisons_of_types_that_compare_are_quiet(text):
    assert warnings(text) == []


# --- LIKE patterns --------------------------------------------------------------------------

def test_like_without_wildcards_means_equals():
    warning = only("color LIKE 'blue'")
    assert "it means color = 'blue'" in warning.message
    assert warning.column == len("color LIKE ") + 1
    assert "it means color <> 'blue'" in only("color NOT LIKE 'blue'").message


def test_a_pattern_written_with_escape_is_deliberate():
    # the author knows the wildcards: 'ABC\%' ESCAPE '\' is the specification's example
    assert warnings("code LIKE 'ABC\\%' ESCAPE '\\'") == []


def test_like_percent_alone_is_true_for_every_string():
    assert "true for every string" in only("color LIKE '%'").message
    assert "false for every string" in only("color NOT LIKE '%%'").message


@pytest.mark.parametrize("text", ["color LIKE 'b_ue'", "color LIKE '%blue'",
                                  "color LIKE '\\%' ESCAPE '!'"])
def test_patterns_with_wildcards_are_quiet(text):
    assert warnings(text) == []


# --- described filters and the API ---------------------------------------------------------

def test_sql_members_of_a_filter_set_are_linted_with_their_own_text():
    flt = filtex.compile_filter_set({
        "a": {"described": "amqp:sql-filter", "value": "color = 'x'\nOR y = NULL"},
        "b": {"described": "amqp:application-properties-filter", "value": {"color": "x"}},
        "c": {"described": "amqp:all-filter", "value": [
            {"described": "apache.org:selector-filter:string", "value": "JMSPriority = 'x'"}]},
    })
    found = lint(flt)
    assert [(w.line, w.column, w.text) for w in found] == [
        (2, 8, "color = 'x'\nOR y = NULL"), (1, 15, "JMSPriority = 'x'")]


def test_property_filters_have_nothing_to_lint():
    flt = filtex.compile_filter({"described": "amqp:header-filter",
                                 "value": {"priority": {"@type": "ubyte", "value": 4}}})
    assert lint(flt) == []


def test_warning_is_a_small_named_tuple():
    warning = only("x = NULL")
    assert LintWarning is Warning
    message, offset, line, column, text = warning
    assert (offset, line, column, text) == (4, 1, 5, "x = NULL")


def test_parameters_and_limits_are_kept_when_linting():
    flt = filtex.compile_sql("region = @r AND h.priority = 'x'", parameters={"r": "EU"})
    assert [w.column for w in lint(flt)] == [30]


# --- false positives over the conformance suites ------------------------------------------------

# The suites test odd corners on purpose. The filters a warning says no message
# matches (a value where a condition belongs, constants folding to FALSE or NULL)
# are checked against every case of that filter: none may expect true. The other
# warnings are heuristics: they must stay rare.
NO_MESSAGE_MATCHES = "no message matches"


@pytest.mark.slow
def test_few_warnings_over_the_conformance_filters():
    seen: dict[tuple, list] = {}
    expected: dict[tuple, set] = {}
    for name, case in load_cases():
        spec = case["filter"]
        if "sql" not in spec or case["expect"] == "invalid":
            continue
        key = (spec["sql"], case["dialect"])
        expected.setdefault(key, set()).add(case["expect"])
        if key in seen:
            continue
        try:
            flt = filtex.compile_sql(*key)
        except filtex.FilterError:
            continue
        seen[key] = [w.message for w in lint(flt)]
    never = {key for key, found in seen.items() if any(NO_MESSAGE_MATCHES in m for m in found)}
    assert len(never) > 50   # the suites have many such filters
    wrong = [key for key in never if "true" in expected[key]]
    assert wrong == []
    fired = {key: found for key, found in seen.items()
             if [m for m in found if NO_MESSAGE_MATCHES not in m]}
    rate = len(fired) / len(seen)
    assert len(seen) > 1000
    assert rate < 0.08, f"{len(fired)} of {len(seen)} filters warned"


@pytest.mark.parametrize("text", ["p.user_id = 'x'", "p.user_id >= 'abc'",
                                  "p.creation_time >= 1.5"])
def test_no_always_claims_that_some_value_contradicts_in_rabbitmq(text):
    """RabbitMQ compares a binary with a string by bytes: whether it holds depends on
    the value, so lint must not say always true or always false (found in review)."""
    flt = filtex.compile_sql(text, "rabbitmq")
    assert not [w for w in lint(flt) if "always" in w.message], lint(flt)


# --- values where a condition belongs; filters that fold to a constant ----------------------

SAMPLES = [filtex.Message(), filtex.Message(
    application_properties={"total": 5, "x": 1, "examples": 4, "orders": {"jsonl": 2},
                            "color": "blue"},
    properties={"subject": "s"})]


@pytest.mark.parametrize("text, dialect, fragment, column", [
    ("'abc'", "amqp", "'abc' is a string constant, not a condition: the filter is always "
                      "unknown, so no message matches", 1),
    ("total + 1", "amqp", "total + 1 is an arithmetic expression, not a condition", 1),
    ("-total", "rabbitmq", "-total is an arithmetic expression, not a condition", 1),
    ("LOWER(color)", "amqp", "LOWER(color) is a string, not a condition", 1),
    ("p.subject", "amqp", "p.subject is a field of type string, not a condition", 3),
    ("1 = 2", "amqp", "1 = 2 is always false: it folds to the constant FALSE", 1),
    ("1 / 0 = 1", "amqp", "1 / 0 = 1 is always unknown: it folds to the constant NULL", 1),
    ("'a' < 'B'", "amqp", "is always false", 1),
])
def test_a_whole_filter_that_no_message_matches(text, dialect, fragment, column):
    warning = only(text, dialect)
    assert fragment in warning.message and "no message matches" in warning.message
    assert warning.column == column
    flt = filtex.compile_sql(text, dialect)
    assert [flt.evaluate(m) for m in SAMPLES].count(True) == 0   # the claim holds


@pytest.mark.parametrize("text, fragment", [
    ("x = 1 AND 'abc'", "'abc' is a string constant, not a condition: it is never true"),
    ("x = 1 OR total * 2", "total * 2 is an arithmetic expression, not a condition"),
    ("NOT p.subject", "p.subject is a field of type string, not a condition"),
])
def test_a_value_as_an_operand_of_and_or_not(text, fragment):
    warning = only(text)
    assert fragment in warning.message and "no message matches" not in warning.message


def test_a_forgotten_filter_read_as_a_division_says_so():
    warning = only("examples/orders.jsonl")
    assert warning.message.startswith("examples / orders.jsonl is an arithmetic expression, "
                                      "not a condition")
    assert warning.message.endswith("did you forget the filter? 'examples/orders.jsonl' looks "
                                    "like a file name")
    # a bare reference is a condition (a boolean property), but this one looks like a file
    warning = only("orders.amqp")
    assert "did you forget the filter? 'orders.amqp' looks like a file name" in warning.message


@pytest.mark.parametrize("text, dialect", [
    ("TRUE", "amqp"), ("FALSE", "amqp"), ("NULL", "amqp"), ("color", "amqp"),
    ("h.durable", "amqp"), ("a.b", "amqp"), ("x = 1 OR y = 2", "amqp"), ("+t", "jms"),
    ("NOT color", "amqp"), ("EXISTS(x)", "amqp"), ("total + 1 > 2", "amqp"),
    ("a.color", "amqp"), ("orders.customer", "amqp"),
])
def test_conditions_and_deliberate_constants_are_quiet(text, dialect):
    assert warnings(text, dialect) == []


@pytest.mark.parametrize("text, expected", [
    ("examples/orders.jsonl", True), ("orders.amqp", True), ("data/x.parquet", True),
    ("out/eu-big.v2", True), ("orders.jsonl ", True), ("a.b", False), ("a.color", False),
    ("total/2", False), ("a / b", False), ("x = 'a.jsonl'", False),
])
def test_looks_like_file_name(text, expected):
    assert looks_like_file_name(text) is expected
