"""filtex: AMQP 1.0 Filter Expressions compiled to Python functions.

>>> import filtex
>>> f = filtex.compile_sql("color = 'blue' AND h.priority > 4")
>>> f.evaluate(filtex.Message(header={"priority": 7},
...                           application_properties={"color": "blue"}))
True

The public names are imported on first use (PEP 562), so ``import filtex``
and ``import filtex.filter`` load no compiler, parser or engine.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__

_EXPORTS = {
    "compile_sql": "compiler", "cache_clear": "compiler", "cache_info": "compiler",
    "compile_filter": "described", "compile_filter_set": "described",
    "capabilities": "described.descriptors",
    "EvaluationFailure": "errors", "FilterError": "errors",
    "Filter": "filter", "Outcome": "filter",
    "Limits": "limits", "DEFAULT_LIMITS": "limits",
    "Message": "message", "view": "forms", "Body": "message",
    "read_messages": "files", "Subscriptions": "subscriptions",
    "quote_identifier": "quoting", "quote_string": "quoting",
    "message_from_json": "typed_json", "value_from_json": "typed_json",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'filtex' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value   # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
    from .compiler import cache_clear, cache_info, compile_sql  # noqa: F401
    from .described import compile_filter, compile_filter_set  # noqa: F401
    from .described.descriptors import capabilities  # noqa: F401
    from .errors import EvaluationFailure, FilterError  # noqa: F401
    from .filter import Filter, Outcome  # noqa: F401
    from .limits import DEFAULT_LIMITS, Limits  # noqa: F401
    from .files import read_messages  # noqa: F401
    from .forms import view  # noqa: F401
    from .message import Body, Message  # noqa: F401
    from .quoting import quote_identifier, quote_string  # noqa: F401
    from .subscriptions import Subscriptions  # noqa: F401
    from .typed_json import message_from_json, value_from_json  # noqa: F401
