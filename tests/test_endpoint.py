"""Filter sets at attach: negotiation (no container), brokers' profiles and
policies, proton copies, the checked consumer, and hostile clients, over
loopback with ``filtex serve`` and real proton clients."""
from __future__ import annotations

import json
import logging
import random
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import proton
import pytest
from proton import Data, Described, Message, Terminus, symbol, ulong
from proton.handlers import MessagingHandler
from proton.reactor import Container, Filter, Selector

import filtex
from filtex.amqp.encode import encode_message
from filtex.described.lower import to_described
from filtex.endpoint.negotiation import negotiate
from filtex.endpoint.profiles import PROFILES
from filtex.endpoint.receiver import FilterNotInPlace, VerifiedConsumer, VerifiedFilter
from filtex.endpoint.serve import Peer as InProcessPeer
from filtex.endpoint.serve import annotated

from conformance_cases import load_cases
from endpoint_peer import Link, Peer, Stopper, consume, run, send

SQL = symbol("amqp:sql-filter")
SELECTOR = symbol("apache.org:selector-filter:string")
GOOD = Described(SQL, "n < 10")
BAD = Described(SQL, "n = = 1")
UNKNOWN = Described(symbol("com.microsoft:sql-filter:list"), ["n = 1"])
OFFSET = Described(symbol("rabbitmq:stream-offset-spec"), "first")


def _data(value: dict) -> Data:
    data = Data()
    data.put_dict(value)
    return data


# --- negotiation, no container ---------------------------------------------------------

def test_every_form_of_a_set_negotiates_alike():
    entries = {symbol("a"): GOOD, symbol("b"): Described(SELECTOR, "n > 2")}
    forms = [entries, _data(entries),
             {"set": {"a": {"sql": "n < 10"},
                      "b": {"described": "apache.org:selector-filter:string",
                            "value": "n > 2"}}},
             {"a": (SQL, "n < 10"), "b": (SELECTOR, "n > 2")}]
    message = filtex.Message(application_properties={"n": 5})
    for form in forms:
        result = negotiate(form)
        assert [e.status for e in result.entries] == ["accepted", "accepted"], form
        assert result.refusal is None and set(result.in_place) == {"a", "b"}
        assert result.filter is not None and result.filter.evaluate(message) is True


def test_a_terminus_is_read_through_its_filter():
    link_source = proton.Connection().session().receiver("r").source
    link_source.filter.put_dict({symbol("a"): GOOD})
    assert isinstance(link_source, Terminus)
    assert negotiate(link_source).entries[0].status == "accepted"


def test_a_null_entry_acts_as_if_absent():
    result = negotiate({symbol("gone"): None, symbol("a"): GOOD})
    assert [(e.key, e.status) for e in result.entries] == [("gone", "null"), ("a", "accepted")]
    assert list(result.in_place) == ["a"]
    only_null = negotiate({symbol("gone"): None})
    assert only_null.filter is not None and only_null.filter.matches(filtex.Message())


def test_delegated_entries_are_echoed_and_left_to_the_caller():
    result = negotiate({symbol("offset"): OFFSET, symbol("a"): GOOD,
                        symbol("mine"): Described(symbol("acme:route"), "x"),
                        symbol("coded"): Described(ulong(0x1234_00000001), 1)},
                       delegate=["acme:route", 0x1234_00000001])
    assert {e.key: e.status for e in result.entries} == {
        "offset": "delegated", "a": "accepted", "mine": "delegated", "coded": "delegated"}
    assert set(result.delegated) == {"offset", "mine", "coded"}
    assert set(result.in_place) == {"offset", "a", "mine", "coded"}
    with pytest.raises(TypeError):
        negotiate({}, delegate=[1.5])   # type: ignore[list-item]


def test_filters_are_found_by_descriptor_symbol_or_code_under_any_key():
    result = negotiate({symbol("whatever"): Described(ulong(0x120), "n < 10"),
                        symbol("jms"): Described(ulong(0x468C_00000004), "n > 2"),
                        symbol("alias"): Described(
                            symbol("apache.org:jms-selector-filter:string"), "n > 1")})
    assert [e.descriptor for e in result.entries] == [
        "amqp:sql-filter", "apache.org:selector-filter:string",
        "apache.org:selector-filter:string"]
    assert result.filter is not None
    assert result.filter.evaluate(filtex.Message(application_properties={"n": 5})) is True


