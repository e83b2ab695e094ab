"""Bound parameters (``@name``): values a program passes beside the filter text.

As Azure Service Bus's SQL rule filters have them: a value becomes a typed
constant of the tree, never text, so no value can change the filter's shape
(filtex 7.3). Only values of exact built-in types are taken; what a dialect
has no constant for is refused.
"""
from __future__ import annotations

import math
from decimal import Decimal
from typing import Any, Mapping

from proton import symbol

from ..errors import DefinitionProblem, FilterError
from ..dialects import Dialect

_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


def normalize_parameters(parameters: Any) -> tuple[tuple[str, type, Any], ...] | None:
    """Parameters as a hashable, exactly typed key: ``((name, class, value), ...)``
    sorted by name; a leading ``@`` on a name is dropped. None stays None."""
    if parameters is None:
        return None
    if not isinstance(parameters, Mapping):
        raise FilterError(f"parameters are a mapping of names to values, not "
                          f"{type(parameters).__name__}")
    items = []
    for name, value in dict(parameters).items():
        if type(name) is not str:
            raise FilterError(f"a parameter name is a str, not {type(name).__name__}")
        name = name[1:] if name.startswith("@") else name
        if not name or not set(name) <= _NAME_CHARS or name[0].isdigit():
            raise FilterError(f"malformed parameter name {name[:40]!r} "
                              "(letters, digits and _, not starting with a digit)")
        cls = type(value)
        if cls not in _TYPES:
            raise FilterError(f"parameter @{name}: a {cls.__name__} value cannot be bound "
                              "(str, int, float, bool, bytes, Decimal or None)")
        # NaN and decimals key by text: NaN equals nothing, Decimal('1.0') == Decimal('1.00')
        key = repr(value) if cls in (float, Decimal) else value
        items.append((name, cls, key, value))
    items.sort(key=lambda item: item[0])
    return tuple(items)


_TYPES = frozenset({str, int, float, bool, bytes, Decimal, type(None), symbol})


def parameter_literal(name: str, value: Any, dialect: Dialect, offset: int) -> tuple[Any, str]:
    """(value, static type) of a bound parameter as the dialect's constant."""
    cls = type(value)

    def refuse(why: str) -> DefinitionProblem:
        return DefinitionProblem(f"parameter @{name}: {why} in the {dialect.name} dialect",
                                 offset)

    if value is None:
        return None, "null"
    if cls is bool:
        return value, "bool"
    if cls is str or cls is symbol:
        return str.__str__(value), "string"
    if cls is int:
        low, high = dialect.parameter_integers
        if not low <= value <= high:
            raise refuse(f"an integer lies in [{_power(low)}, {_power(high)}]")
        return dialect.integer_constant(value), "int"
    if cls is float:
        if not dialect.non_finite_constants and not math.isfinite(value):
            raise refuse("a number is finite")
        return value, "float"
    if cls is Decimal:
        if not dialect.decimal_constants:
            raise refuse("there are no decimal constants")
        return value, "decimal"
    if cls is bytes:
        if dialect.binary_constants is None:
            raise refuse("there are no binary constants")
        return value, "binary"
    raise refuse(f"a {cls.__name__} is not a constant")


def _power(bound: int) -> str:
    """``-2^63``, ``2^64-1``: an integer bound as people write it."""
    sign, size = ("-", -bound) if bound < 0 else ("", bound)
    if size & (size - 1) == 0 and size:
        return f"{sign}2^{size.bit_length() - 1}"
    if (size + 1) & size == 0:
        return f"{sign}2^{size.bit_length()}-1"
    return str(bound)
