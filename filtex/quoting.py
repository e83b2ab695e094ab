"""Writing values and names into filter text safely (filtex 7.3).

Prefer bound parameters (``compile_sql("region = @r", parameters={"r": x})``):
a value then never becomes text at all. Where text must be built, these
helpers write a string constant or a name so that no input can change the
filter's shape.
"""
from __future__ import annotations

from .dialects import get_dialect
from .errors import FilterError
from .names import Dialect, check_dialect_type


def quote_string(text: str) -> str:
    """``text`` as an SQL string constant in every dialect: single quotes, each
    quote doubled (``O'Brien`` -> ``'O''Brien'``)."""
    if not issubclass(type(text), str):
        raise TypeError(f"quote_string takes a str, not {type(text).__name__}")
    return "'" + str.__str__(text).replace("'", "''") + "'"


def quote_identifier(name: str, dialect: Dialect = "amqp") -> str:
    """An application property name as a delimited identifier of ``dialect``:
    ``[name]`` (``]`` and ``[`` doubled) in amqp and rabbitmq, ``"name"`` (``"``
    doubled) in jms. In jms a JMS header name (``JMSType``) still names the
    header. ``FilterError`` if the dialect cannot write the name."""
    if not issubclass(type(name), str):
        raise TypeError(f"quote_identifier takes a str, not {type(name).__name__}")
    check_dialect_type(dialect)
    name = str.__str__(name)
    rules = get_dialect(dialect)
    if rules.quoted_identifiers:
        return '"' + name.replace('"', '""') + '"'
    if rules.delimited_identifiers is None:
        raise FilterError(f"the {rules.name} dialect has no delimited identifiers")
    if not name and rules.delimited_identifiers == "nonempty":
        raise FilterError(f"an empty name cannot be written in the {rules.name} dialect")
    if any(char < " " or "\x7f" <= char < "\xa0" for char in name):
        raise FilterError("a name with control characters cannot be written as an identifier")
    return "[" + name.replace("]", "]]").replace("[", "[[") + "]"
