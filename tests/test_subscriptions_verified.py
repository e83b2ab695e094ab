"""Issue 27: ``Subscriptions`` names the subscriptions a gate hit verifies
without evaluating them, and loops over small sets. Whatever it skips, its
answers must be exactly each filter's own, in every dialect: here on random
sets made of the verified shapes and their near misses over values of every
class that could be mistaken for the keyed ones (symbols, chars, str
subclasses, proton integers, timestamps, floats and NaN, decimals, absent
fields and header defaults, escapes in LIKE), on the conformance cases, and
on a table of what must and must not be verified. Seeded: deterministic."""
from __future__ import annotations

import functools
import random
from decimal import Decimal
from typing import Any

import pytest
from proton import byte, char, float32, int32, short, symbol, timestamp, ubyte, uint, ulong

import filtex
from filtex.amqp.encode import encode_message
from filtex.subscriptions import set as subscription_set

DIALECTS = ["amqp", "jms", "rabbitmq"]
PRIORITY = {"amqp": "h.priority", "jms": "JMSPriority", "rabbitmq": "header.priority"}


class Text(str):
    """A str subclass: its characters, but not a str the index keys on."""


class _Unhashable(type):
    def __hash__(cls):
        raise RuntimeError("no hash")


class Opaque(metaclass=_Unhashable):
    """A value whose class cannot even be looked up in a set."""


STRINGS = ["a", "b", "ab", "abc", "a_c", "x%y", "a%", "", "A", symbol("a"), symbol("ab"),
           char("a"), Text("a"), Text("ab"), 5, 5.0, True, b"a", Decimal("5"), None, None]
NUMBERS = [5, 6, 4, -1, 0, 7, int32(5), ubyte(6), byte(-1), short(4), uint(7), ulong(5),
           2**63, 2**64 - 1, 2**70, -(2**63), timestamp(6), 5.0, 6.5, -0.0, 0.0,
           float("nan"), float("inf"), float("-inf"), float32(6.0), Decimal("6"),
           Decimal("NaN"), True, "6", symbol("6"), char("6"), None, None]
PRIORITIES = [None, None, None, ubyte(0), ubyte(4), ubyte(7), ubyte(9), 8, 3, 7.5,
              float("nan"), "high", True, timestamp(8), int32(9)]


