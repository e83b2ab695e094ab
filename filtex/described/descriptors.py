"""Every filter type filtex knows, by symbolic descriptor and numeric code: one table.

A numeric descriptor is ``domain-id << 32 | descriptor-id`` (``0x0000468C:0x00000004``
is Apache's selector filter). Where one type has two registered symbols (the
Apache JMS filters), both name it; the first is the one filtex writes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from proton import symbol, ulong

from ..errors import FilterError

if TYPE_CHECKING:
    from ..names import Dialect

AMQP_DOMAIN = 0x00000000
APACHE_DOMAIN = 0x0000468C


@dataclass(frozen=True)
class FilterType:
    kind: str              # what compiles it: see described.py
    names: tuple[str, ...]  # symbolic descriptors (symbols), preferred first
    code: int              # numeric descriptor
    capability: str        # the capability that offers it
    section: str | None = None   # property filters: the message section
    dialect: Dialect | None = None   # SQL filters read in one dialect whatever is asked

    @property
    def name(self) -> str:
        return self.names[0]

    @property
    def code_text(self) -> str:
        return code_text(self.code)


def code_text(code: int) -> str:
    """A 64-bit descriptor code as the registry writes it, ``0xDOMAIN:0xNUMBER``."""
    return f"0x{code >> 32:08X}:0x{code & 0xFFFFFFFF:08X}" if 0 <= code < 1 << 64 \
        else "(out of range)"


def _amqp(n: int) -> int:
    return AMQP_DOMAIN << 32 | n


def _apache(n: int) -> int:
    return APACHE_DOMAIN << 32 | n


SQL, PROP, GROUP = "AMQP_FILTEX_SQL_V1_0", "AMQP_FILTEX_PROP_V1_0", "AMQP_FILTEX_GROUP_V1_0"
EXCHANGE, JMS, LOGIC = ("APACHE.ORG:LEGACY_AMQP_EXCHANGE_FILTERS", "APACHE.ORG:JMS_FILTERS",
                        "APACHE.ORG:LOGIC_FILTERS")

FILTER_TYPES = (
    FilterType("all", ("amqp:all-filter",), _amqp(0x100), GROUP),
    FilterType("any", ("amqp:any-filter",), _amqp(0x101), GROUP),
    FilterType("none", ("amqp:not-filter",), _amqp(0x102), GROUP),
    FilterType("true", ("amqp:true-filter",), _amqp(0x110), PROP),
    FilterType("false", ("amqp:false-filter",), _amqp(0x111), PROP),
    FilterType("sql", ("amqp:sql-filter",), _amqp(0x120), SQL),
    FilterType("property", ("amqp:header-filter",), _amqp(0x170), PROP, "header"),
    FilterType("property", ("amqp:delivery-annotations-filter",), _amqp(0x171), PROP,
               "delivery_annotations"),
    FilterType("property", ("amqp:message-annotations-filter",), _amqp(0x172), PROP,
               "message_annotations"),
    FilterType("property", ("amqp:properties-filter",), _amqp(0x173), PROP, "properties"),
    FilterType("property", ("amqp:application-properties-filter",), _amqp(0x174), PROP,
               "application_properties"),
    FilterType("property", ("amqp:footer-filter",), _amqp(0x178), PROP, "footer"),
    FilterType("direct", ("apache.org:legacy-amqp-direct-binding:string",), _apache(0),
               EXCHANGE),
    FilterType("topic", ("apache.org:legacy-amqp-topic-binding:string",), _apache(1), EXCHANGE),
    FilterType("headers", ("apache.org:legacy-amqp-headers-binding:map",), _apache(2),
               EXCHANGE),
    FilterType("no-local", ("apache.org:no-local-filter:list",
                            "apache.org:jms-no-local-filter:list"), _apache(3), JMS),
    FilterType("selector", ("apache.org:selector-filter:string",
                            "apache.org:jms-selector-filter:string"), _apache(4), JMS,
               dialect="jms"),
    FilterType("any", ("apache.org:or-filter:list",), _apache(5), LOGIC),
    FilterType("all", ("apache.org:and-filter:list",), _apache(6), LOGIC),
    FilterType("not", ("apache.org:not-filter:list",), _apache(7), LOGIC),
)

BY_NAME = {name: t for t in FILTER_TYPES for name in t.names}
BY_CODE = {t.code: t for t in FILTER_TYPES}


# the AMQP registry's names for two of the JMS filters (amqp.org/node/67), which brokers
# (RabbitMQ among them) offer beside apache-filters.xml's group name
REGISTRY = {"apache.org:no-local-filter:list": "APACHE.ORG:NO_LOCAL",
            "apache.org:selector-filter:string": "APACHE.ORG:SELECTOR"}


def capabilities() -> tuple[symbol, ...]:
    """The capability symbols to offer on open/attach for what filtex evaluates:
    each type's group capability, and the registry's names where it has one."""
    seen: dict[str, None] = {}
    for t in FILTER_TYPES:
        seen.setdefault(t.capability)
        if t.name in REGISTRY:
            seen.setdefault(REGISTRY[t.name])
    return tuple(symbol(c) for c in seen)


def parse_code(text: str) -> int:
    """``"0x0000468C:0x00000004"`` to its 64-bit descriptor code."""
    if type(text) is not str or len(text) > 21:
        raise FilterError("malformed filter descriptor code (0xDOMAIN:0xNUMBER)",
                          condition="amqp:invalid-field")
    try:
        domain, _, number = text.partition(":")
        return int(domain, 16) << 32 | int(number, 16)
    except ValueError:
        raise FilterError(f"malformed filter descriptor code {text!r}",
                          condition="amqp:invalid-field") from None


def lookup(descriptor: Any) -> FilterType:
    """The filter type for a symbolic or numeric descriptor; FilterError with
    ``amqp:not-implemented`` naming it when filtex does not know it."""
    # exact copies: a subclass's own __str__/__int__/__hash__ never run
    if issubclass(type(descriptor), str):
        shown = str.__str__(descriptor)
        found = BY_NAME.get(shown)
        shown = shown[:80]
    elif issubclass(type(descriptor), int) and type(descriptor) is not bool:
        code = int.__int__(descriptor)
        found = BY_CODE.get(code)
        shown = code_text(code)
    else:
        raise FilterError(f"a filter descriptor is a symbol or a ulong, not a "
                          f"{type(descriptor).__name__[:40]}", condition="amqp:invalid-field")
    if found is None:
        raise FilterError(f"filter type {shown} is not implemented",
                          condition="amqp:not-implemented")
    return found


def descriptor_value(t: FilterType, numeric: bool = False) -> Any:
    """The descriptor to write for a type: its preferred symbol or its code."""
    return ulong(t.code) if numeric else symbol(t.name)
