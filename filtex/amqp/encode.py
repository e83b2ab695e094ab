"""Encoding a ``filtex.Message`` as the bytes of an AMQP 1.0 message.

OASIS AMQP 1.0 part 3.2: a message is its sections in order (header,
delivery annotations, message annotations, properties, application
properties, the body, footer), each a value described by its ``smallulong``
code. proton's ``Data`` encodes every value (it is the reference encoder, and
``codec`` is checked against it), so this module only decides *what* to put:

* header and properties are composite lists in field order, absent fields
  null, trailing nulls dropped; an empty mapping is no section at all;
* a field holding a plain ``int`` that fits its AMQP field type is put as
  that type (``priority`` ubyte, ``ttl``/``delivery-count``/``group-sequence``
  uint, the two times timestamps), as a peer would have sent it; any other
  value goes as it is, so a deliberately mistyped field round trips;
* everything else goes exactly as given: each value's class is its AMQP type.

``decode_body`` is the body's decoder, which ``codec.decode_message``
deliberately leaves out (filters rarely read a body): tools that convert
whole messages need it.
"""
from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable, Mapping

from proton import Array, Data, DataException, Described

from ..message import HEADER_FIELDS, PROPERTIES_FIELDS, Body, Message
from ..runtime.values import encode_decimal
from . import codec

_LONG = (-(1 << 63), (1 << 63) - 1)
_UINT = (0, 0xFFFFFFFF)
_FIELD_TYPES: dict[str, tuple[Callable[[Data, int], Any], tuple[int, int]]] = {
    "priority": (Data.put_ubyte, (0, 0xFF)), "ttl": (Data.put_uint, _UINT),
    "delivery-count": (Data.put_uint, _UINT), "group-sequence": (Data.put_uint, _UINT),
    "creation-time": (Data.put_timestamp, _LONG),
    "absolute-expiry-time": (Data.put_timestamp, _LONG)}

# Scalars: exact class -> the Data method that puts it (proton's own table).
_SCALARS: dict[type, Callable[[Data, Any], Any]] = {
    cls: put for cls, put in Data.put_mappings.items()
    if cls.__name__ not in ("list", "tuple", "dict", "Described", "Array", "AnnotationDict",
                            "PropertyDict", "SymbolList")}

# Array elements: the Data method of the array's element type.
_ELEMENT_PUT: dict[int, Callable[[Data, Any], Any]] = {
    Data.BOOL: Data.put_bool, Data.UBYTE: Data.put_ubyte, Data.USHORT: Data.put_ushort,
    Data.UINT: Data.put_uint, Data.ULONG: Data.put_ulong, Data.BYTE: Data.put_byte,
    Data.SHORT: Data.put_short, Data.INT: Data.put_int, Data.LONG: Data.put_long,
    Data.FLOAT: Data.put_float, Data.DOUBLE: Data.put_double, Data.CHAR: Data.put_char,
    Data.TIMESTAMP: Data.put_timestamp, Data.UUID: Data.put_uuid,
    Data.BINARY: Data.put_binary, Data.STRING: Data.put_string, Data.SYMBOL: Data.put_symbol,
    Data.DECIMAL32: Data.put_decimal32, Data.DECIMAL64: Data.put_decimal64,
    Data.DECIMAL128: Data.put_decimal128, Data.NULL: lambda data, _: data.put_null()}


def _put(data: Data, value: Any) -> None:
    """Put one value, its class naming its AMQP type."""
    cls = type(value)
    put = _SCALARS.get(cls)
    if put is not None:
        put(data, value)
    elif cls is dict or isinstance(value, Mapping):
        data.put_map()
        data.enter()
        scalar = _SCALARS.get
        for key, item in value.items():   # scalars put inline: most entries are
            put = scalar(type(key))
            put(data, key) if put is not None else _put(data, key)
            put = scalar(type(item))
            put(data, item) if put is not None else _put(data, item)
        data.exit()
    elif cls is list or cls is tuple:
        data.put_list()
        data.enter()
        for item in value:
            _put(data, item)
        data.exit()
    elif cls is Described:
        data.put_described()
        data.enter()
        _put(data, value.descriptor)
        _put(data, value.value)
        data.exit()
    elif cls is Array:
        _put_array(data, value)
    elif cls is Decimal:
        data.put_decimal128(encode_decimal(value, 128))   # as it travels
    else:
        raise TypeError(f"no AMQP encoding for a {cls.__name__}")


