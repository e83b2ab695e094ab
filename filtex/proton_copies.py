"""Values from another copy of proton, read by their structure.

Some clients vendor their own proton (the official RabbitMQ AMQP 1.0 client ships
``rabbitmq_amqp_python_client.qpid.proton``): its ``symbol``, ``Described``,
``Data``, ``Terminus`` and ``Message`` are other classes than
``proton.symbol`` and the rest, so an exact-class check refuses them. This
module recognises a class as proton's only when it *is* the class of that name
in a loaded module laid out as proton is (``proton._data``, or
``<package>.proton._data``, and so on): ``sys.modules[cls.__module__].<name> is
cls``. A subclass, or a class that merely looks alike, is not one; it stays
refused as before (a lying object never runs where filtex reads it).

Recognised values are rebuilt as this proton's own (``to_own``): scalars from
their built-in base value (``str.__str__``, ``int.__int__``: never the
object's own methods), containers entry by entry, bounded in depth and size. A
message from another copy is read through its own encoding (``encoded``): the
wire form is exact by construction.
"""
from __future__ import annotations

import sys
import uuid
from collections.abc import Callable
from typing import Any

import proton
from proton import Array, Data, Described

from .amqp.codec import DecodeError, decode_map_entries, decode_value
from .errors import FilterError

DECODE_ERROR = "amqp:decode-error"

# proton's modules by the role of the classes a filter or a message comes in
_MODULES = {"symbol": "_data", "ulong": "_data", "uint": "_data", "ushort": "_data",
            "ubyte": "_data", "long": "_data", "int32": "_data", "short": "_data",
            "byte": "_data", "char": "_data", "float32": "_data", "timestamp": "_data",
            "decimal32": "_data", "decimal64": "_data", "decimal128": "_data",
            "Described": "_data", "Array": "_data", "Data": "_data",
            "AnnotationDict": "_data", "PropertyDict": "_data", "SymbolList": "_data",
            "Terminus": "_endpoints", "Message": "_message"}
# a scalar's built-in value, read by the built-in's own code (never the object's)
_PLAIN: dict[type, Callable[[Any], Any]] = {
    str: str.__str__, int: int.__int__, float: float.__float__, bytes: bytes.__bytes__}
_BUILTIN = (type(None), bool, int, float, str, bytes, uuid.UUID)
MAX_VALUES = 100_000   # values of one rebuilt filter set: bounded work whatever it holds


_QUALNAME = type.__dict__["__qualname__"].__get__   # type's own: a metaclass cannot answer


def copy_of(cls: type) -> str | None:
    """The package path of the proton copy ``cls`` belongs to ("proton", or
    "pkg.qpid.proton"), or None: ``cls`` must be exactly the class of its name in
    a loaded module named ``<copy>.<module>`` where proton keeps it."""
    name = _QUALNAME(cls) if isinstance(cls, type) else ""
    expected = _MODULES.get(name)
    module_name = cls.__dict__.get("__module__") if expected else None
    if type(module_name) is not str:
        return None
    root, _, leaf = module_name.rpartition(".")
    if leaf != expected or not (root == "proton" or root.endswith(".proton")):
        return None
    module = sys.modules.get(module_name)
    if module is None or module.__dict__.get(name) is not cls:
        return None
    return root


def is_foreign(value: object) -> bool:
    """True for a value of a proton copy other than the one filtex uses."""
    root = copy_of(type(value))
    return root is not None and root != "proton"


def foreign_message(value: object) -> bool:
    return _QUALNAME(type(value)) == "Message" and is_foreign(value)


def encoded(message: object) -> bytes:
    """A foreign proton ``Message``'s AMQP bytes, from its own encoder."""
    data = type(message).encode(message)  # type: ignore[attr-defined]
    if type(data) not in (bytes, bytearray):
        raise TypeError("a proton message encodes to bytes")
    return bytes(data)


class _Budget:
    def __init__(self, depth: int) -> None:
        self.depth, self.left = depth, MAX_VALUES

    def take(self, depth: int) -> None:
        self.left -= 1
        if self.left < 0 or depth > self.depth:
            raise FilterError("a filter value from another proton copy is too large or "
                              "too deeply nested", condition="amqp:resource-limit-exceeded")


