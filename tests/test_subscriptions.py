"""``filtex.Subscriptions`` against one-by-one evaluation: random sets of
thousands of filters (indexed forms, ORs of them, general filters; all three
dialects; SQL and described filters) over random messages whose fields are
missing, of the expected type, or of another one, as ``filtex.Message``,
encoded bytes and truncated bytes. ``match`` must be exactly the names whose
filter is TRUE, ``evaluate_all`` exactly the non-FALSE verdicts."""
from __future__ import annotations

import random
import threading
from decimal import Decimal
from typing import Callable
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from randomness import examples
from proton import char, int32, symbol, timestamp, ubyte, ulong

import filtex
from filtex.amqp.encode import encode_message
from filtex.subscriptions import set as subscription_set

REGIONS = ["EU", "US", "APAC", "EU-DE", "eu"]
TYPES = ["order", "refund", "quote", "order.created"]
SKUS = ["ABC-1", "ABC-22", "AB", "XYZ-9", ""]


def _value(rng: random.Random, usual: list) -> object:
    """A usual value most of the time, else one of another type, or absent."""
    roll = rng.random()
    if roll < 0.6:
        return rng.choice(usual)
    return rng.choice([None, None, 5, int32(7), 4711, 2.5, float("nan"), True, b"EU",
                       -0.0, 0.0, float("inf"), 100, 100.0, 2**60,
                       symbol("EU"), char("E"), Decimal("4711"), timestamp(4711), ubyte(3),
                       ulong(4711), "", "ABC-"])


def random_message(rng: random.Random) -> filtex.Message:
    fields = {
        "region": _value(rng, REGIONS + [symbol("US")]),
        "customer_id": _value(rng, [4711, 4712, int32(15), 99, 100000]),
        "type": _value(rng, TYPES),
        "sku": _value(rng, SKUS),
        "total": _value(rng, [50, 150, 250.5, 1000, int32(120)]),
        "coupon": _value(rng, ["C1", None]),
        "express": _value(rng, [True, False]),
    }
    props = {}
    subject = _value(rng, ["stock.ibm.nyse", "stock.msft.nasdaq", "order", "order.created.eu"])
    if subject is not None and type(subject) in (str, symbol):
        props["subject"] = subject
    if rng.random() < 0.5:
        props["content-type"] = symbol(rng.choice(["application/json", "text/plain"]))
    header = {"priority": ubyte(rng.randrange(10))} if rng.random() < 0.7 else {}
    if rng.random() < 0.5:
        header["durable"] = rng.random() < 0.5
    return filtex.Message(header=header, properties=props,
                          application_properties={k: v for k, v in fields.items()
                                                  if v is not None})