def shapes(dialect: str) -> list[str]:
    """Filters of the verified shapes and their near misses, in ``dialect``."""
    prio = PRIORITY[dialect]
    found = ["s = 'a'", "s = 'ab'", "'a' = s", "s IN ('a', 'b')", "s IN ('ab', 'x%y', '')",
             "s LIKE 'a%'", "s LIKE 'ab%'", "s LIKE 'a'", "s LIKE 'x!%y' ESCAPE '!'",
             "s LIKE 'a!_%' ESCAPE '!'", "s LIKE '!%%' ESCAPE '!'", "NOT (s <> 'a')",
             "NOT (s NOT IN ('a', 'ab'))", "NOT (s NOT LIKE 'a%')", "NOT (NOT (s = 'a'))",
             "n = 5", "n = 6", "5 = n", "n > 5", "n >= 5", "n < 5", "n <= -1", "0 < n",
             "NOT (n <= 5)", "NOT (n > 5)", "n > -1", "n = 0", "n > 0",
             f"{prio} >= 7", f"{prio} < 4", f"{prio} = 4", f"{prio} > 3", f"NOT ({prio} < 9)",
             # ORs of terms: verified when the other fields allow
             "s = 'a' OR n > 5", "s = 'a' OR t LIKE 'b%'", f"{prio} >= 7 OR s = 'ab'",
             "s = 'a' OR s = 'b'", "s IN ('a', 'b') OR n = 5 OR t = 'a'",
             "s = 'a' OR t IS NULL", "s = 'a' OR s = 5", "n = 5 OR n > 6",
             "(s = 'a' OR t = 'b') OR n < 0", "NOT (s <> 'a') OR NOT (n <= 5)",
             # near misses: never verified
             "s LIKE 'a_%'", "s LIKE 'a%c'", "s LIKE '%a'", "s <> 'a'", "n <> 5",
             "s IS NULL", "s IS NOT NULL", "n = 5.0", "n > 2.5", "s = 'a' AND n > 5",
             "s = 'a' AND t = 'b'", "s = 'a' OR n * 2 > 10", "NOT (s = 'a' OR t = 'b')",
             "s = 'a' AND NOT (t LIKE 'a%')", "n > 9007199254740993", "n < 9007199254740993",
             "n > 9223372036854775807", "t = 'b' OR n + 1 > 6"]
    if dialect != "rabbitmq":
        found += ["n BETWEEN 4 AND 6", "s = 'a' OR n BETWEEN 4 AND 6",
                  "n NOT BETWEEN 4 AND 6"]
    if dialect == "amqp":
        found += ["n = 18446744073709551615", "s = 'a' OR EXISTS(t)",
                  "p.subject = 'order'", "p.subject LIKE 'ord%'",
                  "p.subject = 'order' OR s = 'a'", "h.[delivery-count] = 0",
                  "h.[delivery-count] > 0 OR s = 'a'", "LOWER(s) = 'a'"]
    if dialect == "rabbitmq":
        found += ["properties.subject = 'order'", "properties.subject LIKE 'ord%'"]
    if dialect == "jms":
        found += ["JMSType = 'order'", "JMSPriority > 4 OR JMSType = 'order'",
                  "s LIKE 'a\\%' ESCAPE '\\'", "s LIKE 'a\\b%' ESCAPE '\\'"]
    return found


def compile_all(dialect: str) -> dict[str, filtex.Filter]:
    filters = {}
    for i, text in enumerate(shapes(dialect)):
        try:
            filters[f"{i}:{text}"] = filtex.compile_sql(text, dialect)
        except filtex.FilterError:
            continue   # not in this dialect
    return filters


def random_message(rng: random.Random) -> filtex.Message:
    props: dict[str, Any] = {}
    for key, values in (("s", STRINGS), ("t", STRINGS), ("n", NUMBERS)):
        value = rng.choice(values)
        if value is not None:
            props[key] = value
    header: dict[str, Any] = {}
    priority = rng.choice(PRIORITIES)
    if priority is not None:
        header["priority"] = priority
    if rng.random() < 0.3:
        header["delivery-count"] = rng.choice([uint(0), uint(2), 0, 1.5])
    properties = {"subject": rng.choice(["order", "orders", symbol("order"), "x"])} \
        if rng.random() < 0.6 else {}
    return filtex.Message(header=header, properties=properties, application_properties=props)


def one_by_one(filters: dict[str, filtex.Filter], message: object,
               connection: object = None) -> tuple[list[str], dict]:
    """What each filter alone says: ``matches`` for match, ``evaluate`` for
    evaluate_all."""
    verdicts = {name: flt.evaluate(message, connection) for name, flt in filters.items()}
    return ([name for name, flt in filters.items() if flt.matches(message, connection)],
            {name: v for name, v in verdicts.items() if v is not False})


def exact_answers(subs: filtex.Subscriptions, filters: dict, message: object,
                  connection: object = None) -> None:
    want_match, want_all = one_by_one(filters, message, connection)
    assert subs.match(message, connection) == want_match, message
    assert subs.evaluate_all(message, connection) == want_all, message