def _put_array(data: Data, value: Array) -> None:
    described = value.descriptor is not None
    data.put_array(described, value.type)
    data.enter()
    if described:
        _put(data, value.descriptor)
    put = _ELEMENT_PUT.get(value.type, _put)
    for element in value.elements:
        put(data, element)
    data.exit()


def _section(data: Data, code: int, value: Any) -> None:
    data.put_described()
    data.enter()
    data.put_ulong(code)
    _put(data, value)
    data.exit()


def _composite(data: Data, code: int, names: tuple[str, ...], fields: Mapping) -> None:
    """A header or properties list: field order, trailing nulls dropped."""
    values = [fields.get(name) for name in names]
    while values and values[-1] is None:
        values.pop()
    data.put_described()
    data.enter()
    data.put_ulong(code)
    data.put_list()
    data.enter()
    for name, value in zip(names, values):
        typed = _FIELD_TYPES.get(name)
        if typed is not None and type(value) is int and typed[1][0] <= value <= typed[1][1]:
            typed[0](data, value)
        else:
            _put(data, value)
    data.exit()
    data.exit()


def encode_message(message: Message) -> bytes:
    """The AMQP 1.0 encoding of ``message``: its present sections, in order.

    A value with no AMQP encoding (an unknown class, an integer out of its
    type's range, a string proton cannot encode) is a ``ValueError`` naming
    the section.
    """
    data = Data()
    where = "header"
    try:
        if message.header:
            _composite(data, codec.HEADER, HEADER_FIELDS, message.header)
        for where, code, section in (
                ("delivery-annotations", codec.DELIVERY_ANNOTATIONS,
                 message.delivery_annotations),
                ("message-annotations", codec.MESSAGE_ANNOTATIONS, message.message_annotations),
                ("properties", codec.PROPERTIES, message.properties),
                ("application-properties", codec.APPLICATION_PROPERTIES,
                 message.application_properties)):
            if section:
                if code == codec.PROPERTIES:
                    _composite(data, code, PROPERTIES_FIELDS, section)
                else:
                    _section(data, code, section)
        body = message.body
        if body is not None:
            where = body.kind
            if body.kind == "data":
                for chunk in body.sections:
                    data.put_described()
                    data.enter()
                    data.put_ulong(codec.DATA)
                    data.put_binary(chunk)
                    data.exit()
            else:
                code = codec.AMQP_VALUE if body.kind == "amqp-value" else codec.AMQP_SEQUENCE
                for value in body.sections:
                    _section(data, code, value)
        where = "footer"
        if message.footer:
            _section(data, codec.FOOTER, message.footer)
        return bytes(data.encode())
    except (TypeError, ValueError, OverflowError, DataException) as exc:
        raise ValueError(f"cannot encode the {where} section: {exc}") from None


def decode_body(buf: Any) -> Body | None:
    """The body of an encoded message (None when it has none), decoded with
    the complete decoder; malformed bytes are ``codec.DecodeError``."""
    kinds = {codec.DATA: "data", codec.AMQP_SEQUENCE: "amqp-sequence",
             codec.AMQP_VALUE: "amqp-value"}
    kind, sections = None, []
    for code, start, end in codec.locate_sections(buf):
        if code in kinds:
            kind = kinds[code]
            value, after = codec.decode_value(buf, start)
            if after != end:
                raise codec.DecodeError("body section ends before its size says", after)
            sections.append(value.value)
    return None if kind is None else Body(kind, tuple(sections))
