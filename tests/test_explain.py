"""Filter.explain and the reasons of unknown outcomes.

The explanation is the engine's own generated code with each node's value
recorded, so its root must be the filter's result on every message (the
conformance test checks that on every case); here: what it says and shows.
"""
from __future__ import annotations

import proton
import pytest

import filtex
from filtex import Message


def test_unknown_without_a_failure_names_the_absent_fields():
    f = filtex.compile_sql("color = 'blue' AND h.priority > 4 OR p.subject LIKE 'ord%'")
    outcome = f.outcome(Message(header={"priority": 7}))
    assert outcome == (None, "no value for color, p.subject")


def test_a_present_field_that_decides_nothing_is_not_named():
    f = filtex.compile_sql("a = 1 AND b = 2")
    assert f.outcome(Message(application_properties={"a": 1})).reason == "no value for b"
    # FALSE AND NULL is FALSE: nothing to explain
    assert f.outcome(Message(application_properties={"a": 2})) == (False, None)


def test_unknown_from_a_value_that_is_not_absent():
    f = filtex.compile_sql("x = NaN")
    outcome = f.outcome(Message(application_properties={"x": 1.0}))
    assert outcome == (None, "no value: x = NaN is NULL")


def test_the_tree_shows_every_value_and_the_failure_where_it_happened():
    f = filtex.compile_sql("color > 5 OR size = 2")
    explanation = f.explain(Message(application_properties={"color": "blue", "size": 2}))
    comparison = explanation.children[0]
    assert comparison.text == "color > 5" and comparison.verdict == "failed"
    assert "cannot compare string with integer" in comparison.reason
    assert comparison.children[0].value == "blue"
    text = str(explanation)
    assert "^ cannot compare string with integer" in text
    assert text.splitlines()[0].endswith("color > 5 OR size = 2")


def test_operand_values_are_shown_as_constants():
    f = filtex.compile_sql("total * 2 > 100 AND region IN ('EU', 'US')")
    explanation = f.explain(Message(application_properties={"total": 60, "region": "EU"}))
    assert explanation.verdict == "true"
    shown = {node.text: node.verdict for node in explanation.walk()}
    assert shown["total * 2"] == "120" and shown["total"] == "60"
    assert shown["region"] == "'EU'"


@pytest.mark.parametrize("form", ["bytes", "bytearray", "memoryview", "proton"])
def test_every_message_form_is_explained(form):
    message = proton.Message(subject="orders", properties={"total": 150})
    encoded = message.encode()
    given = {"bytes": bytes(encoded), "bytearray": bytearray(encoded),
             "memoryview": memoryview(bytes(encoded)), "proton": message}[form]
    f = filtex.compile_sql("p.subject = 'orders' AND total > 100 AND region IS NULL")
    assert f.explain(given).verdict == "true"


def test_malformed_bytes_explain_the_decoding_problem():
    f = filtex.compile_sql("total > 100")
    explanation = f.explain(b"\x00\x53\x74\xc1\x09\x02\xa1\x05total\xa1")
    failed = [node for node in explanation.walk() if node.reason]
    assert failed and "byte offset" in failed[0].reason
    assert explanation.value is None


def test_described_filters_show_each_entry():
    f = filtex.compile_filter(("amqp:properties-filter", {"subject": "&p:ord", "to": "x"}))
    explanation = f.explain(Message(properties={"subject": "orders"}))
    assert explanation.verdict == "false"
    assert [c.verdict for c in explanation.children] == ["true", "false"]


def test_explaining_an_object_that_is_no_message_is_a_type_error():
    with pytest.raises(TypeError, match="filtex.Message"):
        filtex.compile_sql("a = 1").explain({"a": 1})
