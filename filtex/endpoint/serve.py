"""``filtex serve``: a filtering AMQP 1.0 peer for tests, on proton's reactor.

No broker that evaluates filters runs in CI or on a laptop (no emulator
evaluates them), so consumers' filters go untested. This peer serves message
files as *streams*: every receiver of a stream's address reads it from the
start (or from its RabbitMQ offset spec), through the filter set negotiated at
its attach, in a chosen dialect and broker profile. Sends to any other address
are kept as *queues*: each message goes to one receiver whose filters it
passes. Deliveries are evaluated on their encoded bytes, as received.

It is a test peer, not a broker: everything lives in memory, nothing is
persisted, there is no security beyond proton's defaults (SASL ANONYMOUS) and
no transactions. A queue keeps a message until an outcome settles it
(``logs``: released, modified and unsettled messages are delivered again).

What a client sends is read inside a boundary and bounded (``bounds``): the
filter set by filtex's own decoder, names and addresses checked as UTF-8,
messages checked at the door, every byte kept counted; deliveries are written
in slices of ``dispatch_slice`` messages per link and turn, and no further
than ``max_buffered`` bytes ahead of a session's socket, so one reader never
holds up another's attach and a reader that never reads holds only that. The
container runs under a ``reactor.Supervisor``: an unexpected error closes its
connection with ``amqp:internal-error`` and the peer goes on.

The RabbitMQ profiles (``rabbitmq``, the newest release, ``rabbitmq-4.2``,
``rabbitmq-4.3``) also copy what RabbitMQ does: its client's checks of the
connection (``product``, ``version``), the ``x-stream-offset`` annotation on
stream deliveries, the release's reading of the filter set (``rabbitmq``), the
offset specs (``first``, ``last``, ``next``, an offset, a timestamp, a max-age
such as ``10m``: the files' messages count as written when the peer started),
the Bloom filter of ``rabbitmq:stream-filter`` values applied per chunk, as
RabbitMQ does (``bloom``: a chunk holding a value asked for is delivered
whole, other values included; the files' chunks are ``chunk_size`` messages,
or RabbitMQ's writer batches, 32 doubling to 8,192; a message sent to a stream
is a chunk of its own), and filters on a queue echoed but not applied
(RabbitMQ applies them on streams only; ``apply_queue_filters`` applies them).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from proton import Condition, Delivery, Endpoint, Link
from proton.handlers import IncomingMessageHandler, MessagingHandler, OutgoingMessageHandler
from proton.reactor import Container

from ..compiler import compile_filter_set
from ..forms import view
from ..limits import RESOURCE_LIMIT, Limits
from ..names import Dialect
from .bounds import DEFAULT_SERVE_LIMITS, ServeLimits
from .logs import Consumer, Log, Stored
from .negotiation import INVALID_FIELD, Negotiation, Refusal
from .profiles import Policy, Profile, get_profile
from .reactor import GuardedAcceptor, Supervisor, polling_container
from .rewrite import annotated, readable, redelivered
from .sender import FilteringSender, refuse
from .bloom import DEFAULT_SIZE, SIZES, Matcher, chunk_filter, writer_batches
from .rabbitmq import RABBITMQ_4_2
from .streams import (MATCH_UNFILTERED, OFFSET_SPEC, STREAM_FILTER, ValueStage,
                      descriptor_name, stream_filter_value)
from .wire import peer_text, shown

LOG = logging.getLogger("filtex.serve")
MAX_FRAME = DEFAULT_SERVE_LIMITS.max_frame
DECODE_ERROR = "amqp:decode-error"
MESSAGE_SIZE_EXCEEDED = "amqp:link:message-size-exceeded"
KEPT_OVERHEAD = 256      # bytes each kept message is counted for beyond its own
ADDRESS_OVERHEAD = 1_024  # bytes each queue address is counted for
CLOSE_GRACE = 5.0        # seconds a closed connection has to answer before it is cut
VIEWS = 4_096            # message views kept for the readers that meet them next
VIEW_BYTES = 16 << 20    # bytes of messages those views hold at most
_BACKOFF = (0.001, 0.05)  # seconds between turns while every ready link waits for its socket


class Peer(FilteringSender, MessagingHandler):
    """The handler ``filtex serve`` runs (see the module's docstring).
    ``ready(host, port)`` is called once it listens; ``container()`` is the
    supervised, polling container to run it in."""

    def __init__(self, listen: str = "127.0.0.1:5672", *,
                 streams: Mapping[str, list[bytes]] | None = None,
                 profile: Profile | str = "spec", dialect: Dialect | None = None,
                 policy: Policy | None = None, limits: Limits | None = None,
                 why: bool = False, ready: Callable[[str, int], object] | None = None,
                 max_frame: int | None = None, bounds: ServeLimits | None = None,
                 chunk_size: int | None = None, bloom_size: int = DEFAULT_SIZE,
                 apply_queue_filters: bool | None = None) -> None:
        MessagingHandler.__init__(self, prefetch=0, auto_accept=False)
        # the peer reads each delivery's bytes and each outcome itself
        kept: Any = self.handlers
        self.handlers = [h for h in kept if not isinstance(
            h, (IncomingMessageHandler, OutgoingMessageHandler))]
        bounds = bounds or DEFAULT_SERVE_LIMITS
        if max_frame is not None:
            bounds = bounds.replace(max_frame=max_frame)
        self.bounds = bounds
        self.listen, self.why, self.ready = listen, why, ready
        self.streams = dict(streams or {})
        self.rules = get_profile(profile) if isinstance(profile, str) else profile
        self.filtex_profile = self.rules
        self.filtex_dialect, self.filtex_policy, self.filtex_limits = dialect, policy, limits
        started = int(time.time() * 1000)
        if bloom_size not in SIZES:
            raise ValueError(f"bloom_size is {SIZES.start} to {SIZES.stop - 1} bytes, "
                             f"not {bloom_size}")
        self.bloom_size = bloom_size
        self.apply_queue_filters = (self.rules.queue_filters_applied
                                    if apply_queue_filters is None else apply_queue_filters)
        self._every = compile_filter_set({})   # a queue reader's where filters are not applied
        self.logs: dict[str, Log] = {
            a: Log(True, [Stored(d, None, started) for d in data],
                   writer_batches(len(data), chunk_size if self.rules.chunked_values else 1))
            for a, data in self.streams.items()}
        self.consumers: dict[Any, Consumer] = {}
        self.receivers: dict[Any, str] = {}        # receiving link -> its address
        self.links: dict[int, set[Any]] = {}        # connection id -> its open links
        self.connections: dict[int, Any] = {}       # connection id -> connection, while served
        self.bound: dict[int, Any] = {}             # every connection until its socket closes
        self.stored_bytes = 0
        self.acceptor: Any = None
        self.port: int | None = None
        self._container: Any = None
        self._ready_links: dict[Any, None] = {}
        self._turn: Any = None
        self._turn_delay = 0.0
        self._backoff = _BACKOFF[0]
        self._consumer_ids = 0
        self._views: dict[Stored, Any] = {}
        self._view_bytes = 0
        # messages still arriving: link -> (its connection's id, bytes so far)
        self._partial: dict[Any, tuple[int, int]] = {}
        self._partial_bytes = 0
        self._partial_by_connection: dict[int, int] = {}

    def container(self) -> Container:
        """A container for this peer: polled I/O, a guarded listener, supervised."""
        return polling_container(Supervisor(self), written=self.written)

    # --- connections --------------------------------------------------------------------

    def on_start(self, event: Any) -> None:
        self._container = event.container
        host, port = self.listen.rsplit(":", 1)
        self.acceptor = GuardedAcceptor(event.container, host.strip("[]"), int(port))
        self.port = self.acceptor.port()
        if self.ready is not None:
            self.ready(host, self.port)

    def on_connection_bound(self, event: Any) -> None:
        connection, transport = event.connection, event.transport
        # room for an attach whose filter is as long as the limits allow (proton's
        # default is 32 KiB); a larger frame closes that connection, not the peer
        transport.max_frame_size = self.bounds.max_frame
        transport.idle_timeout = self.bounds.idle_timeout
        ident = self.filtex_connection_id(connection)
        self.bound[ident] = connection
        self._schedule(self.bounds.header_timeout, _Deadline(self, ident, "open"))
        if len(self.connections) >= self.bounds.max_connections:
            LOG.warning("connection %d refused: %d connections open (max_connections)",
                        ident, len(self.connections))
            connection.condition = Condition(
                RESOURCE_LIMIT, f"too many connections (limit max_connections = "
                f"{self.bounds.max_connections:,})")
            connection.open()
            connection.close()
            return
        self.connections[ident] = connection

    def on_connection_opening(self, event: Any) -> None:
        # proton's acceptor leaves an accepted connection's container-id empty
        # (core 2.7.1 requires one): the peer's own
        if self._container is not None:
            event.connection.container = self._container.container_id
        if self.rules.connection_properties:
            from proton import symbol
            event.connection.properties = {
                symbol(k): v for k, v in self.rules.connection_properties.items()}
        super().on_connection_opening(event)

    def on_connection_closed(self, event: Any) -> None:
        self._forget(event.connection)

    def on_connection_error(self, event: Any) -> None:
        self._forget(event.connection)
        if not event.connection.state & Endpoint.LOCAL_CLOSED:
            event.connection.close()

    def on_disconnected(self, event: Any) -> None:
        self._unbind(event.connection)

    def on_transport_closed(self, event: Any) -> None:
        self._unbind(event.connection)

    def _unbind(self, connection: Any) -> None:
        """``connection``'s socket is closed: nothing of it is kept any more
        (a pending deadline finds it gone)."""
        if connection is not None:
            self._forget(connection)
            self.bound.pop(self.filtex_connection_id(connection), None)

    def on_fault(self, connection: Any) -> None:
        """The supervisor closes ``connection`` after an unexpected error."""
        self._forget(connection)
        self._schedule(CLOSE_GRACE, _Deadline(self, self.filtex_connection_id(connection),
                                              "close"))

    def _forget(self, connection: Any) -> None:
        """Everything kept for ``connection``: its readers' unsettled queue
        messages go back; its links, readers and record are dropped."""
        if connection is None:
            return
        ident = self.filtex_connection_id(connection)
        for link in list(self.links.pop(ident, ())):
            self._drop_link(link)
        for link in [k for k in self.consumers if k.connection == connection]:
            self._drop_link(link)
        self.connections.pop(ident, None)

    def cut(self, connection: Any, why: str) -> None:
        """Close ``connection``'s socket without waiting for its peer."""
        transport = connection.transport
        LOG.info("connection %d cut: %s", self.filtex_connection_id(connection), why)
        self._forget(connection)
        if transport is not None:
            transport.close_tail()
            transport.close_head()

    # --- links --------------------------------------------------------------------------

    def on_link_opening(self, event: Any) -> None:
        link = event.link
        refusal = self._link_refusal(link)
        if refusal is not None:
            LOG.info("attach %s refused: %s %s", shown(lambda: link.name),
                     refusal.condition, refusal.description)
            link.filtex_negotiation = Negotiation({}, None, (), refusal, {}, self.rules.name)
            refuse(link)
            return
        self.links.setdefault(self.filtex_connection_id(link.connection), set()).add(link)
        if link.is_receiver:
            address, _ = peer_text(lambda: link.remote_target.address)
            link.target.address = address
            link.max_message_size = self.bounds.max_message_size
            self.receivers[link] = address or ""
            link.flow(1000)
            return
        super().on_link_opening(event)
        link.snd_settle_mode = link.remote_snd_settle_mode   # as the receiver asks
        link.rcv_settle_mode = link.remote_rcv_settle_mode
        result = self.filtex_negotiation(link)
        if result is None or result.refused:
            return
        address, _ = peer_text(lambda: link.remote_source.address)
        log = self._log(address or "")
        assert result.filter is not None   # not refused
        self._consumer_ids += 1
        applied = result.filter
        if not log.stream and not self.apply_queue_filters:
            applied = self._every   # echoed, not applied (RabbitMQ: streams only)
        consumer = Consumer(self._consumer_ids, link, address or "", applied, log)
        if log.stream:
            self._delegated(consumer, result, log)
        log.readers[consumer] = None
        self.consumers[link] = consumer

    def _link_refusal(self, link: Any) -> Refusal | None:
        """Why ``link`` is refused before its filters are read: an address
        that is no text, or one link too many on its connection."""
        terminus = "target" if link.is_receiver else "source"
        _, problem = peer_text(lambda: (link.remote_target if link.is_receiver
                                        else link.remote_source).address)
        if problem is not None:
            return Refusal(INVALID_FIELD, f"the {terminus} address is {problem}",
                           {"field": "address"})
        _, problem = peer_text(lambda: link.name)
        if problem is not None:
            return Refusal(INVALID_FIELD, f"the link name is {problem}", {"field": "name"})
        open_links = self.links.get(self.filtex_connection_id(link.connection), ())
        if len(open_links) >= self.bounds.max_links:
            return Refusal(RESOURCE_LIMIT, f"too many links on this connection "
                           f"(limit max_links = {self.bounds.max_links:,})", {})
        return None

    def _log(self, address: str) -> Log:
        log = self.logs.get(address)
        if log is None:
            log = self.logs[address] = Log(False)
        return log

    def _delegated(self, consumer: Consumer, result: Negotiation, log: Log) -> None:
        """Apply the stream options the broker interprets itself (RabbitMQ's):
        its first offset spec in the set, and its stream-filter values exactly
        per message, or per chunk by the chunks' Bloom filters as RabbitMQ does."""
        stage = ValueStage.of(result.delegated)
        if stage is not None and self.rules.chunked_values:
            if stage.values is not None:   # RabbitMQ ignores match-unfiltered alone
                consumer.chunks = Matcher(stage.values, stage.match_unfiltered,
                                          self.bloom_size)
        else:
            consumer.values = stage
        placed = False
        for key, value in result.delegated.items():
            descriptor = descriptor_name(value)
            if descriptor == OFFSET_SPEC and not placed:
                placed = True
                consumer.cursor = self._offset(value.value, log)
            elif descriptor not in (OFFSET_SPEC, STREAM_FILTER, MATCH_UNFILTERED):
                LOG.info("delegated entry %s (%s) is not applied by this peer", key[:100],
                         descriptor)

    def _offset(self, spec: Any, log: Log) -> int:
        """Where an offset spec starts reading ``log``: as the profile's
        RabbitMQ release reads it, else as RabbitMQ 4.2 did."""
        release = self.rules.session or RABBITMQ_4_2
        chunks = log.chunk_starts
        arrived = [stored.arrived if (stored := log.get(start)) is not None else 0
                   for start in chunks]
        return release.offset(spec, chunks, arrived, len(log), int(time.time() * 1000))

    def on_link_opened(self, event: Any) -> None:
        super().on_link_opened(event)

    def on_link_closing(self, event: Any) -> None:
        self._drop_link(event.link)

    def on_link_closed(self, event: Any) -> None:
        self._drop_link(event.link)

    def on_link_error(self, event: Any) -> None:
        self._drop_link(event.link)

    def on_link_remote_detach(self, event: Any) -> None:
        """A detach that does not close the link (core 2.6.3: it may be
        resumed): the peer resumes nothing, so the link ends here as if closed:
        its reader's unsettled messages go back and the peer detaches too."""
        link = event.link
        self._drop_link(link)
        if not link.state & Endpoint.LOCAL_CLOSED:
            link.detach()

    def on_session_closing(self, event: Any) -> None:
        self._drop_session(event.session)

    def on_session_error(self, event: Any) -> None:
        self._drop_session(event.session)

    def _drop_session(self, session: Any) -> None:
        """A session ended by the client, with or without detaching its links:
        each of its links is dropped as if it had detached."""
        ident = self.filtex_connection_id(session.connection)
        for link in [k for k in self.links.get(ident, ()) if k.session == session]:
            self._drop_link(link)

    def _drop_link(self, link: Any) -> None:
        """A link gone: its reader's unsettled queue messages go back, unsettled."""
        self._arrived(link)
        self.receivers.pop(link, None)
        self._ready_links.pop(link, None)
        links = self.links.get(self.filtex_connection_id(link.connection))
        if links is not None:
            links.discard(link)
        consumer = self.consumers.pop(link, None)
        if consumer is None:
            return
        consumer.log.readers.pop(consumer, None)
        for offset, stored in consumer.unsettled.values():
            stored.failures += 1
            self._put_back(consumer.log, offset, stored)
        consumer.unsettled.clear()
        if consumer.log.idle():
            self.logs.pop(consumer.address, None)

    # --- messages in --------------------------------------------------------------------

    def on_delivery(self, event: Any) -> None:
        link, delivery = event.link, event.delivery
        if link.is_sender:
            self._outcome(link, delivery)
            return
        if delivery.aborted:
            self._arrived(link)
            delivery.settle()
            return
        if delivery.pending > self.bounds.max_message_size:
            self._too_large(link, delivery, MESSAGE_SIZE_EXCEEDED, f"a message is larger than "
                            f"the link's max-message-size of "
                            f"{self.bounds.max_message_size:,} bytes")
            return
        if not delivery.readable or delivery.partial:
            self._arriving(link, delivery)
            return
        self._arrived(link)
        data = link.recv(delivery.pending) or b""   # proton reads an empty payload as None
        link.advance()
        address = self.receivers.get(link)
        if address is None:   # a link refused or gone
            delivery.update(Delivery.RELEASED)
            delivery.settle()
            return
        problem = readable(data)
        refused = None
        if problem is not None:
            refused = Condition(DECODE_ERROR, f"the message cannot be read: {problem}")
        else:
            refused = self._keep(address, data, self.filtex_connection_id(link.connection))
        if refused is not None:
            LOG.info("message to %s rejected: %s", shown(lambda: address), refused.description)
            delivery.local.condition = refused
            delivery.update(Delivery.REJECTED)
        else:
            delivery.update(Delivery.ACCEPTED)
        delivery.settle()
        link.flow(1)

    def _arriving(self, link: Any, delivery: Any) -> None:
        """Count the bytes of a message still arriving on ``link`` (a link has
        at most one): unfinished messages may hold ``max_message_size`` bytes
        on one connection and ``max_stored_bytes`` in all, else the link that
        went over is detached with amqp:resource-limit-exceeded."""
        ident = self.filtex_connection_id(link.connection)
        _, before = self._partial.get(link, (ident, 0))
        grown = delivery.pending - before
        self._partial[link] = (ident, delivery.pending)
        self._partial_bytes += grown
        on_connection = self._partial_by_connection.get(ident, 0) + grown
        self._partial_by_connection[ident] = on_connection
        if on_connection > self.bounds.max_message_size:
            self._too_large(link, delivery, RESOURCE_LIMIT,
                            f"{on_connection:,} bytes of unfinished messages on this "
                            f"connection (limit max_message_size = "
                            f"{self.bounds.max_message_size:,})")
        elif self._partial_bytes > self.bounds.max_stored_bytes:
            self._too_large(link, delivery, RESOURCE_LIMIT,
                            f"the peer is receiving {self._partial_bytes:,} bytes of unfinished "
                            f"messages (limit max_stored_bytes = "
                            f"{self.bounds.max_stored_bytes:,})")

    def _arrived(self, link: Any) -> None:
        """``link``'s message arrived whole, was aborted, or the link is gone."""
        found = self._partial.pop(link, None)
        if found is None:
            return
        ident, size = found
        self._partial_bytes -= size
        left = self._partial_by_connection.pop(ident, 0) - size
        if left > 0:
            self._partial_by_connection[ident] = left

    def _too_large(self, link: Any, delivery: Any, condition: str, why: str) -> None:
        LOG.info("message on %s too large: %s; link detached", shown(lambda: link.name), why)
        link.recv(delivery.pending)   # what arrived so far is let go
        delivery.settle()
        if not link.state & Endpoint.LOCAL_CLOSED:
            link.condition = Condition(condition, why)
            link.close()
        self._drop_link(link)

    def _keep(self, address: str, data: bytes, connection: int) -> Condition | None:
        """Store a received message; the condition it is rejected with, if any."""
        log = self.logs.get(address)
        cost = len(data) + KEPT_OVERHEAD + (ADDRESS_OVERHEAD if log is None else 0)
        held = log.bytes if log is not None else 0
        if held + cost > self.bounds.max_queue_bytes:
            return Condition(RESOURCE_LIMIT, f"{address[:100]!r} holds {held:,} bytes "
                             f"(limit max_queue_bytes = {self.bounds.max_queue_bytes:,})")
        if self.stored_bytes + cost > self.bounds.max_stored_bytes:
            return Condition(RESOURCE_LIMIT, f"the peer holds {self.stored_bytes:,} bytes "
                             f"(limit max_stored_bytes = {self.bounds.max_stored_bytes:,})")
        log = self._log(address)
        log.bytes += cost
        log.appended += 1
        self.stored_bytes += cost
        log.append(Stored(data, connection, int(time.time() * 1000)))
        for consumer in list(log.readers):
            self._wake(consumer.link)
        return None

    def _release_bytes(self, log: Log, stored: Stored) -> None:
        """A queue's message gone (settled): its bytes are no longer counted,
        nor kept in a view."""
        cost = len(stored.data) + KEPT_OVERHEAD
        log.bytes -= cost
        self.stored_bytes -= cost
        self._forget_view(stored)

    # --- outcomes -----------------------------------------------------------------------

    def _outcome(self, link: Any, delivery: Any) -> None:
        state = delivery.remote_state
        final = state in (Delivery.ACCEPTED, Delivery.REJECTED, Delivery.RELEASED,
                          Delivery.MODIFIED)
        if not final and not delivery.settled:
            return
        consumer = self.consumers.get(link)
        held = consumer.unsettled.pop(delivery.tag, None) if consumer is not None else None
        if held is not None and consumer is not None:   # a queue's message
            offset, stored = held
            log = consumer.log
            if state == Delivery.RELEASED:
                self._put_back(log, offset, stored)
            elif state == Delivery.MODIFIED:
                if delivery.remote.failed:
                    stored.failures += 1
                if delivery.remote.undeliverable:
                    stored.excluded = stored.excluded | {consumer.id}
                self._put_back(log, offset, stored)
            elif state == Delivery.REJECTED or final or delivery.settled:
                if state == Delivery.REJECTED:
                    LOG.info("%s #%d rejected by its reader: discarded", consumer.address[:100],
                             offset)
                self._release_bytes(log, stored)
        delivery.settle()

    def _put_back(self, log: Log, offset: int, stored: Stored) -> None:
        for reader in log.put_back(offset, stored):
            self._wake(reader.link)

    # --- messages out -------------------------------------------------------------------

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        if link.is_sender and link.credit and link.state & Endpoint.LOCAL_ACTIVE \
                and link.state & Endpoint.REMOTE_ACTIVE:
            self._wake(link, now=True)

    def _wake(self, link: Any, now: bool = False) -> None:
        """``link`` may have work: ``now``, a new reader's first delivery (or a
        known reader's slice) at once, without waiting for a turn; the rest in
        turns, so that readers granting credit together each get their first
        message before any of them gets a whole slice."""
        if link not in self.consumers:
            return
        if now and self._dispatch(link, first=not self._has_delivered(link)) == "done":
            return
        self._ready_links[link] = None
        self._schedule_turn(0.0)

    def _schedule(self, delay: float, handler: Any) -> None:
        if self._container is not None:
            self._container.schedule(delay, handler)

    def _schedule_turn(self, delay: float) -> None:
        if self._container is None:
            return
        if self._turn is not None:
            if delay > 0 or self._turn_delay == 0:
                return
            self._turn.cancel()   # a waiting turn brought forward
        self._turn_delay = delay
        self._turn = self._container.schedule(delay, _Turn(self))

    def written(self, transport: Any) -> None:
        """Bytes of ``transport`` went out: its waiting links go on now."""
        if self._ready_links and self._turn_delay > 0:
            self._backoff = _BACKOFF[0]
            self._schedule_turn(0.0)

    def turn(self) -> None:
        """One slice for every link with work: first one delivery for each link
        that has had none (a new reader does not wait for a round of the
        others), then a slice each, round-robin (a link that sent goes to the
        back, so links a full buffer stopped go first next time); the next
        turn at once if any moved, later (backing off, or as soon as a socket
        takes bytes) while all wait."""
        self._turn = None
        moved = False
        waiting = [link for link in self._ready_links if not self._has_delivered(link)]
        for link in waiting:   # every new reader's first delivery, before anyone's slice
            try:
                moved = self._dispatch(link, first=True) != "blocked" or moved
            except Exception:
                LOG.exception("unexpected error while delivering; closing that connection")
                self._fault(link)
        for link in list(self._ready_links):
            consumer = self.consumers.get(link)
            before = consumer.delivered if consumer is not None else 0
            try:
                result = self._dispatch(link)
            except Exception:   # the supervisor's line, for work outside any event
                LOG.exception("unexpected error while delivering; closing that connection")
                self._fault(link)
                continue
            if result == "done":
                self._ready_links.pop(link, None)
            elif consumer is not None and consumer.delivered > before:
                del self._ready_links[link]
                self._ready_links[link] = None
            moved = moved or result != "blocked"
        if self._ready_links:
            self._backoff = _BACKOFF[0] if moved else min(self._backoff * 2, _BACKOFF[1])
            self._schedule_turn(0.0 if moved else self._backoff)

    def _has_delivered(self, link: Any) -> bool:
        consumer = self.consumers.get(link)
        return consumer is None or consumer.delivered > 0

    def _fault(self, link: Any) -> None:
        self._ready_links.pop(link, None)
        connection = link.connection
        try:
            self.on_fault(connection)
            connection.condition = Condition("amqp:internal-error", "internal error")
            connection.close()
        except Exception:
            LOG.exception("unexpected error while closing a connection after an error")

    def _buffered(self, link: Any) -> int:
        """Bytes written to ``link``'s session and transport, not yet on the socket."""
        transport = link.transport
        pending = 0
        if transport is not None:
            try:
                pending = max(int(transport.pending()), 0)
            except Exception:   # a transport closing
                return self.bounds.max_buffered
        return int(link.session.outgoing_bytes) + pending

    def _dispatch(self, link: Any, first: bool = False) -> str:
        """Deliver one slice to ``link``: "done" (no credit or nothing left),
        "more" (the slice ended) or "blocked" (its session's buffer is full).
        ``first``: only until its first delivery."""
        consumer = self.consumers.get(link)
        if consumer is None or not link.state & Endpoint.LOCAL_ACTIVE:
            return "done"
        log = consumer.log
        receiving = self.filtex_connection_id(link.connection)
        left = self.bounds.dispatch_slice
        wanted = consumer.delivered + 1 if first else None
        room = self.bounds.max_buffered - self._buffered(link)
        while link.credit:
            if room <= 0:
                return "blocked"
            if left <= 0:
                return "more"
            offset = consumer.next_offset()
            if offset is None:
                break
            left -= 1
            stored = log.get(offset)
            if stored is None or consumer.id in stored.excluded:
                continue   # a queue's message another reader holds, or not for this one
            if not self._passes(consumer, stored, receiving, offset):
                consumer.skipped += 1
                continue
            room -= self._send(link, consumer, offset, stored)
            if consumer.delivered == wanted:
                return "more"
        if link.drain_mode and link.credit and consumer.caught_up():
            link.drained()   # a draining receiver learns it has everything there is
        return "done"

    def _send(self, link: Any, consumer: Consumer, offset: int, stored: Stored) -> int:
        log = consumer.log
        data = stored.data
        if log.stream:
            if self.rules.stream_offsets:
                data = annotated(data, offset)
        else:
            if stored.failures:   # rewritten before it is taken: a failure loses nothing
                data = redelivered(data, stored.failures)
            log.take(offset)
        delivery = link.delivery(str(offset).encode())
        link.send(data)
        link.advance()
        if link.snd_settle_mode == Link.SND_SETTLED:
            delivery.settle()   # the receiver asked for at most once
            if not log.stream:
                self._release_bytes(log, stored)
        elif not log.stream:
            consumer.unsettled[delivery.tag] = (offset, stored)
        consumer.delivered += 1
        return len(data)

    def _view(self, stored: Stored) -> Any:
        """The message's view, shared by the readers that meet it about the same
        time (readers of one log move together, a slice at a time): each view
        is made once, not once per reader. The newest ``VIEWS`` are kept, of
        ``VIEW_BYTES`` of messages at most (a view holds its message's bytes:
        the cache must not keep what the queues let go)."""
        views = self._views
        found = views.get(stored)
        if found is None:
            found = views[stored] = view(stored.data, stored.connection)
            self._view_bytes += len(stored.data)
            while len(views) > VIEWS or (self._view_bytes > VIEW_BYTES and len(views) > 1):
                self._view_bytes -= len(next(iter(views)).data)
                del views[next(iter(views))]
        return found

    def _forget_view(self, stored: Stored) -> None:
        if self._views.pop(stored, None) is not None:
            self._view_bytes -= len(stored.data)

    def _chunk_filter(self, log: Log, index: int) -> int | None:
        """The Bloom filter of ``log``'s chunk ``index``, made when first read."""
        found = log.chunk_filters.get(index, -1)
        if found != -1:
            return found
        values = []
        for offset in log.chunk_range(index):
            stored = log.get(offset)
            value = stream_filter_value(self._view(stored)) if stored is not None else None
            values.append(value.encode("utf-8", "surrogatepass") if value is not None else None)
        made = log.chunk_filters[index] = chunk_filter(values, self.bloom_size)
        return made

    def _passes(self, consumer: Consumer, stored: Stored, receiving: int, offset: int) -> bool:
        if consumer.chunks is not None:
            index = consumer.log.chunk(offset)
            if not consumer.chunks.passes(self._chunk_filter(consumer.log, index)):
                self._skip(consumer, offset, f"chunk {index}: no value asked for "
                           "(rabbitmq:stream-filter, per chunk)")
                return False
        message = self._view(stored)
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
            LOG.info("%s #%d not delivered: %s", consumer.address[:100], offset, reason)


class _Turn:
    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    def on_timer_task(self, event: Any) -> None:
        self.peer.turn()


class _Deadline:
    """Cut a connection that has not opened (``"open"``) or not finished
    closing (``"close"``) when its time is up. It holds the connection's id,
    not the connection: a connection gone before its deadline is freed at once
    with everything it held, not kept until the timer fires."""

    def __init__(self, peer: Peer, ident: int, waiting_for: str) -> None:
        self.peer, self.ident, self.waiting_for = peer, ident, waiting_for

    def on_timer_task(self, event: Any) -> None:
        connection = self.peer.bound.get(self.ident)
        if connection is None:
            return
        transport = connection.transport
        if transport is None or transport.closed:
            return
        if self.waiting_for == "open" and connection.state & Endpoint.REMOTE_UNINIT:
            self.peer.cut(connection, f"no open within {self.peer.bounds.header_timeout:g} s "
                          "(header_timeout)")
        elif self.waiting_for == "close" or (connection.state & Endpoint.LOCAL_CLOSED):
            self.peer.cut(connection, "closed by the peer, not answered in time")


__all__ = ["Peer", "annotated"]