@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
def test_verified_shapes_and_near_misses_match_one_by_one(dialect):
    """Every shape four times over (names in and out of order), 400 random
    messages as ``filtex.Message`` and, where they encode, as bytes."""
    rng = random.Random(2027 + DIALECTS.index(dialect))
    filters = compile_all(dialect)
    named = {f"{copy}/{name}": flt for copy in range(4) for name, flt in filters.items()}
    order = list(named)
    rng.shuffle(order)
    subs = filtex.Subscriptions([(name, named[name]) for name in order])
    ordered = {name: named[name] for name in order}
    assert subs.stats()["verified"] >= 4 * 25
    verified = evaluated = encoded = 0
    for _ in range(400):
        message = random_message(rng)
        if rng.random() < 0.15:   # a class the index cannot even hash
            message.application_properties[rng.choice("stn")] = Opaque()
        exact_answers(subs, ordered, message)
        counts = subs._triage(message)
        verified += counts["verified"]
        evaluated += counts["evaluated"]
        data = encoded_form(message)
        if data is not None:
            encoded += 1
            exact_answers(subs, ordered, data)
    assert encoded > 150
    assert verified > 2000 and evaluated > 2000, (verified, evaluated)


@functools.lru_cache(maxsize=None)
def conformance_sets() -> tuple[dict[str, dict], list]:
    """Every valid conformance filter, by dialect, and every case's message
    (once, with its receiving connection)."""
    from conformance_cases import load_cases
    from test_conformance import compile_case
    filters: dict[str, dict] = {d: {} for d in DIALECTS}
    messages: dict[str, tuple] = {}
    for name, case in load_cases():
        if case["expect"] == "invalid":
            continue
        filters[case["dialect"]][name] = compile_case(case)
        connection = case["message"].get("receiving-connection")
        messages.setdefault(repr((case["message"], connection)), (case["message"], connection))
    return filters, list(messages.values())


@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
def test_conformance_filters_on_every_conformance_message(dialect):
    """All of a dialect's conformance filters in one set (most are one term:
    verified shapes), matched against the message of every case of every
    dialect: the set's answers are each filter's own."""
    filters, messages = conformance_sets()
    filters = filters[dialect]
    subs = filtex.Subscriptions(filters, dialect=dialect)
    verified = 0
    for spec, connection in messages:
        message = filtex.message_from_json(spec)
        exact_answers(subs, filters, message, connection)
        verified += subs._triage(message)["verified"]
    assert len(messages) > 500 and verified > 300, (len(messages), verified)


# --- what is verified, and what is not ------------------------------------------------------

V, E, N = "verified", "evaluated", "not a candidate"

