"""``python -m benchmarks.first_use``: a new user's first runs of ``filtex match``.

On a fresh machine (empty kernel and numba caches, each run's own
directories) the README's first command, ``filtex match --engine batch`` over
orders, with 1, 4 (the README's) and 100 subscriptions: the whole run (wall
seconds) and its summary line; then the same command again on the now warm
machine (after the background compiler has finished: ``--settle``), as its
later runs are. With ``--before PATH`` (a checkout of an earlier filtex, its
``python -m filtex`` run from that path) the same runs of that version come
first, side by side in one run. The first verdict's latency is the wall time
of ``filtex match -q`` (it stops at the first selected message).

The orders file is made once (``tools/make_messages.py``) per ``--count``;
``--repeat`` concatenates it that many times (10,000,000 orders are 100
copies of 100,000).
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = {
    "eu-big": "region = 'EU' AND total > 100",
    "express": "express AND h.priority >= 8",
    "paid-usd": "p.subject LIKE 'order.%ed' AND currency = 'USD'",
    "hot-partition": "m.[x-opt-partition] < 4 AND item_count >= 3",
}


def subscriptions(count: int) -> dict[str, str]:
    """The README's four; one of them; or 100 of the same shapes with other
    constants (a subscriber each), fixed seed."""
    if count == 4:
        return README
    if count == 1:
        return {"eu-big": README["eu-big"]}
    rng = random.Random(7)
    out = {}
    for i in range(count):
        kind = i % 4
        if kind == 0:
            out[f"s{i}"] = f"region = '{rng.choice(['EU', 'US', 'APAC'])}' AND total > " \
                f"{rng.randint(10, 500)}"
        elif kind == 1:
            out[f"s{i}"] = f"express AND h.priority >= {rng.randint(0, 9)}"
        elif kind == 2:
            out[f"s{i}"] = f"currency = '{rng.choice(['USD', 'EUR', 'GBP'])}' AND " \
                f"item_count >= {rng.randint(1, 6)}"
        else:
            out[f"s{i}"] = f"m.[x-opt-partition] < {rng.randint(1, 8)} AND total < " \
                f"{rng.randint(50, 900)}"
    return out


def orders(count: int, repeat: int, directory: Path) -> Path:
    one = directory / f"orders-{count}.amqp"
    if not one.exists():
        subprocess.run([sys.executable, str(REPO / "tools" / "make_messages.py"), "--count",
                        str(count), "--kind", "orders", "--format", "amqp", "-o", str(one)],
                       check=True, capture_output=True)
    if repeat == 1:
        return one
    many = directory / f"orders-{count}x{repeat}.amqp"
    if not many.exists():
        with many.open("wb") as out, one.open("rb") as part:
            for _ in range(repeat):
                part.seek(0)
                shutil.copyfileobj(part, out, 1 << 24)
    return many


def _background_compilers(cache: Path) -> list[int]:
    """The background compilers writing to ``cache`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes()
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if b"filtex.codegen.background" in command and \
                f"FILTEX_KERNEL_CACHE={cache}".encode() in environ.split(b"\0"):
            found.append(int(entry.name))
    return found


def settle(cache: Path, limit: float = 900.0) -> float:
    """Wait for the background compilers of ``cache`` to finish; the seconds waited."""
    started = time.perf_counter()
    while _background_compilers(cache) and time.perf_counter() - started < limit:
        time.sleep(0.2)
    return time.perf_counter() - started


def stop(cache: Path) -> None:
    """End the background compilers of ``cache`` (their work is not measured)."""
    import signal
    for pid in _background_compilers(cache):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def run(before: Path | None, cache: Path, filters: dict[str, str], data: Path,
        quiet: bool = False) -> tuple[float, str]:
    """(wall seconds, the summary line) of one ``filtex match`` run."""
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(cache), NUMBA_CACHE_DIR=str(cache / "numba"))
    env.pop("FILTEX_COMPILE", None)
    if before is not None:
        env["PYTHONPATH"] = str(before)
    argv = [sys.executable, "-m", "filtex", "match", "--engine", "batch"]
    argv += ["-q"] if quiet else ["--count"]
    for name, text in filters.items():
        argv += ["--filter", f"{name}={text}"]
    started = time.perf_counter()
    done = subprocess.run([*argv, str(data)], env=env, capture_output=True, text=True,
                          cwd=before or REPO)
    seconds = time.perf_counter() - started
    summary = next((line for line in done.stderr.splitlines() if "msgs/s" in line), "")
    if done.returncode not in (0, 1):
        raise SystemExit(f"filtex match failed: {done.stderr[-2000:]}")
    return seconds, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--subscriptions", type=int, nargs="*", default=[1, 4, 100])
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=REPO / "data")
    parser.add_argument("--settle", action="store_true",
                        help="after the cold run, wait for the background compiler, run warm")
    args = parser.parse_args()
    args.data.mkdir(exist_ok=True)
    data = orders(args.count, args.repeat, args.data)
    print(f"{args.count * args.repeat:,} orders ({data.stat().st_size / 1e6:.0f} MB)")
    versions = [("before", args.before)] if args.before else []
    versions.append(("this", None))
    for count in args.subscriptions:
        filters = subscriptions(count)
        for name, path in versions:
            with tempfile.TemporaryDirectory(prefix="filtex-first-") as scratch:
                cache = Path(scratch)
                first, _ = run(path, cache, filters, data, quiet=True)
                stop(cache)
                shutil.rmtree(cache)
                cache.mkdir()
                cold, line = run(path, cache, filters, data)
                print(f"{count:>4} subs  {name:<7} cold: first verdict {first:6.2f} s, "
                      f"whole run {cold:6.2f} s  | {line}")
                if args.settle:
                    waited = settle(cache)
                    warm, line = run(path, cache, filters, data)
                    print(f"{count:>4} subs  {name:<7} warm (compiler finished "
                          f"{waited:.0f} s later): whole run {warm:6.2f} s  | {line}")
                stop(cache)


if __name__ == "__main__":
    main()
