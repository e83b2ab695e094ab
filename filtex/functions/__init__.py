"""The SQL functions: one record each, read by every engine.

A ``Function`` says everything filtex knows of one function: its name and
arity, the type of its result, whether it reads the clock (``volatile``: never
folded, never a constant operand), the runtime operation the generated code
calls (``run``: NULL in gives NULL out, a wrong type fails), and, optionally,
its faster forms: the row engine's inline Python for an exact string subject
(``inline``), and Spark's (``spark``: its SQL and a Python model of it, for
chains of string functions under a text comparison). A missing form only
means "not native there": the runtime operation is always exact.

The checker reads the arity, the result type and ``volatile``; the row engine
``run``, ``inline`` and the result type (a string result is charged to the
evaluation's budget, and only a string result's inline form is compared with a
string constant directly); the plan's constant folder ``volatile``; Spark
``spark``. A dialect lists the functions it has by name
(``Dialect.functions``). Adding a function is a record here (in ``strings.py``
or ``time.py``) and its name in the dialects that have it.
"""
from __future__ import annotations

from .record import Function, SparkForm
from .strings import STRING_FUNCTIONS
from .time import TIME_FUNCTIONS


def canonical(name: str) -> str:
    """A call's name as the registry keys it: standard names upper case (the
    parser folds them), a vendor prefix lower case and its name upper case."""
    if ":" in name and name.isascii():
        prefix, _, rest = name.partition(":")
        return f"{prefix.lower()}:{rest.upper()}"
    return name


REGISTRY: dict[str, Function] = {f.name: f for f in (*STRING_FUNCTIONS, *TIME_FUNCTIONS)}
"""Every function filtex implements, by name."""

STANDARD = ("LOWER", "UPPER", "LEFT", "RIGHT", "SUBSTRING", "UTC", "DATE")
"""The functions of the AMQP filter expressions specification (6.4.4.3)."""


__all__ = ["REGISTRY", "STANDARD", "Function", "SparkForm", "canonical"]
