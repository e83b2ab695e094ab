"""``python -m benchmarks.subscriptions_mixed``: issue 27's realistic mixed set of
10,000 subscriptions, matched per message by ``filtex.Subscriptions`` and by
calling every filter's ``matches`` in turn, side by side in one run.

The set is what a new user writes first (fixed seed, amqp dialect): most
filters test one of a few high-cardinality string fields (customer, tenant,
region, sku) for equality, an IN list or a LIKE prefix, some with a second
condition (a range on an int or a float, another equality); then a tail of
ORs over the header priority, ANDs with NOT and a LIKE prefix, and arithmetic:
behind a tenant equality, and alone (``--alone``, 0.5% by default: no index
can skip those, each is evaluated on every message). Messages are orders over
the same domains, with ints, floats, a header priority that is mostly absent
(4 by default) and now and then a missing field. About 2% of the set matches
each message (the run prints the measured rate).

Timing: CPU time of this thread (``time.thread_time``), the two ways
interleaved round by round, garbage collector paused; the best round of each
way, and the median of the rounds' ratios. On ``filtex.Message`` orders, and
on their encoded bytes (``match`` given the bytes; the loop views each once,
``filtex.view``). Every message's matched names are compared (exit 1 on any
difference). The run also says how many candidates a message has verified by
their gate (not evaluated) and evaluated in full.

Then the same set against orders of mixed types (``--wrong``, a quarter by
default): strings and nulls where the filters expect numbers (total, quantity,
discount), so the filters that compare or compute them fail (amqp: unknown)
or are NULL. Cold: each way in a fresh process (``--cold-child``) that builds the set as a
user does (nothing compiled beforehand beyond what ``add`` does) and takes the
first ``--cold-messages`` messages once each, in order: ``match``, or the loop
over every filter's ``matches``; per message, CPU time, and the ratio on the
first message, the first 10 and all of them. Warm: the same messages in
interleaved rounds, as above, on ``filtex.Message`` orders and on their
encoded bytes.

Then a 4-filter set (the README's four subscriptions, as ``filtex match``
runs them, and four one-term filters) against a plain loop over the four
filters' ``matches``, and ``evaluate_all`` against a loop over their
``evaluate``: on ``filtex.Message`` orders and on views of their encoded
bytes (``filtex.view``, a fresh view per message and round for both ways).
"""
from __future__ import annotations

import argparse
import gc
import json
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import filtex  # noqa: E402

CUSTOMERS = 6000
TENANTS = 60
REGIONS = [f"{area}-{n}" for area in ("eu-west", "eu-central", "us-east", "us-west",
                                      "ap-south", "ap-east", "sa-east", "me-central")
           for n in range(1, 4)]   # 24 regions
CATEGORIES = [a + b for a in "ABCDEFGHJK" for b in "PQR"]   # 30 SKU categories
CHANNELS = ["web", "mobile", "store", "partner"]


def _customer(rng: random.Random) -> str:
    return f"C{rng.randrange(CUSTOMERS):05d}"


def _tenant(rng: random.Random) -> str:
    return f"t{rng.randrange(TENANTS):03d}"


def _sku(rng: random.Random) -> str:
    return f"{rng.choice(CATEGORIES)}-{rng.randrange(1000):03d}-{rng.randrange(100):02d}"


def _q(values: list[str]) -> str:
    return ", ".join(f"'{v}'" for v in values)


def make_filters(size: int = 10_000, seed: int = 27, alone: float = 0.005
                 ) -> list[tuple[str, str]]:
    """The mixed set: (name, SQL) pairs, in the amqp dialect; ``alone`` is the
    share of arithmetic filters with no other condition (no gate)."""
    rng = random.Random(seed)
    shapes = [(0.18, "customer"), (0.06, "customers"), (0.12, "tenant"), (0.14, "tenants"),
              (0.12, "region"), (0.10, "category"), (0.04, "sku"), (0.06, "customer-total"),
              (0.05, "tenant-quantity"), (0.06, "priority-or"), (0.03, "not-like"),
              (0.04 - alone, "tenant-arithmetic"), (alone, "arithmetic")]
    cumulative, total = [], 0.0
    for weight, shape in shapes:
        total += weight
        cumulative.append((total, shape))
    filters = []
    for i in range(size):
        roll = rng.random() * total
        shape = next(s for bound, s in cumulative if roll < bound)
        filters.append((f"sub{i}", _filter(rng, shape)))
    return filters


