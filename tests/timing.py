"""Timing for growth-ratio tests: the best of a few runs, and how much longer an
operation takes at 10n than at n (linear is about 10, quadratic 100)."""
from __future__ import annotations

import time
from typing import Callable


def best_time(action: Callable[[], object], repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return best


def growth(make: Callable[[int], Callable[[], object]], size: int) -> float:
    """Best time at 10 x size over best time at size; ``make(n)`` builds the
    operation to time outside the timing."""
    small, large = make(size), make(10 * size)
    small()   # warm up caches built once
    return best_time(large) / max(best_time(small), 1e-6)
