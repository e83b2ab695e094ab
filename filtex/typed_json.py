"""The typed JSON of the conformance format (``../shared/conformance/FORMAT.md``).

JSON null/booleans/strings are AMQP null/boolean/string, integers are long,
other numbers double; any other type is tagged ``{"@type": NAME, "value": ...}``.
Reading (``*_from_json``) and writing (``*_to_json``) are inverses, so message
files in this form round trip to equal messages.
"""
from __future__ import annotations

import math
import uuid
from decimal import Decimal
from typing import Any, Mapping

from proton import (Array, Described, char, decimal32, decimal64, decimal128, float32, symbol,
                    timestamp, ulong)
from proton import Data

from .errors import FilterError
from .message import HEADER_FIELDS, PROPERTIES_FIELDS, SECTIONS, Body, Message
from .runtime.values import INTEGER_TYPES, decimal_value, double_value, encode_decimal

_ARRAY_CODES = {"boolean": Data.BOOL, "ubyte": Data.UBYTE, "ushort": Data.USHORT,
                "uint": Data.UINT, "ulong": Data.ULONG, "byte": Data.BYTE, "short": Data.SHORT,
                "int": Data.INT, "long": Data.LONG, "float": Data.FLOAT, "double": Data.DOUBLE,
                "char": Data.CHAR, "timestamp": Data.TIMESTAMP, "uuid": Data.UUID,
                "binary": Data.BINARY, "string": Data.STRING, "symbol": Data.SYMBOL,
                "decimal32": Data.DECIMAL32, "decimal64": Data.DECIMAL64,
                "decimal128": Data.DECIMAL128, "map": Data.MAP, "list": Data.LIST,
                "null": Data.NULL}


def _bad(why: str) -> FilterError:
    return FilterError(f"bad typed JSON value: {why}", condition="amqp:decode-error")


def _float(raw: Any) -> float:
    if issubclass(type(raw), str):
        table = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if raw not in table:
            raise _bad(f"floating-point string {_short(raw)}")
        return table[raw]
    if type(raw) is bool or not isinstance(raw, (int, float)):
        raise _bad(f"not a number: {_short(raw)}")
    return float(raw)


MAX_DEPTH = 64


_PLAIN_KINDS = {"string": str, "boolean": bool, "null": type(None)}
_LONG_MIN, _LONG_MAX = INTEGER_TYPES["long"][1:]


def _short(raw: Any) -> str:
    """A few characters of a raw JSON value for an error message."""
    if type(raw) is str:
        return repr(raw[:40])
    if type(raw) in (bool, float, type(None)) or (type(raw) is int and abs(raw) < 10**40):
        return repr(raw)
    return f"a JSON {type(raw).__name__}"


def value_from_json(obj: object, symbol_keys: bool = False, max_depth: int = MAX_DEPTH) -> Any:
    """One typed JSON value as filtex's Python/proton value.

    ``symbol_keys``: plain-object keys become symbols (annotation maps). Input
    that is not the typed JSON of the format (wrong shapes, nesting deeper than
    ``max_depth``) is a ``FilterError`` with ``amqp:decode-error``, never
    another exception; ``symbol_keys`` or ``max_depth`` of the wrong type is a
    ``TypeError``.
    """
    if type(symbol_keys) is not bool:
        raise TypeError(f"symbol_keys is a bool, not {type(symbol_keys).__name__}")
    if type(max_depth) is not int:
        raise TypeError(f"max_depth is an int, not {type(max_depth).__name__}")
    try:
        return _value(obj, symbol_keys, max_depth)
    except FilterError:
        raise
    except RecursionError:
        raise _bad(f"nested more than {max_depth} levels deep") from None
    except Exception as exc:  # TypeError, KeyError, ...: a shape the format does not have
        raise _bad(f"malformed value ({type(exc).__name__})") from None


