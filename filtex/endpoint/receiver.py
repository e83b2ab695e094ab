"""Filter sets at attach for a proton consumer: check the echo before any credit.

The sender echoes the filters actually in place, and "the receiving endpoint
MUST check that the filter in place meets its needs and take responsibility
for detaching if it does not" (AMQP core 3.5.3). RabbitMQ leaves a filter it
cannot apply out of the echo and delivers everything; no Python client checks.

``VerifiedFilter`` is a receiver option (``create_receiver(..., options=...)``)
that checks the echo when the peer's attach arrives, before the link's handler
has granted credit, against every entry the link asked for (its own and other
options', e.g. proton's ``Selector``). ``VerifiedConsumer`` is the same check
as a handler mixin, for clients that build their receivers themselves (the
RabbitMQ client: ``class Handler(VerifiedConsumer, AMQPMessagingHandler)``).
On a mismatch, either:

* ``"detach"`` (the default): the link is detached with ``amqp:precondition-failed``
  naming what is missing, and ``FilterNotInPlace`` is raised out of the
  container (or the blocking call) before any message could arrive; or
* ``"filter"``: the link is kept and the same filter set is applied here, to
  each delivery's encoded bytes: the application's handler receives exactly
  the messages it asked for; the others are settled with ``unmatched``
  (released by default: another consumer may want them).

``always_filter=True`` applies the filter here even when it is in place: what
RabbitMQ asks of clients using its Bloom filters (``rabbitmq:stream-filter``
lets through messages of other values that share a chunk), done exactly.

An echo can also prove nothing: RabbitMQ (its open says ``product`` RabbitMQ)
echoes the SQL and property filters of a reader of any queue and applies them
on streams only. Unless ``stream=True`` says the source is a stream (the
RabbitMQ client's ``Management.queue_info(name).queue_type`` tells),
``unproven`` says what to do with those filters: ``"warn"`` (the default: log
it, and take what comes), ``"detach"`` (``FilterNotInPlace``) or ``"filter"``
(apply them here, settling the others as ``unmatched`` says: on a queue,
``released`` gives them back to be delivered again, so ``rejected`` or
``accepted`` is what a reader of a queue wants).

Both work with any copy of proton (the classes of the link's own are used).
"""
from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import Any, Literal

from proton import Described, symbol

from .. import proton_copies
from ..proton_copies import UnreadableValue
from ..described import descriptors
from ..errors import FilterError
from ..filter import Filter
from ..forms import view
from ..limits import Limits
from ..names import Dialect
from .negotiation import Negotiation, negotiate
from .profiles import DELEGATED
from .streams import OFFSET_SPEC, ValueStage, descriptor_name

LOG = logging.getLogger("filtex.endpoint")
Mismatch = Literal["detach", "filter"]
Unproven = Literal["warn", "detach", "filter"]
# RabbitMQ echoes the SQL and property filters of any queue's reader and applies them
# on streams only (rabbit_stream_queue alone reads them, v4.2.0 to 4.3.5)
STREAM_ONLY = frozenset({"amqp:sql-filter", "amqp:properties-filter",
                         "amqp:application-properties-filter"})
PRECONDITION_FAILED = "amqp:precondition-failed"
# entries that place a reader in a stream rather than filter it: not required in the echo
POSITIONS = frozenset({OFFSET_SPEC})


class FilterNotInPlace(Exception):
    """The sender did not put in place the filters a receiver asked for.
    ``missing``: the keys left out or changed; ``condition``: what the link was
    detached with."""

    def __init__(self, description: str, missing: tuple[str, ...], echoed: dict[str, Any],
                 refused: bool = False) -> None:
        super().__init__(description)
        self.description, self.missing, self.echoed = description, missing, echoed
        self.condition = PRECONDITION_FAILED
        self.refused = refused


def _filter_map(data: Any) -> dict[str, Any]:
    value = proton_copies.to_own(data)
    if not isinstance(value, dict):
        return {}
    return {str.__str__(k): v for k, v in value.items() if issubclass(type(k), str)}


def _canonical(value: Any) -> Any:
    """A filter entry with its descriptor as a code where filtex knows it, so
    a symbol and its code (or an alias) compare equal."""
    if type(value) is not Described:
        return value
    try:
        return (descriptors.lookup(value.descriptor).code, value.value)
    except FilterError:
        return (value.descriptor, value.value)


