"""``filtex serve``: a filtering AMQP 1.0 peer for tests, on proton's reactor.

No broker that evaluates filters runs in CI or on a laptop (no emulator
evaluates them), so consumers' filters go untested. This peer serves message
files as *streams*: every receiver of a stream's address reads it from the
start (or from its RabbitMQ offset spec), through the filter set negotiated at
its attach, in a chosen dialect and broker profile. Sends to any other address
are kept as *queues*: each message goes to one receiver whose filters it
passes. Deliveries are evaluated on their encoded bytes, as received.

It is a test peer, not a broker: everything lives in memory, nothing is
persisted, there is no security beyond proton's defaults (SASL ANONYMOUS), no
transactions, and no flow control beyond the receivers' credit. A queue's message
is taken when it is sent (at most once): a released or rejected one is not
queued again.

The RabbitMQ profile also copies what RabbitMQ's own client checks: the
connection's ``product``/``version`` properties, the ``x-stream-offset``
annotation on stream deliveries, the offset specs (``first``, ``last``,
``next``, an offset, a timestamp: the files' messages count as written when the
peer started), and the Bloom-filter entries, applied per message exactly
(``rabbitmq:stream-filter`` values against the ``x-stream-filter-value``
annotation, ``rabbitmq:stream-match-unfiltered`` for messages without one): a
broker's Bloom filter may let more through, never fewer.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from proton import Data, Delivery, Link, symbol, timestamp
from proton.handlers import IncomingMessageHandler, MessagingHandler

from ..amqp.encode import _section
from ..amqp.encoded import _decode, _locate
from ..filter import Filter
from ..forms import view
from ..limits import Limits
from ..names import Dialect
from .negotiation import Negotiation
from .profiles import Policy, Profile, get_profile
from .sender import FilteringSender
from .streams import MATCH_UNFILTERED, OFFSET_SPEC, STREAM_FILTER, ValueStage, descriptor_name

LOG = logging.getLogger("filtex.serve")
_STREAM_OFFSET = symbol("x-stream-offset")
MAX_FRAME = 1 << 20   # bytes of one frame: an attach whose filter is as long as allowed fits
MAX_QUEUED = 1_000_000   # messages kept per queue address: a test peer stays bounded


@dataclass
class Stored:
    """A message as the peer keeps it: its bytes, the id of the connection it
    arrived on (None for a file's), and when it arrived (ms)."""
    data: bytes
    connection: int | None
    arrived: int


@dataclass
class Consumer:
    address: str
    filter: Filter
    stream: bool
    cursor: int = 0
    values: ValueStage | None = None   # rabbitmq:stream-filter, match-unfiltered
    delivered: int = 0
    skipped: int = 0


class Peer(FilteringSender, MessagingHandler):
    """The handler ``filtex serve`` runs (see the module's docstring).
    ``ready(host, port)`` is called once it listens."""

    def __init__(self, listen: str = "127.0.0.1:5672", *,
                 streams: Mapping[str, list[bytes]] | None = None,
                 profile: Profile | str = "spec", dialect: Dialect | None = None,
                 policy: Policy | None = None, limits: Limits | None = None,
                 why: bool = False, ready: Callable[[str, int], object] | None = None,
                 max_frame: int = MAX_FRAME) -> None:
        MessagingHandler.__init__(self, prefetch=0, auto_accept=False)
        # the peer reads each delivery's bytes itself
        kept: Any = self.handlers
        self.handlers = [h for h in kept if not isinstance(h, IncomingMessageHandler)]
        self.listen, self.why, self.ready, self.max_frame = listen, why, ready, max_frame
        self.streams = dict(streams or {})
        self.rules = get_profile(profile) if isinstance(profile, str) else profile
        self.filtex_profile = self.rules
        self.filtex_dialect, self.filtex_policy, self.filtex_limits = dialect, policy, limits
        started = int(time.time() * 1000)
        self.logs: dict[str, list[Stored | None]] = {
            a: [Stored(d, None, started) for d in data] for a, data in self.streams.items()}
        self.consumers: dict[Any, Consumer] = {}
        self.acceptor: Any = None

    # --- connections --------------------------------------------------------------------

    def on_start(self, event: Any) -> None:
        self.acceptor = event.container.listen(self.listen)
        host, port = self.listen.rsplit(":", 1)
        bound = self.acceptor._selectable._delegate.getsockname()
        if self.ready is not None:
            self.ready(host, bound[1] if int(port) == 0 else int(port))

    def on_connection_bound(self, event: Any) -> None:
        # room for an attach whose filter is as long as the limits allow (proton's
        # default is 32 KiB); a larger frame closes that connection, not the peer
        event.transport.max_frame_size = self.max_frame

    def on_connection_opening(self, event: Any) -> None:
        if self.rules.connection_properties:
            event.connection.properties = {
                symbol(k): v for k, v in self.rules.connection_properties.items()}
        super().on_connection_opening(event)

    # --- links --------------------------------------------------------------------------

    def on_link_opening(self, event: Any) -> None:
        link = event.link
        super().on_link_opening(event)
        if link.is_receiver:
            link.target.address = link.remote_target.address
            link.flow(1000)
            return
        link.snd_settle_mode = link.remote_snd_settle_mode   # as the receiver asks
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        result = self.filtex_negotiation(link)
        if result is None or result.refused:
            return
        address = link.remote_source.address or ""
        stream = address in self.streams
        log = self.logs.setdefault(address, [])
        assert result.filter is not None   # not refused
        consumer = Consumer(address, result.filter, stream)
        self._delegated(consumer, result, log)
        self.consumers[link] = consumer

    def _delegated(self, consumer: Consumer, result: Negotiation,
                   log: list[Stored | None]) -> None:
        """Apply the entries the broker interprets itself (RabbitMQ's)."""
        consumer.values = ValueStage.of(result.delegated)
        for key, value in result.delegated.items():
            descriptor = descriptor_name(value)
            if descriptor == OFFSET_SPEC:
                if consumer.stream:
                    consumer.cursor = _offset(value.value, log)
            elif descriptor not in (STREAM_FILTER, MATCH_UNFILTERED):
                LOG.info("delegated entry %s (%s) is not applied by this peer", key, descriptor)

    def on_link_closing(self, event: Any) -> None:
        self.consumers.pop(event.link, None)

    def on_link_closed(self, event: Any) -> None:
        self.consumers.pop(event.link, None)

    def on_connection_closed(self, event: Any) -> None:
        for link in [k for k in self.consumers if k.connection == event.connection]:
            self.consumers.pop(link, None)

    on_disconnected = on_connection_closed

    # --- messages -----------------------------------------------------------------------

    def on_delivery(self, event: Any) -> None:
        link, delivery = event.link, event.delivery
        if not link.is_receiver or not delivery.readable or delivery.partial:
            return
        data = link.recv(delivery.pending) or b""   # proton reads an empty payload as None
        link.advance()
        address = link.target.address or ""
        log = self.logs.setdefault(address, [])
        if address in self.streams or len(log) < MAX_QUEUED:
            log.append(Stored(data, self.filtex_connection_id(link.connection),
                              int(time.time() * 1000)))
            delivery.update(Delivery.ACCEPTED)
        else:
            delivery.update(Delivery.RELEASED)
        delivery.settle()
        link.flow(1)
        for consumer_link in list(self.consumers):
            if self.consumers[consumer_link].address == address:
                self._dispatch(consumer_link)

    def on_sendable(self, event: Any) -> None:
        self._dispatch(event.link)

    def _dispatch(self, link: Any) -> None:
        consumer = self.consumers.get(link)
        if consumer is None:
            return
        log = self.logs.get(consumer.address, [])
        receiving = self.filtex_connection_id(link.connection)
        while link.credit and consumer.cursor < len(log):
            stored = log[consumer.cursor]
            if stored is None:   # a queue's message another receiver took
                consumer.cursor += 1
                continue
            offset = consumer.cursor
            consumer.cursor += 1
            if not self._passes(consumer, stored, receiving, offset):
                consumer.skipped += 1
                continue
            data = stored.data
            if consumer.stream and self.rules.stream_offsets:
                data = annotated(data, offset)
            elif not consumer.stream:
                log[offset] = None   # taken from the queue
            delivery = link.delivery(str(offset).encode())
            link.send(data)
            link.advance()
            if link.snd_settle_mode == Link.SND_SETTLED:   # else settled on the receiver's
                delivery.settle()                           # outcome (at most once here)
            consumer.delivered += 1
        if link.drain_mode and link.credit and consumer.cursor >= len(log):
            link.drained()   # a draining receiver learns it has everything there is

    def _passes(self, consumer: Consumer, stored: Stored, receiving: int, offset: int) -> bool:
        message = view(stored.data, stored.connection)
        refused = consumer.values.refusal(message) if consumer.values is not None else None
        if refused is not None:
            self._skip(consumer, offset, refused)
            return False
        if consumer.filter.matches(message, receiving):
            return True
        if self.why:
            outcome = consumer.filter.outcome(message, receiving)
            self._skip(consumer, offset, "false" if outcome.result is False
                       else f"unknown: {outcome.reason}")
        return False

    def _skip(self, consumer: Consumer, offset: int, reason: str) -> None:
        if self.why:
            LOG.info("%s #%d not delivered: %s", consumer.address, offset, reason)



def _offset(spec: Any, log: list[Stored | None]) -> int:
    """Where a RabbitMQ offset spec starts reading a stream of ``len(log)``."""
    if spec == "first":
        return 0
    if spec == "last":
        return max(len(log) - 1, 0)
    if spec == "next":
        return len(log)
    if type(spec) is timestamp:
        return next((i for i, s in enumerate(log) if s is not None and s.arrived >= int(spec)),
                    len(log))
    if isinstance(spec, int) and not isinstance(spec, bool):
        return min(max(int(spec), 0), len(log))
    return 0


def annotated(data: bytes, offset: int) -> bytes:
    """``data`` with the message annotation ``x-stream-offset`` = ``offset``, as
    RabbitMQ adds to stream deliveries: the message-annotations section is
    rewritten (or inserted after the header and delivery annotations), every
    other section's bytes kept as they are."""
    try:
        sections = _locate(data)
    except Exception:   # an unreadable message is delivered as it is
        return data
    ends = [sections[c][1] for c in (0x70, 0x71) if c in sections]
    start = max(ends, default=0)
    annotations: dict[Any, Any] = {}
    end = start
    if 0x72 in sections:
        at, end = sections[0x72]
        decoded = _decode(data, at, end)
        if isinstance(decoded, dict):
            annotations.update(decoded)
    annotations[_STREAM_OFFSET] = offset
    encoded = Data()
    _section(encoded, 0x72, annotations)
    return data[:start] + encoded.encode() + data[end:]


__all__ = ["Peer", "annotated"]