@pytest.mark.parametrize("profile,bad,unknown", [
    ("spec", ("detach", "amqp:invalid-field", "filter bad: syntax error at '= 1' "
              "(line 1, column 5)"),
     ("detach", "amqp:not-implemented",
      "filter unknown: filter type com.microsoft:sql-filter:list is not implemented")),
    ("qpid", ("detach", "amqp:invalid-field", "Invalid JMS Selector: syntax error at "
              "'= 1' (line 1, column 5)"),
     ("detach", "amqp:not-implemented",
      "Unsupported filter type: com.microsoft:sql-filter:list")),
    ("artemis", ("detach", "amqp:invalid-field", "Invalid filter: syntax error at '= 1' "
                 "(line 1, column 5)"), ("omit", "amqp:not-implemented", None)),
    ("rabbitmq", ("omit", "amqp:invalid-field", None), ("omit", "amqp:not-implemented", None)),
])
def test_each_profile_answers_bad_and_unknown_filters_as_its_broker(profile, bad, unknown):
    bad_entry = Described(SELECTOR, "n = = 1") if profile in ("qpid", "artemis") else BAD
    key = "sql-filter" if profile == "rabbitmq" else "bad"
    good = Described(SELECTOR, "n < 10") if profile in ("qpid", "artemis") else GOOD
    if profile == "rabbitmq":   # SQL only under sql-filter: its good one is a property filter
        good = Described(symbol("amqp:application-properties-filter"), {"n": 5})
    for (policy, condition, description), entry, name in (
            (bad, bad_entry, key), (unknown, UNKNOWN, "unknown")):
        result = negotiate({symbol("good"): good, symbol(name): entry}, profile=profile)
        refused = [e for e in result.entries if e.status == "refused"]
        assert len(refused) == 1 and refused[0].condition == condition, result.summary()
        if policy == "detach":
            assert result.refusal is not None and result.filter is None
            assert result.refusal.condition == condition
            assert result.refusal.description.replace("bad:", f"{name}:") == \
                description.replace("bad:", f"{name}:")
            assert dict(result.refusal.info) == {"field": "filter"}
        else:
            assert result.refusal is None and list(result.in_place) == ["good"]
    # a policy given overrides the profile's, both ways
    assert negotiate({symbol("x"): BAD}, profile=profile, policy="omit").refusal is None
    assert negotiate({symbol("x"): UNKNOWN}, profile=profile, policy="detach").refusal


def test_the_rabbitmq_profile_reads_its_filter_types_under_its_keys():
    result = negotiate({
        symbol("s"): GOOD,                                     # SQL under another key
        symbol("sql-filter"): Described(SQL, "n > 1"),
        symbol("p"): Described(symbol("amqp:properties-filter"), {symbol("subject"): "x"}),
        symbol("h"): Described(symbol("amqp:header-filter"), {symbol("priority"): 4}),
        symbol("rabbitmq:stream-offset-spec"): OFFSET}, profile="rabbitmq")
    # RabbitMQ folds the set from its end: the property filter p comes after
    # sql-filter, so p is in place and the SQL filter dropped (one or the other)
    assert {e.key: e.status for e in result.entries} == {
        "s": "refused", "sql-filter": "dropped", "p": "accepted", "h": "refused",
        "rabbitmq:stream-offset-spec": "delegated"}
    assert result.refusal is None
    assert list(result.in_place) == ["p", "rabbitmq:stream-offset-spec"]
    assert result.filter is not None and result.filter.text[0] != "filter-set"
    before = negotiate({symbol("p"): Described(symbol("amqp:properties-filter"),
                                               {symbol("subject"): "x"}),
                        symbol("sql-filter"): Described(SQL, "n > 1")}, profile="rabbitmq")
    assert list(before.in_place) == ["sql-filter"]   # the later SQL filter wins


def test_limits_are_resource_limit_exceeded_or_masked(caplog):
    huge = _data({symbol(f"k{i}"): GOOD for i in range(10_000)})
    for policy in ("detach", "omit"):   # a set too large is refused whatever the policy
        result = negotiate(huge, policy=policy)
        assert result.refusal is not None
        assert result.refusal.condition == "amqp:resource-limit-exceeded"
        assert "max_set_entries" in result.refusal.description
    long_selector = {symbol("s"): Described(SELECTOR, "a = '" + "x" * 10_000_000 + "'")}
    result = negotiate(long_selector)
    assert result.refusal is not None
    assert result.refusal.condition == "amqp:resource-limit-exceeded"
    assert "max_length" in result.refusal.description
    with caplog.at_level(logging.WARNING, logger="filtex.endpoint"):
        masked = negotiate(long_selector, mask_limits=True)
        masked_set = negotiate(huge, mask_limits=True)
    assert masked.refusal is not None and masked.refusal.condition == "amqp:internal-error"
    assert masked.refusal.description == "filter s: internal error"
    assert masked_set.refusal is not None
    assert masked_set.refusal.description == "filter set: internal error"
    assert "max_length" in caplog.text and "max_set_entries" in caplog.text   # logged
    omitted = negotiate({**long_selector, symbol("a"): GOOD}, policy="omit")
    assert omitted.refusal is None and list(omitted.in_place) == ["a"]


