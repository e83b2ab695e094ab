"""Indexes of gate terms: for one field's value in a message, the subscriptions
whose term may be TRUE, in one lookup however many subscriptions there are.

One ``FieldIndex`` per field any gate reads (the field is read once per
message), holding one ``TermIndex`` per kind of term and mode. A lookup puts
into a ``found`` dict (seq -> subscription) a superset of the subscriptions
whose term is TRUE: values of the types an index keys on (exact strings and
symbols for string terms, integers for integer terms; integers, timestamps and
finite non-zero doubles for integer ranges, whose bounds are exact doubles)
are looked up; absent values make every term but IS NULL unknown or false; any
other value (a float, NaN, a zero or an infinity for a range, a decimal, a
char, bytes...) takes every subscription of that index, which are then
evaluated in full, so the index never has to know how a dialect compares
unlike types (rabbitmq drops infinities: NULL, not greater than any bound).

Verified terms (``verify.py``) have indexes of their own, whose keyed lookups
are exactly the terms TRUE for the value. Their buckets hold the
subscriptions' names (seq -> name), put by a hit into the caller's ``hit``
collection of verified matches: at once for a ``SURE`` index; for a ``MAYBE``
index (one per condition: the OR's fields and their classes) when the
message's fields meet its condition (the caller checks it), else the index's
members are candidates (as the field whose class fails the condition takes
them anyway).

Changes: adding or removing a term costs O(1) (an item of a bucket and of the
members), O(log n) when it brings a new range bound (``bounds.BoundTree``),
and O(distinct prefix lengths) when it brings or takes the last key of a
prefix length; nothing is rebuilt per change.

Threads: writers hold the owner's lock; readers take none. A bucket, and the
members, are dicts (seq -> subscription) changed one item at a time, which a
reader takes whole with ``found.update(bucket)``: one C call that runs no
Python code, so it sees the bucket before or after a change. What readers
iterate (a field's term indexes, the prefix lengths, the IS NULL buckets, the
range trees) is immutable and replaced whole with one store.
"""
from __future__ import annotations

from bisect import insort
from typing import Any, Callable

from proton import symbol, timestamp

from ..runtime.values import INT_CLASSES
from .bounds import BoundTree, above, below
from .verify import PLAIN

NUMBERS = INT_CLASSES | {timestamp}

# A range term ``field op bound`` is TRUE where the bound lies below or above
# the value: which side, and whether a bound equal to the value counts.
_SIDES = {">": (below, False), ">=": (below, True), "<": (above, False), "<=": (above, True)}

_SPARE = 32   # empty range buckets a tree keeps whatever the live ones