def _q(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def random_filter(rng: random.Random, dialect: str) -> object:
    """SQL in ``dialect`` (or, in amqp, sometimes a described filter)."""
    region, sku = rng.choice(REGIONS), rng.choice(SKUS)
    cid = rng.choice([4711, 4712, 15, 99, 100000])
    terms = [f"region = {_q(region)}", f"customer_id = {cid}",
             f"type IN ({', '.join(_q(t) for t in rng.sample(TYPES, 2))})",
             f"sku LIKE {_q(sku[:3] + '%')}", f"sku LIKE {_q(sku)}",
             f"total > {rng.choice([10, 100, 200, 999, 0, -1])}",
             f"total <= {rng.choice([100, 200, 1000, 0])}", f"customer_id >= {cid}",
             f"total < {rng.choice([0, 100, 2**60])}", f"{rng.choice([0, 150])} < total",
             f"NOT (region <> {_q(region)} OR total < {rng.choice([0, 100])})",
             f"NOT (sku NOT LIKE {_q(sku[:2] + '%')})", "NOT (NOT (coupon IS NOT NULL))",
             f"NOT ({rng.choice([0, 150])} >= total)",
             "coupon IS NULL", "coupon IS NOT NULL", f"{cid} = customer_id"]
    general = ["total * 2 > 300", "NOT (region = 'EU')", "express", "region <> 'EU'",
               "sku LIKE '%-1'", "customer_id + 1 = 4712", "type LIKE 'o_der%'"]
    if dialect == "jms":
        terms += ["total BETWEEN 100 AND 300", "JMSType = 'order'", "JMSPriority > 4"]
        general += ["JMSDeliveryMode = 'PERSISTENT'", "total NOT BETWEEN 100 AND 300"]
    elif dialect == "amqp":
        terms += ["total BETWEEN 100 AND 300", "p.subject = 'order'",
                  "h.priority >= 5", "p.content_type = 'application/json'"]
        general += ["EXISTS(coupon)", "LOWER(region) = 'eu'", "total / 0 > 1"]
        roll = rng.random()
        if roll < 0.06:
            return {"described": "amqp:application-properties-filter",
                    "value": {"region": rng.choice(["EU", "&p:EU", "&s:S"]),
                              "customer_id": {"@type": "long", "value": cid}}
                    if rng.random() < 0.5 else {"region": "&p:" + region[:1]}}
        if roll < 0.09:
            return {"described": "apache.org:legacy-amqp-topic-binding:string",
                    "value": rng.choice(["stock.*.nyse", "stock.#", "order.#", "*.ibm.*", "#"])}
        if roll < 0.11:
            return {"described": "apache.org:legacy-amqp-direct-binding:string",
                    "value": rng.choice(["order", "stock.ibm.nyse"])}
    else:
        terms += ["properties.subject = 'order'"]
    shape = rng.random()
    if shape < 0.45:
        return " AND ".join(rng.sample(terms, rng.randint(1, 2)))
    if shape < 0.7:
        return f"{rng.choice(terms)} AND {rng.choice(general)}"
    if shape < 0.85:
        return f"({rng.choice(terms)} OR {rng.choice(terms)}) AND {rng.choice(terms + general)}"
    return rng.choice(general)


def build(rng: random.Random, count: int) -> tuple[filtex.Subscriptions, dict]:
    subs = filtex.Subscriptions()
    filters = {}
    for i in range(count):
        dialect = rng.choice(["amqp", "amqp", "jms", "rabbitmq"])
        text = random_filter(rng, dialect)
        try:
            flt = subs.add(f"s{i}", text, dialect=dialect)
        except filtex.FilterError:
            if not isinstance(text, str):
                raise   # the described filters here are all valid
            continue   # SQL valid in one dialect only
        filters[f"s{i}"] = flt
    return subs, filters


def one_by_one(filters: dict, message: object) -> tuple[list, dict]:
    verdicts = {name: flt.evaluate(message) for name, flt in filters.items()}
    return ([n for n, v in verdicts.items() if v is True],
            {n: v for n, v in verdicts.items() if v is not False})


@pytest.mark.slow
def test_random_sets_match_one_by_one():
    rng = random.Random(20261126)
    subs, filters = build(rng, 3000)
    assert len(filters) > 2800
    stats = subs.stats()
    assert stats["ungated"] < len(filters) / 4 and len(stats["fields"]) >= 6
    described = [n for n, f in filters.items() if f.kind != "sql"]
    assert len(described) > 50, len(described)
    outcomes = {True: 0, None: 0}
    for _ in range(300):
        message = random_message(rng)
        expected_match, expected_all = one_by_one(filters, message)
        assert subs.match(message) == expected_match
        got = subs.evaluate_all(message)
        assert got == expected_all
        for value in got.values():
            outcomes[value] += 1
    assert outcomes[True] > 1000 and outcomes[None] > 1000   # both verdicts exercised


@pytest.mark.slow
def test_encoded_and_truncated_messages_match_one_by_one():
    rng = random.Random(7)
    subs, filters = build(rng, 800)
    for _ in range(120):
        data = encode_message(random_message(rng))
        if rng.random() < 0.3:
            data = data[:rng.randrange(1, len(data))]   # malformed: never a crash
        expected_match, expected_all = one_by_one(filters, data)
        assert subs.match(data) == expected_match
        assert subs.evaluate_all(data) == expected_all


@pytest.mark.slow
def test_remove_and_replace_keep_the_set_exact():
    rng = random.Random(99)
    subs, filters = build(rng, 1500)
    for name in rng.sample(sorted(filters), 700):
        subs.remove(name)
        del filters[name]
    for name in rng.sample(sorted(filters), 200):   # replaced under the same name
        filters[name] = subs.add(name, random_filter(rng, "jms"), dialect="jms")
    assert len(subs) == len(filters)
    for _ in range(150):
        message = random_message(rng)
        expected_match, expected_all = one_by_one(filters, message)
        assert sorted(subs.match(message)) == sorted(expected_match)
        assert subs.evaluate_all(message) == expected_all
    for name in list(filters):
        subs.remove(name)
    assert len(subs) == 0 and subs.stats()["fields"] == {}
    assert not subs._offered and not subs._distinct   # nothing kept for what is gone
    assert subs.match(random_message(rng)) == []


def test_a_bad_filter_changes_nothing():
    subs = filtex.Subscriptions({"eu": "region = 'EU'"})
    with pytest.raises(filtex.FilterError) as error:
        subs.add("bad", "region = ")
    assert "line 1" in str(error.value)
    assert list(subs) == ["eu"]
    with pytest.raises(KeyError):
        subs.remove("bad")
    with pytest.raises(TypeError):
        subs.match({"region": "EU"})   # not a message form


def test_adding_compiles_matches_so_no_message_pays_for_it():
    """A filter's ``matches`` is compiled on its first call, unless a set takes
    it: then as it is added, so no compile lands inside the set's first
    messages (and a filter given already compiled is left as it is)."""
    from filtex.codegen import loader
    deferred = filtex.compile_sql("customer = 'C-deferred' AND total > 5")
    assert deferred.matches.__code__ is loader._MATCHES_STUB
    subs = filtex.Subscriptions({"given": deferred, "text": "tenant = 't-deferred' OR x = 1"})
    subs.add("described", ("amqp:application-properties-filter", {"region": "&p:EU"}))
    for name in subs:
        assert subs[name].matches.__code__ is not loader._MATCHES_STUB, name
    message = filtex.Message(application_properties={"customer": "C-deferred", "total": 6})
    assert subs.match(message) == ["given"]
    loader.compile_matches(deferred.matches)   # compiled: nothing more to do
    loader.compile_matches(len)                # not a generated function: left alone


@pytest.mark.slow
def test_matching_while_another_thread_adds_and_removes():
    """Stable subscriptions are always answered exactly while others come and go."""
    rng = random.Random(3)
    subs, stable = build(rng, 600)
    messages = [random_message(rng) for _ in range(60)]
    expected = [set(one_by_one(stable, m)[0]) for m in messages]
    stop, errors = threading.Event(), []

    def churn() -> None:
        local = random.Random(4)
        i = 0
        while not stop.is_set():
            name = f"churn{i % 50}"
            if name in subs and local.random() < 0.5:
                subs.remove(name)
            else:
                subs.add(name, random_filter(local, "amqp"))
            i += 1

    def reader() -> None:
        try:
            for _ in range(15):
                for message, wanted in zip(messages, expected):
                    got = {n for n in subs.match(message) if not n.startswith("churn")}
                    assert got == wanted
        except Exception as exc:   # reported below, with the thread's traceback lost
            errors.append(exc)

    _run_against_a_writer(churn, reader, 3, stop)
    assert not errors, errors[0]


def _run_against_a_writer(churn: Callable[[], None], reader: Callable[[], None], readers: int,
                          stop: threading.Event) -> None:
    """``readers`` threads running ``reader`` while one runs ``churn``, which
    stops when the readers are done, or when the test is interrupted (Ctrl-C): a
    writer left running would keep the process from exiting."""
    writer = threading.Thread(target=churn, daemon=True)
    threads = [threading.Thread(target=reader, daemon=True) for _ in range(readers)]
    writer.start()
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        stop.set()
        writer.join()


def churned_filter(i: int) -> str:
    """The writer's filters: new range bounds, prefix lengths and fields each
    time, so trees grow, buckets empty and rosters fill with emptied items."""
    return [f"total > {i}", f"total <= {-i}", f"sku LIKE '{'A' * (i % 40 + 1)}%'",
            f"f{i % 60} = 'x'", f"g{i % 60} IS NULL", f"region = 'R{i}' AND total > 1",
            f"customer_id BETWEEN {i} AND {i + 5}"][i % 7]


@pytest.mark.slow
def test_every_index_kind_answers_exactly_while_another_thread_changes_it():
    """match and evaluate_all of the stable subscriptions stay exact while a
    writer adds and removes subscriptions of every kind: range trees grow and
    are rebuilt from their live bounds, prefix lengths come and go, fields and
    guarded groups empty and the rosters holding them are compacted."""
    rng = random.Random(5)
    subs, stable = build(rng, 400)
    messages = [random_message(rng) for _ in range(40)]
    expected = [one_by_one(stable, m) for m in messages]
    for i in range(300):   # emptied range bounds, fields and groups left behind
        subs.add(f"old{i}", churned_filter(i))
    for i in range(300):
        subs.remove(f"old{i}")
    stop, errors, changes = threading.Event(), [], [0]

    def churn() -> None:
        i = 300
        try:
            while not stop.is_set():
                subs.add(f"churn{i % 80}", churned_filter(i))
                gone = f"churn{(i + 40) % 80}"
                if i % 3 == 0 and gone in subs:
                    subs.remove(gone)
                i += 1
                changes[0] += 1
        except Exception as exc:
            errors.append(exc)

    def reader() -> None:
        try:
            passes = 0   # until the writer has made 300 changes
            while (changes[0] < 300 or passes < 2) and not errors:
                for message, (wanted, wanted_all) in zip(messages, expected):
                    assert [n for n in subs.match(message) if n in stable] == wanted
                    got = subs.evaluate_all(message)
                    assert {n: v for n, v in got.items() if n in stable} == wanted_all
                passes += 1
        except Exception as exc:
            errors.append(exc)

    _run_against_a_writer(churn, reader, 2, stop)
    assert not errors, errors[0]
    assert changes[0] >= 300, changes   # the readers met a writer at work
    for message, (wanted, wanted_all) in zip(messages, expected):   # and after it
        assert [n for n in subs.match(message) if n in stable] == wanted
        assert {n: v for n, v in subs.evaluate_all(message).items() if n in stable} == wanted_all


@settings(max_examples=examples(60), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["amqp", "jms", "rabbitmq"]),
                          st.integers(0, 2**32)), min_size=1, max_size=40),
       st.integers(0, 2**32))
