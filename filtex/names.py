"""The dialects' names and the check of a dialect argument's type: a leaf
that imports nothing of filtex, so that every layer (the front door, the
dialects' records, the product type ``Filter``) can name a dialect without
importing another (the rules of each dialect: ``filtex.dialects``)."""
from __future__ import annotations

from typing import Literal, get_args

Dialect = Literal["amqp", "jms", "rabbitmq"]
"""The SQL dialects' names (their rules: ``filtex.dialects``)."""
DIALECT_NAMES: tuple[Dialect, ...] = get_args(Dialect)


def check_dialect_type(dialect: object) -> None:
    """``TypeError`` unless ``dialect`` is a str: a dialect of another type is the
    calling program's error (an unknown name is a ``FilterError``, as it may come
    with a filter's definition)."""
    if not issubclass(type(dialect), str):
        raise TypeError(f"dialect is one of {', '.join(map(repr, DIALECT_NAMES))}, not "
                        f"{type(dialect).__name__}")
