"""Hostile encoded messages read by many filters at once (issue 23).

The reference is each filter evaluated alone on fresh bytes. One view of a
message (``filtex.view``), read by many filters in any order, must give every
filter exactly that outcome (verdict and reason), and ``Subscriptions`` must
give the one-by-one answer: whatever failed before, a read never sees another
field's value. The messages are seeded random ones with faults put where the
readers meet them (``hostile_messages``), a third of them mutated as bytes.
"""
from __future__ import annotations

import random

import pytest
from proton import Described, symbol

import filtex
from filtex.amqp.encoded import EncodedMessage

from hostile_messages import (BAD_HEADER, BAD_PROPERTIES, DUPLICATE_KEY, amqp_list, amqp_map,
                              filters, messages, section, string)

FILTERS = filters()
MESSAGES = messages(600, seed=23)


def fresh(data: bytes) -> list[filtex.Outcome]:
    """Each filter's outcome alone: a fresh view of the bytes each time."""
    return [f.outcome(data) for f in FILTERS]


def test_the_issue_reproducers_one_view_many_filters():
    view = filtex.view(BAD_PROPERTIES)
    assert filtex.compile_sql("p.subject = 'a.b'").evaluate(view) is None
    assert filtex.compile_sql("p.to = 'id-1'").evaluate(view) is None
    assert filtex.compile_sql("p.[message-id] = 'id-1'").evaluate(view) is True
    subscriptions = filtex.Subscriptions({"subject": "p.subject = 'a.b'", "to": "p.to = 'id-1'"})
    assert subscriptions.match(BAD_PROPERTIES) == []
    assert subscriptions.evaluate_all(BAD_PROPERTIES) == {"subject": None, "to": None}

    view = filtex.view(BAD_HEADER)
    assert filtex.compile_sql("h.[first-acquirer] = TRUE").evaluate(view) is None
    assert filtex.compile_sql("h.ttl IS NOT NULL").evaluate(view) is None
    assert filtex.compile_sql("h.priority = 5").evaluate(view) is True


def test_a_duplicate_key_makes_every_read_of_the_map_unknown():
    """AMQP 1.0 part 1.6.23: keys are unique; a reader that took the first of
    two values and one that took the last would disagree, so none answers."""
    view = filtex.view(DUPLICATE_KEY)
    for text in ("x = 5", "a = TRUE", "a = FALSE", "b IS NULL", "EXISTS(x)"):
        for message in (DUPLICATE_KEY, view):
            outcome = filtex.compile_sql(text).outcome(message)
            assert outcome.result is None and "duplicate map key 'a'" in outcome.reason, text
    assert filtex.compile_sql("p.subject IS NULL").evaluate(view) is True   # not read: not seen


def test_a_key_in_two_encodings_is_a_duplicate():
    data = section(0x72, amqp_map([(b"\xa3\x01k", b"\x54\x01"),
                                   (b"\xb3\x00\x00\x00\x01k", b"\x54\x02")]))
    assert "duplicate" in filtex.compile_sql("m.k = 1").outcome(data).reason
    data = section(0x72, amqp_map([(b"\x53\x03", b"\x54\x01"), (b"\x80" + bytes(7) + b"\x03",
                                                                b"\x54\x02")]))
    described = filtex.compile_filter(("amqp:message-annotations-filter",
                                       {symbol("x"): 1}))
    assert described.evaluate(data) is None


@pytest.mark.slow
@pytest.mark.parametrize("chunk", range(6))
def test_one_view_read_in_any_order_gives_each_filter_its_fresh_outcome(chunk):
    rng = random.Random(1000 + chunk)
    for data in MESSAGES[chunk::6]:
        expected = fresh(data)
        for _ in range(3):
            view = filtex.view(data)
            order = list(range(len(FILTERS)))
            rng.shuffle(order)
            order += rng.sample(order, len(order) // 3)   # some read twice
            for i in order:
                assert FILTERS[i].outcome(view) == expected[i], (data.hex(), FILTERS[i].text)


@pytest.mark.slow
def test_subscriptions_match_the_one_by_one_answer():
    subscriptions = filtex.Subscriptions({f"f{i}": f for i, f in enumerate(FILTERS)})
    for data in MESSAGES:
        expected = fresh(data)
        matched = [f"f{i}" for i, outcome in enumerate(expected) if outcome.result is True]
        assert subscriptions.match(data) == matched, data.hex()
        verdicts = {f"f{i}": outcome.result for i, outcome in enumerate(expected)
                    if outcome.result is not False}
        assert subscriptions.evaluate_all(data) == verdicts, data.hex()


def test_every_method_of_a_map_fails_alike_on_a_malformed_map():
    data = DUPLICATE_KEY
    props = EncodedMessage(data)._filtex_application_properties
    reads = [lambda: props.get("x"), lambda: "x" in props, lambda: list(props),
             lambda: len(props), lambda: props["a"], lambda: props.get(symbol("a"))]
    for read in reads * 2:
        with pytest.raises(filtex.errors.EvaluationFailure, match="duplicate map key"):
            read()


def test_a_failure_raised_again_is_a_new_exception():
    """An exception raised again keeps every earlier traceback: a view read by
    thousands of filters must not grow one without bound."""
    view = EncodedMessage(b"\x00\x53\x99\x45")
    props = EncodedMessage(DUPLICATE_KEY)._filtex_application_properties
    for read in (lambda: view._filtex_application_properties, lambda: props.get("x")):
        errors = []
        for _ in range(3):
            try:
                read()
            except filtex.errors.EvaluationFailure as error:
                errors.append(error)
        assert len(errors) == 3 and len({id(e) for e in errors}) == 3
        assert len({e.reason for e in errors}) == 1


def test_list_fields_after_a_failed_read_read_as_on_fresh_bytes():
    """Field by field over every prefix of a list with a bad field: reading
    every field in every order of two gives what each gives alone."""
    good = [b"\x41", b"\x50\x05", b"\x70\x00\x00\x00\x09", b"\x42", b"\x52\x03"]
    names = ["durable", "priority", "ttl", "first-acquirer", "delivery-count"]
    for bad_at in range(5):
        for bad in (b"\x2d", b"\xa1\x09ab", b"\x00\x53", string(b"\xff")):
            items = list(good)
            items[bad_at] = bad
            data = section(0x70, amqp_list(items))
            alone = {}
            for name in names:
                try:
                    alone[name] = EncodedMessage(data)._filtex_header.get(name)
                except filtex.errors.EvaluationFailure as error:
                    alone[name] = error.reason
            for first in names:
                for second in names:
                    fields = EncodedMessage(data)._filtex_header
                    for name in (first, second, first):
                        try:
                            got = fields.get(name)
                        except filtex.errors.EvaluationFailure as error:
                            got = error.reason
                        assert got == alone[name], (data.hex(), first, second, name)


def test_proton_message_view_is_read_the_same_in_any_order():
    """The proton form builds each section whole on its first read: nothing a
    failed read leaves behind (proton decodes or refuses the whole message)."""
    import proton
    m = proton.Message(subject="a.b", properties={"a": 1}, priority=5,
                       annotations={symbol("x-opt-m"): Described(symbol("d"), 1)})
    expected = [f.outcome(m) for f in FILTERS]
    rng = random.Random(5)
    for _ in range(5):
        view = filtex.view(m)
        order = list(range(len(FILTERS)))
        rng.shuffle(order)
        for i in order:
            assert FILTERS[i].outcome(view) == expected[i], FILTERS[i].text
