"""filtex: AMQP 1.0 Filter Expressions compiled to Python functions.

>>> import filtex
>>> f = filtex.compile_sql("color = 'blue' AND h.priority > 4")
>>> f.evaluate(filtex.Message(header={"priority": 7},
...                           application_properties={"color": "blue"}))
True
"""
from .compiler import cache_clear, cache_info, compile_sql
from .described import compile_filter, compile_filter_set
from .descriptors import capabilities
from .errors import EvaluationFailure, FilterError
from .filter import Filter, Outcome
from .limits import DEFAULT_LIMITS, Limits
from .message import Message
from .quoting import quote_identifier, quote_string
from .typed_json import message_from_json, value_from_json

__all__ = ["compile_sql", "compile_filter", "compile_filter_set", "capabilities", "cache_clear",
           "cache_info", "Filter", "Outcome", "FilterError", "EvaluationFailure", "Limits",
           "DEFAULT_LIMITS", "Message", "message_from_json", "value_from_json", "quote_string",
           "quote_identifier"]
__version__ = "0.1.0"
