"""``python -m benchmarks.subscriptions``: a broker's subscription sets of 100
to 100,000 filters, matched per message by ``filtex.Subscriptions`` and by
evaluating every filter in turn, side by side in one run.

The sets are what a topic with many subscribers holds: most filters test 1 to
3 of the orders' fields for equality, IN lists or prefixes, over value domains
that grow with the set (a customer id per 4 subscriptions, a SKU prefix per 10,
a store per 20, an order type per 100), many with a second condition (a range,
a field with few values); 1% are general filters no index answers
(arithmetic, functions, NOT), each matching under 1% of the orders. Messages are
orders drawn from the same domains. Every round checks that both ways return
the same names. ``--plot FILE`` draws the time per message against the set
size (matplotlib, from the ``bench`` extra).

Then changes while messages flow (a broker attaching and detaching links): one
subscription added, a message matched (or evaluated by ``evaluate_all``), the
subscription removed, with n range subscriptions of distinct bounds in the set
and a new bound each time; wall time, the garbage collector running as usual.
A change must cost the same at every size (``--churn-sizes``).
"""
from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import filtex  # noqa: E402

REGIONS = [f"{c}-{n}" for c in ("EU", "US", "APAC", "LATAM") for n in range(12)]
TIERS = ["gold", "silver", "bronze", "basic"]
CHANNELS = ["web", "mobile", "store", "partner", "phone"]


