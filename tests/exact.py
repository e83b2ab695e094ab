"""Exact comparison of values and Arrow tables for tests.

Python's ``==`` and Arrow's ``equals`` both say NaN differs from itself and
-0.0 equals 0.0: the first makes two identical tables compare unequal when a
value happens to be NaN (a test failing by chance under hypothesis), the
second hides an engine that loses a sign. Here a float equals a float of the
same class with the same bits, up to NaN payloads.
"""
from __future__ import annotations

import math
from typing import Any

from filtex.amqp.codec import identical


def same_value(a: Any, b: Any) -> bool:
    """Equal value and class, all the way down; NaN is NaN, -0.0 is not 0.0."""
    if isinstance(a, float) and isinstance(b, float) and type(a) is type(b):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if type(a) is list and type(b) is list:
        return len(a) == len(b) and all(map(same_value, a, b))
    if type(a) is tuple and type(b) is tuple:
        return len(a) == len(b) and all(map(same_value, a, b))
    return identical(a, b)


def same_array(a: Any, b: Any) -> bool:
    """Two Arrow arrays (or chunked arrays) of one type holding the same values."""
    return a.type == b.type and same_value(a.to_pylist(), b.to_pylist())


def same_table(a: Any, b: Any) -> bool:
    """Two Arrow tables with equal schemas (metadata included) and the same
    values in every cell."""
    if not a.schema.equals(b.schema, check_metadata=True) or a.num_rows != b.num_rows:
        return False
    return all(same_array(a.column(i), b.column(i)) for i in range(a.num_columns))
