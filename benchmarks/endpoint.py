"""``python -m benchmarks.endpoint``: filters on the wire, through ``filtex serve``.

One ``filtex serve`` child process serves a stream of ``--count`` realistic
order messages (``tools/make_messages.py``, framed AMQP, about 1.3 KB each); a
proton client in this process (one connection) measures, in one run:

- **attach to first delivery**, the time from ``create_receiver`` to the first
  message, for a filter the peer has never seen (cold: it negotiates and
  compiles it) and for the same filter again (warm: the compiled filter is
  cached), median of ``--attaches`` each, on an open connection; and the first
  attach of a freshly started peer (its start-up compiled the parser tables,
  ``serve.warm_up``);
- **deliveries per second** with 1, 10 and 100 consumers reading the whole
  stream at once, three ways: no filter, a filter every message passes (the same
  deliveries plus one evaluation per message and consumer: the filter's share of
  the cost), and a selective filter (its share of deliveries is printed). Each consumer
  drains the stream (the peer answers the drain when it has sent everything), so
  the time is from the first attach to the last drained answer.

Both processes share the machine's two cores, so the figures are of the pair.

    python -m benchmarks.endpoint --count 20000
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from proton import Described, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Container, Filter

REPO = Path(__file__).resolve().parents[1]
ALL = "total >= 0"
SELECTIVE = "region = 'EU' AND total > 400"


class _Serve:
    def __init__(self, stream: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "filtex", "serve", "--listen", "127.0.0.1:0", "--quiet",
             "--stream", f"orders={stream}"], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line.startswith("listening on "):
            raise RuntimeError(f"filtex serve did not start: {line!r}")
        self.address = line.split()[-1]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(60)


def _option(sql: str | None) -> Any:
    if sql is None:
        return None
    return Filter({symbol("sql-filter"): Described(symbol("amqp:sql-filter"), sql)})


class _Drain(MessagingHandler):  # type: ignore[misc]
    """``consumers`` receivers of the stream, each with ``sql``; all drained."""

    def __init__(self, address: str, consumers: int, sql: str | None) -> None:
        super().__init__(prefetch=0)
        self.handlers = [h for h in self.handlers if type(h).__name__ != "IncomingMessageHandler"]
        self.address, self.consumers, self.sql = address, consumers, sql
        self.done, self.delivered = 0, 0

    def on_start(self, event: Any) -> None:
        self.started = time.perf_counter()
        connection = event.container.connect(self.address)
        for i in range(self.consumers):
            event.container.create_receiver(connection, "orders", name=f"c{i}",
                                            options=_option(self.sql))

    def on_link_opened(self, event: Any) -> None:
        event.receiver.drain(10_000_000)

    def on_delivery(self, event: Any) -> None:
        link, delivery = event.link, event.delivery
        if delivery.readable and not delivery.partial:
            link.recv(delivery.pending)
            link.advance()
            delivery.settle()
            self.delivered += 1

    def on_link_flow(self, event: Any) -> None:
        if event.link.is_receiver and not event.link.draining():
            self.done += 1
            event.link.close()
            if self.done == self.consumers:
                self.elapsed = time.perf_counter() - self.started
                event.connection.close()


class _FirstDelivery(MessagingHandler):  # type: ignore[misc]
    """Attach-to-first-message times, one receiver after another."""

    def __init__(self, address: str, filters: list[str]) -> None:
        super().__init__(prefetch=1)
        self.address, self.filters, self.times = address, list(filters), []

    def on_start(self, event: Any) -> None:
        self.connection = event.container.connect(self.address)
        self._next(event.container)

    def _next(self, container: Any) -> None:
        if not self.filters:
            self.connection.close()
            return
        self.started = time.perf_counter()
        self.link = container.create_receiver(self.connection, "orders",
                                              name=f"first-{len(self.times)}-{id(self)}",
                                              options=_option(self.filters.pop(0)))

    def on_message(self, event: Any) -> None:
        if event.link is self.link or event.link.name == self.link.name:
            if event.link.state & event.link.LOCAL_ACTIVE:
                self.times.append(time.perf_counter() - self.started)
                event.link.close()
                self._next(event.container)


def first_delivery(address: str, filters: list[str]) -> list[float]:
    handler = _FirstDelivery(address, filters)
    Container(handler).run()
    return handler.times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--attaches", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        stream = Path(tmp) / "orders.amqp"
        subprocess.run([sys.executable, str(REPO / "tools" / "make_messages.py"), "--count",
                        str(args.count), "--kind", "orders", "--format", "amqp", "--jobs", "1",
                        "-o", str(stream)], check=True)
        print(f"stream: {args.count:,} orders, {os.path.getsize(stream) / args.count:,.0f} B "
              f"each; python {sys.version.split()[0]}")
        started = time.perf_counter()
        peer = _Serve(stream)
        print(f"peer start-up to 'listening': {time.perf_counter() - started:.2f} s")
        try:
            [fresh] = first_delivery(peer.address, ["region = 'US' AND total > 7"])
            cold = first_delivery(peer.address, [f"total > {i} AND region <> 'XX'"
                                                  for i in range(args.attaches)])
            warm = first_delivery(peer.address, ["total > 1 AND region <> 'XX'"] * args.attaches)
            print("\nattach to first delivery (ms, median of "
                  f"{args.attaches}): fresh peer's first {fresh * 1e3:.1f}, "
                  f"new filter {statistics.median(cold) * 1e3:.2f}, "
                  f"cached filter {statistics.median(warm) * 1e3:.2f}")
            print(f"\n{'consumers':>9}  {'filter':<32}  {'delivered':>9}  {'seconds':>7}  "
                  f"{'deliveries/s':>12}  {'messages read/s':>15}")
            for consumers in (1, 10, 100):
                for label, sql in (("none", None), (f"all: {ALL}", ALL),
                                   (SELECTIVE, SELECTIVE)):
                    handler = _Drain(peer.address, consumers, sql)
                    Container(handler).run()
                    read = consumers * args.count
                    assert handler.done == consumers
                    share = handler.delivered / read
                    print(f"{consumers:>9}  {label:<32}  {share:>9.0%}  "
                          f"{handler.elapsed:>7.2f}  {handler.delivered / handler.elapsed:>12,.0f}"
                          f"  {read / handler.elapsed:>15,.0f}")
        finally:
            peer.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