class TermIndex:
    """Terms of one kind on one field. ``lookup(value, found, hit, exact)``
    puts the subscriptions whose term the value's key names into ``hit`` (for
    a ``PLAIN`` index, the caller passes ``found``), and those it cannot tell
    (an unkeyed value) into ``found``; with ``exact``, also every member whose
    term is not known to be FALSE for this value (unknown, or a failure)."""

    def __init__(self, kind: str, never_null: bool, mode: int = PLAIN,
                 condition: tuple | None = None) -> None:
        self.kind = kind
        self.never_null = never_null   # an absent value makes the term FALSE
        self.mode = mode               # verify.PLAIN, SURE or MAYBE
        self.condition = condition     # MAYBE: ((field index, classes), ...) a hit needs
        self._buckets: dict[Any, dict[int, Any]] = {}   # key -> {seq: entry, or name}
        self.members: dict[int, Any] = {}   # every subscription with a term here
        self.size = 0                        # terms
        self.lookup: Callable[[Any, dict, dict, bool], None] = getattr(
            self, "_lookup_" + kind.replace("-", "_"))
        # prefix: the distinct key lengths, ascending, and how many keys have each
        self._lengths: tuple[int, ...] = ()
        self._length_keys: dict[int, int] = {}
        # range: the trees of bounds per operator, and the readers' view of them
        self._trees: dict[str, BoundTree] = {}
        self._sides: tuple = ()   # (below or above, tree, inclusive) per operator
        self._empty = 0           # empty buckets left in the trees
        # IS NULL: ((absent wanted, semantics), bucket) per bucket
        self._nulls: tuple = ()

    # --- writers (under the owner's lock) --------------------------------------------

    def add(self, keys: tuple, entry: Any) -> None:
        """``keys``: the term's constants; for IS NULL, (absent wanted, semantics)."""
        seq = entry.seq
        item = entry if self.mode == PLAIN else entry.name
        for key in self._keys(keys):
            bucket = self._buckets.get(key)
            if bucket is None:
                self._buckets[key] = bucket = {seq: item}
                self._opened(key, bucket)
            else:
                if not bucket:   # an empty range bucket, still in its tree
                    self._empty -= 1
                bucket[seq] = item
        self.members[seq] = entry
        self.size += 1

    def remove(self, keys: tuple, entry: Any) -> None:
        """Remove ``entry``'s term (each of an entry's terms goes in one change)."""
        seq = entry.seq
        for key in self._keys(keys):
            bucket = self._buckets.get(key)
            if bucket is None or bucket.pop(seq, None) is None:
                continue   # a term naming a key twice (a = 'x' OR a = 'x'): gone already
            if not bucket:
                self._closed(key)
        self.members.pop(seq, None)
        self.size -= 1

    def _keys(self, keys: tuple) -> tuple:
        if self.kind in ("range", "null"):
            return (keys,)   # one bucket per (op, bound) / per IS NULL, IS NOT NULL
        return tuple(dict.fromkeys(keys))   # an IN list naming a value twice: once

    def _opened(self, key: Any, bucket: dict) -> None:
        """A new key's bucket (holding its first entry) becomes visible to readers."""
        if self.kind == "prefix":
            length = len(key)
            self._length_keys[length] = self._length_keys.get(length, 0) + 1
            if self._length_keys[length] == 1:
                lengths = list(self._lengths)
                insort(lengths, length)
                self._lengths = tuple(lengths)
        elif self.kind == "range":
            op, bound = key
            self._trees[op] = self._trees.get(op, BoundTree()).insert(bound, bucket)
            self._publish_trees()
        elif self.kind == "null":
            self._nulls = self._nulls + ((key, bucket),)

    def _closed(self, key: Any) -> None:
        """The last entry of ``key``'s bucket is gone."""
        if self.kind == "range":   # stays in its tree until the empty ones are many
            self._empty += 1
            if self._empty > _SPARE and 2 * self._empty > len(self._buckets):
                self._compact()
            return
        del self._buckets[key]
        if self.kind == "prefix":
            length = len(key)
            self._length_keys[length] -= 1
            if not self._length_keys[length]:
                del self._length_keys[length]
                self._lengths = tuple(n for n in self._lengths if n != length)
        elif self.kind == "null":
            self._nulls = tuple(item for item in self._nulls if item[0] != key)

    def _compact(self) -> None:
        """Range trees rebuilt from their live bounds: O(n) once the empty buckets
        outnumber the live ones, so amortised O(1) over the removals that emptied them."""
        for op, tree in list(self._trees.items()):
            live = [(bound, bucket) for bound, bucket in tree.items() if bucket]
            for bound, bucket in tree.items():
                if not bucket:
                    del self._buckets[(op, bound)]
            if live:
                self._trees[op] = BoundTree.build(live)
            else:
                del self._trees[op]
        self._empty = 0
        self._publish_trees()

    def _publish_trees(self) -> None:
        self._sides = tuple((side, tree, inclusive) for op, tree in self._trees.items()
                            for side, inclusive in (_SIDES[op],))

    # --- lookups ---------------------------------------------------------------------

    def _unkeyed(self, value: Any, found: dict, exact: bool) -> None:
        """A value of no type the index keys on: absent (no term TRUE; FALSE where
        the terms are never NULL), or of another type (every member a candidate)."""
        if value is not None or (exact and not self.never_null):
            found.update(self.members)

    def _lookup_eq_str(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        cls = type(value)
        if cls is str or cls is symbol:
            bucket = self._buckets.get(value)
            if bucket:
                hit.update(bucket)
        else:
            self._unkeyed(value, found, exact)

    def _lookup_eq_int(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        if type(value) in INT_CLASSES:
            bucket = self._buckets.get(value)
            if bucket:
                hit.update(bucket)
        else:
            self._unkeyed(value, found, exact)

    def _lookup_prefix(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        cls = type(value)
        if cls is not str and cls is not symbol:
            self._unkeyed(value, found, exact)
            return
        get = self._buckets.get
        size = len(value)
        for length in self._lengths:
            if length > size:
                break
            bucket = get(value[:length])
            if bucket:
                hit.update(bucket)

    def _lookup_word(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        cls = type(value)
        if cls is str or cls is symbol:
            bucket = self._buckets.get(str.__str__(value).split(".", 1)[0])
            if bucket:
                hit.update(bucket)
        else:
            self._unkeyed(value, found, exact)

    def _lookup_range(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        """Integers, timestamps and finite non-zero doubles are looked up; NaN
        (unknown), zeros (jms orders 0.0 and -0.0 apart) and infinities (rabbitmq
        drops them: unknown) take every member, as any other class."""
        cls = type(value)
        if cls not in NUMBERS and (cls is not float or value - value != 0 or value == 0):
            self._unkeyed(value, found, exact)
            return
        for side, tree, inclusive in self._sides:
            side(tree, value, inclusive, hit)

    def _lookup_null(self, value: Any, found: dict, hit: dict, exact: bool) -> None:
        # buckets keyed (absent wanted, the dialect that says what reads as absent)
        for (wanted, rules), bucket in self._nulls:
            absent = value is None
            if not absent and rules.null_view:
                try:
                    absent = rules.view(value) is None
                except Exception:   # a value its dialect cannot read: evaluate them all
                    found.update(self.members)
                    return
            if absent is wanted:
                hit.update(bucket)


class FieldIndex:
    """Every term on one field: the field is read once per message. ``terms``
    (the term indexes, for readers) is empty once the last term is removed."""

    def __init__(self, field: tuple) -> None:
        self.field = field
        section, key, default = field
        self._attribute = f"_filtex_{section}"
        self._key, self._default = key, default
        # (kind, never_null, mode, condition) -> TermIndex
        self.kinds: dict[tuple, TermIndex] = {}
        self.terms: tuple[TermIndex, ...] = ()
        self.size = 0

    def read(self, message: Any) -> Any:
        value = getattr(message, self._attribute).get(self._key)
        if value is None:
            return self._default
        return value

    def add(self, kind: str, never_null: bool, keys: tuple, entry: Any,
            mode: int = PLAIN, condition: tuple | None = None) -> None:
        """``condition``: a MAYBE term's (one index per condition)."""
        index = self.kinds.get((kind, never_null, mode, condition))
        if index is None:
            index = TermIndex(kind, never_null, mode, condition)
            self.kinds[(kind, never_null, mode, condition)] = index
        index.add(keys, entry)   # filled before readers see it
        if index.size == 1:
            self.terms = tuple(self.kinds.values())
        self.size += 1

    def remove(self, kind: str, never_null: bool, keys: tuple, entry: Any,
               mode: int = PLAIN, condition: tuple | None = None) -> None:
        index = self.kinds[(kind, never_null, mode, condition)]
        index.remove(keys, entry)
        if not index.size:
            del self.kinds[(kind, never_null, mode, condition)]
            self.terms = tuple(self.kinds.values())
        self.size -= 1