def test_small_random_sets(specs, seed):
    rng = random.Random(seed)
    subs, filters = filtex.Subscriptions(), {}
    for i, (dialect, fseed) in enumerate(specs):
        try:
            filters[f"f{i}"] = subs.add(f"f{i}", random_filter(random.Random(fseed), dialect),
                                        dialect=dialect)
        except filtex.FilterError:
            pass
    for _ in range(5):
        message = random_message(rng)
        expected_match, expected_all = one_by_one(filters, message)
        assert subs.match(message) == expected_match
        assert subs.evaluate_all(message) == expected_all
        # small sets loop over their filters: the index must answer them alike
        with mock.patch.object(subscription_set, "LOOP_MATCH", (0, 0)), \
                mock.patch.object(subscription_set, "LOOP_ALL", (0, 0)):
            assert subs.match(message) == expected_match
            assert subs.evaluate_all(message) == expected_all


@pytest.mark.slow
def test_the_benchmark_sets_match_one_by_one():
    """The benchmark's realistic sets (benchmarks/subscriptions.py) give the
    one-by-one answer on every message, and most of the set is indexed."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks.subscriptions import make_filters, make_messages
    texts = make_filters(2000)
    subs = filtex.Subscriptions(texts)
    filters = {name: subs[name] for name, _ in texts}
    assert subs.stats()["ungated"] <= 40
    matched = 0
    for message in make_messages(2000, 150):
        expected_match, expected_all = one_by_one(filters, message)
        assert subs.match(message) == expected_match
        assert subs.evaluate_all(message) == expected_all
        matched += len(expected_match)
    assert matched > 150


@pytest.mark.parametrize("kind, keys, value", [
    ("range", lambda i: (">", i), 10**9),          # every bound below the value
    ("range", lambda i: ("<=", i), -1),            # every bound above the value
    ("prefix", lambda i: ("p" * (i % 50 + 1),), "p" * 60),
])
def test_lookups_are_linear_in_the_subscriptions_they_name(kind, keys, value):
    """A message every subscription of an index names costs time linear in their
    number (candidates are gathered bucket by bucket, not tuple by tuple)."""
    from timing import growth
    from filtex.subscriptions.index import TermIndex

    def make(n):
        index = TermIndex(kind, False)
        for i in range(n):
            index.add(keys(i), Stub(i))

        def lookup():
            found: dict = {}
            index.lookup(value, found, found, False)
        return lookup
    assert growth(make, 3000) < 30


@pytest.mark.parametrize("fanout", [4, 64])
def test_range_and_prefix_indexes_against_brute_force(fanout, monkeypatch):
    """Thousands of distinct range bounds (a tree of several levels, rebuilt as
    removals empty its buckets) and prefix lengths, added and removed at
    random: every lookup gives exactly the terms TRUE for the value."""
    import operator

    from filtex.subscriptions import bounds
    from filtex.subscriptions.index import TermIndex
    monkeypatch.setattr(bounds, "FANOUT", fanout)   # 4: a deep tree, every path taken
    rng = random.Random(11)
    compare = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le}
    ranges, prefixes = TermIndex("range", False), TermIndex("prefix", False)
    live: dict = {}   # seq -> (kind, keys)
    heights, rebuilt, empty = set(), 0, 0
    for seq in range(12000):
        shrinking = (seq // 3000) % 2   # phases of mostly adding, then mostly removing
        if live and rng.random() < (0.8 if shrinking else 0.2):
            gone = rng.choice(list(live))
            kind, keys = live.pop(gone)
            (ranges if kind == "range" else prefixes).remove(keys, Stub(gone))
        elif rng.random() < 0.7:
            keys = (rng.choice(list(compare)), rng.randrange(-5000, 5000))
            live[seq] = ("range", keys)
            ranges.add(keys, Stub(seq))
        else:
            keys = ("ab"[rng.randrange(2)] * rng.randrange(1, 300),)
            live[seq] = ("prefix", keys)
            prefixes.add(keys, Stub(seq))
        heights.update(tree.height for tree in ranges._trees.values())
        rebuilt += empty - ranges._empty > 1   # the empty buckets dropped at once
        empty = ranges._empty
        if seq % 50 == 0:
            for value in (rng.randrange(-6000, 6000), rng.uniform(-6000, 6000), 5000, -5000):
                found: dict = {}
                ranges.lookup(value, found, found, False)
                assert set(found) == {s for s, (kind, keys) in live.items()
                                      if kind == "range" and compare[keys[0]](value, keys[1])}
            text = "a" * rng.randrange(0, 320)
            found = {}
            prefixes.lookup(text, found, found, False)
            assert set(found) == {s for s, (kind, keys) in live.items()
                                  if kind == "prefix" and text.startswith(keys[0])}
    assert max(heights) >= (4 if fanout == 4 else 1), heights
    assert rebuilt >= 5   # the trees were rebuilt from their live bounds, again and again


class Stub:
    """A subscription as an index sees one: its order of addition."""

    def __init__(self, seq: int) -> None:
        self.seq = seq


# --- changes cost O(log n): issue 23 item 11 ------------------------------------------------

TOPIC = "apache.org:legacy-amqp-topic-binding:string"
DIRECT = "apache.org:legacy-amqp-direct-binding:string"
PROPERTIES = "amqp:application-properties-filter"

# kind -> (the n subscriptions' filters, the probes): every index kind, and the
# guarded groups (amqp, evaluate_all). A range set has n distinct bounds (each
# one compile), the probes new ones; in the others the n subscriptions share
# one bucket (one filter added under n names), and a probe joins it.
CHURNED = {
    "range": (lambda n: [f"x > {2 * i}" for i in range(n)],
              [f"x > {2 * i + 1}" for i in range(20)]),
    "equality": (lambda n: ["region = 'EU'"] * n, ["region = 'EU'", "region = 'UK'"]),
    "IN": (lambda n: ["region IN ('EU', 'APAC')"] * n, ["region IN ('EU', 'APAC')"]),
    "prefix": (lambda n: ["sku LIKE 'AB%'"] * n, ["sku LIKE 'AB%'", "sku LIKE 'ABC%'"]),
    "IS NULL": (lambda n: ["coupon IS NULL"] * n, ["coupon IS NULL"]),
    "property": (lambda n: [(PROPERTIES, {"region": "EU"})] * n, [(PROPERTIES, {"region": "EU"})]),
    "topic": (lambda n: [(TOPIC, "stock.#")] * n, [(TOPIC, "stock.#")]),
    "direct": (lambda n: [(DIRECT, "stock")] * n, [(DIRECT, "stock")]),
}
QUIET = filtex.Message(properties={"subject": "order.created"},   # taken by none of them
                       application_properties={"x": -5, "region": "US", "sku": "XY-1",
                                               "coupon": "C1"})


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(CHURNED))
def test_a_change_costs_the_same_at_ten_times_the_subscriptions(kind):
    """A broker attaching and detaching links while messages flow: add, match,
    evaluate_all and remove one subscription, with n of the same index kind in
    the set, costs about the same at 10n (each change re-sorted every range
    bound, copied its bucket, and rebuilt the snapshots readers iterate: a ratio
    of 10 and more). Messages no subscription takes, so only the change grows."""
    from timing import growth
    texts, probes = CHURNED[kind]
    compiled: dict = {}

    def make(n):
        subs = filtex.Subscriptions()
        for i, text in enumerate(texts(n)):
            key = repr(text)
            if key not in compiled:
                compiled[key] = filtex.compile_sql(text) if isinstance(text, str) \
                    else filtex.compile_filter(text)
            subs.add(f"s{i}", compiled[key])
        probe = [subs.add("probe", p) for p in probes]   # compiled once, here

        def change():
            for flt in probe:
                subs.add("probe", flt)
                assert subs.match(QUIET) == []
                assert subs.evaluate_all(QUIET) == {}
                subs.remove("probe")
        return change
    ratio = growth(make, 1000)
    if ratio >= 3:   # a slow spell in one size's runs: measured once more
        ratio = min(ratio, growth(make, 1000))
    assert ratio < 3, ratio   # about 1 now; 4 to 10 before


@pytest.mark.parametrize("dialect", ["amqp", "jms", "rabbitmq"])
def test_range_gates_around_the_double_precision_edge_match_one_by_one(dialect):
    """Range gates bisect with Python's order; a bound is indexed only where the dialect's
    declared number rules compare every looked-up value with it that way (amqp and jms
    round an integer bound to double against a double: 2**53 + 1 is not indexed there;
    RabbitMQ compares exactly: it is)."""
    from proton import float32
    bounds = [2**53 - 1, 2**53, 2**53 + 1, 2**53 + 3, 2**63 - 1, -(2**53) - 1, 7]
    texts = [f"x {op} {b}" for b in bounds for op in ("<", "<=", ">", ">=")]
    texts += [f"x BETWEEN {b} AND {b + 10}" for b in bounds]
    subs = filtex.Subscriptions()
    filters = {}
    for i, text in enumerate(texts):
        try:
            filters[f"s{i}"] = filtex.compile_sql(text, dialect)
        except filtex.FilterError:
            continue
        subs.add(f"s{i}", filters[f"s{i}"])
    assert len(filters) >= 28
    values = []
    for b in bounds:
        values += [b - 1, b, b + 1, float(b), float(b - 2), float(b + 2), timestamp(b),
                   float32(float(b)), ulong(b) if b >= 0 else b]
    for v in values:
        message = filtex.Message(application_properties={"x": v})
        want = sorted(name for name, f in filters.items() if f.evaluate(message) is True)
        assert sorted(subs.match(message)) == want, (dialect, v)
