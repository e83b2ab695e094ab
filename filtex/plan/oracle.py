"""The one module that runs the per-message engine on a value.

The plan decides what an atom answers for each type tag; where it needs an
answer it cannot read off the tree, it asks the atom itself, compiled by the
row engine (``CompiledAtom``): once per value of a finite domain (absent,
null, False and True, the float specials, a type-only test's type, the
distinct strings of a dictionary, the distinct numbers present: exact by
construction), and to fold an operand that reads no field (``constant``).
Nothing here samples: intervals, text forms and the arithmetic model follow
the dialects' declared rules, checked against the row engine by the tests.
Engines and tools reach the row engine's answers for values only through this
module (``tests/test_layers.py`` holds every other module to that).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..accessors import MessageAccessor
from ..functions import REGISTRY
from ..limits import DEFAULT_LIMITS
from ..message import Message
from ..row import RowGenerator, load
from ..table.schema import KEY_CLASS
from ..tree import ast
from .atoms import FLOAT_TAGS, VALUE_CLASS
from .codes import BACK, FAIL, FALSE, TRUE, UNKNOWN
from .intervals import _FAILED, numeric_form


class _Holder:
    """A section that holds every key, with the one value an atom reads."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def get(self, key: Any, default: Any = None) -> Any:
        return self.value

    def __contains__(self, key: Any) -> bool:
        return True


class ValueAccessor(MessageAccessor):
    """Generated code whose ``message`` argument is the field's value itself:
    one call per distinct string, no message built (only for present values)."""

    name = "value"

    def section(self, section: str) -> str:
        return "_Holder(message)"

    def connection(self) -> str:
        return "message"


VALUE_ACCESSOR = ValueAccessor()


def _function(node: ast.Node, semantics: Any, limits: Any, accessor: Any) -> Callable[..., Any]:
    generator = RowGenerator(accessor=accessor, semantics=semantics, limits=limits)
    source = generator.generate(node)
    generator.namespace["_Holder"] = _Holder
    evaluate, _ = load(source, generator.namespace, f"atom:{accessor.name}")
    return evaluate


def run(fn: Callable[..., Any], message: Any, rc: Any) -> int:
    """The atom's outcome code for one message (or value)."""
    try:
        result = fn(message, rc, False)
    except Exception:   # an amqp failure (or any error): the whole filter is unknown
        return FAIL
    return TRUE if result is True else FALSE if result is False else UNKNOWN


class CompiledAtom:
    """An atom's two per-message functions and its numeric form, if any."""

    def __init__(self, atom: Any, limits: Any = DEFAULT_LIMITS) -> None:
        self.atom = atom
        self.field = atom.field
        node = atom.node
        self.on_message = _function(node, atom.semantics, limits, MessageAccessor())
        self.on_value = (_function(node, atom.semantics, limits, VALUE_ACCESSOR)
                         if atom.field[0] not in ("body", "none", "expr") else None)
        self.numeric = (None if atom.arith is not None else
                        numeric_form(atom.node, lambda n: constant(n, atom.semantics, limits)))

    def message(self, value: Any = None, present: bool = True) -> Message:
        section, key = self.field
        if not present or section == "none" or section == "body":
            return Message()
        if section == "connection":
            return Message(connection=value)
        if section in ("header", "properties"):
            return Message(**{section: {key: value}})
        return Message(**{section: {KEY_CLASS[section](key): value}})

    def on(self, value: Any, rc: Any) -> int:
        """The outcome for a present value of the field (in a message)."""
        return run(self.on_message, self.message(value), rc)

    def absent(self, rc: Any) -> int:
        """The outcome for a message without the field."""
        return run(self.on_message, self.message(present=False), rc)

    def value_outcome(self, value: Any, rc: Any) -> int:
        """The outcome for a present value, given to the value function
        directly (no message built: one call per distinct value)."""
        return run(self.on_value, value, rc)  # type: ignore[arg-type]

    def string_outcomes(self, strings: list[Any], cls: type, rc: Any) -> list[int]:
        """The outcome for each of a dictionary's strings (None: ``BACK``), as
        ``cls`` (str, symbol or char): the loop the batch engine runs once per
        distinct string, so the value function is bound once."""
        fn = self.on_value
        convert = cls is not str
        return [BACK if s is None else run(fn, cls(s) if convert else s, rc)  # type: ignore[arg-type]
                for s in strings]

    def message_outcome(self, message: Message, rc: Any) -> int:
        """The outcome for a whole message (arithmetic over several fields)."""
        return run(self.on_message, message, rc)


_READS = (ast.Field, ast.Body, ast.NoLocal, ast.Derived, ast.PropertyMatch, ast.HeaderMatch,
          ast.Topic, ast.Direct)


def _volatile(name: str) -> bool:
    function = REGISTRY.get(name)
    return function is not None and function.volatile


def constant(node: ast.Node, semantics: Any, limits: Any) -> Any:
    """The value of an expression that reads no field (``DATE('2025-01-01')``,
    ``2 * 50``), computed by the per-message engine's own code; ``_FAILED`` when
    it reads the message or the clock (``UTC()``) or fails."""
    for sub in ast.walk(node):
        if isinstance(sub, _READS) or (isinstance(sub, ast.Call) and _volatile(sub.name)):
            return _FAILED
    generator = RowGenerator(semantics=semantics, limits=limits)
    generator.depth = 2
    result = generator.value(node)
    source = "\n".join(
        ["def evaluate(message, receiving_connection=None, _mode=None):", "    try:"]
        + ["        " + line for line in generator.prologue] + generator.evaluate_lines()
        + [f"        return {result}", "    except Exception:", "        return _FAILED"]) + "\n"
    generator.namespace["_FAILED"] = _FAILED
    evaluate, _ = load(source, generator.namespace, "constant")
    # the mode of ``run``: a failure raised (caught above), never an early exit's NULL
    return evaluate(Message(), None, False)


def value_outcomes(compiled: CompiledAtom, tag: int, values: np.ndarray, rc: Any) -> np.ndarray:
    """The atom's outcome for each of ``values`` (of ``tag``), one run per value."""
    cls = VALUE_CLASS[tag]
    convert = float if tag in FLOAT_TAGS else int
    fn = compiled.on_value
    return np.array([run(fn, cls(convert(v)), rc)  # type: ignore[arg-type]
                     for v in values.tolist()], np.int8)
