"""The dialects: one module each (``amqp``, ``jms``, ``rabbitmq``), each one
``Dialect`` record that owns its text forms, names, limits, static checks and
evaluation rules. Adding a dialect is adding a module and a line here."""
from __future__ import annotations

from ..errors import FilterError
from .amqp import AMQP
from .base import UNDECIDED, Dialect, Lenient, Semantics
from .jms import JMS
from .rabbitmq import RABBITMQ

DIALECTS: dict[str, Dialect] = {d.name: d for d in (AMQP, JMS, RABBITMQ)}


def get_dialect(name: str) -> Dialect:
    """The dialect called ``name``, or a ``FilterError`` (``amqp:not-implemented``)
    naming the known ones: ``name`` may come from a filter's definition."""
    try:
        return DIALECTS[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(DIALECTS))
        raise FilterError(f"unknown SQL dialect {str(name)[:40]!r} (known: {known})",
                          condition="amqp:not-implemented") from None


__all__ = ["AMQP", "JMS", "RABBITMQ", "DIALECTS", "UNDECIDED", "Dialect", "Lenient", "Semantics",
           "get_dialect"]
