"""What ``filtex serve`` keeps per address: a log of messages and its readers.

A *stream* keeps every message: each reader has its own cursor. A *queue*
gives each message to one reader and keeps it until an outcome settles it
(core 3.4), as the brokers the profiles copy do:

* ``accepted``: gone; ``rejected``: gone too (the message is invalid, 3.4.2;
  there is no dead-letter address here), logged;
* ``released`` (3.4.4): back in the queue where it was, before every message
  not yet delivered, its delivery count unchanged;
* ``modified`` (3.4.5): the same, its delivery count raised when
  ``delivery-failed``, and never offered to that link again when
  ``undeliverable-here``;
* unsettled when its link detaches or its connection ends: back where it was,
  its delivery count raised (it may have been seen).

A message put back goes before any message the queue has not delivered: the
readers whose cursor is past it re-read it first (``rescan``, a heap of
offsets), so no reader re-reads the whole queue. A queue's taken slots at its
head are dropped as they accumulate, so its log stays as long as what it holds.
"""
from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..filter import Filter
from .bloom import Matcher
from .streams import ValueStage

COMPACT_AT = 1_024   # taken slots at a queue's head before they are dropped


@dataclass(eq=False)
class Stored:
    """A message as the peer keeps it: its bytes, the id of the connection it
    arrived on (None for a file's), when it arrived (ms), how many deliveries of
    it failed, and the readers that said it is undeliverable for them."""
    data: bytes
    connection: int | None
    arrived: int
    failures: int = 0
    excluded: frozenset[int] = frozenset()


@dataclass(eq=False)
class Consumer:
    """One sending link's reader: its filters, its place, what it holds."""
    id: int
    link: Any
    address: str
    filter: Filter
    log: Log
    cursor: int = 0
    values: ValueStage | None = None   # rabbitmq:stream-filter, match-unfiltered, exactly
    chunks: Matcher | None = None      # the same per chunk, by its Bloom filter (RabbitMQ)
    rescan: list[int] = field(default_factory=list)   # queue offsets put back behind cursor
    unsettled: dict[bytes, tuple[int, Stored]] = field(default_factory=dict)
    delivered: int = 0
    skipped: int = 0

    @property
    def stream(self) -> bool:
        return self.log.stream

    def next_offset(self) -> int | None:
        """The next offset to read: a put-back message first, then the cursor's."""
        log = self.log
        while self.rescan:
            offset = heapq.heappop(self.rescan)
            if offset >= log.base:
                return offset
        if self.cursor < log.base:
            self.cursor = log.base
        if self.cursor < log.end:
            self.cursor += 1
            return self.cursor - 1
        return None

    def caught_up(self) -> bool:
        return not self.rescan and self.cursor >= self.log.end


class Log:
    """One address's messages by absolute offset (see the module's docstring)."""

    def __init__(self, stream: bool, messages: list[Stored] | None = None,
                 chunk_starts: list[int] | None = None) -> None:
        self.stream = stream
        self.base = 0
        self.entries: list[Stored | None] = list(messages or [])
        self.readers: dict[Consumer, None] = {}
        self.bytes = 0        # counted against the limits: appended or queued bytes
        self.appended = 0     # messages received for it (a file's are not counted)
        # a stream's chunks (RabbitMQ writes one per batch): the offset each starts at
        self.chunk_starts: list[int] = list(chunk_starts or ([0] if self.entries else []))
        self.chunk_filters: dict[int, int | None] = {}   # chunk index -> its Bloom filter

    def chunk(self, offset: int) -> int:
        """The index of the chunk a stream's ``offset`` is in."""
        return bisect.bisect_right(self.chunk_starts, offset) - 1

    def chunk_range(self, index: int) -> range:
        starts = self.chunk_starts
        return range(starts[index], starts[index + 1] if index + 1 < len(starts) else self.end)

    @property
    def end(self) -> int:
        return self.base + len(self.entries)

    def __len__(self) -> int:
        return self.end

    def get(self, offset: int) -> Stored | None:
        index = offset - self.base
        return self.entries[index] if 0 <= index < len(self.entries) else None

    def live(self) -> Iterator[Stored]:
        return (s for s in self.entries if s is not None)

    def append(self, stored: Stored) -> None:
        """A message received: on a stream, a chunk of its own (a publisher
        that waits for each message's outcome, as RabbitMQ's tests do)."""
        if self.stream:
            self.chunk_starts.append(self.end)
        self.entries.append(stored)

    def take(self, offset: int) -> None:
        """A queue's message handed to a reader: its slot is empty until it is put back."""
        self.entries[offset - self.base] = None
        self._compact()

    def put_back(self, offset: int, stored: Stored) -> list[Consumer]:
        """A queue's message back in its place; the readers that should see it
        again (their cursor is past it)."""
        self.entries[offset - self.base] = stored
        woken = []
        for reader in self.readers:
            if reader.cursor > offset:
                heapq.heappush(reader.rescan, offset)
                woken.append(reader)
        return woken

    def idle(self) -> bool:
        """A queue with nothing kept, nothing in flight and no reader: forgettable."""
        return not self.stream and not self.readers and self.bytes == 0

    def _compact(self) -> None:
        entries = self.entries
        if len(entries) < COMPACT_AT or entries[COMPACT_AT - 1] is not None:
            return
        head = next((i for i, s in enumerate(entries) if s is not None), len(entries))
        if head >= COMPACT_AT:
            del entries[:head]
            self.base += head


__all__ = ["Consumer", "Log", "Stored"]