TABLE = [
    # (dialects, filter, application properties, header, expected)
    (DIALECTS, "s = 'a'", {"s": "a"}, {}, V),
    (DIALECTS, "s = 'a'", {"s": symbol("a")}, {}, V),
    (DIALECTS, "s = 'a'", {"s": char("a")}, {}, E),
    (DIALECTS, "s = 'a'", {"s": Text("a")}, {}, E),
    (DIALECTS, "s = 'a'", {"s": "b"}, {}, N),
    (DIALECTS, "s = 'a'", {}, {}, N),
    (DIALECTS, "s IN ('a', 'b')", {"s": "b"}, {}, V),
    (DIALECTS, "s LIKE 'a%'", {"s": "abc"}, {}, V),
    (DIALECTS, "s LIKE 'a!%%' ESCAPE '!'", {"s": "a%c"}, {}, V),
    (DIALECTS, "s LIKE 'a!%%' ESCAPE '!'", {"s": "abc"}, {}, N),
    (DIALECTS, "s LIKE 'a_%'", {"s": "abc"}, {}, E),     # no gate: '_'
    (DIALECTS, "NOT (s <> 'a')", {"s": "a"}, {}, V),
    (DIALECTS, "n = 5", {"n": 5}, {}, V),
    (DIALECTS, "n = 5", {"n": int32(5)}, {}, V),
    (DIALECTS, "n = 5", {"n": ubyte(5)}, {}, V),
    (DIALECTS, "n = 5", {"n": 5.0}, {}, E),
    (DIALECTS, "n = 5", {"n": True}, {}, E),
    (DIALECTS, "n > 5", {"n": 7}, {}, V),
    (DIALECTS, "n > 5", {"n": timestamp(7)}, {}, V),
    (DIALECTS, "n > 5", {"n": 7.5}, {}, V),
    (DIALECTS, "n > 5", {"n": float("inf")}, {}, E),
    (DIALECTS, "n > 5", {"n": float("nan")}, {}, E),
    (DIALECTS, "n < 5", {"n": -0.0}, {}, E),
    (DIALECTS, "n > 5", {"n": float32(7.0)}, {}, E),
    (DIALECTS, "n > 5", {"n": 3}, {}, N),
    (["amqp", "jms"], "n BETWEEN 5 AND 9", {"n": 7}, {}, E),
    (["amqp", "jms"], "n > 9007199254740993", {"n": 2**60}, {}, E),   # not indexed
    (["amqp", "jms"], "{prio} > 3", {}, {}, V),                     # absent: 4 by default
    (["amqp", "jms"], "{prio} > 3", {}, {"priority": ubyte(2)}, N),
    # rabbitmq reads h.priority from the header, else an annotation, else 4: not
    # one field, so no gate: evaluated, with its own answer
    (["rabbitmq"], "{prio} > 3", {}, {}, E),
    (["rabbitmq"], "{prio} > 3", {}, {"priority": ubyte(2)}, E),
    (DIALECTS, "s = 'a' AND n > 5", {"s": "a", "n": 7}, {}, E),
    (DIALECTS, "s = 'a' OR n > 5", {"s": "a", "n": 2}, {}, V),
    (DIALECTS, "s = 'a' OR n > 5", {"s": "a"}, {}, V),             # n absent: NULL
    (DIALECTS, "s = 'a' OR n > 5", {"s": "a", "n": "x"}, {}, E),   # amqp: a failure
    (DIALECTS, "s = 'a' OR n > 5", {"s": "a", "n": Decimal("1")}, {}, E),
    (DIALECTS, "s = 'a' OR n > 5", {"s": "b", "n": 7}, {}, V),
    (["amqp", "jms"], "{prio} >= 7 OR s = 'a'", {"s": "a"}, {"priority": ubyte(9)}, V),
    (["rabbitmq"], "{prio} >= 7 OR s = 'a'", {"s": "a"}, {"priority": ubyte(9)}, E),
    (DIALECTS, "{prio} >= 7 OR s = 'a'", {"s": 5}, {"priority": ubyte(9)}, E),
    (DIALECTS, "s = 'a' OR s = 5", {"s": "a"}, {}, E),   # no class is safe for both
    (DIALECTS, "s = 'a' OR t IS NULL", {"s": "a", "t": 2.5}, {}, V),
]


def _case_id(row: tuple) -> str:
    dialects, text, props, header, expected = row
    return f"{text} | {props} {header} -> {expected}"


@pytest.mark.parametrize("row", TABLE, ids=_case_id)
def test_what_is_verified(row, monkeypatch):
    """One subscription among others, the index always used: whether its hit
    is verified, evaluated or not a candidate, and its answer its own."""
    monkeypatch.setattr(subscription_set, "LOOP_MATCH", (0, 0))
    monkeypatch.setattr(subscription_set, "LOOP_ALL", (0, 0))
    dialects, text, props, header, expected = row
    for dialect in dialects:
        flt = filtex.compile_sql(text.format(prio=PRIORITY[dialect]), dialect)
        subs = filtex.Subscriptions({"other": filtex.compile_sql("zz = 'q'", dialect),
                                     "it": flt})
        message = filtex.Message(header=header, application_properties=props)
        found, done, sure = subs._candidates(message, exact=False)
        for bucket in sure:
            done.update(bucket)
        seq = subs._entries["it"].seq
        got = V if seq in done else E if seq in found or seq in subs._plain else N
        assert got == expected, (dialect, got)
        exact_answers(subs, {"other": subs["other"], "it": flt}, message)
        if expected == V:
            assert flt.evaluate(message) is True


# --- small sets: a plain loop ---------------------------------------------------------------

