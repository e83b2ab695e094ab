"""A thread-safe LRU cache bounded in entries and in bytes.

The one kind of global mutable state filtex keeps: compiled filters are cached
by their definition, so a subscription's filter is compiled once however many
links use it, and the memory this takes has a ceiling whatever remote clients
send.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterator


class BoundedCache:
    """``get``/``put`` with least-recently-used eviction past ``max_entries``
    entries or ``max_bytes`` bytes (``size(value)`` estimates an entry)."""

    def __init__(self, max_entries: int, max_bytes: int, size: Callable[[Any], int]) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._size = size
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Any:
        """The cached value, or None. No lock: each OrderedDict call is atomic
        under the GIL, and an entry evicted meanwhile is simply not moved."""
        found = self._entries.get(key)
        if found is None:
            return None
        try:
            self._entries.move_to_end(key)
        except KeyError:
            pass
        return found[0]

    def put(self, key: Hashable, value: Any) -> None:
        size = self._size(value)
        if size > self.max_bytes:
            return   # larger than the whole cache: not kept
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (value, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._bytes -= dropped

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Hashable]:
        """The keys held now (a copy: the cache may change meanwhile)."""
        with self._lock:
            return iter(list(self._entries))

    def stats(self) -> tuple[int, int]:
        """(entries, bytes) held now."""
        with self._lock:
            return len(self._entries), self._bytes