@pytest.mark.parametrize("value", [
    Described(SQL, 5), Described(SQL, None), Described(SQL, ["n = 1"]),
    Described(ulong(2**64 - 1), "x"), Described(1.5, "x"), Described(None, None),
    Described(symbol("amqp:properties-filter"), [1, 2]),
    Described(symbol("amqp:all-filter"), []), "n = 1", 7, [GOOD],
])
def test_malformed_filter_values_are_refused_by_name(value):
    result = negotiate({symbol("x"): value, symbol("a"): GOOD})
    assert result.refusal is not None and result.filter is None
    assert result.refusal.condition in ("amqp:invalid-field", "amqp:not-implemented")
    assert result.refusal.description.startswith("filter x: ")
    assert negotiate({symbol("x"): value, symbol("a"): GOOD}, policy="omit").in_place == \
        {"a": GOOD}


def test_a_set_that_is_not_a_map_of_symbols_is_refused_whole():
    for bad in ([GOOD], "x", 5, {1: GOOD}, {b"k": GOOD}):
        result = negotiate(bad, policy="omit")
        assert result.refusal is not None and result.refusal.condition == "amqp:invalid-field"
        assert result.refusal.description.startswith("filter set: ")


class _LyingStr(str):
    def __str__(self) -> str:
        raise AssertionError("a filter set's name was read through its own method")

    __hash__ = str.__hash__


class _LyingDescribed(Described):
    @property
    def descriptor(self) -> Any:   # type: ignore[override]
        raise AssertionError("read through its own property")


def test_lying_objects_are_refused_never_run():
    assert negotiate({_LyingStr("k"): GOOD}).refusal is not None
    lying = _LyingDescribed.__new__(_LyingDescribed)
    lying.__dict__["value"] = "n = 1"
    result = negotiate({symbol("k"): lying})
    assert result.refusal is not None
    assert result.refusal.description.startswith("filter k: not a filter: a _LyingDescribed")


def test_binary_values_from_a_proton_data_compile():
    """proton's Data gives binary as a memoryview; a filter set read off a link
    (a property filter on user-id, say) must compile as the same set in hand."""
    entries = {symbol("u"): Described(symbol("amqp:properties-filter"),
                                      {symbol("user-id"): b"guest"})}
    message = filtex.Message(properties={"user-id": b"guest"})
    assert filtex.compile_filter_set(_data(entries)).evaluate(message) is True
    result = negotiate(_data(entries))
    assert result.filter is not None and result.filter.evaluate(message) is True


def test_the_negotiated_filter_is_the_set_of_its_accepted_entries():
    """Differential: every conformance case's filter, alone and in random sets
    with bad and null entries under the omit policy, against
    compile_filter_set of the same accepted entries, on the cases' messages."""
    rng = random.Random(26)
    cases = [case for _, case in load_cases()
             if case["expect"] != "invalid" and case["dialect"] == "amqp"
             and "receiving-connection" not in case["message"]]
    messages = [filtex.message_from_json({k: v for k, v in c["message"].items()
                                          if k != "connection"}) for c in cases[:300]]
    for _ in range(60):
        chosen = rng.sample(cases, 3)
        entries: dict[Any, Any] = {}
        for i, case in enumerate(chosen):
            spec = case["filter"]
            members = spec["set"] if "set" in spec else {"f": spec}
            for name, member in members.items():
                entries[symbol(f"{i}-{name}")] = to_described(member)
        entries[symbol("bad")] = BAD
        entries[symbol("null")] = None
        result = negotiate(entries, policy="omit")
        accepted = {k: v for k, v in entries.items() if v is not None and str(k) != "bad"}
        assert result.refusal is None and set(result.in_place) == set(map(str, accepted))
        reference = filtex.compile_filter_set(accepted)
        assert result.filter is not None
        for message in rng.sample(messages, 40):
            assert result.filter.evaluate(message) is reference.evaluate(message)


# --- another copy of proton ------------------------------------------------------------