def test_small_sets_loop_and_grow_into_the_index(monkeypatch):
    """A set of a few subscriptions loops over them; past the bound it takes the
    index, and back below it loops again; both answer exactly alike."""
    rng = random.Random(31)
    filters = compile_all("amqp")
    names = sorted(filters)
    rng.shuffle(names)
    subs = filtex.Subscriptions()
    live: dict[str, filtex.Filter] = {}
    messages = [random_message(rng) for _ in range(25)]
    calls = []
    candidates = subs._candidates
    monkeypatch.setattr(subs, "_candidates",
                        lambda *args, **kwargs: calls.append(1) or candidates(*args, **kwargs))
    loops = subscription_set.LOOP_MATCH + subscription_set.LOOP_ALL
    sizes = set()
    for step, name in enumerate(names[:70] + names[:60]):   # 70 in, then 60 out
        if name in live:
            subs.remove(name)
            del live[name]
        else:
            live[name] = subs.add(name, filters[name])
        if step % 3:
            continue
        size = len(live)
        sizes.update(size > bound for bound in loops)
        for message in messages[step % 20:step % 20 + 4]:
            want_match, want_all = one_by_one(live, message)
            data = encoded_form(message)
            for way, form, want, bound in (("match", message, want_match, loops[0]),
                                           ("evaluate_all", message, want_all, loops[2]),
                                           ("match", data, want_match, loops[1]),
                                           ("evaluate_all", data, want_all, loops[3])):
                if form is None:
                    continue
                before = len(calls)
                assert getattr(subs, way)(form) == want
                assert (len(calls) > before) == (size > bound), (way, size)
    assert len(live) == 10 and sizes == {True, False}


def encoded_form(message: filtex.Message) -> bytes | None:
    """The message's bytes, or None where it holds a value AMQP cannot carry."""
    try:
        return encode_message(message)
    except Exception:
        return None


def test_a_subscription_removed_while_a_message_is_matched_is_seen_or_not(monkeypatch):
    """A reader holding the verified buckets and candidates of a message when a
    writer removes (and re-adds) subscriptions names each of them or not, and
    never fails: the steps of ``match`` and ``evaluate_all`` taken in turn."""
    monkeypatch.setattr(subscription_set, "LOOP_MATCH", (0, 0))
    subs = filtex.Subscriptions([(f"eu{i}", "region = 'EU'") for i in range(5)]
                                + [("any", "total * 2 > 0"), ("or", "h.priority > 3 OR x = 'y'")])
    message = filtex.Message(application_properties={"region": "EU", "total": 5})
    assert subs.match(message) == ["eu0", "eu1", "eu2", "eu3", "eu4", "any", "or"]
    found, done, sure = subs._candidates(message, exact=False)
    subs.remove("eu1")
    subs.remove("or")
    subs.add("eu3", "region = 'EU'")   # replaced: a new subscription, last
    # the buckets are live: the new eu3 is seen, the old one and "or" are gone
    assert subs._named(subs._ordered(done, sure)) == ["eu0", "eu2", "eu4", "eu3"]
    assert subs.match(message) == ["eu0", "eu2", "eu4", "any", "eu3"]
    assert subs.evaluate_all(message) == dict.fromkeys(["eu0", "eu2", "eu4", "any", "eu3"],
                                                       True)


@pytest.mark.slow
def test_the_mixed_benchmark_set_matches_one_by_one():
    """``benchmarks/subscriptions_mixed.py``'s set (issue 27's): most of it
    verified by its gate, every answer each filter's own, as Messages and bytes."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.subscriptions_mixed import make_filters, make_messages
    texts = make_filters(1500, alone=0.01)
    subs = filtex.Subscriptions(texts)
    filters = {name: subs[name] for name, _ in texts}
    assert subs.stats()["verified"] > 1000
    verified = 0
    for message in make_messages(40):
        exact_answers(subs, filters, message)
        exact_answers(subs, filters, encode_message(message))
        verified += subs._triage(message)["verified"]
    assert verified > 40 * 20
