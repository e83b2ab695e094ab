"""Batches of records from a live input: what has arrived, up to a limit.

A regular file is read in fixed batches (``match.BATCH``). A pipe or terminal
may be a live stream (``tail -f log | filtex match F``): waiting for a full
batch would hold back matches that have arrived, which grep never does. The
input is read as ``LiveStream``, which tells the record reader when its next
read would wait for data; the reader then yields ``files.PAUSE``, and the
records gathered so far are evaluated (and their output flushed) before it
waits. A busy pipe still gives full batches: data is always there.
"""
from __future__ import annotations

import os
import select
from typing import Any, Iterator

from ..files import PAUSE


class LiveStream:
    """A pipe, FIFO, socket or terminal read with ``os.read`` on its descriptor
    (no buffer of its own, so ``would_wait`` is the whole truth)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def read(self, size: int = -1) -> bytes:
        return os.read(self.fd, size if size > 0 else 1 << 16)

    def would_wait(self) -> bool:
        """No data to read now (False where select cannot tell: then reading
        simply waits, as before)."""
        try:
            return not select.select([self.fd], [], [], 0)[0]
        except (OSError, ValueError):
            return False


def live_batches(records: Iterator[Any], limit: int) -> Iterator[list[Any]]:
    """``records`` in batches of at most ``limit``, cut wherever the input has
    nothing more for now (``PAUSE``)."""
    batch: list[Any] = []
    for record in records:
        if record is PAUSE:
            if batch:
                yield batch
                batch = []
            continue
        batch.append(record)
        if len(batch) == limit:
            yield batch
            batch = []
    if batch:
        yield batch