class EchoCheck:
    """The check of one link's echo, and its client-side filter."""

    def __init__(self, dialect: Dialect, on_mismatch: Mismatch, always_filter: bool,
                 limits: Limits | None, unmatched: str, stream: bool | None = None,
                 unproven: Unproven = "warn") -> None:
        if on_mismatch not in ("detach", "filter"):
            raise ValueError(f"on_mismatch is 'detach' or 'filter', not {on_mismatch!r}")
        if unproven not in ("warn", "detach", "filter"):
            raise ValueError(f"unproven is 'warn', 'detach' or 'filter', not {unproven!r}")
        self.stream, self.unproven = stream, unproven
        if unmatched not in ("released", "accepted", "modified", "rejected"):
            raise ValueError(f"unmatched is released, accepted, modified or rejected, "
                             f"not {unmatched!r}")
        self.dialect, self.on_mismatch, self.always_filter = dialect, on_mismatch, always_filter
        self.limits, self.unmatched = limits, unmatched
        self.state = "pending"        # pending, open, filtering, failed, refused
        self.filter: Filter | None = None
        self.values: ValueStage | None = None
        self.failure: FilterNotInPlace | None = None

    def check(self, link: Any) -> None:
        """On the peer's attach: decide the link's state; raise on a detach."""
        asked = _filter_map(link.source.filter)
        if link.remote_source.type == 0:   # a null source: the peer refuses; its detach follows
            self.state = "refused"
            return
        unreadable = None
        try:   # the peer's bytes, by filtex's bounded decoder: a hostile echo is a mismatch
            echoed = _filter_map(link.remote_source.filter)
        except FilterError as error:
            echoed, unreadable = {}, error.problem
        bad = next((v for v in echoed.values() if type(v) is UnreadableValue), None)
        if bad is not None:
            echoed, unreadable = {}, f"the filter set cannot be decoded: {bad.reason}"
        missing = tuple(
            key for key, value in asked.items()
            if value is not None and descriptor_name(value) not in POSITIONS
            and (key not in echoed or _canonical(echoed[key]) != _canonical(value)))
        if unreadable is not None and not missing:
            missing = tuple(asked) or ("(the echo)",)
        unproven = () if missing else self._unproven(link, asked)
        filters_here = self.always_filter or (missing and self.on_mismatch == "filter") or \
            (unproven and self.unproven == "filter")
        if filters_here:
            self._compile(asked)
        if unproven and self.unproven == "detach":
            missing = unproven
        elif not missing:
            self.state = "filtering" if filters_here else "open"
            return
        description = (f"filters not in place: the peer left out or changed "
                       f"{', '.join(missing)} (asked {sorted(asked)}, echoed {sorted(echoed)})"
                       if unreadable is None and not unproven else
                       f"filters not in place: the peer's echo cannot be read ({unreadable})"
                       if unreadable is not None else
                       f"filters not in place: RabbitMQ echoes {', '.join(unproven)} and "
                       f"applies such filters on streams only, and this source is not known "
                       f"to be one")
        if self.on_mismatch == "filter":
            LOG.warning("%s; link %s filters client-side", description, link.name)
            self.state = "filtering"
            return
        LOG.error("%s; link %s detached", description, link.name)
        self.state = "failed"
        self.failure = FilterNotInPlace(description, missing, echoed)
        condition = _module(link, "_condition").Condition
        link.condition = condition(PRECONDITION_FAILED, description)
        link.close()
        raise self.failure

    def _unproven(self, link: Any, asked: dict[str, Any]) -> tuple[str, ...]:
        """The asked filters whose echo proves nothing: a RabbitMQ peer (its open
        says ``product`` RabbitMQ) echoes SQL and property filters on any queue
        and applies them on streams only; unless the source is known to be a
        stream (``stream=True``), they are warned of, refused or applied here,
        as ``unproven`` says. RabbitMQ's management API tells a queue's type
        (the RabbitMQ client's ``Management.queue_info(name).queue_type``)."""
        if self.stream:
            return ()
        try:
            properties = link.connection.remote_properties or {}
            product = properties.get("product") or properties.get(symbol("product"))
        except Exception:   # a peer's properties proton cannot give: not RabbitMQ's
            return ()
        if str(product) != "RabbitMQ":
            return ()
        keys = tuple(key for key, value in asked.items()
                     if _descriptor_symbol(value) in STREAM_ONLY)
        if keys and self.unproven == "warn":
            LOG.warning("RabbitMQ echoed %s of link %s, which it applies on streams only: "
                        "unless %s is a stream, every message arrives (check its type with "
                        "the management API; stream=True says it is one)", ", ".join(keys),
                        link.name, link.source.address)
        return keys

    def _compile(self, asked: dict[str, Any]) -> None:
        result = negotiate(asked, self.dialect, limits=self.limits,
                           delegate=DELEGATED)
        _raise_refusal(result)
        self.filter = result.filter
        self.values = ValueStage.of(result.delegated)

    def passes(self, data: bytes, connection: object) -> bool:
        message = view(data)
        if self.values is not None and self.values.refusal(message) is not None:
            return False
        assert self.filter is not None
        return self.filter.matches(message, connection)

    def deliver(self, event: Any, delegate: Any) -> bool:
        """Filter one delivery client-side; True when it was handled here (the
        delegate then only sees the event for its flow control)."""
        delivery = event.delivery
        link = event.link
        if delivery is None or not link.is_receiver or delivery.aborted \
                or not delivery.readable or delivery.partial:
            return False
        data = link.recv(delivery.pending)
        link.advance()
        delivery_class = type(delivery)
        if not self.passes(data, None):
            delivery.update(getattr(delivery_class, self.unmatched.upper()))
            delivery.settle()
            return True
        message = _module(link, "_message").Message()
        message.decode(data)
        event.message = message
        incoming = _incoming(delegate)
        handlers = _module(link, "_handlers")
        if link.state & type(link).LOCAL_CLOSED:
            if incoming.auto_accept:
                delivery.update(delivery_class.RELEASED)
                delivery.settle()
            return True
        try:
            incoming.on_message(event)
            if incoming.auto_accept:
                delivery.update(delivery_class.ACCEPTED)
                delivery.settle()
        except handlers.Reject:
            delivery.update(delivery_class.REJECTED)
            delivery.settle()
        except handlers.Release:
            delivery.update(delivery_class.MODIFIED)
            delivery.settle()
        return True