def domains(size: int) -> dict:
    """Value domains that grow with the number of subscriptions: more
    subscribers means more customers, stores, products and order types."""
    return {"customers": max(20, size // 4), "types": 50 + size // 100,
            "skus": max(10, size // 10), "stores": max(10, size // 20)}


def _sku_prefix(i: int) -> str:
    return f"{'ABCDEFGH'[i % 8]}{i:05d}-"


def make_filters(size: int, seed: int = 1, tail: float = 0.01) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    d = domains(size)
    filters = []
    for i in range(size):
        roll = rng.random()
        customer = rng.randrange(d["customers"])
        region, tier = rng.choice(REGIONS), rng.choice(TIERS)
        if roll < 0.30:
            text = f"customer_id = {customer}"
            if rng.random() < 0.5:
                text += f" AND total > {rng.choice([10, 50, 100, 500])}"
        elif roll < 0.50:
            types = ", ".join(f"'type-{rng.randrange(d['types'])}'" for _ in range(3))
            text = f"order_type IN ({types}) AND region = '{region}'"
        elif roll < 0.70:
            text = f"sku LIKE '{_sku_prefix(rng.randrange(d['skus']))}%'"
            if rng.random() < 0.5:
                text += f" AND channel = '{rng.choice(CHANNELS)}'"
        elif roll < 0.85:
            text = (f"store_id = 'store-{rng.randrange(d['stores'])}' AND tier = '{tier}' AND "
                    f"channel IN ('{rng.choice(CHANNELS)}', '{rng.choice(CHANNELS)}')")
        elif roll < 1 - tail:
            text = (f"p.subject = 'orders.{region}.{rng.randrange(50)}' AND "
                    f"h.priority >= {rng.randrange(10)}")
        else:   # the general tail: no conjunct an index can answer
            text = rng.choice([f"total * quantity > {rng.randrange(300000, 500000)}",
                               f"LOWER(channel) = '{rng.choice(CHANNELS)}' AND "
                               f"total * 2 > {rng.randrange(19000, 20000)}",
                               f"quantity + {rng.randrange(5)} > 52 OR "
                               f"LOWER(tier) = 'platinum'",
                               f"NOT (region <> '{region}' OR total < 9950)"])
        filters.append((f"sub{i}", text))
    return filters


def make_messages(size: int, count: int, seed: int = 2) -> list[filtex.Message]:
    rng = random.Random(seed)
    d = domains(size)
    messages = []
    for _ in range(count):
        region = rng.choice(REGIONS)
        props = {"customer_id": rng.randrange(d["customers"]),
                 "order_type": f"type-{rng.randrange(d['types'])}",
                 "region": region, "tier": rng.choice(TIERS), "channel": rng.choice(CHANNELS),
                 "store_id": f"store-{rng.randrange(d['stores'])}",
                 "sku": _sku_prefix(rng.randrange(d["skus"])) + str(rng.randrange(1000)),
                 "total": round(rng.uniform(1, 10000), 2), "quantity": rng.randrange(1, 50),
                 "currency": "EUR", "note": "standard order"}
        if rng.random() < 0.05:
            del props[rng.choice(["customer_id", "region", "sku"])]   # a field missing
        messages.append(filtex.Message(
            header={"durable": True, "priority": rng.randrange(10)},
            properties={"subject": f"orders.{region}.{rng.randrange(50)}",
                        "message-id": f"m-{rng.randrange(10**9)}"},
            application_properties=props))
    return messages


def one_by_one(filters: list, message: filtex.Message) -> list[str]:
    return [name for name, matches in filters if matches(message)]


def measure(size: int, messages_count: int, rounds: int, tail: float) -> dict:
    texts = make_filters(size, tail=tail)
    started = time.perf_counter()
    subs = filtex.Subscriptions(texts)
    build = time.perf_counter() - started
    plain = [(name, subs[name].matches) for name, _ in texts]
    messages = make_messages(size, messages_count)
    for m in messages[:20]:   # the same answers
        assert subs.match(m) == one_by_one(plain, m)
    best = {"subscriptions": float("inf"), "one by one": float("inf")}
    matched = 0
    for _ in range(rounds):
        for label in best:
            gc.collect()
            started = time.perf_counter()
            if label == "subscriptions":
                found = [subs.match(m) for m in messages]
            else:
                found = [one_by_one(plain, m) for m in messages]
            elapsed = (time.perf_counter() - started) / len(messages)
            best[label] = min(best[label], elapsed)
            matched = sum(map(len, found))
    started = time.perf_counter()
    for i in range(200):   # add and remove a subscription: one compile each, no rebuild
        subs.add("probe", f"customer_id = {10**9 + size * 1000 + i} AND total > 1")
        subs.remove("probe")
    churn = (time.perf_counter() - started) / 200
    compile_once = _compile_time(size)
    return {"size": size, "match_us": best["subscriptions"] * 1e6,
            "one_by_one_us": best["one by one"] * 1e6,
            "matched_per_message": matched / len(messages), "build_s": build,
            "add_remove_us": churn * 1e6, "compile_us": compile_once * 1e6,
            "ungated": subs.stats()["ungated"]}


def measure_churn(size: int, changes: int = 300) -> dict:
    """add + match + remove (and add + evaluate_all + remove) of a range
    subscription, with ``size`` range subscriptions of distinct bounds."""
    subs = filtex.Subscriptions((f"r{i}", f"total > {2 * i}") for i in range(size))
    rounds = [[filtex.compile_sql(f"total > {2 * (size + r * changes + i) + 1}")
               for i in range(changes)] for r in range(6)]   # a new bound every change
    quiet = filtex.Message(application_properties={"total": -1})   # taken by none
    result = {"size": size}
    for label, read in (("match", subs.match), ("evaluate_all", subs.evaluate_all)):
        best = float("inf")
        for _ in range(3):
            probes = rounds.pop()
            started = time.perf_counter()
            for flt in probes:
                subs.add("probe", flt)
                read(quiet)
                subs.remove("probe")
            best = min(best, time.perf_counter() - started)
        result[label] = best / changes * 1e6
    return result


def _compile_time(size: int) -> float:
    """A cold compile of a filter like the probe, for scale."""
    started = time.perf_counter()
    for i in range(50):
        filtex.compile_sql(f"customer_id = {2 * 10**9 + size * 1000 + i} AND total > 2")
    return (time.perf_counter() - started) / 50


def plot(runs: dict, path: str) -> None:
    """One-by-one and ``match`` against the set size, for each tail share."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.2), dpi=110)
    first = next(iter(runs.values()))
    ax.loglog([r["size"] for r in first], [r["one_by_one_us"] for r in first], "o-",
              label="each filter in turn")
    for tail, rows in runs.items():
        ax.loglog([r["size"] for r in rows], [r["match_us"] for r in rows], "s-",
                  label=f"Subscriptions.match, {tail:.0%} general filters")
    ax.set_xlabel("subscriptions")
    ax.set_ylabel("microseconds per message")
    ax.set_title("Matching one message against a subscription set")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000,10000,100000")
    parser.add_argument("--messages", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tails", default="0.01,0",
                        help="shares of general filters, a table each")
    parser.add_argument("--plot", help="write the curves to this PNG file")
    parser.add_argument("--churn-sizes", default="1000,10000,100000",
                        help="range subscriptions for the changes' table ('' for none)")
    args = parser.parse_args(argv)
    runs = {}
    print(f"{args.messages} messages per set, best of {args.rounds} interleaved rounds")
    for tail in (float(t) for t in args.tails.split(",")):
        rows = runs[tail] = []
        print(f"\n{tail:.0%} general filters\n")
        print("| subscriptions | match us | one by one us | speed-up | matched/msg | ungated "
              "| build s | add+remove us | compile us |")
        print("|---------------|----------|---------------|----------|-------------|---------"
              "|---------|---------------|------------|")
        for size in (int(s) for s in args.sizes.split(",")):
            row = measure(size, args.messages, args.rounds, tail)
            rows.append(row)
            print(f"| {size:>13,} | {row['match_us']:8.1f} | {row['one_by_one_us']:13,.1f} | "
                  f"{row['one_by_one_us'] / row['match_us']:7.1f}x | "
                  f"{row['matched_per_message']:11.1f} | {row['ungated']:7,} | "
                  f"{row['build_s']:7.2f} | {row['add_remove_us']:13.0f} | "
                  f"{row['compile_us']:10.0f} |", flush=True)
        for a, b in zip(rows, rows[1:]):
            growth = b["match_us"] / a["match_us"]
            print(f"\n{a['size']:,} -> {b['size']:,} subscriptions "
                  f"({b['size'] / a['size']:.0f}x): match time x{growth:.2f}", end="")
        print()
    if args.churn_sizes:
        print("\nchanges while messages flow: n range subscriptions of distinct bounds, a new "
              "bound each change, wall time with the garbage collector on\n")
        print("| range subscriptions | add+match+remove us | add+evaluate_all+remove us |")
        print("|---------------------|---------------------|----------------------------|")
        for size in (int(s) for s in args.churn_sizes.split(",")):
            row = measure_churn(size)
            print(f"| {size:>19,} | {row['match']:19.1f} | {row['evaluate_all']:26.1f} |",
                  flush=True)
    if args.plot:
        plot(runs, args.plot)
        print(f"\nplot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
