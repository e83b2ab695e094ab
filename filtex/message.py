"""The message filtex evaluates: the six filterable sections of an AMQP message.

Sections are mappings keyed by AMQP field names (``reply-to``, ``delivery-count``)
for header and properties, and by the map keys for the others. An absent
section is an empty mapping, so generated code never tests for ``None``.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any, Mapping

EMPTY: Mapping[Any, Any] = MappingProxyType({})

SECTIONS = ("header", "delivery_annotations", "message_annotations", "properties",
            "application_properties", "footer")

HEADER_FIELDS = ("durable", "priority", "ttl", "first-acquirer", "delivery-count")
PROPERTIES_FIELDS = ("message-id", "user-id", "to", "subject", "reply-to", "correlation-id",
                     "content-type", "content-encoding", "absolute-expiry-time",
                     "creation-time", "group-id", "group-sequence", "reply-to-group-id")
HEADER_DEFAULTS = {"durable": False, "priority": 4, "first-acquirer": False,
                   "delivery-count": 0}


class Message:
    """An AMQP message's header, annotations, properties, application
    properties and footer (the body is out of filters' reach).

    ``connection`` is an opaque id of the connection the message arrived on
    (used by the Apache no-local filter).
    """

    __slots__ = SECTIONS + ("connection",)

    def __init__(self, header: Mapping | None = None,
                 delivery_annotations: Mapping | None = None,
                 message_annotations: Mapping | None = None,
                 properties: Mapping | None = None,
                 application_properties: Mapping | None = None,
                 footer: Mapping | None = None, connection: Any = None) -> None:
        self.header = EMPTY if header is None else header
        self.delivery_annotations = EMPTY if delivery_annotations is None else delivery_annotations
        self.message_annotations = EMPTY if message_annotations is None else message_annotations
        self.properties = EMPTY if properties is None else properties
        self.application_properties = (EMPTY if application_properties is None
                                       else application_properties)
        self.footer = EMPTY if footer is None else footer
        self.connection = connection

    def __repr__(self) -> str:
        parts = [f"{name}={getattr(self, name)!r}" for name in SECTIONS
                 if getattr(self, name)]
        if self.connection is not None:
            parts.append(f"connection={self.connection!r}")
        return f"Message({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return all(dict(getattr(self, n)) == dict(getattr(other, n)) for n in SECTIONS) \
            and self.connection == other.connection

    __hash__ = None  # type: ignore[assignment]
