"""Measurement helpers shared by ``python -m benchmarks`` and the pytest-benchmark suite."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
for extra in (ROOT, ROOT / "tests"):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

import filtex  # noqa: E402
from filtex import compiler  # noqa: E402


LONG_FILTER = ("order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 "
               "AND (customer_region LIKE 'EU-%' OR customer_region = 'US-CA') "
               "AND p.creation_time >= 1750772279000 AND NOT cancelled AND h.priority > 4")


def reference_function(text: str) -> Callable:
    import reference
    from filtex.sql.checker import Checker
    from filtex.dialects import get_dialect
    from filtex.sql.parser import parse
    dialect = get_dialect("amqp")
    tree = Checker(dialect, fold=False).check(parse(text, dialect))
    return lambda message: reference.evaluate(tree, message)[0]


def print_header(header: str) -> None:
    """A Markdown table's header line and the line under it."""
    print(header)
    print("|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|")


def time_per_message(fn: Callable, messages: list, loops: int) -> float:
    """Nanoseconds per message for one pass of ``loops`` sweeps."""
    start = time.perf_counter_ns()
    for _ in range(loops):
        for message in messages:
            fn(message)
    return (time.perf_counter_ns() - start) / (loops * len(messages))


def measure_case(case, messages, rounds: int, loops: int) -> dict[str, float]:
    variants = {"compiled": filtex.compile_sql(case.sql).evaluate, "hand": case.hand,
                "reference": reference_function(case.sql)}
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            sweep = max(1, loops // 20) if name == "reference" else loops
            best[name] = min(best[name], time_per_message(fn, messages, sweep))
    return best


def compile_microseconds(rounds: int = 200) -> tuple[float, float]:
    """(cold compile of LONG_FILTER, compile-cache hit), in microseconds."""
    cold = float("inf")
    for _ in range(rounds):
        start = time.perf_counter_ns()
        compiler._compile_sql(LONG_FILTER, "amqp", filtex.DEFAULT_LIMITS, None)
        cold = min(cold, time.perf_counter_ns() - start)
    filtex.compile_sql(LONG_FILTER)
    hits = 100_000
    start = time.perf_counter_ns()
    for _ in range(hits):
        filtex.compile_sql(LONG_FILTER)
    return cold / 1000, (time.perf_counter_ns() - start) / hits / 1000


def measure_property_case(case, messages, rounds: int, loops: int) -> dict[str, float]:
    """ns/message for a property filter, its hand-written twin and its SQL twin."""
    variants = {"property": filtex.compile_filter(case.filter).evaluate, "hand": case.hand,
                "sql": filtex.compile_sql(case.sql).evaluate}
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            best[name] = min(best[name], time_per_message(fn, messages, loops))
    return best


def measure_dialect_case(case, messages, rounds: int, loops: int) -> dict[str, float]:
    """ns/message for a jms/rabbitmq filter and its hand-written twin."""
    variants = {"compiled": filtex.compile_sql(case.sql, case.dialect).evaluate,
                "hand": case.hand}
    best = {name: float("inf") for name in variants}
    for _ in range(rounds):
        for name, fn in variants.items():
            best[name] = min(best[name], time_per_message(fn, messages, loops))
    return best