def _value(obj: Any, symbol_keys: bool, depth: int) -> Any:
    if depth <= 0:
        raise _bad("nested too deeply")
    cls = type(obj)
    if cls is int and not _LONG_MIN <= obj <= _LONG_MAX:   # a plain integer is a long
        raise _bad(f"{_short(obj)} is not a long (-2**63..2**63-1)")
    if obj is None or cls in (bool, int, float, str):
        return obj
    if cls is list:
        return [_value(item, False, depth - 1) for item in obj]
    if cls is not dict:
        raise _bad(f"unsupported JSON {cls.__name__[:40]}")
    if "@type" not in obj:
        key = symbol if symbol_keys else str
        for k in obj:
            if type(k) is not str:
                raise _bad("object keys are strings")
        return {key(k): _value(v, False, depth - 1) for k, v in obj.items()}
    kind, raw = obj["@type"], obj.get("value")
    if type(kind) is not str:
        raise _bad("@type names a type")
    value_from_json = lambda item: _value(item, False, depth - 1)  # noqa: E731
    if kind in INTEGER_TYPES:
        cls, low, high = INTEGER_TYPES[kind]
        if type(raw) is bool or not issubclass(type(raw), int) or not low <= raw <= high:
            raise _bad(f"{_short(raw)} is not a {kind}")
        return cls(raw)
    if kind == "double":
        return _float(raw)
    if kind == "float":
        return float32(double_value(float32(_float(raw))))  # the value the wire carries
    if kind in ("decimal32", "decimal64", "decimal128"):
        try:
            return encode_decimal(str(raw), int(kind[7:]))
        except Exception as exc:  # decimal.InvalidOperation, Overflow, ValueError
            raise _bad(f"{_short(raw)} is not a {kind}") from exc
    if kind in _PLAIN_KINDS:
        if type(raw) is not _PLAIN_KINDS[kind]:
            raise _bad(f"{_short(raw)} is not a {kind}")
        return raw
    if kind == "symbol":
        if type(raw) is not str:
            raise _bad(f"{_short(raw)} is not a symbol")
        return symbol(raw)
    if kind == "char":
        if not issubclass(type(raw), str) or len(raw) != 1:
            raise _bad(f"{_short(raw)} is not a char")
        return char(raw)
    if kind == "timestamp":
        if type(raw) is bool or not issubclass(type(raw), int):
            raise _bad(f"{_short(raw)} is not a timestamp")
        return timestamp(raw)
    if kind == "binary":
        try:
            return bytes.fromhex(raw)
        except (TypeError, ValueError) as exc:
            raise _bad(f"{_short(raw)} is not hex") from exc
    if kind == "uuid":
        try:
            return uuid.UUID(raw)
        except (TypeError, ValueError, AttributeError) as exc:
            raise _bad(f"{_short(raw)} is not a uuid") from exc
    if kind in ("map", "list", "array") and type(raw) is not list:
        raise _bad(f"a {kind} value is a JSON array")
    if kind == "map":
        if any(type(pair) is not list or len(pair) != 2 for pair in raw):
            raise _bad("a map value is a list of [key, value] pairs")
        return _map_of_pairs([(value_from_json(k), value_from_json(v)) for k, v in raw])
    if kind == "list":
        return [value_from_json(item) for item in raw]
    if kind == "array":
        of = obj.get("of")
        if type(of) is not str or of not in _ARRAY_CODES:
            raise _bad(f"array of {str(of)[:40]!r}")
        items = [value_from_json({"@type": of, "value": item}) for item in raw]
        return Array(None, _ARRAY_CODES[of], *items)
    if kind == "described":
        if "descriptor" not in obj or "value" not in obj:
            raise _bad("a described value has a descriptor and a value")
        return Described(value_from_json(obj["descriptor"]), value_from_json(obj["value"]))
    raise _bad(f"unknown @type {kind[:40]!r}")


def _map_of_pairs(pairs: list[tuple[Any, Any]]) -> dict[Any, Any]:
    """A dict of decoded pairs, refusing a duplicate key rather than letting
    Python merge it: an AMQP map has unique keys, compared by type and value;
    keys of different AMQP types that Python finds equal (``true``, ``1``,
    ``ubyte(1)``, ``1.0``) are distinct in AMQP, but a dict holds only one."""
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: dict[Any, Any] = {}
    for key, _ in pairs:
        if key in seen:
            first = seen[key]
            if type(first) is type(key):
                raise _bad(f"duplicate map key {repr(key)[:40]}")
            raise _bad(f"map keys {repr(first)[:40]} and {repr(key)[:40]} are distinct "
                       "AMQP keys but equal in Python: filtex cannot hold both")
        seen[key] = key
    raise _bad("duplicate map key")   # not reached: a merged key is seen twice


