"""``python -m benchmarks.endpoint_load``: ``filtex serve`` under load, in one run.

One ``filtex serve`` child process; proton clients in this process, on loopback:

- **attach to first delivery with readers attaching together**: 1, 10 and 50
  receivers open at once on one connection, each with credit for a whole
  ``--count``-message stream and a filter every message passes; for each, the
  time from its ``create_receiver`` to its first message (median and worst),
  and the time until every receiver has drained the stream. Deliveries are
  written a slice per link and turn, so a receiver's first message does not
  wait for the others' whole streams;
- **a queue shared by filtered consumers**: ``--queue`` messages sent to one
  queue address, then ``--consumers`` receivers over 5 connections, two
  competing for each class of ``n % (consumers / 2)``: every message must reach
  exactly one consumer of its class (checked: nothing lost, duplicated or
  extra); sends and deliveries per second, and the peer's resident memory.

Both processes share the machine's two cores, so the figures are of the pair.
With ``--against CHECKOUT`` the attach figures are measured for that checkout's
``filtex serve`` too, alternately in one run (its own options only).

    python -m benchmarks.endpoint_load --count 20000 --queue 100000 [--against ../old]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from proton import Described, Message, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Filter

from filtex.endpoint.reactor import polling_container

SQL = symbol("amqp:sql-filter")


class _Serve:
    def __init__(self, *args: str, checkout: Path | None = None) -> None:
        env = dict(os.environ)
        if checkout is not None:   # that checkout's filtex, not the installed one
            env["PYTHONPATH"] = str(checkout.resolve())
        self.process = subprocess.Popen(
            [sys.executable, "-m", "filtex", "serve", "--listen", "127.0.0.1:0", "--quiet",
             *args], stdout=subprocess.PIPE, text=True, env=env,
            cwd=checkout.resolve() if checkout is not None else None)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"filtex serve did not start: {line!r}")
        self.address = line.split()[-1]

    def rss(self) -> int:
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def _sql(text: str) -> Filter:
    return Filter({symbol("f"): Described(SQL, text)})


class _Together(MessagingHandler):  # type: ignore[misc]
    """``readers`` receivers opened at once; each drains the stream."""

    def __init__(self, url: str, readers: int, count: int) -> None:
        super().__init__(prefetch=0, auto_accept=True)
        self.url, self.readers, self.count = url, readers, count
        self.opened: dict[str, float] = {}
        self.first: dict[str, float] = {}
        self.got: dict[str, int] = {}
        self.end = 0.0

    def on_start(self, event: Any) -> None:
        connection = event.container.connect(self.url.rsplit("/", 1)[0])
        for i in range(self.readers):
            name = f"r{i}"
            self.opened[name] = time.perf_counter()
            receiver = event.container.create_receiver(connection, "orders", name=name,
                                                       options=_sql("n >= 0"))
            receiver.flow(self.count)
            self.got[name] = 0

    def on_message(self, event: Any) -> None:
        name = event.link.name
        self.first.setdefault(name, time.perf_counter())
        self.got[name] += 1
        if self.got[name] == self.count:
            event.link.close()
            if all(v == self.count for v in self.got.values()):
                self.end = time.perf_counter()
                event.connection.close()


class _Send(MessagingHandler):  # type: ignore[misc]
    def __init__(self, url: str, count: int) -> None:
        super().__init__()
        self.url, self.count, self.sent, self.accepted = url, count, 0, 0

    def on_start(self, event: Any) -> None:
        event.container.create_sender(self.url)

    def on_sendable(self, event: Any) -> None:
        while event.sender.credit and self.sent < self.count:
            event.sender.send(Message(properties={"n": self.sent}))
            self.sent += 1

    def on_accepted(self, event: Any) -> None:
        self.accepted += 1
        if self.accepted == self.count:
            event.connection.close()

    def on_rejected(self, event: Any) -> None:
        raise RuntimeError(f"a message was rejected: {event.delivery.remote.condition}")


class _Competing(MessagingHandler):  # type: ignore[misc]
    def __init__(self, address: str, consumers: int, total: int) -> None:
        super().__init__(prefetch=200)
        self.address, self.consumers, self.total = address, consumers, total
        self.got: dict[str, list[int]] = {}
        self.received = 0
        self.connections: list[Any] = []

    def on_start(self, event: Any) -> None:
        self.connections = [event.container.connect(self.address) for _ in range(5)]
        classes = self.consumers // 2
        for i in range(self.consumers):
            self.got[f"c{i}"] = []
            event.container.create_receiver(self.connections[i % 5], "load", name=f"c{i}",
                                            options=_sql(f"n % {classes} = {i % classes}"))

    def on_message(self, event: Any) -> None:
        self.got[event.link.name].append(event.message.properties["n"])
        self.received += 1
        if self.received == self.total:
            for connection in self.connections:
                connection.close()


def together(stream: Path, count: int, against: Path | None) -> None:
    print("attach to first delivery, readers attaching together on one connection:")
    print(f"  {'peer':>7}  {'readers':>7}  {'median':>9}  {'worst':>9}  {'all drained':>11}")
    peers = {"this": _Serve("--stream", f"orders={stream}")}
    if against is not None:
        peers["against"] = _Serve("--stream", f"orders={stream}", checkout=against)
    try:
        for readers in (1, 10, 50):
            for name, serve in peers.items():   # alternately, in one run
                handler = _Together(f"{serve.address}/orders", readers, count)
                polling_container(handler).run()
                waits = [handler.first[n] - handler.opened[n] for n in handler.opened]
                print(f"  {name:>7}  {readers:>7}  {statistics.median(waits) * 1000:>7.1f}ms  "
                      f"{max(waits) * 1000:>7.1f}ms  "
                      f"{handler.end - min(handler.opened.values()):>10.2f}s")
    finally:
        for serve in peers.values():
            serve.stop()


def queue(total: int, consumers: int) -> None:
    serve = _Serve("--max-queue-bytes", str(256 << 20), "--max-stored-bytes", str(512 << 20))
    try:
        start = time.perf_counter()
        polling_container(_Send(f"{serve.address}/load", total)).run()
        sent = time.perf_counter()
        handler = _Competing(serve.address, consumers, total)
        polling_container(handler).run()
        done = time.perf_counter()
        rss = serve.rss()
    finally:
        serve.stop()
    classes = consumers // 2
    for k in range(classes):
        both = handler.got[f"c{k}"] + handler.got[f"c{k + classes}"]
        if sorted(both) != list(range(k, total, classes)):
            raise AssertionError(f"class {k}: lost, duplicated or extra messages")
    print(f"a queue of {total:,} messages, {consumers} filtered consumers (checked exact):")
    print(f"  sent and accepted: {total / (sent - start):>9,.0f} messages/s")
    print(f"  delivered:         {total / (done - sent):>9,.0f} messages/s")
    print(f"  peer memory after: {rss / (1 << 20):,.0f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20_000, help="messages of the stream")
    parser.add_argument("--queue", type=int, default=100_000, help="messages of the queue")
    parser.add_argument("--consumers", type=int, default=50)
    parser.add_argument("--against", type=Path, help="another checkout of filtex (attaches)")
    parser.add_argument("--skip-queue", action="store_true", help="the attach figures only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        stream = Path(folder) / "s.jsonl"
        stream.write_text("".join(json.dumps({"application-properties": {"n": i, "pad": "x" * 600}})
                                  + "\n" for i in range(args.count)))
        together(stream, args.count, args.against)
    if not args.skip_queue:
        queue(args.queue, args.consumers)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())



