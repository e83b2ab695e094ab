"""filtex: AMQP 1.0 Filter Expressions compiled to Python functions.

>>> import filtex
>>> f = filtex.compile_sql("color = 'blue' AND h.priority > 4")
>>> f.evaluate(filtex.Message(header={"priority": 7},
...                           application_properties={"color": "blue"}))
True

The public names are imported on first use (PEP 562), so ``import filtex``
and ``import filtex.filter`` load no compiler, parser or engine. Type checkers
read the same names from the explicit re-exports under ``TYPE_CHECKING``.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__ as __version__

# public name -> the module (relative to filtex) that defines it
_EXPORTS = {
    "compile_sql": "compiler", "cache_clear": "compiler", "cache_info": "compiler",
    "compile_filter": "compiler", "compile_filter_set": "compiler",
    "capabilities": "described.descriptors",
    "EvaluationFailure": "errors", "FilterError": "errors", "NotAMessage": "errors",
    "Dialect": "names", "Filter": "filter", "Outcome": "filter",
    "Limits": "limits", "DEFAULT_LIMITS": "limits",
    "Body": "message", "Message": "message", "MessageForm": "forms",
    "view": "forms", "read_messages": "files", "Subscriptions": "subscriptions",
    "quote_identifier": "quoting", "quote_string": "quoting",
    "message_from_json": "typed_json", "value_from_json": "typed_json",
    "Explanation": "row.explain",
}

# a literal list, as type checkers read it (tests/test_api.py checks it against _EXPORTS)
__all__ = [
    "DEFAULT_LIMITS", "Body", "Dialect", "EvaluationFailure", "Explanation", "Filter",
    "FilterError", "Limits", "Message", "MessageForm", "NotAMessage", "Outcome",
    "Subscriptions", "__version__", "cache_clear", "cache_info", "capabilities",
    "compile_filter", "compile_filter_set", "compile_sql", "message_from_json",
    "quote_identifier", "quote_string", "read_messages", "value_from_json", "view",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'filtex' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value   # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly, re-exported
    from .compiler import cache_clear as cache_clear
    from .compiler import cache_info as cache_info
    from .compiler import compile_sql as compile_sql
    from .compiler import compile_filter as compile_filter
    from .compiler import compile_filter_set as compile_filter_set
    from .described.descriptors import capabilities as capabilities
    from .errors import EvaluationFailure as EvaluationFailure
    from .errors import FilterError as FilterError
    from .errors import NotAMessage as NotAMessage
    from .files import read_messages as read_messages
    from .names import Dialect as Dialect
    from .filter import Filter as Filter
    from .filter import Outcome as Outcome
    from .forms import view as view
    from .limits import DEFAULT_LIMITS as DEFAULT_LIMITS
    from .limits import Limits as Limits
    from .message import Body as Body
    from .message import Message as Message
    from .forms import MessageForm as MessageForm
    from .quoting import quote_identifier as quote_identifier
    from .quoting import quote_string as quote_string
    from .row.explain import Explanation as Explanation
    from .subscriptions import Subscriptions as Subscriptions
    from .typed_json import message_from_json as message_from_json
    from .typed_json import value_from_json as value_from_json
