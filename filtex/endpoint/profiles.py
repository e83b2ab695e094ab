"""How each broker answers a filter set at attach: one record per broker.

The specifications let a source narrow the filter set it echoes (AMQP core
3.5.3) and, in the filtex draft, make it detach on a filter it cannot apply
(CSD01 2.3); brokers chose differently (``docs/endpoint.md`` has the table and
its sources). A ``Profile`` is what ``negotiate`` needs to copy one of them:
which filter types it applies and under which keys, what a bad or unknown
entry gets (refused: the link is detached; omitted: left out of the echo), the
wording of its refusals, and the entries it interprets itself.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ..errors import FilterError
from ..names import Dialect
from . import rabbitmq
from .rabbitmq import RABBITMQ_STREAM, Release

Policy = Literal["detach", "omit"]
POLICIES: tuple[Policy, ...] = ("detach", "omit")

# entries brokers interpret themselves, by descriptor: passed through, echoed, and
# left to the caller (RabbitMQ's stream offset and Bloom filter options, Azure
# Service Bus's session filter, by symbol and by code)
AZURE_SESSION = ("com.microsoft:session-filter", 0x00000137_0000000C)
DELEGATED: tuple[str | int, ...] = RABBITMQ_STREAM + AZURE_SESSION


def _spec_invalid(key: str, error: FilterError) -> str:
    return f"filter {key}: {error}"


def _spec_unknown(key: str, descriptor: str) -> str:
    return f"filter {key}: filter type {descriptor} is not implemented"


@dataclass(frozen=True)
class Profile:
    """One broker's attach behaviour (see the module's docstring)."""

    name: str
    dialect: Dialect                      # how its SQL filters read (selectors are always jms)
    invalid: Policy                       # a filter it takes whose definition is bad
    unknown: Policy                       # a filter type it does not take
    # the filter types it applies, by preferred descriptor symbol; None: all filtex knows
    types: frozenset[str] | None = None
    keys: Mapping[str, str] = field(default_factory=dict)  # type -> the one key it reads
    delegated: tuple[str | int, ...] = DELEGATED
    describe_invalid: Callable[[str, FilterError], str] = _spec_invalid
    describe_unknown: Callable[[str, str], str] = _spec_unknown
    # what a connection to it says of itself (RabbitMQ's client checks these)
    connection_properties: Mapping[str, str] = field(default_factory=dict)
    # whether stream deliveries carry their offset (RabbitMQ's x-stream-offset annotation)
    stream_offsets: bool = False
    # the broker's own reading of a set beyond each entry (RabbitMQ's session, by release)
    session: Release | None = None
    # stream-filter values applied per chunk of a stream (RabbitMQ's Bloom filter), not exactly
    chunked_values: bool = False
    # filters on a queue (not a stream) are echoed and not applied (RabbitMQ: streams only)
    queue_filters_applied: bool = True

    def with_policy(self, policy: Policy | None) -> Profile:
        """The profile with both bad and unknown entries under ``policy``."""
        if policy is None:
            return self
        if policy not in POLICIES:
            raise ValueError(f"policy is one of {', '.join(POLICIES)}, not {policy!r}")
        from dataclasses import replace
        return replace(self, invalid=policy, unknown=policy)


_JMS = frozenset({"apache.org:selector-filter:string", "apache.org:no-local-filter:list"})

SPEC = Profile("spec", "amqp", invalid="detach", unknown="detach")

# Qpid Broker-J: selectors and no-local on queues; both kinds of failure refused, each
# with its own condition and wording (SendingLinkEndpoint.prepareConsumerOptionsAndFilters)
QPID = Profile(
    "qpid", "jms", invalid="detach", unknown="detach",
    types=_JMS,
    describe_invalid=lambda key, error: f"Invalid JMS Selector: {error}",
    describe_unknown=lambda key, descriptor: f"Unsupported filter type: {descriptor}")

# ActiveMQ Artemis: a selector (by descriptor, under any key) and no-local; a bad
# selector is refused as "Invalid filter", another type silently left out
ARTEMIS = Profile(
    "artemis", "jms", invalid="detach", unknown="omit",
    types=_JMS,
    describe_invalid=lambda key, error: f"Invalid filter: {error}")



def _rabbitmq(name: str, release: Release) -> Profile:
    """RabbitMQ streams: SQL under the key sql-filter, property filters under any
    key, read by the release's session (``rabbitmq.Release``); anything it cannot
    apply is left out of the echo and everything is delivered; stream-filter
    values per chunk; filters on queues echoed, not applied."""
    return Profile(
        name, "rabbitmq", invalid="omit", unknown="omit",
        types=frozenset({"amqp:sql-filter", "amqp:properties-filter",
                         "amqp:application-properties-filter"}),
        keys={"amqp:sql-filter": "sql-filter"},
        connection_properties={"product": "RabbitMQ", "version": release.tag.lstrip("v")},
        stream_offsets=True, session=release, chunked_values=True,
        queue_filters_applied=False)


RABBITMQ_4_2 = _rabbitmq("rabbitmq-4.2", rabbitmq.RABBITMQ_4_2)
RABBITMQ_4_3 = _rabbitmq("rabbitmq-4.3", rabbitmq.RABBITMQ_4_3)
RABBITMQ = _rabbitmq("rabbitmq", rabbitmq.RABBITMQ_4_3)   # the newest release

PROFILES: dict[str, Profile] = {p.name: p for p in (SPEC, QPID, ARTEMIS, RABBITMQ,
                                                    RABBITMQ_4_2, RABBITMQ_4_3)}


def get_profile(name: str) -> Profile:
    try:
        return PROFILES[name]
    except KeyError:
        raise ValueError(f"profile is one of {', '.join(PROFILES)}, not {name!r}") from None


__all__ = ["DELEGATED", "POLICIES", "PROFILES", "Policy", "Profile", "get_profile"]
