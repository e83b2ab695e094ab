"""What one client may make ``filtex serve`` hold or do: one record of limits.

Each limit is a ``filtex serve`` option of the same name (``--max-links``...)
with the default below, and each is enforced where the bytes arrive, with the
AMQP error the specification names for it (``docs/security.md`` has the
table). Together they bound the peer's memory:

* written ahead to a reader and not yet on its socket: ``max_buffered`` bytes
  per session (a reader that never reads holds its window, at most that);
* kept for queues and appended to streams: ``max_queue_bytes`` per address,
  ``max_stored_bytes`` in all (the streams served from files are not counted:
  the operator chose them);
* being received: ``max_message_size`` per message, announced on every link
  the peer receives on (core 2.7.3), and for the unfinished messages of one
  connection together, ``max_stored_bytes`` for all of them, and
  ``max_frame`` per frame;
* connections and links: ``max_connections``, ``max_links`` per connection;
  a connection that opens nothing is cut after ``header_timeout`` seconds and
  one that goes quiet after ``idle_timeout`` (announced on its open, core 2.4.5).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

MIB = 1 << 20


@dataclass(frozen=True)
class ServeLimits:
    """The peer's limits (see the module's docstring)."""

    max_connections: int = 1_000       # connections open at once; more are refused
    max_links: int = 1_024             # links open on one connection
    header_timeout: float = 10.0       # seconds for a new connection to send its open
    idle_timeout: float = 60.0         # seconds of silence after which a connection is closed
    max_frame: int = MIB               # bytes of one frame the peer receives
    max_message_size: int = 16 * MIB   # bytes of one message the peer receives
    max_queue_bytes: int = 64 * MIB    # bytes kept for one queue or appended to one stream
    max_stored_bytes: int = 256 * MIB  # bytes kept for all queues and stream appends
    max_buffered: int = 256 * 1024     # bytes written ahead to one session's readers
    dispatch_slice: int = 256          # messages one link reads per turn before the next link

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if type(value) not in (int, float) or value <= 0:
                raise ValueError(f"ServeLimits.{item.name} is a positive number, not {value!r}")
        if self.max_frame < 512:   # core 2.7.1: no peer may ask for less
            raise ValueError(f"ServeLimits.max_frame is at least 512, not {self.max_frame}")

    def replace(self, **changes: float) -> ServeLimits:
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


DEFAULT_SERVE_LIMITS = ServeLimits()

# each limit's meaning, for ``filtex serve --help`` and the docs
MEANINGS = {
    "max_connections": "connections open at once; more are refused with "
                       "amqp:resource-limit-exceeded",
    "max_links": "links open on one connection; more are refused",
    "header_timeout": "seconds a new connection has to send its open before it is cut",
    "idle_timeout": "seconds of silence after which a connection is closed (announced on open)",
    "max_frame": "bytes of one frame the peer receives (announced on open)",
    "max_message_size": "bytes of one message the peer receives (announced on attach; "
                        "a larger one detaches its link with amqp:link:message-size-exceeded)",
    "max_queue_bytes": "bytes kept for one queue or appended to one stream; "
                       "past it a message is rejected",
    "max_stored_bytes": "bytes kept for all queues and stream appends together",
    "max_buffered": "bytes written ahead of one session's socket",
    "dispatch_slice": "messages one link reads before the next link's turn",
}

__all__ = ["DEFAULT_SERVE_LIMITS", "MEANINGS", "ServeLimits"]
