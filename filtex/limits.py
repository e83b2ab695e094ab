"""Resource limits: how much a remote filter author may ask of filtex.

A broker compiles filters chosen by remote clients (filtex 7.1: "an
implementation SHOULD guard against excessive filter expression complexity").
Every limit is checked as early as it can be (text length before lexing,
tokens while lexing, nodes and depth while parsing, entries before a filter
map is read) and a violation is a ``FilterError`` with the condition
``amqp:resource-limit-exceeded`` that names the limit and its value.

``Limits()`` holds the defaults; pass another ``Limits`` to ``compile_sql``,
``compile_filter`` or ``compile_filter_set`` to change them
(``Limits(max_length=1024)``, or ``DEFAULT_LIMITS.replace(max_tokens=500)``).
A dialect's own hard limits (RabbitMQ's 4,096 characters and 200 tokens) apply
as well: the smaller of the two wins.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from .errors import FilterError

RESOURCE_LIMIT = "amqp:resource-limit-exceeded"

OPTIONAL = frozenset({"max_string", "max_computed", "max_pattern"})
"""The limits of evaluation, which None turns off."""


@dataclass(frozen=True)
class Limits:
    """Bounds on one filter and on what its evaluation may build.

    The last three bound one evaluation, whatever the message holds: a
    computed string, all the strings it computes together, and a LIKE pattern
    the message supplies (over a bound, the evaluation is unknown with the
    limit as its reason).

    The defaults refuse no realistic selector: they are ten times and more
    the largest limits brokers publish (IBM MQ: 10,240-byte selection
    strings; RabbitMQ: 4,096 characters and 200 tokens; Azure Service Bus:
    1,024-character SQL filters), yet keep one compile under about 0.1 s.
    """

    max_length: int = 65_536          # characters of SQL text
    max_tokens: int = 16_384          # tokens of SQL text
    max_depth: int = 128              # nesting of an SQL expression
    max_nodes: int = 10_000           # elements of one filter (SQL nodes, reference values)
    max_in_items: int = 4_096         # items of one IN list
    max_group_members: int = 1_024    # members of one group filter
    max_group_depth: int = 32         # nesting of group filters
    max_group_filters: int = 4_096    # filters in one group tree or filter set, all levels
    max_set_entries: int = 256        # entries of a filter set
    max_property_entries: int = 1_024  # entries of a property filter or headers binding
    max_topic_length: int = 255       # a topic pattern (AMQP 0-9-1 binding keys: shortstr)
    max_value_depth: int = 64         # nesting of maps and lists in a filter's values
    max_string: int | None = 1_048_576  # characters of a computed string (None: no bound)
    max_computed: int | None = 4_194_304  # characters of all strings one evaluation
    #                                       computes and keeps (None: no bound)
    max_pattern: int | None = 1_024   # characters of a LIKE pattern computed from a
    #                                   message (None: no bound)

    def __post_init__(self) -> None:
        for item in dataclasses.fields(self):
            value = getattr(self, item.name)
            if value is None and item.name in OPTIONAL:
                continue
            accepted = "a positive int" + (" or None" if item.name in OPTIONAL else "")
            if type(value) is not int:   # exactly: not a bool, not an int subclass
                raise TypeError(f"Limits.{item.name} is {accepted}, not "
                                f"{type(value).__name__}")
            if value < 1:
                raise ValueError(f"Limits.{item.name} is {accepted}, not {value!r}")

    def replace(self, **changes: int | None) -> Limits:
        """A copy with some limits changed (``TypeError`` for an unknown name)."""
        unknown = sorted(set(changes) - {item.name for item in dataclasses.fields(self)})
        if unknown:
            raise TypeError(f"Limits has no limit {unknown[0]!r}; the limits are "
                            + ", ".join(item.name for item in dataclasses.fields(self)))
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


DEFAULT_LIMITS = Limits()


def exceeded(name: str, limits: Limits, what: str) -> FilterError:
    """The error for a violated limit: ``what`` happened, the limit ``name``
    allows ``limits.name``."""
    return FilterError(f"{what} (limit {name} = {getattr(limits, name):,})",
                       condition=RESOURCE_LIMIT)


def check_limits(limits: object) -> Limits:
    """``limits`` if it is a ``Limits``, the defaults for None; else a TypeError
    (the calling program's error, not a filter's)."""
    if limits is None:
        return DEFAULT_LIMITS
    if type(limits) is not Limits:   # exactly: a subclass could answer as it likes
        raise TypeError(f"limits is a filtex.Limits or None, not {type(limits).__name__}")
    assert isinstance(limits, Limits)
    return limits
