"""Timing for growth-ratio tests: how much longer an operation takes at 10n
than at n (linear is about 10, quadratic about 100), measured so that a
loaded machine cannot fail a linear operation.

- CPU time of this thread (``time.thread_time``), not wall time: the time the
  process waits while other jobs hold the cores is not counted.
- The garbage collector is paused while timing (as ``timeit`` does).
- The small and the large size are timed in alternation and each keeps its
  best of several runs, so a slow spell affects both alike.
- A ratio that looks superlinear is measured again, up to three times, and
  the smallest is returned: noise only ever adds time, so it can inflate one
  measurement but hardly three in a row, while a quadratic operation measures
  near 100 every time.
"""
from __future__ import annotations

import gc
import time
from typing import Callable

CLEARLY_LINEAR = 15.0
"""A ratio under this needs no second measurement."""


def best_time(action: Callable[[], object], repeats: int = 5) -> float:
    """The best CPU time of ``repeats`` runs of ``action``."""
    best = float("inf")
    for _ in range(repeats):
        best = min(best, _cpu_time(action))
    return best


def _cpu_time(action: Callable[[], object]) -> float:
    enabled = gc.isenabled()
    gc.disable()
    try:
        start = time.thread_time()
        action()
        return time.thread_time() - start
    finally:
        if enabled:
            gc.enable()


def _ratio(small: Callable[[], object], large: Callable[[], object], repeats: int) -> float:
    best_small = best_large = float("inf")
    for _ in range(repeats):
        best_small = min(best_small, _cpu_time(small))
        best_large = min(best_large, _cpu_time(large))
    return best_large / max(best_small, 1e-6)


def growth(make: Callable[[int], Callable[[], object]], size: int, attempts: int = 3) -> float:
    """Best time at 10 x size over best time at size; ``make(n)`` builds the
    operation to time outside the timing. The smallest of up to ``attempts``
    measurements (see the module's docstring)."""
    small, large = make(size), make(10 * size)
    small()   # warm up caches built once
    large()
    found = float("inf")
    for _ in range(attempts):
        found = min(found, _ratio(small, large, 5))
        if found < CLEARLY_LINEAR:
            break
    return found
