"""How many bytes an object really keeps: what the compile cache counts of a
filter (and the tests of the LIKE cache's bound count of a matcher), so that a
bound in bytes is a bound on memory.

``footprint`` walks what its roots reach, each object once, adding
``sys.getsizeof``: containers and their items, closures and the values in
their cells, regular expressions, code objects and their constants, instances
and their slots or ``__dict__``. It stops at what is shared by every filter
and held anyway: modules, classes, functions defined at module level (their
code and globals), bound methods' ``self``, and whatever ``shared`` names. A
closure made for one pattern counts what its cells hold, plus the ``reserve``
it declares (tables it may build and keep on first use).
"""
from __future__ import annotations

import gc
import re
import sys
import types
from decimal import Decimal
from typing import Any, Collection

_ATOMS = (str, bytes, int, float, complex, Decimal, bool, type(None))
_OPAQUE = (type, types.ModuleType, types.BuiltinFunctionType, types.MethodWrapperType,
           types.WrapperDescriptorType, types.MethodDescriptorType, types.GetSetDescriptorType,
           types.MemberDescriptorType)

ATOM, OPAQUE, SEQUENCE, MAPPING, FUNCTION, CELL, METHOD, CODE, PATTERN, INSTANCE = range(10)
_KINDS: dict[type, int] = {tuple: SEQUENCE, list: SEQUENCE, set: SEQUENCE, frozenset: SEQUENCE,
                           dict: MAPPING, types.FunctionType: FUNCTION, types.CellType: CELL,
                           types.MethodType: METHOD, types.CodeType: CODE, re.Pattern: PATTERN}
_KINDS.update(dict.fromkeys(_ATOMS, ATOM))


def _kind(cls: type) -> int:
    kind = _KINDS.get(cls)
    if kind is None:
        if issubclass(cls, _ATOMS):
            kind = ATOM
        elif issubclass(cls, _OPAQUE):
            kind = OPAQUE
        else:
            kind = INSTANCE
        if len(_KINDS) < 4096:
            _KINDS[cls] = kind
    return kind


def footprint(*roots: Any, shared: Collection[int] = frozenset()) -> int:
    """Bytes held by ``roots`` and everything they reach, each object counted
    once; objects whose ``id`` is in ``shared`` are not counted (nor what they
    reach)."""
    seen: set[int] = set()
    total = 0
    stack = list(roots)
    getsizeof, kinds = sys.getsizeof, _KINDS
    while stack:
        obj = stack.pop()
        key = id(obj)
        if key in seen or key in shared:
            continue
        seen.add(key)
        cls = type(obj)
        kind = kinds.get(cls)
        if kind is None:
            kind = _kind(cls)
        if kind == ATOM:
            total += getsizeof(obj)
        elif kind == SEQUENCE:
            total += getsizeof(obj)
            stack.extend(obj)
        elif kind == MAPPING:
            total += getsizeof(obj)
            stack.extend(obj.keys())
            stack.extend(obj.values())
        elif kind == INSTANCE:   # its slots or its __dict__ (gc knows both)
            total += getsizeof(obj)
            stack.extend(gc.get_referents(obj))
        elif kind == FUNCTION:
            if "<locals>" not in obj.__qualname__:
                continue   # defined at module level: shared, code and globals alike
            # a closure: its cells, defaults and attributes; its code is its
            # module's, shared by every closure made from it
            total += getsizeof(obj) + obj.__dict__.get("reserve", 0)
            stack.extend(obj.__closure__ or ())
            stack.extend(obj.__defaults__ or ())
            stack.append(obj.__dict__)
        elif kind == CELL:
            total += getsizeof(obj)
            try:
                stack.append(obj.cell_contents)
            except ValueError:   # an empty cell
                pass
        elif kind == METHOD:
            total += getsizeof(obj)   # its self and function are someone else's
        elif kind == CODE:
            total += getsizeof(obj)   # the bytecode is inline
            stack.extend((obj.co_consts, obj.co_names, obj.co_linetable,
                          obj.co_exceptiontable, obj.co_filename))
            stack.extend(obj.co_varnames)
        elif kind == PATTERN:
            total += getsizeof(obj)   # its compiled code included
            stack.append(obj.pattern)
    return total