def _filter(rng: random.Random, shape: str) -> str:
    if shape == "customer":
        return f"customer = '{_customer(rng)}'"
    if shape == "customers":
        return f"customer IN ({_q([_customer(rng) for _ in range(3)])})"
    if shape == "tenant":
        return f"tenant = '{_tenant(rng)}'"
    if shape == "tenants":
        return f"tenant IN ({_q(rng.sample([f't{n:03d}' for n in range(TENANTS)], 3))})"
    if shape == "region":
        return f"region = '{rng.choice(REGIONS)}'"
    if shape == "category":
        return f"sku LIKE '{rng.choice(CATEGORIES)}-%'"
    if shape == "sku":
        return f"sku LIKE '{_sku(rng)[:6]}%'"
    if shape == "customer-total":
        return f"customer = '{_customer(rng)}' AND total > {rng.choice([10, 100, 500])}"
    if shape == "tenant-quantity":
        return (f"tenant = '{_tenant(rng)}' AND quantity >= {rng.randrange(1, 40)} AND "
                f"channel = '{rng.choice(CHANNELS)}'")
    if shape == "priority-or":   # ORs over a header range
        other = rng.choice([f"tenant = '{_tenant(rng)}'", f"region = '{rng.choice(REGIONS)}'",
                            f"customer IN ({_q([_customer(rng) for _ in range(2)])})"])
        return f"h.priority >= {rng.randrange(7, 10)} OR {other}"
    if shape == "not-like":   # AND NOT with a LIKE prefix
        return (f"region = '{rng.choice(REGIONS)}' AND "
                f"NOT (sku LIKE '{rng.choice(CATEGORIES)}%')")
    if shape == "tenant-arithmetic":
        return (f"tenant = '{_tenant(rng)}' AND "
                f"total * quantity > {rng.randrange(20_000, 200_000)}")
    return rng.choice([f"total * quantity > {rng.randrange(240_000, 250_000)}",   # no gate
                       f"total - discount > {rng.randrange(4990, 5000)}",
                       f"quantity * 100 + total > {rng.randrange(9900, 10_000)}"])


def make_messages(count: int, seed: int = 28, wrong: float = 0.0) -> list[filtex.Message]:
    """Orders over the filters' domains: 10 application properties (strings,
    ints, floats), a header priority present on 30% (else 4 by default). On a
    share ``wrong`` of them, one to three of the numbers (total, quantity,
    discount) are of the wrong type: the number as a string, ``'n/a'``, or
    null."""
    rng = random.Random(seed)
    mixed = random.Random(seed + 1)   # (the orders themselves are those of wrong=0)
    messages = []
    for _ in range(count):
        region = rng.choice(REGIONS)
        props: dict[str, Any] = {
            "customer": _customer(rng), "tenant": _tenant(rng), "region": region,
            "sku": _sku(rng), "channel": rng.choice(CHANNELS),
            "quantity": rng.randrange(1, 50), "total": round(rng.uniform(1, 5000), 2),
            "discount": round(rng.uniform(0, 50), 2), "currency": "EUR",
            "note": "standard order"}
        if rng.random() < 0.04:
            del props[rng.choice(["customer", "tenant", "region", "sku"])]   # a field missing
        if mixed.random() < wrong:
            for key in mixed.sample(["total", "quantity", "discount"], mixed.randint(1, 3)):
                props[key] = mixed.choice([str(props[key]), "n/a", None])
        header: dict[str, Any] = {"durable": True}
        if rng.random() < 0.3:
            header["priority"] = rng.randrange(10)
        messages.append(filtex.Message(
            header=header, properties={"subject": f"orders.{region}",
                                       "message-id": f"m-{rng.randrange(10**9)}"},
            application_properties=props))
    return messages