@pytest.fixture(scope="module")
def vendored(tmp_path_factory):
    """A second copy of proton, laid out as the RabbitMQ client vendors its own
    (``<package>.qpid.proton``): the same code as distinct classes."""
    root = tmp_path_factory.mktemp("vendored")
    package = root / "acme_client" / "qpid"
    package.mkdir(parents=True)
    (root / "acme_client" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    shutil.copytree(Path(proton.__file__).parent, package / "proton",
                    ignore=shutil.ignore_patterns("__pycache__"))
    sys.path.insert(0, str(root))
    try:
        import acme_client.qpid.proton as copy   # type: ignore[import-not-found]
        import acme_client.qpid.proton.reactor   # noqa: F401  (type: ignore[import-not-found])
        assert copy.symbol is not proton.symbol
        yield copy
    finally:
        sys.path.remove(str(root))


def test_another_protons_messages_evaluate_as_protons_own(vendored):
    f = filtex.compile_sql("colour = 'green' AND h.priority > 4 AND p.subject LIKE 'o%'")
    for i in range(40):
        fields = dict(properties={"colour": "green" if i % 2 else "red", "n": i},
                      priority=i % 10, subject="order" if i % 3 else "other", body=f"m{i}")
        own, theirs = proton.Message(**fields), vendored.Message(**fields)
        assert f.evaluate(theirs) is f.evaluate(own.encode()) is f.evaluate(own)
    assert filtex.view(vendored.Message(subject="s"))._filtex_properties["subject"] == "s"


def test_another_protons_filter_sets_compile_as_protons_own(vendored):
    theirs = {vendored.symbol("sql-filter"): vendored.Described(
                  vendored.symbol("amqp:sql-filter"), "n < 10"),
              vendored.symbol("rabbitmq:stream-offset-spec"): vendored.Described(
                  vendored.symbol("rabbitmq:stream-offset-spec"), "first"),
              vendored.symbol("p"): vendored.Described(
                  vendored.symbol("amqp:application-properties-filter"),
                  {"region": "emea", "n": vendored.ulong(5)})}
    result = negotiate(theirs, profile="rabbitmq")
    # RabbitMQ keeps the last of an SQL filter and property filters: p
    assert [e.status for e in result.entries] == ["dropped", "delegated", "accepted"]
    data = vendored.Data()
    data.put_dict(theirs)
    assert negotiate(data, profile="rabbitmq").summary() == result.summary()
    only_sql = {k: v for k, v in theirs.items() if str(k) == "sql-filter"}
    f = filtex.compile_filter_set(only_sql)
    assert f.evaluate(filtex.Message(application_properties={"n": 3})) is True
    one = filtex.compile_filter(only_sql[vendored.symbol("sql-filter")])
    assert one.evaluate(filtex.Message(application_properties={"n": 30})) is False


def test_look_alikes_of_another_proton_are_refused(vendored):
    class Described:   # same name, same attributes: not proton's
        descriptor, value = symbol("amqp:sql-filter"), "n = 1"
    Described.__module__ = "evil.proton._data"
    with pytest.raises(filtex.FilterError, match="not a filter"):
        filtex.compile_filter(Described())

    class Sub(vendored.Described):   # a subclass of theirs: its own code could answer
        pass
    with pytest.raises(filtex.FilterError, match="not a filter"):
        filtex.compile_filter(Sub(vendored.symbol("amqp:sql-filter"), "n = 1"))

    class Message:
        def encode(self) -> bytes:
            raise AssertionError("a look-alike's code ran")
    Message.__module__ = "evil.proton._message"
    with pytest.raises(filtex.NotAMessage):
        filtex.compile_sql("n = 1").evaluate(Message())   # type: ignore[arg-type]


# --- profiles and policies over the wire -----------------------------------------------

def _stream(tmp_path: Path, count: int = 30) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({
        "properties": {"subject": "order.created" if i % 3 == 0 else "other"},
        "application-properties": {"region": "emea" if i % 2 else "amer", "n": i},
        "message-annotations": ({"x-stream-filter-value": "emea" if i % 2 else "amer"}
                                if i % 5 else {})}) + "\n" for i in range(count)))
    return path


def _expected(flt: filtex.Filter, path: Path) -> list[str]:
    return [str(i) for i, m in enumerate(filtex.read_messages(path)) if flt.matches(m)]


