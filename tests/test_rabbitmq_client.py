"""The official RabbitMQ AMQP 1.0 Python client against ``filtex serve --profile
rabbitmq``: its stream consumer's SQL, property and Bloom-value options deliver
exactly what the ``rabbitmq`` dialect selects; its bad filter is answered as
RabbitMQ answers it (left out of the echo, everything delivered) and caught by
``VerifiedConsumer``; under ``--policy detach`` it is refused as the filtex draft
asks. The client vendors its own proton: its messages and filter sets reach
filtex through ``filtex.proton_copies``.

The client is the ``rabbitmq`` extra (part of ``test``)."""
from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

import filtex
from filtex.endpoint.receiver import FilterNotInPlace, VerifiedConsumer

from endpoint_peer import HANG, Peer

from optional import optional

rmq = optional("rabbitmq_amqp_python_client")
if rmq is None:   # skipped on a laptop without the extra, never in CI
    pytest.skip("the rabbitmq extra: pip install -e '.[rabbitmq]'", allow_module_level=True)

STREAM = "/queues/orders"
COUNT = 60


def _messages() -> list[dict]:
    """Orders; the last one passes every filter of these tests, so a consumer that
    has it has had every message before it (deliveries are in order)."""
    out = []
    for i in range(COUNT):
        last = i == COUNT - 1
        region = "emea" if i % 2 or last else "amer"
        message: dict[str, Any] = {
            "properties": {"subject": "order.created" if i % 3 == 0 or last else "other",
                           "group-id": "g1" if i % 4 else "g2"},
            "application-properties": {"region": region, "n": i, "vip": i % 7 == 0},
        }
        if i % 5 or last:
            message["message-annotations"] = {"x-stream-filter-value": region}
        out.append(message)
    return out


@pytest.fixture(scope="module")
def stream(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("rmq") / "orders.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in _messages()))
    return path


class _Handler(rmq.AMQPMessagingHandler):  # type: ignore[misc,name-defined]
    def __init__(self) -> None:
        super().__init__()
        self.got: list[int] = []
        self.offsets: list[int] = []

    def on_amqp_message(self, event: Any) -> None:
        n = event.message.application_properties["n"]
        self.got.append(n)
        self.offsets.append(self.offset)
        self.delivery_context.accept(event)
        if n == COUNT - 1:
            event.container.stop()   # the end of the client's run()


class _Checked(VerifiedConsumer, _Handler):
    filtex_dialect = "rabbitmq"


def _consume(address: str, options: Any, handler: _Handler) -> _Handler:
    connection = rmq.Connection(f"amqp://{address}/", recovery_configuration=
                                rmq.RecoveryConfiguration(active_recovery=False))
    connection.dial()
    raised: list[BaseException] = []

    def target() -> None:
        try:
            consumer = connection.consumer(STREAM, message_handler=handler,
                                           consumer_options=options)
            consumer.run()
        except BaseException as error:   # the client raises BaseException subclasses
            raised.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(HANG)
    assert not thread.is_alive(), "the RabbitMQ client hangs"
    # not connection.close(): on a stopped container the client waits a minute for the
    # peer's detach it can no longer read; the peer's exit closes the socket
    if raised:
        raise raised[0]
    return handler


def _filters(sql: str | None, properties: dict | None, application: dict | None) -> Any:
    """The filter set the client sends (its order: property filters, then SQL)
    as RabbitMQ keeps it: SQL and property filters exclude each other and the
    last wins (rabbit_amqp_session parse_filter), so SQL alone if there is one."""
    from proton import Described, symbol
    entries: dict[Any, Any] = {}
    if properties and sql is None:
        entries[symbol("p")] = Described(symbol("amqp:properties-filter"),
                                         {symbol(k): v for k, v in properties.items()})
    if application and sql is None:
        entries[symbol("a")] = Described(symbol("amqp:application-properties-filter"),
                                         application)
    if sql is not None:
        entries[symbol("sql-filter")] = Described(symbol("amqp:sql-filter"), sql)
    return filtex.compile_filter_set(entries, "rabbitmq")


def _chunks_passing(values: list[str] | None, match_unfiltered: bool) -> set[int]:
    """The messages of the chunks RabbitMQ's Bloom stage reads (the peer's
    default chunks: the writer's batches of 32, then 64 messages)."""
    from filtex.endpoint.bloom import Matcher, chunk_filter, writer_batches
    annotated = [m.get("message-annotations", {}).get("x-stream-filter-value")
                 for m in _messages()]
    if values is None:   # RabbitMQ ignores match-unfiltered without values
        return set(range(COUNT))
    matcher = Matcher(values, match_unfiltered)
    starts = writer_batches(COUNT) + [COUNT]
    passing: set[int] = set()
    for start, end in zip(starts, starts[1:]):
        if matcher.passes(chunk_filter(v.encode() if v else None for v in annotated[start:end])):
            passing.update(range(start, end))
    return passing


def _exact(values: list[str] | None, match_unfiltered: bool, message: dict) -> bool:
    """The Bloom stage done exactly per message (what a client filters again)."""
    value = message.get("message-annotations", {}).get("x-stream-filter-value")
    if values is None and not match_unfiltered:
        return True
    if value is None:
        return match_unfiltered
    return values is None or value in values


def _selected(case: dict, client_side: bool = False) -> list[int]:
    """What RabbitMQ delivers for ``case``: whole chunks by the Bloom stage, then
    the filters it kept, exactly per message; with ``client_side``, what a
    consumer filtering again (VerifiedConsumer, always_filter) keeps."""
    properties = {k.replace("_", "-"): v for k, v in (case.get("properties") or {}).items()}
    f = _filters(case.get("sql"), properties, case.get("application"))
    values, unfiltered = case.get("values"), case.get("match_unfiltered", False)
    chunks = _chunks_passing(values, unfiltered)
    return [i for i, message in enumerate(_messages())
            if i in chunks and f.matches(filtex.message_from_json(message))
            and (not client_side or _exact(values, unfiltered, message))]


CASES = [
    dict(sql="region = 'emea' AND n > 20"),
    dict(sql="p.subject LIKE 'order.%' AND (vip OR n >= 40)"),
    dict(application={"region": "emea"}),
    dict(properties={"subject": "order.created", "group_id": "g1"}),
    dict(values=["emea"]),
    dict(values=["emea"], match_unfiltered=True, sql="n > 10"),
    dict(values=["emea"], application={"region": "emea"}, properties={"subject": "&p:order"}),
]


def _options(case: dict) -> Any:
    properties = case.get("properties")
    return rmq.StreamConsumerOptions(
        offset_specification=rmq.OffsetSpecification.first,
        filter_options=rmq.StreamFilterOptions(
            values=case.get("values"), match_unfiltered=case.get("match_unfiltered", False),
            application_properties=case.get("application"),
            message_properties=rmq.MessageProperties(**properties) if properties else None,
            sql=case.get("sql")))


class _ClientSide(_Checked):
    filtex_always_filter = True


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[str(i) for i in range(len(CASES))])
def test_stream_filters_of_the_official_client(case, stream):
    """What RabbitMQ delivers, chunk by chunk for the Bloom values; and, filtering
    again on the client (VerifiedConsumer with always_filter), exactly the
    messages asked for."""
    wanted, exact = _selected(case), _selected(case, client_side=True)
    with Peer("--stream", f"{STREAM}={stream}", "--profile", "rabbitmq", "--quiet") as peer:
        handler = _consume(peer.address, _options(case), _Checked())
        if exact != wanted:
            filtered = _consume(peer.address, _options(case), _ClientSide())
            assert filtered.got == exact
    assert wanted and wanted[-1] == COUNT - 1   # the handler stops at the last message
    assert handler.got == wanted
    assert handler.offsets == wanted   # the x-stream-offset annotation of each delivery


