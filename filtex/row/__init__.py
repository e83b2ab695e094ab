"""The per-message engine: one generated Python function per filter, SQL or
described, from the one checked tree (``generator.CodeGenerator`` for SQL
nodes, ``described.DescribedNodes`` for the nodes described filters lower to)."""
from __future__ import annotations

from .described import DescribedNodes
from .generator import CodeGenerator


class RowGenerator(DescribedNodes, CodeGenerator):
    """The row engine's visitor over a checked tree."""


__all__ = ["RowGenerator"]