@pytest.mark.slow
@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("policy", ["detach", "omit", None])
def test_profiles_and_policies_on_the_wire(profile, policy, tmp_path):
    """One client per profile and policy: a set of a good filter, a bad one, one
    of a type no profile takes, a null entry and a delegated one. The echo, or
    the refusal (null source and target, condition, description with line and
    column, info), as proton's client sees them; the frames traced on the peer."""
    path = _stream(tmp_path)
    rules = PROFILES[profile].with_policy(policy)
    jms = profile in ("qpid", "artemis")
    rabbit = profile.startswith("rabbitmq")
    good_key, bad_key = ("good", "sql-filter") if rabbit else ("good", "bad")
    good = Described(SELECTOR, "n < 10") if jms else Described(SQL, "n < 10")
    if rabbit:   # SQL only under sql-filter, where the bad one goes (before the good one)
        good = Described(symbol("amqp:application-properties-filter"), {"region": "amer"})
    bad = Described(SELECTOR, "n = = 1") if jms else Described(SQL, "n = = 1")
    entries = {symbol(good_key): good, symbol("gone"): None,
               symbol("rabbitmq:stream-offset-spec"): OFFSET}
    wanted = [Link("s", Filter(entries)), Link("s", Filter({symbol(bad_key): bad, **entries})),
              Link("s", Filter({**entries, symbol("unknown"): UNKNOWN}))]
    args = ["--stream", f"s={path}", "--profile", profile]
    if policy:
        args += ["--policy", policy]
    with Peer(*args, env={"PN_TRACE_FRM": "1"}) as peer:
        consume(peer.address, wanted)
        trace = peer.stop()
    expected = ([str(i) for i in range(0, 30, 2)] if rabbit
                else [str(i) for i in range(10)])
    plain, with_bad, with_unknown = wanted
    assert plain.tags == expected and plain.condition is None
    assert set(plain.echoed) == {symbol(good_key), symbol("rabbitmq:stream-offset-spec")}
    for link, answer in ((with_bad, rules.invalid), (with_unknown, rules.unknown)):
        if answer == "omit":
            assert link.condition is None and link.tags == expected
            assert set(link.echoed) == set(plain.echoed)
        else:
            assert link.null_source and not link.tags
            condition = link.condition
            assert condition.info == {symbol("field"): symbol("filter")}
            if link is with_bad:
                assert condition.name == "amqp:invalid-field"
                assert "(line 1, column 5)" in condition.description
            else:
                assert condition.name == "amqp:not-implemented"
                assert "com.microsoft:sql-filter:list" in condition.description
    refusals = [rules.invalid, rules.unknown].count("detach")
    outgoing = [line for line in trace.splitlines() if " -> @" in line]
    refused_attaches = [line for line in outgoing if "@attach(18)" in line
                        and "source=" not in line and "target=" not in line]
    detaches = [line for line in outgoing if "@detach(22)" in line and "error=" in line]
    assert len(refused_attaches) == len(detaches) == refusals, trace[-3000:]
    for attach, detach in zip(refused_attaches, detaches):
        assert outgoing.index(detach) > outgoing.index(attach)
        assert "info={:field=:filter}" in detach


def test_a_limit_violation_on_the_wire_is_reported_or_masked(tmp_path):
    path = _stream(tmp_path)
    huge = Filter({symbol(f"k{i}"): GOOD for i in range(300)})
    for masked in (False, True):
        args = ["--stream", f"s={path}"] + (["--mask-limits"] if masked else [])
        with Peer(*args) as peer:
            [link] = consume(peer.address, [Link("s", huge)])
            log = peer.stop()
        assert link.null_source and not link.tags
        if masked:
            assert link.condition.name == "amqp:internal-error"
            assert link.condition.description == "filter set: internal error"
            assert "max_set_entries" in log   # the detail, for the operator
        else:
            assert link.condition.name == "amqp:resource-limit-exceeded"
            assert "max_set_entries" in link.condition.description


