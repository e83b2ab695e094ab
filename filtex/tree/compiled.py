"""What an engine reads of a compiled filter: the contract between the front
door's ``Filter`` and the engines that take one.

Engines (the batch engine, the index, Spark) read the checked tree and call
the row engine's functions for what they hand back; they depend on this
protocol, not on ``filter.py``, so that ``Filter`` may offer them as methods
(``Filter.evaluate_batch``) without the two importing each other."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Protocol


class CompiledFilter(Protocol):
    """A compiled filter as engines read it (``filtex.Filter`` is one)."""

    @property
    def tree(self) -> Any:
        """The checked tree, rooted in a ``Scope`` of its dialect (None for a
        filter built by hand: engines then use the functions alone)."""

    @property
    def dialect(self) -> str: ...

    @property
    def options(self) -> Mapping[str, Any]: ...

    @property
    def evaluate(self) -> Callable[..., bool | None]:
        """The row engine's function: the verdict for one message."""
