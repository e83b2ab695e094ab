"""The bytes a peer delivers: a stored message with one section rewritten.

A broker changes two things of a message it delivers: RabbitMQ adds the
``x-stream-offset`` annotation to stream deliveries, and every broker counts a
queue's redeliveries in the header (``delivery-count``, ``first-acquirer``:
core 3.2.1). Each function rewrites its one section and keeps every other
byte. ``readable`` is the check at the door: a message is kept only when these
sections can be read, so no stored message can fail a later reader.
"""
from __future__ import annotations

from typing import Any

from proton import Data, symbol, uint

from ..amqp.codec import DecodeError
from ..amqp.encode import _section
from ..amqp.encoded import _decode, _locate

HEADER, DELIVERY_ANNOTATIONS, MESSAGE_ANNOTATIONS = 0x70, 0x71, 0x72
_STREAM_OFFSET = symbol("x-stream-offset")
_UINT_MAX = 0xFFFF_FFFF


def readable(data: bytes) -> str | None:
    """Why ``data`` cannot be kept (its sections cannot be found, or its header
    or message annotations decoded); None when it can."""
    try:
        sections = _locate(data)
        for code in (HEADER, MESSAGE_ANNOTATIONS):
            if code in sections:
                value = _decode(data, *sections[code])
                if type(value) is not (list if code == HEADER else dict):
                    return f"section 0x{code:02x} is a {type(value).__name__}"
    except DecodeError as error:
        return error.reason
    except (IndexError, ValueError):   # what the fast section scanner may meet
        return "sections cannot be read"
    return None


def _sections(data: bytes) -> dict[int, Any] | None:
    try:
        return _locate(data)
    except (DecodeError, IndexError, ValueError):
        return None


def annotated(data: bytes, offset: int) -> bytes:
    """``data`` with the message annotation ``x-stream-offset`` = ``offset``, as
    RabbitMQ adds to stream deliveries: the message-annotations section is
    rewritten (or inserted after the header and delivery annotations), every
    other section's bytes kept as they are. An unreadable message is delivered
    as it is."""
    sections = _sections(data)
    if sections is None:
        return data
    ends = [sections[c][1] for c in (HEADER, DELIVERY_ANNOTATIONS) if c in sections]
    start = max(ends, default=0)
    annotations: dict[Any, Any] = {}
    end = start
    if MESSAGE_ANNOTATIONS in sections:
        at, end = sections[MESSAGE_ANNOTATIONS]
        try:
            decoded = _decode(data, at, end)
        except DecodeError:
            return data
        if isinstance(decoded, dict):
            annotations.update(decoded)
    annotations[_STREAM_OFFSET] = offset
    encoded = Data()
    _section(encoded, MESSAGE_ANNOTATIONS, annotations)
    return data[:start] + encoded.encode() + data[end:]


def redelivered(data: bytes, failures: int) -> bytes:
    """``data`` as delivered again after ``failures`` unsuccessful deliveries:
    the header's ``delivery-count`` raised by ``failures`` (at most 2^32 - 1)
    and ``first-acquirer`` false; the header is inserted when there is none."""
    sections = _sections(data)
    if sections is None:
        return data
    fields: list[Any] = [None] * 5
    start = end = 0
    if HEADER in sections:
        at, end = sections[HEADER]
        try:
            value = _decode(data, at, end)
        except DecodeError:
            return data
        if type(value) is list:
            fields[:len(value[:5])] = value[:5]
    count = fields[4] if isinstance(fields[4], int) and not isinstance(fields[4], bool) else 0
    count = min(max(int(count), 0), _UINT_MAX)   # a count of the wrong type may be negative
    fields[3] = False
    fields[4] = uint(min(int(count) + failures, _UINT_MAX))
    encoded = Data()
    _section(encoded, HEADER, fields)
    return data[:start] + encoded.encode() + data[end:]


__all__ = ["annotated", "readable", "redelivered"]
