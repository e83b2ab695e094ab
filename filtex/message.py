"""The message filtex evaluates: the filterable sections of an AMQP message.

Sections are mappings keyed by AMQP field names (``reply-to``, ``delivery-count``)
for header and properties, and by the map keys for the others. An absent
section is an empty mapping, so generated code never tests for ``None``.

Generated code reads a message through the *reading protocol*: the attributes
``_filtex_header`` ... ``_filtex_footer``, ``_filtex_amqp_value``,
``_filtex_amqp_sequence`` and ``_filtex_connection``. ``Message`` has them as
aliases of its own slots (no cost), the views of encoded bytes and of
``proton.Message`` compute them lazily, and an object without them (a dict, a
proton message before it is adapted) can never be read by mistake through a
public attribute of the same name.
"""
from __future__ import annotations

from typing import Any, Iterator, Literal, Mapping, NamedTuple



class _EmptySection(dict[Any, Any]):
    """The one empty section every absent section reads as: a ``dict`` so that
    ``.get`` and ``in`` run at dict speed (a ``MappingProxyType`` forwards each
    ``get`` through a method call, about 100 ns), and refusing every change
    through its methods, as it is shared."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError("the empty section is shared and cannot change")

    __setitem__ = __delitem__ = __ior__ = _refuse   # type: ignore[assignment]
    clear = pop = popitem = setdefault = update = _refuse   # type: ignore[assignment]

    def __repr__(self) -> str:
        return "{}"


EMPTY: Mapping[Any, Any] = _EmptySection()

SECTIONS = ("header", "delivery_annotations", "message_annotations", "properties",
            "application_properties", "footer")

HEADER_FIELDS = ("durable", "priority", "ttl", "first-acquirer", "delivery-count")
PROPERTIES_FIELDS = ("message-id", "user-id", "to", "subject", "reply-to", "correlation-id",
                     "content-type", "content-encoding", "absolute-expiry-time",
                     "creation-time", "group-id", "group-sequence", "reply-to-group-id")
HEADER_DEFAULTS = {"durable": False, "priority": 4, "first-acquirer": False,
                   "delivery-count": 0}
_COMPOSITE_FIELDS = {"header": frozenset(HEADER_FIELDS),
                     "properties": frozenset(PROPERTIES_FIELDS)}

BODY_KINDS = ("amqp-value", "amqp-sequence", "data")
BodyKind = Literal["amqp-value", "amqp-sequence", "data"]


class Body(NamedTuple):
    """A message body: ``kind`` is ``amqp-value`` (``sections`` holds the one
    value), ``amqp-sequence`` (one list per section) or ``data`` (one
    ``bytes`` per section, never read by a filter)."""
    kind: BodyKind
    sections: tuple[Any, ...]

    @classmethod
    def value(cls, value: Any) -> Body:
        return cls("amqp-value", (value,))

    @classmethod
    def sequence(cls, *lists: list[Any]) -> Body:
        return cls("amqp-sequence", tuple(lists))

    @classmethod
    def data(cls, *chunks: bytes | bytearray | memoryview) -> Body:
        return cls("data", tuple(chunks))


def _body(body: Any) -> Body | None:
    if body is None or type(body) is Body:
        if body is not None:
            if body.kind not in BODY_KINDS:
                raise ValueError(f"a body kind is one of {', '.join(BODY_KINDS)}, "
                                 f"not {body.kind!r}")
            if body.kind == "amqp-value" and len(body.sections) != 1:
                raise ValueError("an amqp-value body is one value")
            if body.kind == "amqp-sequence" and not all(
                    type(s) is list for s in body.sections):
                raise TypeError("an amqp-sequence body is made of lists")
            if body.kind == "data" and not all(
                    isinstance(s, (bytes, bytearray, memoryview)) for s in body.sections):
                raise TypeError("a data body is made of bytes")
        return body
    return Body.value(body)   # a bare value is the amqp-value section


def _section(name: str, value: Any) -> Mapping[Any, Any]:
    """A section as given, after checking it is a mapping (and, for header and
    properties, that every key is a field of that section)."""
    if value is None:
        return EMPTY
    if type(value) is not dict and not isinstance(value, Mapping):
        raise TypeError(f"Message {name} must be a mapping, not {type(value).__name__}")
    fields = _COMPOSITE_FIELDS.get(name)
    if fields is not None and value:
        unknown = [key for key in value if key not in fields]
        if unknown:
            hint = ""
            if issubclass(type(unknown[0]), str) and unknown[0].replace("_", "-") in fields:
                hint = f" (AMQP names use hyphens: {unknown[0].replace('_', '-')!r})"
            raise ValueError(f"unknown {name} field {unknown[0]!r}{hint}; the {name} "
                             f"fields are {', '.join(sorted(fields))}")
    return value


class FieldSection(Mapping[str, Any]):
    """A header or properties section that a view reads field by field: the
    mapping around a subclass's ``get`` (a field whose value is None is absent)
    and its ``_names``, the fields it may hold in order."""

    __slots__ = ()
    _names: Any

    def __getitem__(self, name: Any) -> Any:
        value = self.get(name)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter([name for name in self._names if self.get(name) is not None])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self)!r})"


class Message:
    """An AMQP message's header, annotations, properties, application
    properties, footer and (optional) body.

    ``body`` is a ``Body`` or, as a shorthand, the value of an amqp-value body.
    ``connection`` is an opaque id of the connection the message arrived on
    (used by the Apache no-local filter).
    """

    __slots__ = SECTIONS + ("body", "connection", "_filtex_amqp_value", "_filtex_amqp_sequence")

    header: Mapping[str, Any]
    delivery_annotations: Mapping[Any, Any]
    message_annotations: Mapping[Any, Any]
    properties: Mapping[str, Any]
    application_properties: Mapping[str, Any]
    footer: Mapping[Any, Any]
    connection: Any
    body: Body | None

    def __init__(self, header: Mapping[str, Any] | None = None,
                 delivery_annotations: Mapping[Any, Any] | None = None,
                 message_annotations: Mapping[Any, Any] | None = None,
                 properties: Mapping[str, Any] | None = None,
                 application_properties: Mapping[str, Any] | None = None,
                 footer: Mapping[Any, Any] | None = None, connection: Any = None,
                 body: Any = None) -> None:
        self.header = _section("header", header)
        self.delivery_annotations = _section("delivery_annotations", delivery_annotations)
        self.message_annotations = _section("message_annotations", message_annotations)
        self.properties = _section("properties", properties)
        self.application_properties = _section("application_properties",
                                               application_properties)
        self.footer = _section("footer", footer)
        self.connection = connection
        self.body = body = _body(body)
        kind = body.kind if body is not None else None
        self._filtex_amqp_value = body.sections[0] if kind == "amqp-value" else None
        self._filtex_amqp_sequence = ([item for s in body.sections for item in s]
                                      if kind == "amqp-sequence" else None)

    def __repr__(self) -> str:
        parts = [f"{name}={getattr(self, name)!r}" for name in SECTIONS
                 if getattr(self, name)]
        if self.body is not None:
            parts.append(f"body={self.body!r}")
        if self.connection is not None:
            parts.append(f"connection={self.connection!r}")
        return f"Message({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return all(dict(getattr(self, n)) == dict(getattr(other, n)) for n in SECTIONS) \
            and self.connection == other.connection and self.body == other.body

    __hash__ = None  # type: ignore[assignment]


# The reading protocol: aliases of Message's own slots, read at slot speed.
for _name in SECTIONS + ("connection",):
    setattr(Message, f"_filtex_{_name}", Message.__dict__[_name])
del _name

PROTOCOL = tuple(f"_filtex_{name}" for name in SECTIONS + (
    "amqp_value", "amqp_sequence", "connection"))
"""The attributes generated code reads (see the module docstring)."""