_SECTION_KEYS = {"header": "header", "delivery-annotations": "delivery_annotations",
                 "message-annotations": "message_annotations", "properties": "properties",
                 "application-properties": "application_properties", "footer": "footer"}
_SYMBOL_KEYED = {"delivery_annotations", "message_annotations", "footer"}
_KEY_CLASSES = {"application_properties": ((str,), "strings"),
                "delivery_annotations": ((symbol, ulong), "symbols or ulongs"),
                "message_annotations": ((symbol, ulong), "symbols or ulongs"),
                "footer": ((symbol, ulong), "symbols or ulongs")}
"""The key types AMQP allows in each map section: any other would encode to an
invalid message (a tagged map can give any key)."""


_BODY_KEYS = ("amqp-value", "amqp-sequence", "data")


def message_from_json(obj: object) -> Message:
    """A conformance-format message (sections keyed by their AMQP names, and
    at most one body form); malformed input is a ``FilterError`` with
    ``amqp:decode-error``."""
    if type(obj) is not dict:
        raise _bad(f"a message is a JSON object, not {type(obj).__name__[:40]}")
    sections: dict[str, Any] = {}
    body = None
    for key, value in obj.items():
        if key in ("connection", "receiving-connection"):
            continue
        if key in _BODY_KEYS:
            if body is not None:
                raise _bad(f"a message has at most one body form, not {body.kind} and {key}")
            body = _body_from_json(key, value)
            continue
        if type(key) is not str or key not in _SECTION_KEYS:
            raise _bad(f"unknown message section {str(key)[:40]!r}")
        name = _SECTION_KEYS[key]
        section = value_from_json(value, symbol_keys=name in _SYMBOL_KEYED)
        if not isinstance(section, dict):
            raise _bad(f"section {key} is not a map")
        allowed = _KEY_CLASSES.get(name)
        if allowed is not None:
            for k in section:
                if type(k) not in allowed[0]:
                    raise _bad(f"{key} keys are {allowed[1]}, not {repr(k)[:40]} "
                               f"(a {type(k).__name__})")
        sections[name] = section
    return Message(connection=obj.get("connection"), body=body, **sections)


def _body_from_json(kind: str, raw: Any) -> Body:
    if kind == "amqp-value":
        return Body.value(value_from_json(raw))
    if type(raw) is not list or not raw:
        raise _bad(f"{kind} is a JSON array of one or more sections")
    if kind == "amqp-sequence":
        if any(type(section) is not list for section in raw):
            raise _bad("each amqp-sequence section is a JSON array of values")
        return Body.sequence(*(value_from_json(section) for section in raw))
    chunks = []
    for chunk in raw:
        try:
            chunks.append(bytes.fromhex(chunk))
        except (TypeError, ValueError):
            raise _bad(f"data section {_short(chunk)} is not hex") from None
    return Body.data(*chunks)


# --- writing: the inverse of value_from_json / message_from_json -------------------

_INT_TAGS = {cls: name for name, (cls, _, _) in INTEGER_TYPES.items() if cls is not int}
_DECIMAL_TAGS = {decimal32: "decimal32", decimal64: "decimal64", decimal128: "decimal128",
                 Decimal: "decimal128"}
_ARRAY_NAMES = {code: name for name, code in _ARRAY_CODES.items()}
_SPECIAL_FLOATS = {math.inf: "Infinity", -math.inf: "-Infinity"}


def _float_json(value: float) -> Any:
    """A finite float as itself; NaN and the infinities as FORMAT.md's strings."""
    if value != value:
        return "NaN"
    return _SPECIAL_FLOATS.get(value, value)