def to_own(value: Any, max_depth: int = 64) -> Any:
    """``value`` with every part from another proton copy rebuilt as this
    proton's (parts already this proton's, or built-in, are kept). A foreign
    ``Data`` or ``Terminus`` gives the object its filter field holds."""
    return _own(value, _Budget(max_depth), 0)


def _own(value: Any, budget: _Budget, depth: int) -> Any:
    budget.take(depth)
    cls = type(value)
    if cls in _BUILTIN:
        return value
    if cls is memoryview:   # proton's Data reads binary as a view of its buffer
        return value.tobytes()
    if cls is dict:
        return {_own(k, budget, depth + 1): _own(v, budget, depth + 1) for k, v in value.items()}
    if cls is list or cls is tuple:
        return cls(_own(v, budget, depth + 1) for v in value)
    root = copy_of(cls)
    if root is None:   # not proton's: left for the reader to refuse as before
        return value
    name = _QUALNAME(cls)
    if name == "Described":
        return Described(_own(value.descriptor, budget, depth + 1),
                         _own(value.value, budget, depth + 1))
    if name == "Array":
        return Array(_own(value.descriptor, budget, depth + 1), int.__int__(value.type),
                     *(_own(v, budget, depth + 1) for v in value.elements))
    if name == "Data":
        return _data_object(value)
    if name == "Terminus":
        return _data_object(value.filter)
    if root == "proton":
        return value
    if name in ("AnnotationDict", "PropertyDict"):
        return {_own(k, budget, depth + 1): _own(v, budget, depth + 1)
                for k, v in dict.items(value)}
    if name == "SymbolList":
        return [_own(v, budget, depth + 1) for v in list.__iter__(value)]
    own = getattr(proton._data, name, None)
    if isinstance(own, type):
        build: Any = own
        for base, plain in _PLAIN.items():
            if isinstance(value, base) and issubclass(own, base):
                return build(plain(value))
    return value


def _data_object(data: Any) -> Any:
    """The object a (foreign or own) ``Data`` holds, read from the copy's own
    encoding by filtex's exact decoder (``amqp.codec``), which bounds depth and
    size before it builds anything and turns every malformed value (a string
    that is not UTF-8, a symbol that is not ASCII, a char beyond Unicode, a
    lying size) into one ``FilterError``: proton's ``get_object`` would build
    any depth recursively and raise whatever its converters raise."""
    if type(data) is not Data and (copy_of(type(data)) is None
                                   or _QUALNAME(type(data)) != "Data"):
        raise FilterError(f"not a filter set: a {type(data).__name__[:40]}")
    try:
        raw = type(data).encode(data)
    except Exception as error:   # proton's encoder on a value it cannot encode again
        raise FilterError(f"the filter set cannot be encoded: {type(error).__name__}",
                          condition=DECODE_ERROR) from None
    if not raw:
        return {}
    try:
        value, _ = decode_value(bytes(raw))
    except DecodeError as error:
        try:   # a map whose structure holds: each entry spoils only itself
            entries = decode_map_entries(bytes(raw))
        except DecodeError:
            raise FilterError(f"the filter set cannot be decoded: {error.reason}",
                              condition=DECODE_ERROR) from None
        if any(isinstance(key, (list, dict)) for key, _ in entries):
            raise FilterError(f"the filter set cannot be decoded: {error.reason}",
                              condition=DECODE_ERROR) from None
        return {key: UnreadableValue(value.reason) if isinstance(value, DecodeError)
                else _own(value, _Budget(64), 1) for key, value in entries}
    return _own(value, _Budget(64), 0)


class UnreadableValue:
    """An entry's value that cannot be decoded (a string that is not UTF-8,
    nesting too deep), in a map whose other entries can: ``reason`` says why.
    A filter set's reader refuses that entry alone."""

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __repr__(self) -> str:
        return f"UnreadableValue({self.reason!r})"


__all__ = ["UnreadableValue", "copy_of", "encoded", "foreign_message", "is_foreign", "to_own"]
