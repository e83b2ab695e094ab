"""``python -m benchmarks.failure_path``: what a failing message costs the
per-message engine against a message that makes the same filter true, per
filter of the benchmark suite (``benchmarks/cases.py``), side by side in one
run.

Each filter gets three messages built from one true order: the order itself
(true), the order with a field the filter reads removed (unknown: a NULL), and
the order with a value of the wrong type where the filter expects a number or
a string (failing, amqp: the comparison, arithmetic, LIKE or function fails
and makes the filter unknown). ``EXISTS(tags) AND coupon IS NULL`` can be
neither unknown nor failing: its false message stands in for both. Each
message is evaluated by ``evaluate`` and by ``matches`` (the one
``Subscriptions`` calls), ``--loops`` times a round; the variants alternate
round by round (best of ``--rounds``), and the table gives CPU nanoseconds per
call and the ratios to the true message's.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import filtex  # noqa: E402
from proton import symbol, timestamp, ubyte, uint  # noqa: E402

from benchmarks.cases import CASES  # noqa: E402

_T0 = 1750772279000


def true_order() -> dict[str, Any]:
    """The sections of an order every filter of the suite is true for."""
    return {
        "header": {"priority": ubyte(7), "durable": True},
        "properties": {"subject": "order.created", "content-type": symbol("application/json"),
                       "creation-time": timestamp(_T0 + 1000), "to": "/orders/eu"},
        "message_annotations": {symbol("x-opt-order"): {"lines": [{"sku": "SKU-1001"}]}},
        "application_properties": {
            "color": "blue", "order_type": "premium", "total_amount": 2500.0,
            "customer_region": "EU-DE", "cancelled": False, "sku": "ABC-12-XY",
            "customer": "ACME", "quantity": uint(6), "price": 300, "discount": 5,
            "tags": ["a"]},
    }


# per filter: (section, key, the failing value), and the key whose absence makes it unknown
CHANGES: dict[str, tuple[tuple[str, str, Any] | None, tuple[str, str] | None]] = {
    "equality": (("application_properties", "color", 5),
                 ("application_properties", "color")),
    "rabbitmq-complex": (("application_properties", "total_amount", "2500"),
                         ("application_properties", "total_amount")),
    "like-in": (("application_properties", "sku", 12345),
                ("application_properties", "sku")),
    "arithmetic": (("application_properties", "price", "300"),
                   ("application_properties", "price")),
    "header-properties": (("header", "priority", "high"),
                          ("properties", "subject")),
    "functions": (("application_properties", "customer", 42),
                  ("application_properties", "customer")),
    "null-exists": (None, None),
    "composite": (("message_annotations", symbol("x-opt-order"),
                   {"lines": [{"sku": 1001}]}),
                  ("message_annotations", symbol("x-opt-order"))),
    "numeric-range": (("application_properties", "total_amount", "2500"),
                      ("application_properties", "quantity")),
}
"""How each filter is made to fail (section, key, the value of the wrong type)
and to be unknown (section, key removed)."""


def _message(change: Callable[[dict], None] | None = None) -> filtex.Message:
    sections = true_order()
    if change is not None:
        change(sections)
    return filtex.Message(**sections)


def messages_for(name: str) -> dict[str, filtex.Message]:
    """The true, unknown and failing messages of one suite filter."""
    failing, absent = CHANGES[name]
    found = {"true": _message()}
    if name == "null-exists":   # never unknown, never failing: its false message
        false = _message(lambda s: s["application_properties"].pop("tags"))
        return {**found, "unknown": false, "failing": false}

    def remove(sections: dict) -> None:
        assert absent is not None
        sections[absent[0]].pop(absent[1])

    def replace(sections: dict) -> None:
        assert failing is not None
        sections[failing[0]][failing[1]] = failing[2]
    return {**found, "unknown": _message(remove), "failing": _message(replace)}


def per_call(fn: Callable[[filtex.Message], object], message: filtex.Message,
             loops: int) -> float:
    """CPU nanoseconds (this thread's) per call over ``loops`` calls."""
    calls = [message] * loops
    started = time.thread_time_ns()
    for m in calls:
        fn(m)
    return (time.thread_time_ns() - started) / loops


def measure(name: str, sql: str, rounds: int, loops: int) -> dict[tuple[str, str], float]:
    """Best ns per call of (function, message kind)."""
    flt = filtex.compile_sql(sql)
    messages = messages_for(name)
    expected = {"true": True, "unknown": None, "failing": None}
    if name == "null-exists":
        expected.update(unknown=False, failing=False)
    for kind, message in messages.items():
        outcome = flt.outcome(message)
        assert outcome.result is expected[kind], (name, kind, outcome)
        if kind == "failing" and name != "null-exists":
            assert outcome.reason and not outcome.reason.startswith("no value"), (name, outcome)
        assert flt.evaluate(message) is expected[kind] and flt.matches(message) is (
            expected[kind] is True)
    variants = [(fn_name, kind) for fn_name in ("evaluate", "matches") for kind in messages]
    best = dict.fromkeys(variants, float("inf"))
    for r in range(rounds):
        for fn_name, kind in (variants if r % 2 == 0 else list(reversed(variants))):
            fn = getattr(flt, fn_name)
            best[fn_name, kind] = min(best[fn_name, kind], per_call(fn, messages[kind], loops))
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--loops", type=int, default=20_000)
    args = parser.parse_args(argv)
    print(f"CPU ns per call, best of {args.rounds} interleaved rounds of {args.loops:,} calls\n")
    header = ("| filter | evaluate true | unknown | failing | failing/true | "
              "matches true | unknown | failing | failing/true |")
    print(header)
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios: dict[str, list[float]] = {"evaluate": [], "matches": []}
    for case in CASES:
        t = measure(case.name, case.sql, args.rounds, args.loops)
        cells = []
        for fn_name in ("evaluate", "matches"):
            ratio = t[fn_name, "failing"] / t[fn_name, "true"]
            ratios[fn_name].append(ratio)
            cells += [f"{t[fn_name, 'true']:.0f}", f"{t[fn_name, 'unknown']:.0f}",
                      f"{t[fn_name, 'failing']:.0f}", f"{ratio:.2f}x"]
        print(f"| {case.name} | " + " | ".join(cells) + " |")
    for fn_name, found in ratios.items():
        print(f"\n{fn_name}: failing/true median {statistics.median(found):.2f}x, "
              f"worst {max(found):.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
