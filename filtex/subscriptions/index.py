"""Indexes of gate terms: for one field's value in a message, the subscriptions
whose term may be TRUE, in one lookup however many subscriptions there are.

One ``FieldIndex`` per field any gate reads (the field is read once per
message), holding one ``TermIndex`` per kind of term. A lookup returns a
superset of the subscriptions whose term is TRUE: values of the types an index
keys on (exact strings and symbols for string terms, integers for integer
terms; integers and doubles for integer ranges, whose bounds are exact
doubles) are looked up; absent values make every term but IS NULL unknown or
false; any other value (a float, a decimal, a char, bytes...) returns every
subscription of that index, which are then evaluated in full, so the index
never has to know how a dialect compares unlike types.

Threads: writers hold the owner's lock; readers take no lock. Buckets are
tuples replaced whole (one atomic store each), and the snapshots readers
iterate (every member, the prefix lengths, the sorted bounds) are rebuilt on
first use after a change, so a reader never sees a structure mid-change.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from contextlib import AbstractContextManager
from typing import Any, Callable

from proton import symbol, timestamp

from ..runtime.values import INT_CLASSES

NUMBERS = INT_CLASSES | {timestamp}


class TermIndex:
    """Terms of one kind on one field. ``lookup(value)`` returns (candidates,
    settled): settled means every member not among the candidates has a FALSE
    term for this value (no failure, not unknown)."""

    def __init__(self, kind: str, never_null: bool, lock: AbstractContextManager[Any]) -> None:
        self.kind = kind
        self.never_null = never_null   # an absent value makes the term FALSE
        self._lock = lock
        self._buckets: dict = {}       # key -> tuple of entries
        self._members: tuple | None = ()
        # what the kind's lookup iterates, built from the buckets (``_LAYOUTS``)
        self._layout: Any = None
        self.size = 0
        self.lookup: Callable[[Any], tuple] = getattr(self, "_lookup_" + kind.replace("-", "_"))

    # --- writers (under the lock) ---------------------------------------------------

    def add(self, keys: tuple, entry: Any) -> None:
        """``keys``: the term's constants; for IS NULL, (absent wanted, semantics)."""
        for key in self._keys(keys):
            self._buckets[key] = self._buckets.get(key, ()) + (entry,)
        self.size += 1
        self._changed()

    def remove(self, keys: tuple, entry: Any) -> None:
        for key in self._keys(keys):
            left = tuple(e for e in self._buckets.get(key, ()) if e is not entry)
            if left:
                self._buckets[key] = left
            else:
                self._buckets.pop(key, None)
        self.size -= 1
        self._changed()

    def _keys(self, keys: tuple) -> tuple:
        if self.kind in ("range", "null"):
            return (keys,)   # one bucket per (op, bound) / per IS NULL, IS NOT NULL
        return tuple(dict.fromkeys(keys))   # an IN list naming a value twice: once

    def _changed(self) -> None:
        self._members = self._layout = None

    # --- snapshots (built by a reader under the lock, after a change) -----------------

    def members(self) -> tuple:
        members = self._members
        if members is None:
            with self._lock:
                seen: dict = {}
                for bucket in self._buckets.values():
                    for entry in bucket:
                        seen[id(entry)] = entry
                members = self._members = tuple(seen.values())
        return members

    def _snapshot(self) -> Any:
        layout = self._layout
        if layout is None:
            with self._lock:
                layout = self._layout = _LAYOUTS[self.kind](self._buckets)
        return layout

    # --- lookups: (candidates, settled) ------------------------------------------------

    def _unkeyed(self, value: Any) -> tuple:
        """A value of no type the index keys on: absent (no term TRUE; FALSE where
        the terms are never NULL), or of another type (every member a candidate)."""
        if value is None:
            return (), self.never_null
        return self.members(), False

    def _lookup_eq_str(self, value: Any) -> tuple:
        cls = type(value)
        if cls is str or cls is symbol:
            return self._buckets.get(value, ()), True
        return self._unkeyed(value)

    def _lookup_eq_int(self, value: Any) -> tuple:
        if type(value) in INT_CLASSES:
            return self._buckets.get(value, ()), True
        return self._unkeyed(value)

    def _lookup_prefix(self, value: Any) -> tuple:
        cls = type(value)
        if cls is not str and cls is not symbol:
            return self._unkeyed(value)
        get, found = self._buckets.get, []
        size = len(value)
        for length in self._snapshot():
            if length > size:
                break
            found.extend(get(value[:length], ()))
        return found, True

    def _lookup_word(self, value: Any) -> tuple:
        cls = type(value)
        if cls is str or cls is symbol:
            return self._buckets.get(str.__str__(value).split(".", 1)[0], ()), True
        return self._unkeyed(value)

    def _lookup_range(self, value: Any) -> tuple:
        cls = type(value)
        if cls not in NUMBERS and (cls is not float or value != value or value == 0):
            # NaN, and 0.0 against -0.0, order apart in jms: evaluate them all
            return self._unkeyed(value)
        found: list = []
        for op, (bounds, buckets) in self._snapshot().items():
            if op == ">":     # bound < value
                chosen = buckets[:bisect_left(bounds, value)]
            elif op == ">=":
                chosen = buckets[:bisect_right(bounds, value)]
            elif op == "<":   # bound > value
                chosen = buckets[bisect_right(bounds, value):]
            else:
                chosen = buckets[bisect_left(bounds, value):]
            for bucket in chosen:
                found.extend(bucket)
        return found, True

    def _lookup_null(self, value: Any) -> tuple:
        # buckets keyed (absent wanted, the dialect that says what reads as absent)
        found: list = []
        for (wanted, rules), bucket in self._snapshot():
            absent = value is None
            if not absent and rules.null_view:
                try:
                    absent = rules.view(value) is None
                except Exception:   # a value its dialect cannot read: evaluate them all
                    return self.members(), False
            if absent is wanted:
                found.extend(bucket)
        return found, True


