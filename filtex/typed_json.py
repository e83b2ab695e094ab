"""The typed JSON of the conformance format (``../shared/conformance/FORMAT.md``).

JSON null/booleans/strings are AMQP null/boolean/string, integers are long,
other numbers double; any other type is tagged ``{"@type": NAME, "value": ...}``.
"""
from __future__ import annotations

import math
import uuid
from typing import Any

from proton import Array, Described, char, float32, symbol, timestamp
from proton import Data

from .errors import FilterError
from .message import Message
from .values import INTEGER_TYPES, double_value, encode_decimal

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
    if isinstance(raw, str):
        table = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}
        if raw not in table:
            raise _bad(f"floating-point string {raw!r}")
        return table[raw]
    if isinstance(raw, bool) or not isinstance(raw, (int, float)):
        raise _bad(f"not a number: {raw!r}")
    return float(raw)


def value_from_json(obj: Any, symbol_keys: bool = False) -> Any:
    """One typed JSON value as filtex's Python/proton value.

    ``symbol_keys``: plain-object keys become symbols (annotation maps).
    """
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, list):
        return [value_from_json(item) for item in obj]
    if not isinstance(obj, dict):
        raise _bad(f"unsupported JSON {type(obj).__name__}")
    if "@type" not in obj:
        key = symbol if symbol_keys else str
        return {key(k): value_from_json(v) for k, v in obj.items()}
    kind, raw = obj["@type"], obj.get("value")
    if kind in INTEGER_TYPES:
        cls, low, high = INTEGER_TYPES[kind]
        if isinstance(raw, bool) or not isinstance(raw, int) or not low <= raw <= high:
            raise _bad(f"{raw!r} is not a {kind}")
        return cls(raw)
    if kind == "double":
        return _float(raw)
    if kind == "float":
        return float32(double_value(float32(_float(raw))))  # the value the wire carries
    if kind in ("decimal32", "decimal64", "decimal128"):
        try:
            return encode_decimal(str(raw), int(kind[7:]))
        except Exception as exc:  # decimal.InvalidOperation, Overflow, ValueError
            raise _bad(f"{raw!r} is not a {kind}") from exc
    if kind in ("string", "boolean", "null"):
        return raw
    if kind == "symbol":
        return symbol(raw)
    if kind == "char":
        if not isinstance(raw, str) or len(raw) != 1:
            raise _bad(f"{raw!r} is not a char")
        return char(raw)
    if kind == "timestamp":
        if isinstance(raw, bool) or not isinstance(raw, int):
            raise _bad(f"{raw!r} is not a timestamp")
        return timestamp(raw)
    if kind == "binary":
        try:
            return bytes.fromhex(raw)
        except (TypeError, ValueError) as exc:
            raise _bad(f"{raw!r} is not hex") from exc
    if kind == "uuid":
        try:
            return uuid.UUID(raw)
        except (TypeError, ValueError, AttributeError) as exc:
            raise _bad(f"{raw!r} is not a uuid") from exc
    if kind == "map":
        return {value_from_json(k): value_from_json(v) for k, v in raw}
    if kind == "list":
        return [value_from_json(item) for item in raw]
    if kind == "array":
        of = obj.get("of")
        if of not in _ARRAY_CODES:
            raise _bad(f"array of {of!r}")
        items = [value_from_json({"@type": of, "value": item}) for item in raw]
        return Array(None, _ARRAY_CODES[of], *items)
    if kind == "described":
        return Described(value_from_json(obj["descriptor"]), value_from_json(obj["value"]))
    raise _bad(f"unknown @type {kind!r}")


_SECTION_KEYS = {"header": "header", "delivery-annotations": "delivery_annotations",
                 "message-annotations": "message_annotations", "properties": "properties",
                 "application-properties": "application_properties", "footer": "footer"}
_SYMBOL_KEYED = {"delivery_annotations", "message_annotations", "footer"}


def message_from_json(obj: dict) -> Message:
    """A conformance-format message (sections keyed by their AMQP names)."""
    sections: dict[str, Any] = {}
    for key, value in obj.items():
        if key in ("connection", "receiving-connection"):
            continue
        if key not in _SECTION_KEYS:
            raise _bad(f"unknown message section {key!r}")
        name = _SECTION_KEYS[key]
        section = value_from_json(value, symbol_keys=name in _SYMBOL_KEYED)
        if not isinstance(section, dict):
            raise _bad(f"section {key} is not a map")
        sections[name] = section
    return Message(connection=obj.get("connection"), **sections)
