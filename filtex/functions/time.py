"""The time functions: ``UTC()`` (the clock: volatile) and ``DATE(text)``."""
from __future__ import annotations

from ..runtime import ops
from .record import Function

TIME_FUNCTIONS = (
    Function("UTC", (0, 0), "timestamp", ops.utc, volatile=True),
    Function("DATE", (1, 1), "timestamp", ops.date, subject="string"),
)
