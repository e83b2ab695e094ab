"""RabbitMQ's stream options in a filter set, applied exactly per message: the
consumer's client-side stage (``receiver``) and the peer's under profiles that
are not RabbitMQ's (``serve``).

``rabbitmq:stream-filter`` names the values of the ``x-stream-filter-value``
message annotation a consumer wants; ``rabbitmq:stream-match-unfiltered`` also
asks for messages without one. RabbitMQ applies them per chunk through a Bloom
filter (``bloom``, as the peer does under its profiles), so it may let others
through, never fewer: applied per message they are exact (RabbitMQ's stage 3,
done on the bytes).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from proton import Described, symbol

from ..errors import EvaluationFailure
from .rabbitmq import MATCH_UNFILTERED, OFFSET_SPEC, STREAM_FILTER
_FILTER_VALUE = symbol("x-stream-filter-value")


def descriptor_name(value: Any) -> str:
    """A delegated entry's symbolic descriptor ("" for anything else)."""
    return str(value.descriptor) if type(value) is Described else ""


def stream_filter_value(message: Any) -> str | None:
    """A message's (a view's) ``x-stream-filter-value``: RabbitMQ reads a
    string (utf8) only; None for none, another type, or an unreadable section."""
    try:
        annotations = message._filtex_message_annotations
        value = annotations.get(_FILTER_VALUE) if annotations else None
    except EvaluationFailure:   # an unreadable section: no value to be read
        return None
    return value if type(value) is str else None


@dataclass(frozen=True)
class ValueStage:
    """The stream-filter values asked for (None: any) and match-unfiltered."""

    values: frozenset[str] | None
    match_unfiltered: bool

    @classmethod
    def of(cls, delegated: Mapping[str, Any]) -> ValueStage | None:
        """The stage a set's delegated entries ask for; None when they ask none."""
        values: frozenset[str] | None = None
        unfiltered = False
        for entry in delegated.values():
            name = descriptor_name(entry)
            inner = entry.value if type(entry) is Described else entry
            if name == STREAM_FILTER:
                listed = inner if isinstance(inner, list) else [inner]
                values = frozenset(v for v in listed if type(v) is str)
            elif name == MATCH_UNFILTERED:
                unfiltered = inner is True
        if values is None and not unfiltered:
            return None
        return cls(values, unfiltered)

    def refusal(self, message: Any) -> str | None:
        """Why ``message`` (a view) is not one the consumer asked for; None if it is."""
        value = stream_filter_value(message)
        if value is None:
            return None if self.match_unfiltered else "no x-stream-filter-value"
        if self.values is not None and value not in self.values:
            return f"x-stream-filter-value {value!r} not asked for"
        return None


__all__ = ["MATCH_UNFILTERED", "OFFSET_SPEC", "STREAM_FILTER", "ValueStage", "descriptor_name",
           "stream_filter_value"]