def _prefix_layout(buckets: dict) -> tuple:
    """The distinct prefix lengths, shortest first."""
    return tuple(sorted({len(key) for key in buckets}))


def _range_layout(buckets: dict) -> dict:
    """Per operator: the bounds in order, and each bound's bucket."""
    by_op: dict = {}
    for (op, bound), bucket in buckets.items():
        by_op.setdefault(op, []).append((bound, bucket))
    layout = {}
    for op, items in by_op.items():
        items.sort(key=lambda item: item[0])
        layout[op] = ([bound for bound, _ in items], [bucket for _, bucket in items])
    return layout


_LAYOUTS = {"prefix": _prefix_layout, "range": _range_layout,
            "null": lambda buckets: tuple(buckets.items())}


class FieldIndex:
    """Every term on one field: the field is read once per message."""

    def __init__(self, field: tuple, lock: AbstractContextManager[Any]) -> None:
        self.field = field
        section, key, default = field
        self._attribute = f"_filtex_{section}"
        self._key, self._default = key, default
        self._lock = lock
        self.kinds: dict = {}         # (kind, never_null) -> TermIndex
        self._snapshot: tuple | None = ()

    def read(self, message: Any) -> Any:
        value = getattr(message, self._attribute).get(self._key)
        if value is None:
            return self._default
        return value

    def index(self, kind: str, never_null: bool) -> TermIndex:
        found = self.kinds.get((kind, never_null))
        if found is None:
            found = self.kinds[(kind, never_null)] = TermIndex(kind, never_null, self._lock)
            self._snapshot = None
        return found

    def term_indexes(self) -> tuple:
        snapshot = self._snapshot
        if snapshot is None:
            with self._lock:
                snapshot = self._snapshot = tuple(i for i in self.kinds.values() if i.size)
        return snapshot

    def changed(self) -> None:
        self._snapshot = None

    @property
    def size(self) -> int:
        return sum(i.size for i in self.kinds.values())