def _descriptor_symbol(value: Any) -> str | None:
    """An asked entry's descriptor as filtex's name for it (None: none known)."""
    if type(value) is not Described:
        return None
    try:
        return descriptors.lookup(value.descriptor).name
    except FilterError:
        return None


def _raise_refusal(result: Negotiation) -> None:
    """The receiver's own filter set cannot be compiled: its first error."""
    for entry in result.entries:
        if entry.status == "refused":
            raise FilterError(f"filter {entry.key}: {entry.problem or entry.message}",
                              entry.line or 1, entry.column or 1,
                              entry.condition or "amqp:invalid-field")
    if result.refusal is not None:
        raise FilterError(result.refusal.description, condition=result.refusal.condition)


def _module(link: Any, name: str) -> Any:
    """The module ``name`` of the proton copy ``link`` belongs to."""
    root = type(link).__module__.rpartition(".")[0]
    module = sys.modules.get(f"{root}.{name}")
    if module is None:
        module = __import__(f"{root}.{name}", fromlist=["_"])
    return module


def _incoming(delegate: Any) -> Any:
    """The ``IncomingMessageHandler`` of a messaging handler: what decodes and
    accepts its messages (client-side filtering hands it the ones that pass)."""
    found = _find_incoming(delegate, 4)
    if found is not None:
        return found
    raise TypeError("client-side filtering needs a proton MessagingHandler to hand the "
                    f"messages to, not {type(delegate).__name__}")


def _find_incoming(handler: Any, depth: int) -> Any:
    """Depth-first through proton's nested handlers (a connection's handler
    wraps the application's)."""
    if depth < 0:
        return None
    for child in getattr(handler, "handlers", ()) or ():
        if type(child).__name__ == "IncomingMessageHandler":
            return child
        found = _find_incoming(child, depth - 1)
        if found is not None:
            return found
    return None