def test_rabbitmq_stream_entries_and_offsets(tmp_path):
    """With chunks of one message (--chunk-size 1), the Bloom stage is exact:
    the values asked for, and with match-unfiltered those without one."""
    path = _stream(tmp_path)
    bloom = Described(symbol("rabbitmq:stream-filter"), ["emea"])
    unfiltered = Described(symbol("rabbitmq:stream-match-unfiltered"), True)
    sql = Described(SQL, "n >= 10")
    links = [
        Link("s", Filter({symbol("rabbitmq:stream-filter"): bloom})),
        Link("s", Filter({symbol("rabbitmq:stream-filter"): bloom,
                          symbol("rabbitmq:stream-match-unfiltered"): unfiltered})),
        Link("s", Filter({symbol("rabbitmq:stream-offset-spec"): Described(
            symbol("rabbitmq:stream-offset-spec"), 25), symbol("sql-filter"): sql})),
        Link("s", Filter({symbol("rabbitmq:stream-offset-spec"): Described(
            symbol("rabbitmq:stream-offset-spec"), "next")})),
        Link("s", Filter({symbol("rabbitmq:stream-offset-spec"): Described(
            symbol("rabbitmq:stream-offset-spec"), "last")}))]
    with Peer("--stream", f"s={path}", "--profile", "rabbitmq", "--quiet",
              "--chunk-size", "1") as peer:
        consume(peer.address, links)
    emea = [str(i) for i in range(30) if i % 2 and i % 5]
    assert links[0].tags == emea
    assert links[1].tags == [str(i) for i in range(30) if (i % 2 and i % 5) or i % 5 == 0]
    assert links[2].tags == ["25", "26", "27", "28", "29"]
    assert links[3].tags == [] and links[4].tags == ["29"]
    for link in links[:3]:   # RabbitMQ's stream deliveries carry their offset
        for tag, data in zip(link.tags, link.bodies):
            offset = filtex.view(data)._filtex_message_annotations[symbol("x-stream-offset")]
            assert offset == int(tag)


def test_rabbitmq_applies_stream_filter_values_per_chunk(tmp_path):
    """RabbitMQ's Bloom stage reads whole chunks (osiris_bloom): a chunk holding
    a value asked for is delivered whole, other values included, and one of
    messages without a value goes to readers asking for match-unfiltered; SQL
    and property filters stay exact per message. --chunk-size 5 over six runs
    of values; 'last' starts at the last chunk's first message."""
    from filtex.endpoint.bloom import value_bits
    values = ["emea"] * 9 + ["amer"] * 11 + [None] * 7 + ["apac"] * 3
    chunks = [values[i:i + 5] for i in range(0, 30, 5)]
    masks = {v: value_bits(v.encode()) for v in ("emea", "amer", "apac")}
    # no chunk without emea lets emea through by a collision of its bits
    assert all(masks["emea"] & ~(masks["amer"] | masks["apac"] | 1) for _ in chunks)
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps({
        "application-properties": {"n": i},
        "message-annotations": {"x-stream-filter-value": v} if v else {}}) + "\n"
        for i, v in enumerate(values)))
    bloom = Described(symbol("rabbitmq:stream-filter"), ["emea"])
    unfiltered = Described(symbol("rabbitmq:stream-match-unfiltered"), True)
    links = [
        Link("s", Filter({symbol("f"): bloom})),
        Link("s", Filter({symbol("f"): bloom, symbol("u"): unfiltered})),
        Link("s", Filter({symbol("f"): bloom, symbol("sql-filter"): Described(SQL, "n > 5")})),
        Link("s", Filter({symbol("o"): Described(symbol("rabbitmq:stream-offset-spec"),
                                                 "last")}))]
    with Peer("--stream", f"s={path}", "--profile", "rabbitmq", "--quiet",
              "--chunk-size", "5") as peer:
        consume(peer.address, links)
    assert links[0].tags == [str(i) for i in range(10)]   # 9 is amer: its chunk has emea
    # chunk 20-24 holds no value (an empty filter), chunk 25-29 some without one
    assert links[1].tags == [str(i) for i in range(10)] + [str(i) for i in range(20, 30)]
    assert links[2].tags == [str(i) for i in range(6, 10)]
    assert links[3].tags == [str(i) for i in range(25, 30)]


def test_rabbitmq_echoes_a_queues_filters_and_applies_none(tmp_path):
    """On a queue (an address no stream is served at) RabbitMQ parses and
    echoes SQL and property filters but only streams apply them: every message
    is delivered. --apply-queue-filters applies them."""
    messages = [Message(properties={"n": n}, body="m") for n in range(6)]
    sql = Filter({symbol("sql-filter"): Described(SQL, "n >= 3")})
    for extra, wanted in (((), list(range(6))), (("--apply-queue-filters",), [3, 4, 5])):
        with Peer("--profile", "rabbitmq", "--quiet", *extra) as peer:
            send(peer.url("q"), messages)
            [link] = consume(peer.address, [Link("q", sql)])
        assert set(link.echoed) == {symbol("sql-filter")}
        assert [int(t) for t in link.tags] == wanted


