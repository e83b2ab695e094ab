"""The per-message engine: one generated Python function per filter, SQL or
described, from the one checked tree (``generator.CodeGenerator`` for SQL
nodes, ``described.DescribedNodes`` for the nodes described filters lower to)."""
from __future__ import annotations

from typing import Any, Callable

from ..codegen import loader
from .described import DescribedNodes
from .generator import BASE_NAMESPACE, CodeGenerator


class RowGenerator(DescribedNodes, CodeGenerator):
    """The row engine's visitor over a checked tree."""


def load(source: str, namespace: dict[str, Any], identity: str
         ) -> tuple[Callable[..., bool | None], Callable[..., bool]]:
    """A generator's source as ``evaluate`` and ``matches``: its globals are the
    vocabulary every generated function reads, then the generator's own
    ``namespace`` (hoisted constants, the dialect's operations)."""
    return loader.load(source, {**BASE_NAMESPACE, **namespace}, identity)


__all__ = ["RowGenerator", "load"]
