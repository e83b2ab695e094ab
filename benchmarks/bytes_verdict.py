"""``python -m benchmarks.bytes_verdict``: bytes -> verdict against a ready message (issue 27).

The peer workload's 1,000 orders (``benchmarks/peer_workload.py``: header, message
annotations, properties, 8-15 application properties, a 1 KiB data body) and its ten
filters in the jms and rabbitmq dialects. Per filter, CPU time (``time.thread_time``) per
message, the minimum of interleaved short repetitions over all 1,000 messages, of:

- (a) ``f.evaluate(m)`` on a ready ``filtex.Message`` (``filtex.message_from_json``);
- (b) ``f.evaluate(filtex.view(b))``: a view made once per message, as consumers do;
- (c) ``f.evaluate(b)`` on the raw bytes (the first read adapts them);
- (h) with ``--against REV`` (default ``HEAD``): (b) with the encoded reader
  (``filtex/amqp/encoded.py``) of that git revision, loaded into this process so
  that it runs the same generated code, interleaved with the others.

Every form must give the same verdict on every message (exit status 1 otherwise).
The machine may be shared: read the ratios, which the interleaving keeps honest.
"""
from __future__ import annotations

import argparse
import gc
import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import filtex  # noqa: E402
from benchmarks.peer_workload import DIALECTS, FILTERS, make_messages, to_proton  # noqa: E402


def workload(count: int) -> tuple[list[Any], list[bytes]]:
    """The ready messages and their encoded bytes, message by message."""
    ready = [filtex.message_from_json(m) for m in make_messages(count)]
    return ready, [bytes(to_proton(m).encode()) for m in ready]


def reader_at(rev: str) -> Any:
    """``EncodedMessage`` of ``filtex/amqp/encoded.py`` at git revision ``rev``."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:filtex/amqp/encoded.py"],
                            capture_output=True, text=True, check=True).stdout
    name = "filtex.amqp._encoded_at_" + "".join(c if c.isalnum() else "_" for c in rev)
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    module.__package__ = "filtex.amqp"
    sys.modules[name] = module
    exec(compile(source, f"{rev}:filtex/amqp/encoded.py", "exec"), module.__dict__)
    return module.EncodedMessage


def timed(run: Callable[[], Any], loops: int) -> float:
    """CPU seconds of ``loops`` calls of ``run``."""
    start = time.thread_time()
    for _ in range(loops):
        run()
    return (time.thread_time() - start) / loops


def measure(f: filtex.Filter, ready: list[Any], encoded: list[bytes], old: Any,
            rounds: int) -> dict[str, float] | None:
    """ns per message of each form (None: the forms disagree on some message)."""
    evaluate, view = f.evaluate, filtex.view
    forms: dict[str, Callable[[], Any]] = {
        "a": lambda: [evaluate(m) for m in ready],
        "b": lambda: [evaluate(view(x)) for x in encoded],
        "c": lambda: [evaluate(x) for x in encoded],
    }
    if old is not None:
        forms["h"] = lambda: [evaluate(old(x)) for x in encoded]
    verdicts = {name: run() for name, run in forms.items()}
    if any(v != verdicts["a"] for v in verdicts.values()):
        for name, got in verdicts.items():
            for i, (want, have) in enumerate(zip(verdicts["a"], got)):
                if want != have:
                    print(f"MISMATCH {f.text!r} ({f.dialect}) message {i}: (a) {want}, "
                          f"({name}) {have}", file=sys.stderr)
                    break
        return None
    best = dict.fromkeys(forms, float("inf"))
    loops = {name: 8 if name == "a" else 1 for name in forms}   # a few ms a repetition
    gc.collect()
    gc.disable()
    try:
        for _ in range(rounds):
            for name, run in forms.items():
                best[name] = min(best[name], timed(run, loops[name]))
    finally:
        gc.enable()
    return {name: 1e9 * t / len(ready) for name, t in best.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--against", default="HEAD",
                        help="git revision of the reader for (h); 'none' to leave it out")
    args = parser.parse_args(argv)
    ready, encoded = workload(args.count)
    old = None if args.against == "none" else reader_at(args.against)
    print(f"{len(encoded)} messages of {sum(map(len, encoded)) // len(encoded)} bytes, "
          f"CPU time, min of {args.rounds} interleaved rounds, ns per message\n")
    head = f" (h) {args.against} view |  h/a |" if old is not None else ""
    header = ("| filter       | dialect  | (a) Message | (b) view | (c) bytes |  b/a |  c/a |"
              + head)
    print(header)
    print("|" + "|".join("-" * len(cell) for cell in header.split("|")[1:-1]) + "|")
    failed = False
    ratios: dict[str, list[float]] = {"b": [], "c": [], "h": []}
    for name, texts in FILTERS.items():
        for dialect, text in zip(DIALECTS, texts):
            t = measure(filtex.compile_sql(text, dialect), ready, encoded, old, args.rounds)
            if t is None:
                failed = True
                continue
            row = (f"| {name:<12} | {dialect:<8} | {t['a']:>11.0f} | {t['b']:>8.0f} "
                   f"| {t['c']:>9.0f} | {t['b'] / t['a']:>4.1f} | {t['c'] / t['a']:>4.1f} |")
            if old is not None:
                row += f" {t['h']:>{len(head.split('|')[0]) - 1}.0f} | {t['h'] / t['a']:>4.1f} |"
                ratios["h"].append(t["h"] / t["a"])
            ratios["b"].append(t["b"] / t["a"])
            ratios["c"].append(t["c"] / t["a"])
            print(row, flush=True)
    for form, values in ratios.items():
        if values:
            print(f"\n{form}/a: min {min(values):.1f}, max {max(values):.1f}", end="")
    print()
    if failed:
        print("\nthe forms disagree (see above)", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