def test_the_offset_annotation_keeps_every_other_byte():
    message = filtex.Message(header={"priority": proton.ubyte(6)},
                             message_annotations={symbol("x-opt-a"): 1},
                             properties={"subject": "s"}, application_properties={"n": 1},
                             footer={symbol("f"): 2})
    data = encode_message(message)
    out = annotated(data, 7)
    view = filtex.view(out)
    assert view._filtex_message_annotations[symbol("x-stream-offset")] == 7
    assert view._filtex_message_annotations[symbol("x-opt-a")] == 1
    assert out.endswith(data[data.index(b"\x00\x53\x73"):])   # properties on, unchanged
    bare = encode_message(filtex.Message(application_properties={"n": 1}))
    assert filtex.view(annotated(bare, 3))._filtex_message_annotations[
        symbol("x-stream-offset")] == 3
    assert annotated(b"\x00\x53", 1) == b"\x00\x53"   # unreadable: delivered as it is


# --- the checked consumer ---------------------------------------------------------------

LAST = 29   # the streams' last message: every filter of these tests selects it


class _App(MessagingHandler):  # type: ignore[misc]
    """An application with proton's default prefetch (credit is granted as soon as
    the link opens locally): what reaches its on_message, until the stream's last
    message (messages arrive in order, so all before it have arrived)."""

    def __init__(self, url: str, options: list[Any]) -> None:
        super().__init__(prefetch=10)
        self.url, self.options = url, options
        self.messages: list[int] = []
        self.opened = False

    def on_start(self, event: Any) -> None:
        self.receiver = event.container.create_receiver(self.url, options=self.options)

    def on_link_opened(self, event: Any) -> None:
        self.opened = True

    def on_message(self, event: Any) -> None:
        self.messages.append(event.message.properties["n"])
        if self.messages[-1] == LAST:
            event.connection.close()


def test_the_checked_consumer_against_an_omitting_peer(tmp_path):
    """The rabbitmq profile leaves an SQL filter under another key out of its
    echo and delivers everything; the application must see none of it."""
    path = _stream(tmp_path)
    asked = {symbol("s"): Described(SQL, "region = 'emea' AND n > 20")}
    exact = filtex.compile_filter_set(asked)
    with Peer("--stream", f"s={path}", "--profile", "rabbitmq", "--quiet") as peer:
        unchecked = _App(peer.url("s"), [Filter(asked)])
        run(unchecked)
        assert len(unchecked.messages) == 30   # the hole: every message delivered
        detaching = _App(peer.url("s"), [Filter(asked), VerifiedFilter()])
        with pytest.raises(FilterNotInPlace) as raised:
            run(detaching)
        assert raised.value.missing == ("s",) and detaching.messages == []
        assert not detaching.opened
        filtering = _App(peer.url("s"), [Filter(asked), VerifiedFilter(on_mismatch="filter")])
        run(filtering)
        own = _App(peer.url("s"), [VerifiedFilter(asked, on_mismatch="filter")])
        run(own)
        in_place = _App(peer.url("s"), [VerifiedFilter(
            {symbol("sql-filter"): Described(SQL, "region = 'emea' AND n > 20")})])
        run(in_place)
    wanted = [int(i) for i in _expected(exact, path)]
    assert wanted and filtering.messages == wanted and own.messages == wanted
    assert in_place.messages == wanted


def test_the_checked_consumer_on_a_rabbitmq_queue(caplog):
    """RabbitMQ echoes a queue reader's SQL filter and applies it on streams only:
    the echo proves nothing. The checked consumer warns (the default), refuses
    (unproven="detach"), or applies the filter itself (unproven="filter")."""
    asked = {symbol("sql-filter"): Described(SQL, "n > 20")}
    orders = [Message(properties={"n": n}, body="m") for n in range(LAST + 1)]
    with Peer("--profile", "rabbitmq", "--quiet") as peer:
        send(peer.url("q"), orders)
        with caplog.at_level(logging.WARNING, logger="filtex.endpoint"):
            warned = _App(peer.url("q"), [VerifiedFilter(asked)])
            run(warned)
        assert warned.messages == list(range(LAST + 1))   # everything: nothing applied
        assert "applies on streams only" in caplog.text
        refused = _App(peer.url("q"), [VerifiedFilter(asked, unproven="detach")])
        with pytest.raises(FilterNotInPlace) as raised:
            run(refused)
        assert raised.value.missing == ("sql-filter",)
        assert "streams only" in raised.value.description and refused.messages == []
        send(peer.url("q"), orders)
        filtered = _App(peer.url("q"), [VerifiedFilter(asked, unproven="filter",
                                                       unmatched="rejected")])
        run(filtered)
    assert filtered.messages == list(range(21, LAST + 1))


