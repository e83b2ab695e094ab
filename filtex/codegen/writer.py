"""``SourceWriter``: the plumbing of generated Python source, apart from what
any engine translates a tree into.

It keeps the lines and their indentation, numbers temporaries, turns constants
into literals or hoisted names (filter text becomes code only as ``repr`` of a
value of an exact built-in type), hoists other objects into the namespace the
code runs in, and maps each emitted line to the filter-text offset of the node
being written (for tracebacks and explanations). Output is deterministic.
"""
from __future__ import annotations

import math
from contextlib import contextmanager
from typing import Any, Iterator

_PLAIN = (str, int, bool, type(None))
_BIG = 1 << 64   # larger ints are hoisted: repr refuses 4,300 digits and more


class SourceWriter:
    """Lines, temporaries, constants and hoisted objects of one generated function."""

    def __init__(self, namespace: dict[str, Any] | None = None) -> None:
        self.lines: list[str] = []
        self.offsets: list[int | None] = []   # per line: the filter offset it comes from
        self.offset: int | None = None        # the node being written
        self.size = 0                          # characters written
        self.depth = 0
        self.namespace: dict[str, Any] = dict(namespace or {})
        self._const_names: dict[tuple, str] = {}
        self._temps = 0
        self._hoisted: dict[str, int] = {}

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.depth + line)
        self.offsets.append(self.offset)
        self.size += len(line) + 4 * self.depth

    @contextmanager
    def indented(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def temp(self) -> str:
        self._temps += 1
        return f"_{self._temps}"

    def const(self, value: Any, hoist: bool = False) -> str:
        """A Python expression for a constant: ``repr`` of a value of an exact
        built-in type (``str``/``int``/``bool``/``None``/finite ``float``), or a
        hoisted name for anything else."""
        cls = type(value)
        plain = (cls in _PLAIN and (cls is not int or -_BIG < value < _BIG)) or (
            cls is float and math.isfinite(value))
        if plain and not hoist:
            return repr(value)
        # ints and strings key by value (repr refuses ints of 4,300 digits and more)
        key = (cls, value) if cls in _PLAIN else (cls, repr(value))
        name = self._const_names.get(key)
        if name is None:
            name = f"_k{len(self._const_names) + 1}"
            self._const_names[key] = name
            self.namespace[name] = value
        return name

    def hoist(self, label: str, value: Any) -> str:
        """A hoisted object that is not a value (a matcher, a set), numbered per
        label: ``_like1``, ``_set1``, ``_like2``."""
        number = self._hoisted.get(label, 0) + 1
        self._hoisted[label] = number
        name = f"_{label}{number}"
        self.namespace[name] = value
        return name
