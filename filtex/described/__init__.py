"""Front end for described filters: every form a filter value comes in
(``proton.Described``, ``(descriptor, value)``, the conformance JSON object,
``proton.Data``), checked (``validation``, ``property``: filtex 4.1's rules) and
lowered into the one checked tree (``compile``); ``descriptors`` is the table
of every filter type by symbol and code.

The entry points load on first use, so the dialects can read ``property``
without loading the compiler."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["compile_filter", "compile_filter_set", "normalize"]

if TYPE_CHECKING:
    from .compile import compile_filter as compile_filter
    from .compile import compile_filter_set as compile_filter_set
    from .compile import normalize as normalize


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import compile as module
        return getattr(module, name)
    raise AttributeError(f"module 'filtex.described' has no attribute {name!r}")