class _Mixed(VerifiedConsumer, _App):
    pass


def test_the_mixin_checks_links_the_client_built(tmp_path):
    path = _stream(tmp_path)
    asked = {symbol("s"): Described(SQL, "n < 5 OR n = 29")}
    with Peer("--stream", f"s={path}", "--profile", "rabbitmq", "--quiet") as peer:
        app = _Mixed(peer.url("s"), [Filter(asked)])
        with pytest.raises(FilterNotInPlace):
            run(app)
        assert app.messages == []
        keep = _Mixed(peer.url("s"), [Filter(asked)])
        keep.filtex_on_mismatch = "filter"
        run(keep)
    assert keep.messages == [0, 1, 2, 3, 4, LAST]


def test_a_refusing_peer_reaches_the_application_with_its_condition(tmp_path):
    path = _stream(tmp_path)
    errors: list[Any] = []

    class App(_App):
        def on_link_error(self, event: Any) -> None:
            errors.append(event.link.remote_condition)
            event.connection.close()

    with Peer("--stream", f"s={path}", "--quiet") as peer:
        run(App(peer.url("s"), [Filter({symbol("x"): BAD}), VerifiedFilter()]))
    assert [e.name for e in errors] == ["amqp:invalid-field"]


def test_verified_filter_checks_its_own_filters_at_once():
    with pytest.raises(filtex.FilterError) as raised:
        VerifiedFilter({symbol("x"): BAD})
    assert str(raised.value) == "filter x: syntax error at '= 1' (line 1, column 5)"
    with pytest.raises(ValueError):
        VerifiedFilter(on_mismatch="ignore")   # type: ignore[arg-type]


# --- hostile clients --------------------------------------------------------------------

def test_hostile_clients_leave_the_peer_up_and_bounded(tmp_path):
    path = _stream(tmp_path)
    peer = InProcessPeer("127.0.0.1:0", streams={"s": [encode_message(m) for m in
                                                       filtex.read_messages(path)]},
                         profile="spec")
    ready = threading.Event()
    bound: list[int] = []
    peer.ready = lambda host, port: (bound.append(port), ready.set())
    container = Container(peer)
    stopper = Stopper(container)
    thread = threading.Thread(target=container.run, daemon=True)
    thread.start()
    assert ready.wait(60)
    address = f"127.0.0.1:{bound[0]}"
    try:
        # a set of 10,000 entries, a 10 MB selector (past the frame size), malformed values
        sets = [Filter({symbol(f"k{i}"): GOOD for i in range(10_000)}),
                Filter({symbol("v"): Described(SQL, {"a": 1})}),
                Filter({symbol("v"): Described(symbol("amqp:all-filter"), [[[[]]]])})]
        for option in sets:
            [link] = consume(address, [Link("s", option)])
            assert link.null_source and link.condition is not None
        big = Link("s", Selector("a = '" + "x" * 10_000_000 + "'"))
        consume(address, [big])
        assert big.done and not big.tags   # that connection is closed; the peer is not
        assert big.condition.name == "amqp:connection:framing-error"
        # attaches in a loop: nothing stays behind
        consume(address, [Link("s", Filter({symbol("a"): GOOD})) for _ in range(300)],
                window=50)
        # a client that never grants credit gets nothing and holds nothing
        idle = _Idle(address)
        idle_thread = threading.Thread(target=Container(idle).run, daemon=True)
        idle_thread.start()
        assert idle.opened.wait(60)
        [after] = consume(address, [Link("s", Filter({symbol("a"): GOOD}))])
        assert after.tags == [str(i) for i in range(10)]
        assert idle.received == 0
        idle.stop.set()
        idle_thread.join(60)
    finally:
        stopper.stop.set()
        thread.join(60)
    assert len(peer.consumers) <= 1   # the idle receiver's, if its detach was not read


class _Idle(MessagingHandler):  # type: ignore[misc]
    def __init__(self, address: str) -> None:
        super().__init__(prefetch=0)
        self.address, self.received = address, 0
        self.opened, self.stop = threading.Event(), threading.Event()

    def on_start(self, event: Any) -> None:
        event.container.create_receiver(f"{self.address}/s")
        self.timer = event.container.schedule(0.05, self)

    def on_link_opened(self, event: Any) -> None:
        self.opened.set()

    def on_timer_task(self, event: Any) -> None:
        if self.stop.is_set():
            event.container.stop()
        else:
            event.container.schedule(0.05, self)

    def on_message(self, event: Any) -> None:
        self.received += 1
