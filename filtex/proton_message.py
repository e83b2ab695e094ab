"""A ``proton.Message`` read through its API: the proton form of a message.

``ProtonMessage`` implements filtex's reading protocol (``filtex.message``)
over a proton message without converting it: each section is built from the
proton attributes on first read, and only the sections a filter reads.

proton 0.40's API cannot tell some absent fields from their defaults, so
filtex reads those as absent when they hold the default (filters see the
same value either way, ``EXISTS``/``IS NULL`` may not):

======================  ==========================  ==========================
AMQP field              proton attribute            read as absent when
======================  ==========================  ==========================
durable                 ``durable``                 False (the AMQP default)
priority                ``priority``                4 (the AMQP default)
ttl                     ``ttl`` (float seconds)     0
first-acquirer          ``first_acquirer``          False (the AMQP default)
delivery-count          ``delivery_count``          0 (the AMQP default)
user-id                 ``user_id``                 empty bytes
content-type            ``content_type``            ``symbol('None')`` or empty
content-encoding        ``content_encoding``        ``symbol('None')`` or empty
absolute-expiry-time    ``expiry_time`` (seconds)   0
creation-time           ``creation_time`` (seconds) 0
group-sequence          ``group_sequence``          0
footer                  (none)                      always: proton has no footer
======================  ==========================  ==========================

Times become integer milliseconds again (``timestamp``; ``ttl`` a ``uint``),
exactly for every time within 2**53 microseconds of the epoch. Where a user
needs the exact message, they evaluate ``message.encode()``'s bytes instead.
"""
from __future__ import annotations

from typing import Any

from proton import symbol, timestamp, ubyte, uint

from .message import EMPTY


def _millis(seconds: float) -> int:
    return round(seconds * 1000)


def _header(m: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if m.durable:
        fields["durable"] = True
    if m.priority != 4:
        fields["priority"] = ubyte(m.priority)
    if m.ttl:
        fields["ttl"] = uint(_millis(m.ttl))
    if m.first_acquirer:
        fields["first-acquirer"] = True
    if m.delivery_count:
        fields["delivery-count"] = uint(m.delivery_count)
    return fields


_NONE_SYMBOL = symbol("None")


def _properties(m: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for name, value in (("message-id", m.id), ("to", m.address), ("subject", m.subject),
                        ("reply-to", m.reply_to), ("correlation-id", m.correlation_id),
                        ("group-id", m.group_id), ("reply-to-group-id", m.reply_to_group_id)):
        if value is not None:
            fields[name] = value
    if m.user_id:
        fields["user-id"] = bytes(m.user_id)
    for name, value in (("content-type", m.content_type),
                        ("content-encoding", m.content_encoding)):
        if value and value != _NONE_SYMBOL:
            fields[name] = symbol(value)
    if m.expiry_time:
        fields["absolute-expiry-time"] = timestamp(_millis(m.expiry_time))
    if m.creation_time:
        fields["creation-time"] = timestamp(_millis(m.creation_time))
    if m.group_sequence:
        fields["group-sequence"] = uint(m.group_sequence)
    return fields


def _amqp_value(m: Any) -> Any:
    return None if m.inferred else m.body   # inferred: a data or amqp-sequence body


def _amqp_sequence(m: Any) -> Any:
    return m.body if m.inferred and type(m.body) is list else None


_READERS = {
    "_filtex_header": _header, "_filtex_properties": _properties,
    "_filtex_delivery_annotations": lambda m: m.instructions or EMPTY,
    "_filtex_message_annotations": lambda m: m.annotations or EMPTY,
    "_filtex_application_properties": lambda m: m.properties or EMPTY,
    "_filtex_footer": lambda m: EMPTY,
    "_filtex_amqp_value": _amqp_value, "_filtex_amqp_sequence": _amqp_sequence}


class ProtonMessage:
    """A ``proton.Message`` as filters read it; ``connection`` is the opaque
    id of the connection it arrived on (the no-local filter)."""

    __slots__ = ("message", "_filtex_connection") + tuple(_READERS)

    def __init__(self, message: Any, connection: Any = None) -> None:
        self.message = message
        self._filtex_connection = connection

    @property
    def connection(self) -> Any:
        return self._filtex_connection

    def __getattr__(self, name: str) -> Any:
        """A protocol attribute read for the first time: build, then keep."""
        read = _READERS.get(name)
        if read is None:
            raise AttributeError(name)
        value = read(self.message)
        setattr(self, name, value)
        return value

    def __repr__(self) -> str:
        return f"ProtonMessage({self.message!r})"