def cpu(action: Callable[[], object]) -> float:
    """CPU time of one run of ``action``, the garbage collector paused."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        started = time.thread_time()
        action()
        return time.thread_time() - started
    finally:
        if enabled:
            gc.enable()


def race(ways: dict[str, Callable[[], object]], rounds: int) -> tuple[dict[str, float],
                                                                     list[float]]:
    """Each way's best CPU time over ``rounds``, the ways alternating in order,
    and per round the ratio of the last way's time to the first's."""
    best = dict.fromkeys(ways, float("inf"))
    names, ratios = list(ways), []
    for r in range(rounds):
        times = {}
        for name in names if r % 2 == 0 else reversed(names):
            times[name] = cpu(ways[name])
            best[name] = min(best[name], times[name])
        ratios.append(times[names[-1]] / times[names[0]])
    return best, ratios


def triage(subs: filtex.Subscriptions, messages: list) -> tuple[float, float]:
    """Candidates per message verified by their gate, and evaluated in full."""
    verified = evaluated = 0
    for message in messages:
        counts = subs._triage(message)
        verified += counts["verified"]
        evaluated += counts["evaluated"]
    return verified / len(messages), evaluated / len(messages)


def mixed(size: int, count: int, rounds: int, alone: float) -> int:
    """The mixed set on ``filtex.Message`` orders and on their encoded bytes."""
    from filtex.amqp.encode import encode_message
    texts = make_filters(size, alone=alone)
    started = time.perf_counter()
    subs = filtex.Subscriptions(texts)
    build = time.perf_counter() - started
    plain = [(name, subs[name].matches) for name, _ in texts]
    messages = make_messages(count)
    stats = subs.stats()
    print(f"{size:,} subscriptions ({stats['ungated']:,} with no gate, {stats['verified']:,} "
          f"verifiable by their gate), built in {build:.1f} s; {count} messages, best of "
          f"{rounds} interleaved rounds, CPU time")
    verified, evaluated = triage(subs, messages)
    print(f"candidates per message: {verified:.1f} verified by their gate (not evaluated), "
          f"{evaluated:.1f} evaluated in full")
    print("\n| messages | match us | one by one us | speed-up (best) | speed-up (median of "
          "rounds) | matched per message |\n|---|---:|---:|---:|---:|---:|")
    status = 0
    for form, inputs in (("filtex.Message", messages),
                         ("encoded bytes", [encode_message(m) for m in messages])):
        per, ratios, want, got = _mixed_case(subs, plain, inputs, rounds)
        matched = sum(map(len, want)) / len(inputs)
        print(f"| {form} | {per['match']:.1f} | {per['one by one']:,.1f} | "
              f"{per['one by one'] / per['match']:.1f}x | {statistics.median(ratios):.1f}x | "
              f"{matched:.1f} ({matched / size:.1%}) |")
        wrong = [i for i, (a, b) in enumerate(zip(want, got)) if a != b]
        if wrong:
            print(f"MISMATCH ({form}) on {len(wrong)} messages, first {wrong[0]}: match "
                  f"{got[wrong[0]]}, one by one {want[wrong[0]]}")
            status = 1
    if not status:
        print("\nmatched names identical on every message, in both forms")
    return status


def _mixed_case(subs: filtex.Subscriptions, plain: list, inputs: list, rounds: int
                ) -> tuple[dict[str, float], list[float], list, list]:
    """``match`` of each input against a loop over every filter's ``matches`` on
    one view of it (bytes are viewed once, by either way)."""
    view = filtex.view

    def one_by_one() -> list[list[str]]:
        found = []
        for message in inputs:
            v = view(message)
            found.append([name for name, matches in plain if matches(v)])
        return found

    def indexed() -> list[list[str]]:
        return [subs.match(message) for message in inputs]

    want, got = one_by_one(), indexed()
    best, ratios = race({"match": indexed, "one by one": one_by_one}, rounds)
    return {k: v / len(inputs) * 1e6 for k, v in best.items()}, ratios, want, got


def mixed_types(size: int, count: int, rounds: int, alone: float, wrong: float) -> int:
    """The set against orders of mixed types: cold (each way in a fresh process)
    and warm."""
    print(f"\n{size:,} subscriptions against orders of mixed types ({wrong:.0%} with strings "
          f"and nulls where numbers are expected), {count} messages\n")
    cold = {way: _cold_run(way, size, count, alone, wrong) for way in COLD_WAYS}
    us = {way: [t * 1e6 for t in run["times"]] for way, run in cold.items()}
    print(f"cold: each way in a fresh process that builds the set ({cold['match']['build']:.1f} "
          f"and {cold['one by one']['build']:.1f} s), then takes the {count} messages once, "
          "in order\n")
    print("| messages | match us | one by one us | speed-up |\n|---|---:|---:|---:|")
    rows = [("first message", lambda t: t[0]), (f"first {count} (mean)", statistics.fmean),
            ("first 10 (mean)", lambda t: statistics.fmean(t[:10])),
            (f"slowest of the first {count}", max)]
    for label, measure in rows:
        a, b = measure(us["match"]), measure(us["one by one"])
        print(f"| cold, {label} | {a:.1f} | {b:,.1f} | {b / a:.1f}x |")
    status = 0
    if cold["match"]["found"] != cold["one by one"]["found"]:
        print("MISMATCH between match and one by one (cold runs)")
        status = 1
    from filtex.amqp.encode import encode_message
    texts = make_filters(size, alone=alone)
    subs = filtex.Subscriptions(texts)
    plain = [(name, subs[name].matches) for name, _ in texts]
    messages = make_messages(count, wrong=wrong)
    print(f"\nwarm: the same {count} messages, best of {rounds} interleaved rounds\n")
    print("| messages | match us | one by one us | speed-up (best) | speed-up (median of "
          "rounds) | matched per message |\n|---|---:|---:|---:|---:|---:|")
    for form, inputs in (("filtex.Message", messages),
                         ("encoded bytes", [encode_message(m) for m in messages])):
        per, ratios, want, got = _mixed_case(subs, plain, inputs, rounds)
        matched = sum(map(len, want)) / len(inputs)
        print(f"| {form} | {per['match']:.1f} | {per['one by one']:,.1f} | "
              f"{per['one by one'] / per['match']:.1f}x | {statistics.median(ratios):.1f}x | "
              f"{matched:.1f} ({matched / size:.1%}) |")
        if want != got:
            print(f"MISMATCH ({form})")
            status = 1
    failing, unknown = _unknowns([subs[name] for name, _ in texts], messages)
    print(f"\nper message, one by one: {failing:.1f} evaluations fail, {unknown:.1f} more are "
          "unknown (NULL)")
    return status


COLD_WAYS = ("match", "one by one")


def _cold_run(way: str, size: int, count: int, alone: float, wrong: float) -> dict[str, Any]:
    """``cold_child`` in a fresh process (this benchmark's checkout: its cwd)."""
    command = [sys.executable, "-m", "benchmarks.subscriptions_mixed", "--cold-child", way,
               "--size", str(size), "--cold-messages", str(count), "--alone", str(alone),
               "--wrong", str(wrong)]
    found = subprocess.run(command, cwd=Path(__file__).resolve().parents[1], check=True,
                           capture_output=True, text=True)
    return json.loads(found.stdout.splitlines()[-1])   # type: ignore[no-any-return]


def _unknowns(flts: list[filtex.Filter], messages: list) -> tuple[float, float]:
    """Per message, the filters whose evaluation fails, and those otherwise unknown."""
    from filtex.errors import EvaluationFailure
    failing = unknown = 0
    for message in messages:
        for flt in flts:
            try:   # (the private mode of Filter.outcome: a failure is raised)
                unknown += flt.evaluate(message, None, False) is None  # type: ignore[call-arg]
            except EvaluationFailure:
                failing += 1
    return failing / len(messages), unknown / len(messages)


def cold_child(way: str, size: int, count: int, alone: float, wrong: float) -> int:
    """(``--cold-child``, a fresh process) build the set as a user does (nothing
    compiled beforehand but what ``add`` does), then take its first ``count``
    messages once each, in order, one way: ``match``, or a loop over every
    filter's ``matches``. Prints one line of JSON: the build's seconds, each
    message's CPU time and the names found."""
    texts = make_filters(size, alone=alone)
    messages = make_messages(count, wrong=wrong)
    started = time.perf_counter()
    subs = filtex.Subscriptions(texts)
    build = time.perf_counter() - started
    plain = [(name, subs[name].matches) for name, _ in texts]
    times: list[float] = []
    found: list[list[str]] = []
    for message in messages:
        if way == "match":
            times.append(cpu(lambda: found.append(subs.match(message))))  # noqa: B023
        else:
            times.append(cpu(lambda: found.append([  # noqa: B023
                name for name, matches in plain if matches(message)])))  # noqa: B023
    print(json.dumps({"build": build, "times": times, "found": found}))
    return 0


README_FOUR = [("eu-big", "region = 'EU' AND total > 100"),
               ("express", "express AND h.priority >= 8"),
               ("paid-usd", "p.subject LIKE 'order.%ed' AND currency = 'USD'"),
               ("hot-partition", "m.[x-opt-partition] < 4 AND item_count >= 3")]
SIMPLE_FOUR = [("eu", "region = 'EU'"), ("usd", "currency = 'USD'"),
               ("big", "total > 100"), ("shipped", "p.subject LIKE 'order.ship%'")]


def few(count: int, rounds: int) -> int:
    """Four filters: ``match`` and ``evaluate_all`` against plain loops."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
    from make_messages import make_order

    from filtex.amqp.encode import encode_message
    rng = random.Random(4)
    orders = [make_order(rng, i, count) for i in range(count)]
    encoded = [encode_message(m) for m in orders]
    status = 0
    print("\n4 filters against a plain loop (us per message, best of "
          f"{rounds} interleaved rounds, {count} orders)\n")
    print("| filters | messages | match | loop of matches | loop/match | evaluate_all | "
          "loop of evaluate | loop/evaluate_all |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, texts in (("README's four", README_FOUR), ("four simple tests", SIMPLE_FOUR)):
        subs = filtex.Subscriptions(texts)
        for form in ("Message", "view of bytes"):
            us, same = _few_case(subs, texts, orders if form == "Message" else encoded, rounds)
            if not same:
                print(f"MISMATCH: {label}, {form}")
                status = 1
            print(f"| {label} | {form} | {us['match']:.2f} | {us['loop']:.2f} | "
                  f"{us['loop'] / us['match']:.2f}x | {us['all']:.2f} | {us['loop-all']:.2f} | "
                  f"{us['loop-all'] / us['all']:.2f}x |")
    return status


def _few_case(subs: filtex.Subscriptions, texts: list[tuple[str, str]], inputs: list,
              rounds: int) -> tuple[dict[str, float], bool]:
    """Per message: the set's ``match``/``evaluate_all`` and loops over its
    filters, each way on fresh views (encoded inputs) or the same Messages."""
    flts = [(name, subs[name]) for name, _ in texts]

    def fresh() -> list:
        return [filtex.view(m) for m in inputs] if isinstance(inputs[0], bytes) else inputs

    ways: dict[str, Callable[[list], list]] = {
        "match": lambda ms: [subs.match(m) for m in ms],
        "loop": lambda ms: [[n for n, f in flts if f.matches(m)] for m in ms],
        "all": lambda ms: [subs.evaluate_all(m) for m in ms],
        "loop-all": lambda ms: [{n: v for n, f in flts if (v := f.evaluate(m)) is not False}
                                for m in ms],
    }
    same = ways["match"](fresh()) == ways["loop"](fresh()) and \
        ways["all"](fresh()) == ways["loop-all"](fresh())
    best = dict.fromkeys(ways, float("inf"))
    for r in range(rounds):
        for way in (list(ways) if r % 2 == 0 else list(reversed(ways))):
            messages = fresh()
            best[way] = min(best[way], cpu(lambda: ways[way](messages)))  # noqa: B023
    return {k: v / len(inputs) * 1e6 for k, v in best.items()}, same


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--alone", type=float, default=0.005,
                        help="share of arithmetic filters with no other condition (no gate)")
    parser.add_argument("--few-messages", type=int, default=2000)
    parser.add_argument("--few-rounds", type=int, default=9)
    parser.add_argument("--skip-few", action="store_true", help="only the mixed set")
    parser.add_argument("--wrong", type=float, default=0.25,
                        help="share of orders of mixed types (strings and nulls for numbers)")
    parser.add_argument("--cold-messages", type=int, default=200)
    parser.add_argument("--skip-mixed-types", action="store_true",
                        help="no orders of mixed types (cold and warm)")
    parser.add_argument("--cold-child", choices=COLD_WAYS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.cold_child:
        return cold_child(args.cold_child, args.size, args.cold_messages, args.alone, args.wrong)
    status = mixed(args.size, args.messages, args.rounds, args.alone)
    if not args.skip_mixed_types:
        status |= mixed_types(args.size, args.cold_messages, args.rounds, args.alone,
                              args.wrong)
    if not args.skip_few:
        status |= few(args.few_messages, args.few_rounds)
    return status


if __name__ == "__main__":
    sys.exit(main())
