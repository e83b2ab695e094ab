"""What a peer wrote into an attach, read inside a boundary.

Proton's binding decodes a link's name and a terminus's address as UTF-8 when
Python reads them and raises for bytes that are not; the filter set is read
by ``proton_copies`` with filtex's own bounded decoder. ``peer_text`` reads
one such field and says what was wrong instead of raising. ``attach_room``
is how many bytes of an answering attach its filter set may take: no frame
the peer sends may be larger than the client's max-frame-size (core 2.7.1).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..described.descriptors import capabilities

NOT_UTF8 = "(not UTF-8)"
ATTACH_FIXED = 512   # bytes of an attach's fixed fields and encodings, with room to spare
NO_LIMIT = 0xFFFF_FFFF


def peer_text(read: Callable[[], str | None]) -> tuple[str | None, str | None]:
    """``(value, None)``, or ``(None, why)`` when the peer's bytes are no text."""
    try:
        value = read()
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 ({error.reason} at byte {error.start})"
    except (ValueError, TypeError) as error:   # proton's converters on a foreign copy
        return None, f"unreadable ({type(error).__name__})"
    return value, None


def shown(read: Callable[[], str | None], limit: int = 120) -> str:
    """A field for a log line: its text cut to ``limit``, or ``NOT_UTF8``."""
    value, problem = peer_text(read)
    if problem is not None:
        return NOT_UTF8
    text = repr(value) if value is not None else "None"
    return text if len(text) <= limit else text[:limit] + "..."


def _encoded(data: Any) -> int:
    try:
        return len(data.encode())
    except Exception:   # a value proton cannot encode again is not echoed either
        return 0


def remote_frame(link: Any) -> int | None:
    """The client's max-frame-size for ``link``'s connection; None: no limit known."""
    transport = link.transport
    if transport is None:
        return None
    frame = int(transport.remote_max_frame_size)
    return None if frame <= 0 or frame >= NO_LIMIT else frame


def attach_overhead(link: Any) -> int:
    """Bytes an answering attach needs besides its filter set: its fixed
    fields, name, addresses and the parts of both termini it copies back."""
    size = ATTACH_FIXED
    for read in (lambda: link.name, lambda: link.remote_source.address,
                 lambda: link.remote_target.address):
        value, _ = peer_text(read)
        size += len(value.encode()) if value else 0
    for terminus in (link.remote_source, link.remote_target):
        size += _encoded(terminus.properties) + _encoded(terminus.capabilities)
    size += _encoded(link.remote_source.outcomes)
    size += sum(len(c) + 2 for c in capabilities()) + 16
    return size


def attach_room(link: Any) -> int | None:
    """Bytes the echoed filter set may take in ``link``'s answering attach
    (negative: not even an attach without one fits); None: no limit."""
    frame = remote_frame(link)
    return None if frame is None else frame - attach_overhead(link)


__all__ = ["attach_overhead", "attach_room", "peer_text", "remote_frame", "shown"]