def value_to_json(value: Any, symbol_keys: bool = False) -> Any:
    """The typed JSON of one value (``value_from_json`` reads it back equal).

    Null, booleans, strings, ``int`` (long) and finite ``float`` (double) are
    plain JSON; everything else is tagged. A map whose keys are all strings
    (all symbols, with ``symbol_keys``: annotation maps) is a plain object,
    unless a key is ``"@type"``; any other map is the tagged pair list. A
    ``Decimal`` is written as the decimal128 it travels as. A value with no
    typed JSON form (a described array, an unknown class) is a ``TypeError``.
    """
    cls = type(value)
    if value is None or cls is bool or cls is str or cls is int:
        return value
    if cls is float:
        raw = _float_json(value)
        return raw if raw is value else {"@type": "double", "value": raw}
    tag = _INT_TAGS.get(cls)
    if tag is not None:
        return {"@type": tag, "value": int(value)}
    if cls is symbol:
        return {"@type": "symbol", "value": str(value)}
    if cls is timestamp:
        return {"@type": "timestamp", "value": int(value)}
    if cls is float32:
        return {"@type": "float", "value": _float_json(float(value))}
    tag = _DECIMAL_TAGS.get(cls)
    if tag is not None:
        return {"@type": tag, "value": str(decimal_value(value))}
    if cls is char:
        return {"@type": "char", "value": str(value)}
    if cls in (bytes, bytearray, memoryview):
        return {"@type": "binary", "value": bytes(value).hex()}
    if cls is uuid.UUID:
        return {"@type": "uuid", "value": str(value)}
    if cls is list or cls is tuple:
        return [value_to_json(item) for item in value]
    if cls is dict or (isinstance(value, Mapping) and not isinstance(value, (str, bytes))):
        return _map_to_json(value, symbol if symbol_keys else str)
    if cls is Described:
        return {"@type": "described", "descriptor": value_to_json(value.descriptor),
                "value": value_to_json(value.value)}
    if cls is Array:
        return _array_to_json(value)
    raise TypeError(f"no typed JSON form for a {cls.__name__}")


def _map_to_json(value: Mapping[Any, Any], key_class: type) -> dict[str, Any]:
    if all(type(key) is key_class for key in value) and "@type" not in value:
        return {str(key): value_to_json(item) for key, item in value.items()}
    return {"@type": "map",
            "value": [[value_to_json(key), value_to_json(item)] for key, item in value.items()]}


def _array_to_json(value: Array) -> dict[str, Any]:
    of = _ARRAY_NAMES.get(value.type)
    if of is None or value.descriptor is not None:
        raise TypeError("typed JSON has no form for a described array or an array of "
                        f"{value.type}")
    if of == "map":   # each element as its pair list (even an empty map, written {} elsewhere)
        items = [[[value_to_json(key), value_to_json(item)] for key, item in element.items()]
                 for element in value.elements]
    else:
        items = [_array_element(value_to_json(element)) for element in value.elements]
    return {"@type": "array", "of": of, "value": items}


def _array_element(tagged: Any) -> Any:
    """An array element is written as the ``value`` of its tagged form."""
    return tagged["value"] if type(tagged) is dict and "@type" in tagged else tagged


_JSON_SECTION_KEYS = {name: key for key, name in _SECTION_KEYS.items()}
_FIELD_ORDER = {"header": HEADER_FIELDS, "properties": PROPERTIES_FIELDS}


def message_to_json(message: Message) -> dict[str, Any]:
    """The typed JSON object of a message: what ``message_from_json`` reads
    back as an equal ``Message`` (sections, body and a JSON-able connection)."""
    out: dict[str, Any] = {}
    for name in SECTIONS:
        section = getattr(message, name)
        if section:
            if name in ("header", "properties"):   # in field order: one text a message
                out[_JSON_SECTION_KEYS[name]] = {
                    key: value_to_json(section[key]) for key in _FIELD_ORDER[name]
                    if key in section}
            else:
                out[_JSON_SECTION_KEYS[name]] = _map_to_json(
                    section, symbol if name in _SYMBOL_KEYED else str)
    body = message.body
    if body is not None:
        if body.kind == "amqp-value":
            out["amqp-value"] = value_to_json(body.sections[0])
        elif body.kind == "amqp-sequence":
            out["amqp-sequence"] = [value_to_json(section) for section in body.sections]
        else:
            out["data"] = [bytes(chunk).hex() for chunk in body.sections]
    if message.connection is not None:
        out["connection"] = message.connection
    return out
