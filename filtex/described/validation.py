"""What a described filter may hold: values of exact AMQP classes, bounded.

A filter's values come from a remote client (decoded by proton) or from an
embedding program. Before filtex reads one, it checks every element's exact
class (``type(x)``, never ``isinstance``: a subclass could answer ``repr``,
``hash`` or ``==`` as it likes), the nesting depth and the element count,
iteratively, so a self-referencing or very deep value is refused, not
followed.
"""
from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from proton import (Array, Described, byte, char, decimal32, decimal64, decimal128, float32,
                    int32, short, symbol, timestamp, ubyte, uint, ulong, ushort)

from ..errors import FilterError
from ..limits import Limits, exceeded

SCALAR_CLASSES = frozenset({type(None), bool, int, ubyte, ushort, uint, ulong, byte, short,
                            int32, float, float32, Decimal, decimal32, decimal64, decimal128,
                            str, symbol, char, bytes, timestamp, uuid.UUID})
_SEQUENCES = (list, tuple)


def check_value(value: Any, limits: Limits, what: str) -> None:
    """Refuse a value that holds anything but AMQP values of exact classes, or
    that is nested deeper or larger than the limits allow."""
    stack = [(value, 1)]
    count = 0
    while stack:
        item, depth = stack.pop()
        count += 1
        if count > limits.max_nodes:
            raise exceeded("max_nodes", limits, f"{what} has more than "
                           f"{limits.max_nodes:,} elements")
        if depth > limits.max_value_depth:
            raise exceeded("max_value_depth", limits, f"{what} is nested more than "
                           f"{limits.max_value_depth} levels deep")
        cls = type(item)
        if cls in SCALAR_CLASSES:
            continue
        if cls is dict:
            for key, entry in item.items():
                stack.append((key, depth + 1))
                stack.append((entry, depth + 1))
        elif cls in _SEQUENCES:
            stack.extend((entry, depth + 1) for entry in item)
        elif cls is Array:
            if type(item.elements) not in _SEQUENCES:
                raise FilterError(f"{what} holds a malformed array")
            stack.append((item.descriptor, depth + 1))
            stack.extend((entry, depth + 1) for entry in item.elements)
        elif cls is Described:
            stack.append((item.descriptor, depth + 1))
            stack.append((item.value, depth + 1))
        else:
            raise FilterError(f"{what} holds a {_class_name(cls)}, which is not an AMQP value")


def _class_name(cls: type) -> str:
    name = cls.__name__
    return name[:40] if name.__class__ is str else "value"