class _Checking:
    """The link's handler while ``VerifiedFilter`` watches it: every event goes
    on to the handler that would have had it, except credit before the check."""

    def __init__(self, check: EchoCheck, inner: Any) -> None:
        self.check, self.inner = check, inner

    def _delegate(self, event: Any) -> Any:
        if self.inner is not None:
            return self.inner
        for owner in (event.session, event.connection):
            handler = getattr(owner, "handler", None) if owner is not None else None
            if handler is not None:
                return handler
        transport = event.transport   # the container's handler (none before a transport)
        container = getattr(transport, "_reactor", None) if transport is not None else None
        return container.handler if container is not None else None

    def on_unhandled(self, method: str, event: Any) -> None:
        check, delegate = self.check, self._delegate(event)
        if delegate is None:   # an event before the connection has a transport: no one's
            return
        link = getattr(event, "link", None)
        if link is not None and link.is_receiver and check.state == "pending":
            if method in ("on_link_local_open", "on_link_flow"):
                return   # no credit before the echo is checked
            if method == "on_link_remote_open":
                if link.state & type(link).LOCAL_CLOSED:
                    return
                check.check(link)
                if check.state == "refused":
                    return   # the peer's detach follows; the delegate gets its condition
        if method == "on_delivery" and check.state == "filtering":
            check.deliver(event, delegate)
        event.dispatch(delegate)


class VerifiedFilter:
    """A receiver option: ask for ``filters`` (a mapping of names to filters, as
    proton's ``Filter`` takes; optional) and check that every filter the link
    asks for is echoed in place (see the module's docstring)."""

    def __init__(self, filters: Mapping[Any, Any] | None = None, *, dialect: Dialect = "amqp",
                 on_mismatch: Mismatch = "detach", always_filter: bool = False,
                 limits: Limits | None = None, unmatched: str = "released",
                 stream: bool | None = None, unproven: Unproven = "warn") -> None:
        self.filters = dict(filters or {})
        if self.filters:   # the receiver's own filters are checked here, before any attach
            _raise_refusal(negotiate(self.filters, dialect, limits=limits, delegate=DELEGATED))
        self.settings = (dialect, on_mismatch, always_filter, limits, unmatched, stream,
                         unproven)
        EchoCheck(*self.settings)   # the settings are checked now, not at the attach
        self.check: EchoCheck | None = None

    def test(self, link: Any) -> bool:
        return bool(link.is_receiver)

    def apply(self, link: Any) -> None:
        if self.filters:
            asked = _filter_map(link.source.filter)
            asked.update({str(k): v for k, v in self.filters.items()})
            own = {symbol(k): v for k, v in asked.items()}
            link.source.filter.clear()
            _put_dict(link.source.filter, own)
        self.check = EchoCheck(*self.settings)
        link.handler = _Checking(self.check, link.handler)


def _put_dict(data: Any, value: dict[Any, Any]) -> None:
    """Put a filter set into a (possibly foreign) ``Data`` through its encoding."""
    from proton import Data
    own = Data()
    own.put_dict(value)
    data.decode(own.encode())


class VerifiedConsumer:
    """Mixin for a messaging handler (put it first in the bases) whose client
    builds the receiver itself, the RabbitMQ client among them: the same check
    as ``VerifiedFilter`` on every receiving link the handler handles. Settings
    are class or instance attributes."""

    filtex_dialect: Dialect = "amqp"
    filtex_on_mismatch: Mismatch = "detach"
    filtex_always_filter: bool = False
    filtex_limits: Limits | None = None
    filtex_unmatched: str = "released"
    filtex_stream: bool | None = None      # the source is a stream (RabbitMQ: echoes prove)
    filtex_unproven: Unproven = "warn"      # else, for RabbitMQ: warn, detach or filter here

    def _filtex_check(self, link: Any) -> EchoCheck | None:
        try:
            found = link.filtex_check
        except AttributeError:
            return None
        return found if isinstance(found, EchoCheck) else None

    def on_link_remote_open(self, event: Any) -> None:
        link = event.link
        if not link.is_receiver or link.state & type(link).LOCAL_CLOSED \
                or self._filtex_check(link) is not None:
            return   # (proton dispatches again an event whose handler raised)
        check = EchoCheck(self.filtex_dialect, self.filtex_on_mismatch,
                          self.filtex_always_filter, self.filtex_limits, self.filtex_unmatched,
                          self.filtex_stream, self.filtex_unproven)
        link.filtex_check = check
        check.check(link)

    def on_delivery(self, event: Any) -> None:
        check = self._filtex_check(event.link) if event.link is not None else None
        if check is not None and check.state == "filtering":
            check.deliver(event, self)
        parent = getattr(super(), "on_delivery", None)
        if parent is not None:
            parent(event)


__all__ = ["EchoCheck", "FilterNotInPlace", "VerifiedConsumer", "VerifiedFilter"]
