"""Filter sets at attach for a proton endpoint that sends: a handler mixin.

``FilteringSender`` goes before ``MessagingHandler`` in a handler's bases. On
every attach of a link it is the source of, it negotiates the receiver's
filter set (``negotiation.negotiate``), echoes the filters in place on the
source with filtex's capabilities, or refuses the link in the frame sequence
that proton, go-amqp and the RabbitMQ client all understand:

1. an attach with a null source and a null target (core 2.6.3: "no associated
   local terminus"; go-amqp waits for the detach only when both are null);
2. at once a detach carrying the condition, the description (the entry's key,
   the problem, line and column) and the info ``{field: filter}``.

The condition is set, and the link closed, in ``on_link_opened``: proton sends
no detach for a link closed before it was opened.

Deliveries are then filtered with ``filtex_matches(link, data)`` on their
encoded bytes. A handler that overrides ``on_link_opening`` or
``on_link_opened`` calls ``super()`` first.
"""
from __future__ import annotations

import itertools
import logging
from collections.abc import Iterable
from typing import Any

from proton import Condition, Data, Endpoint, Terminus, symbol

from ..described.descriptors import capabilities
from ..forms import view
from ..limits import RESOURCE_LIMIT, Limits
from ..names import Dialect
from .negotiation import Negotiation, Refusal, negotiate
from .profiles import SPEC, Policy, Profile
from .wire import attach_room, remote_frame, shown

LOG = logging.getLogger("filtex.endpoint")


def echo(negotiation: Negotiation, data: Data) -> None:
    """Write the filters in place into a source's ``filter`` field."""
    data.clear()
    if negotiation.in_place:
        data.put_dict({symbol(k): v for k, v in negotiation.in_place.items()})


def refuse(link: Any) -> None:
    """Make the coming attach one with a null source and target."""
    link.source.type = Terminus.UNSPECIFIED
    link.target.type = Terminus.UNSPECIFIED


MAX_DESCRIPTION = 2_000   # characters of a refusal's description (a key may be long)


def condition_of(negotiation: Negotiation, frame: int | None = None) -> Condition:
    """The detach's condition; its description cut to fit ``frame`` bytes."""
    refusal = negotiation.refusal
    assert refusal is not None
    limit = MAX_DESCRIPTION if frame is None else max(64, min(MAX_DESCRIPTION, frame - 256) // 4)
    description = refusal.description
    if len(description) > limit:
        description = description[:limit - 3] + "..."
    return Condition(refusal.condition, description,
                     {symbol(k): symbol(v) for k, v in refusal.info.items()})


def refused_negotiation(condition: str, description: str) -> Negotiation:
    """A link refused before its filter set is read (a limit, a bad address)."""
    return Negotiation({}, None, (), Refusal(condition, description), {})


class FilteringSender:
    """Mixin for a proton ``MessagingHandler`` that is the source of links:
    negotiates, echoes or refuses filter sets, and filters deliveries. Settings
    are class attributes (or instance attributes set before the container runs)."""

    filtex_profile: Profile | str = SPEC
    filtex_dialect: Dialect | None = None
    filtex_policy: Policy | None = None
    filtex_limits: Limits | None = None
    filtex_delegate: Iterable[str | int] = ()
    filtex_mask_limits: bool = False

    def filtex_negotiate(self, link: Any) -> Negotiation:
        """Negotiate ``link``'s filter set and set up the attach to answer it.
        The echo must fit the client's max-frame-size: an entry that does not
        is refused (or left out, under ``omit``), and a link whose answering
        attach cannot fit even without its filters is refused."""
        room = attach_room(link)
        if room is not None and room < 0:
            result = refused_negotiation(RESOURCE_LIMIT, "the attach cannot be answered within "
                                         f"the receiver's max-frame-size of "
                                         f"{remote_frame(link):,} bytes")
        else:
            result = negotiate(link.remote_source, self.filtex_dialect,
                               profile=self.filtex_profile, policy=self.filtex_policy,
                               limits=self.filtex_limits, delegate=self.filtex_delegate,
                               mask_limits=self.filtex_mask_limits, max_echo=room)
        LOG.info("attach %s from %s: %s", shown(lambda: link.name),
                 shown(lambda: link.remote_source.address), result.summary()[:2000])
        link.filtex_negotiation = result
        if result.refused:
            refuse(link)
            return result
        link.source.copy(link.remote_source)
        echo(result, link.source.filter)
        link.source.capabilities.clear()
        link.source.capabilities.put_array(False, Data.SYMBOL)
        link.source.capabilities.enter()
        for capability in capabilities():
            link.source.capabilities.put_symbol(capability)
        link.source.capabilities.exit()
        link.target.copy(link.remote_target)
        return result

    @staticmethod
    def filtex_negotiation(link: Any) -> Negotiation | None:
        """The negotiation of a link this handler attached (None for others)."""
        try:
            result = link.filtex_negotiation
        except AttributeError:
            return None
        return result if isinstance(result, Negotiation) else None

    def filtex_matches(self, link: Any, data: bytes, connection: object = None) -> bool:
        """Whether the encoded message ``data`` passes ``link``'s filters;
        ``connection`` is the id of the connection it arrived on (no-local)."""
        result = self.filtex_negotiation(link)
        if result is None or result.filter is None:
            return False
        return result.filter.matches(view(data, connection),
                                     self.filtex_connection_id(link.connection))

    def filtex_connection_id(self, connection: Any) -> int:
        """A stable id of a connection for the no-local filter (proton's Python
        wrappers are made afresh; the id is kept in the connection's attributes)."""
        try:
            return int(connection.filtex_id)
        except AttributeError:
            ids = self.__dict__.setdefault("_filtex_ids", itertools.count(1))
            connection.filtex_id = next(ids)
            return int(connection.filtex_id)

    # --- proton's callbacks -------------------------------------------------------------

    def on_connection_opening(self, event: Any) -> None:
        event.connection.offered_capabilities = list(capabilities())
        parent = getattr(super(), "on_connection_opening", None)
        if parent is not None:
            parent(event)

    def on_link_opening(self, event: Any) -> None:
        if event.link.is_sender:
            self.filtex_negotiate(event.link)
        parent = getattr(super(), "on_link_opening", None)
        if parent is not None:
            parent(event)

    def on_link_opened(self, event: Any) -> None:
        link = event.link
        result = self.filtex_negotiation(link)
        if result is not None and result.refused and not link.state & Endpoint.LOCAL_CLOSED:
            link.condition = condition_of(result, remote_frame(link))
            link.close()
            return
        parent = getattr(super(), "on_link_opened", None)
        if parent is not None:
            parent(event)


__all__ = ["FilteringSender", "condition_of", "echo", "refuse", "refused_negotiation"]