def test_sql_and_property_filters_together_as_rabbitmq_keeps_them(stream):
    """The client encodes sql= after the property filters; RabbitMQ keeps the
    last of the two kinds, the SQL filter, and drops the property filters from
    the echo without a word: a plain consumer gets what SQL alone selects, and
    VerifiedConsumer names the property filter that is not in place."""
    case = dict(sql="n >= 30", application={"region": "emea"})
    with Peer("--stream", f"{STREAM}={stream}", "--profile", "rabbitmq", "--quiet") as peer:
        plain = _consume(peer.address, _options(case), _Handler())
        checked = _Checked()
        with pytest.raises(FilterNotInPlace) as raised:
            _consume(peer.address, _options(case), checked)
    assert plain.got == list(range(30, COUNT)) == _selected(case)
    assert checked.got == [] and "sql-filter" not in raised.value.missing
    assert len(raised.value.missing) == 1   # the application-properties filter


def _bad_sql() -> Any:
    return rmq.StreamConsumerOptions(
        offset_specification=rmq.OffsetSpecification.first,
        filter_options=rmq.StreamFilterOptions(sql="region = = 'emea'"))


@pytest.mark.slow
def test_its_bad_filter_is_answered_as_rabbitmq_answers_it(stream):
    """RabbitMQ leaves a bad SQL filter out of the echo and delivers every
    message; the client does not check, so it gets them all. VerifiedConsumer
    checks the echo before any credit and raises; under --policy detach the peer
    refuses the link and the client raises the peer's condition."""
    with Peer("--stream", f"{STREAM}={stream}", "--profile", "rabbitmq", "--quiet") as peer:
        unchecked = _consume(peer.address, _bad_sql(), _Handler())
        checked = _Checked()
        with pytest.raises(FilterNotInPlace) as raised:
            _consume(peer.address, _bad_sql(), checked)
    assert unchecked.got == list(range(COUNT))
    assert checked.got == [] and raised.value.missing == ("sql-filter",)
    with Peer("--stream", f"{STREAM}={stream}", "--profile", "rabbitmq", "--policy", "detach",
              "--quiet") as peer:
        refused = _Handler()
        with pytest.raises(BaseException) as detached:
            _consume(peer.address, _bad_sql(), refused)
    assert refused.got == []
    text = str(detached.value)
    assert "amqp:invalid-field" in text and "(line 1, column 10)" in text, text
