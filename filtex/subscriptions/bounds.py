"""The range bounds of one operator: a sorted map from bound to bucket that a
writer changes in O(log n) while readers, taking no lock, see it before or
after a change, never during one.

An immutable B-tree of tuples: a leaf is ``(bounds, buckets)``, an inner node
``(largest bound of each child, children)``. Inserting a bound copies the one
path from the root to its leaf (at most ``FANOUT`` items a node) and returns
a new tree; a reader holding the old one keeps a consistent map. Buckets are
dicts (seq -> subscription) changed in place by the owner, one item at a time;
a bound whose bucket empties stays in the tree (an empty bucket costs a reader
nothing) until the owner rebuilds the tree from the live bounds, which it does
when the empty ones outnumber them (amortised O(1) a removal).

A lookup collects, into a ``found`` dict, every bucket whose bound lies below
(``below``) or above (``above``) a value: O(log n) plus the buckets taken.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from typing import Any, Iterable, Iterator

FANOUT = 64   # a node's most items; a full node splits in two halves

Bucket = dict[int, Any]   # seq -> subscription
Node = tuple[tuple[Any, ...], tuple[Any, ...]]   # (bounds, buckets) or (largest bounds, children)

_EMPTY: Node = ((), ())


class BoundTree:
    """An immutable sorted map bound -> bucket (see the module)."""

    __slots__ = ("height", "root", "size")

    def __init__(self, height: int = 0, root: Node = _EMPTY, size: int = 0) -> None:
        self.height, self.root, self.size = height, root, size

    @classmethod
    def build(cls, items: Iterable[tuple[Any, Bucket]]) -> BoundTree:
        """The tree of ``items`` (bound, bucket), in ascending bound order."""
        bounds: list[Any] = []
        buckets: list[Bucket] = []
        for bound, bucket in items:
            bounds.append(bound)
            buckets.append(bucket)
        if not bounds:
            return cls()
        half = FANOUT // 2   # nodes half full: room for inserts before a split
        level: list[Node] = [(tuple(bounds[i:i + half]), tuple(buckets[i:i + half]))
                 for i in range(0, len(bounds), half)]
        height = 0
        while len(level) > 1:
            level = [(tuple(node[0][-1] for node in level[i:i + half]), tuple(level[i:i + half]))
                     for i in range(0, len(level), half)]
            height += 1
        return cls(height, level[0], len(bounds))

    def insert(self, bound: Any, bucket: Bucket) -> BoundTree:
        """A new tree that also maps ``bound`` (not in this one) to ``bucket``."""
        parts = _insert(self.root, self.height, bound, bucket)
        if len(parts) == 1:
            return BoundTree(self.height, parts[0], self.size + 1)
        root = (tuple(part[0][-1] for part in parts), parts)
        return BoundTree(self.height + 1, root, self.size + 1)

    def items(self) -> Iterator[tuple[Any, Bucket]]:
        """(bound, bucket) in ascending bound order."""
        yield from _items(self.root, self.height)


def _insert(node: Node, height: int, bound: Any, bucket: Bucket) -> tuple[Node, ...]:
    """The node with ``bound`` inserted: one node, or two halves if it overflowed."""
    keys, items = node
    if height:
        i = min(bisect_left(keys, bound), len(keys) - 1)   # past every bound: the last child
        parts = _insert(items[i], height - 1, bound, bucket)
        keys = keys[:i] + tuple(part[0][-1] for part in parts) + keys[i + 1:]
        items = items[:i] + parts + items[i + 1:]
    else:
        i = bisect_left(keys, bound)
        keys = keys[:i] + (bound,) + keys[i:]
        items = items[:i] + (bucket,) + items[i:]
    if len(items) <= FANOUT:
        return ((keys, items),)
    half = len(items) // 2
    return ((keys[:half], items[:half]), (keys[half:], items[half:]))


def _items(node: Node, height: int) -> Iterator[tuple[Any, Bucket]]:
    if height:
        for child in node[1]:
            yield from _items(child, height - 1)
    else:
        yield from zip(*node)


def _every(node: Node, height: int, found: Bucket) -> None:
    """Every bucket under ``node`` into ``found``."""
    if height:
        for child in node[1]:
            _every(child, height - 1, found)
    else:
        for bucket in node[1]:
            found.update(bucket)


def below(tree: BoundTree, value: Any, inclusive: bool, found: Bucket) -> None:
    """The buckets whose bound is < ``value`` (<= if ``inclusive``) into ``found``."""
    cut = bisect_right if inclusive else bisect_left
    node, height = tree.root, tree.height
    while height:
        keys, children = node
        i = cut(keys, value)   # children before i lie wholly below; child i partly
        for child in children[:i]:
            _every(child, height - 1, found)
        if i == len(children):
            return
        node, height = children[i], height - 1
    keys, buckets = node
    for bucket in buckets[:cut(keys, value)]:
        found.update(bucket)


def above(tree: BoundTree, value: Any, inclusive: bool, found: Bucket) -> None:
    """The buckets whose bound is > ``value`` (>= if ``inclusive``) into ``found``."""
    cut = bisect_left if inclusive else bisect_right
    node, height = tree.root, tree.height
    while height:
        keys, children = node
        i = cut(keys, value)   # child i is the first reaching above; those after lie wholly above
        for child in children[i + 1:]:
            _every(child, height - 1, found)
        if i == len(children):
            return
        node, height = children[i], height - 1
    keys, buckets = node
    for bucket in buckets[cut(keys, value):]:
        found.update(bucket)
