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

from collections.abc import Mapping
from typing import Any

from proton import symbol, timestamp, ubyte, uint, ulong

from .errors import EvaluationFailure
from .message import EMPTY, FieldSection


def _millis(seconds: float) -> int:
    return round(seconds * 1000)


_NONE_SYMBOL = symbol("None")


def _durable(m: Any) -> Any:
    return True if m.durable else None


def _priority(m: Any) -> Any:
    return ubyte(m.priority) if m.priority != 4 else None


def _ttl(m: Any) -> Any:
    return uint(_millis(m.ttl)) if m.ttl else None


def _first_acquirer(m: Any) -> Any:
    return True if m.first_acquirer else None


def _delivery_count(m: Any) -> Any:
    return uint(m.delivery_count) if m.delivery_count else None


def _attribute(name: str) -> Any:
    return lambda m: getattr(m, name)


def _user_id(m: Any) -> Any:
    return bytes(m.user_id) if m.user_id else None


def _symbol_of(name: str) -> Any:
    def read(m: Any) -> Any:
        value = getattr(m, name)
        return symbol(value) if value and value != _NONE_SYMBOL else None
    return read


def _time_of(name: str) -> Any:
    def read(m: Any) -> Any:
        value = getattr(m, name)
        return timestamp(_millis(value)) if value else None
    return read


def _group_sequence(m: Any) -> Any:
    return uint(m.group_sequence) if m.group_sequence else None


_HEADER = {"durable": _durable, "priority": _priority, "ttl": _ttl,
           "first-acquirer": _first_acquirer, "delivery-count": _delivery_count}
_PROPERTIES = {
    "message-id": _attribute("id"), "user-id": _user_id, "to": _attribute("address"),
    "subject": _attribute("subject"), "reply-to": _attribute("reply_to"),
    "correlation-id": _attribute("correlation_id"),
    "content-type": _symbol_of("content_type"),
    "content-encoding": _symbol_of("content_encoding"),
    "absolute-expiry-time": _time_of("expiry_time"), "creation-time": _time_of("creation_time"),
    "group-id": _attribute("group_id"), "group-sequence": _group_sequence,
    "reply-to-group-id": _attribute("reply_to_group_id")}


class _Fields(FieldSection):
    """A header or properties section read field by field through proton's
    getters, as the encoded view reads its list: a field proton cannot give
    (its getter raises, as for a message-id of invalid UTF-8) fails the reads of
    that field only, with the same answer whatever was read before."""

    __slots__ = ("_message", "_names", "_values")

    def __init__(self, message: Any, readers: dict[str, Any]) -> None:
        self._message, self._names = message, readers
        self._values: dict[str, Any] = {}

    def get(self, name: Any, default: Any = None) -> Any:
        value = self._values.get(name, _UNREAD) if type(name) is str else None
        if value is _UNREAD:
            read = self._names.get(name)
            try:
                value = None if read is None else read(self._message)
            except Exception as error:   # proton cannot give this field: it is malformed
                raise EvaluationFailure(
                    f"malformed message: proton cannot read {name} "
                    f"({type(error).__name__}: {str(error)[:80]})") from None
            self._values[name] = value
        return default if value is None else value



_UNREAD = object()


def _header(m: Any) -> Mapping[str, Any]:
    return _Fields(m, _HEADER)


def _properties(m: Any) -> Mapping[str, Any]:
    return _Fields(m, _PROPERTIES)


def _amqp_value(m: Any) -> Any:
    return None if m.inferred else m.body   # inferred: a data or amqp-sequence body


def _amqp_sequence(m: Any) -> Any:
    return m.body if m.inferred and type(m.body) is list else None


def _keyed(attribute: str, key_types: tuple[type, ...], what: str) -> Any:
    """A map section whose keys must be of ``key_types``: proton decodes any key
    (a null one too), where the encoded view finds such a section malformed,
    so the proton form fails the same reads."""
    def read(m: Any) -> Any:
        value = getattr(m, attribute) or EMPTY
        for key in value:
            if type(key) not in key_types:
                raise EvaluationFailure(
                    f"malformed message: {what} key {key!r:.60} is not a "
                    + " or ".join(t.__name__ for t in key_types))
        return value
    return read


_READERS = {
    "_filtex_header": _header, "_filtex_properties": _properties,
    "_filtex_delivery_annotations": _keyed("instructions", (symbol, ulong),
                                           "delivery-annotations"),
    "_filtex_message_annotations": _keyed("annotations", (symbol, ulong), "message-annotations"),
    "_filtex_application_properties": _keyed("properties", (str,), "application-properties"),
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
