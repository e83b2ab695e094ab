"""Test helpers for filters on the wire: ``filtex serve`` in a child process and a
real proton client that opens many receivers at once and drains each one.

A receiver is finished when the peer answers its drain (it has sent every
message it will), or when the peer detaches it: no test waits for time to pass.
"""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from proton import Terminus
from proton.handlers import MessagingHandler

from filtex.endpoint.reactor import polling_container

START_TIMEOUT = 120   # seconds for the peer to say it listens: a hang, not a verdict
HANG = 300            # seconds after which a client is taken to hang


class Peer:
    """``filtex serve`` running in a child process (a context manager)."""

    def __init__(self, *args: str, env: dict[str, str] | None = None) -> None:
        command = [sys.executable, "-m", "filtex", "serve", "--listen", "127.0.0.1:0", *args]
        self.process = subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, **(env or {})})
        line = self.process.stdout.readline() if self.process.stdout else ""
        if not line.startswith("listening on "):
            self.process.kill()
            _, err = self.process.communicate(timeout=START_TIMEOUT)
            raise RuntimeError(f"filtex serve did not start: {line!r} {err[-2000:]}")
        self.address = line.split()[-1]
        self.stderr = ""
        self._lines: list[str] = []   # the log, read as it is written: a full pipe would
        self._reader = threading.Thread(target=self._drain, daemon=True)   # block the peer
        self._reader.start()

    def _drain(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self._lines.append(line)

    def log(self) -> str:
        """What the peer has logged so far."""
        return "".join(self._lines)

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss(self) -> int:
        """The peer's resident memory, in bytes (Linux)."""
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise RuntimeError("no VmRSS")

    def url(self, address: str) -> str:
        return f"{self.address}/{address}"

    def stop(self) -> str:
        """Stop the peer; its log (stderr)."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=START_TIMEOUT)
        self._reader.join(START_TIMEOUT)
        self.stderr = self.log()
        return self.stderr

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass
class Link:
    """One receiver to open: its address and options; what came of it."""
    address: str
    options: Any = None
    name: str | None = None
    tags: list[str] = field(default_factory=list)
    bodies: list[Any] = field(default_factory=list)
    echoed: Any = None
    null_source: bool = False
    condition: Any = None
    error: BaseException | None = None
    done: bool = False
    first_seen: int | None = None   # deliveries on the connection before this link's first


class Consumer(MessagingHandler):  # type: ignore[misc]
    """Open every link on one connection, ``window`` at a time; drain each."""

    def __init__(self, address: str, links: list[Link], window: int = 200,
                 credit: int = 1_000_000) -> None:
        super().__init__(prefetch=0, auto_accept=False)
        self.handlers = [h for h in self.handlers if type(h).__name__ != "IncomingMessageHandler"]
        self.address, self.links, self.window, self.credit = address, links, window, credit
        self.pending = list(reversed(links))
        self.open: dict[Any, Link] = {}
        self.connection: Any = None
        self.opened = 0
        self.received = 0

    def on_start(self, event: Any) -> None:
        self.connection = event.container.connect(self.address)
        for _ in range(self.window):
            self._next(event.container)

    def _next(self, container: Any) -> None:
        if not self.pending:
            if not self.open and self.connection is not None:
                self.connection.close()
            return
        spec = self.pending.pop()
        self.opened += 1
        receiver = container.create_receiver(self.connection, spec.address,
                                             name=spec.name or f"link-{self.opened}",
                                             options=spec.options)
        self.open[receiver.name] = spec

    def _spec(self, link: Any) -> Link | None:
        return self.open.get(link.name)

    def on_link_opened(self, event: Any) -> None:
        spec = self._spec(event.link)
        if spec is None:
            return
        source = event.link.remote_source
        spec.null_source = source.type == Terminus.UNSPECIFIED
        source.filter.rewind()
        spec.echoed = source.filter.get_object() if source.filter.next() else {}
        if not spec.null_source:
            event.receiver.drain(self.credit)

    def on_delivery(self, event: Any) -> None:
        """Raw deliveries (a message of no section is an empty payload, which
        proton's message decoder refuses): the tag and the bytes."""
        delivery, link = event.delivery, event.link
        spec = self._spec(link)
        if spec is None or not link.is_receiver or not delivery.readable or delivery.partial:
            return
        data = link.recv(delivery.pending) or b""
        link.advance()
        delivery.update(delivery.ACCEPTED)
        delivery.settle()
        spec.tags.append(delivery.tag)
        spec.bodies.append(data)
        if spec.first_seen is None:
            spec.first_seen = self.received
        self.received += 1

    def on_link_flow(self, event: Any) -> None:
        link = event.link
        spec = self._spec(link)
        if spec is not None and link.is_receiver and not spec.null_source \
                and link.state & link.LOCAL_ACTIVE and not link.draining() \
                and link.remote_source.type != Terminus.UNSPECIFIED:
            self._finish(event, spec)

    def on_link_error(self, event: Any) -> None:
        spec = self._spec(event.link)
        if spec is not None:
            spec.condition = event.link.remote_condition
            event.link.close()
            self._finish(event, spec)

    def on_link_closed(self, event: Any) -> None:
        spec = self._spec(event.link)
        if spec is not None and not spec.done:
            self._finish(event, spec)

    def on_connection_error(self, event: Any) -> None:
        """The peer closed the connection (a frame too large, say): every link
        still open is finished, with the connection's condition."""
        self._end_all(event.connection.remote_condition)
        event.connection.close()

    def on_transport_error(self, event: Any) -> None:
        self._end_all(event.transport.condition)

    def on_disconnected(self, event: Any) -> None:
        self._end_all(None)

    def _end_all(self, condition: Any) -> None:
        for name, spec in list(self.open.items()):
            spec.condition = spec.condition or condition
            spec.done = True
            self.open.pop(name, None)
        self.pending.clear()

    def _finish(self, event: Any, spec: Link) -> None:
        if spec.done:
            return
        spec.done = True
        self.open.pop(event.link.name, None)
        if event.link.state & event.link.LOCAL_ACTIVE:
            event.link.close()
        self._next(event.container)


def run(handler: Any, limit: float = HANG) -> Any:
    """Run a proton container for ``handler`` to its end, in a thread so that a
    hang fails the test after ``limit`` seconds instead of blocking the run (a
    hang, never a verdict: every test ends on its own events). An exception the
    handler raised is raised here."""
    container = polling_container(handler)   # a test may hold 1,024 descriptors and more
    raised: list[BaseException] = []

    def target() -> None:
        try:
            container.run()
        except BaseException as error:   # handed to the test's thread
            raised.append(error)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(limit)
    if thread.is_alive():
        raise AssertionError(f"a proton client did not finish in {limit} s: it hangs")
    if raised:
        raise raised[0]
    return handler


def consume(address: str, links: list[Link], **options: Any) -> list[Link]:
    """Open ``links`` on one connection to ``address`` (HOST:PORT) and drain them."""
    run(Consumer(address, links, **options))
    return links


class Stopper:
    """Stops a container from its own thread once ``stop`` is set: a
    container's ``stop()`` called from another thread waits out the reactor's
    3-second poll."""

    def __init__(self, container: Any) -> None:
        self.container, self.stop = container, threading.Event()
        container.schedule(0.05, self)

    def on_timer_task(self, event: Any) -> None:
        if self.stop.is_set():
            self.container.stop()
        else:
            self.container.schedule(0.05, self)


class Sender(MessagingHandler):  # type: ignore[misc]
    """Send ``bodies`` (raw bytes, or Messages) to ``address``; record each outcome."""

    def __init__(self, url: str, bodies: list[Any]) -> None:
        super().__init__()
        self.url, self.bodies = url, list(bodies)
        self.outcomes: list[tuple[Any, Any]] = []
        self.link_condition: Any = None

    def on_start(self, event: Any) -> None:
        event.container.create_sender(self.url)

    def on_sendable(self, event: Any) -> None:
        while event.sender.credit and self.bodies:
            body = self.bodies.pop(0)
            if isinstance(body, bytes):
                delivery = event.sender.delivery(str(len(self.bodies)).encode())
                event.sender.stream(body)
                event.sender.advance()
            else:
                delivery = event.sender.send(body)
            delivery.sent_body = body

    def _settled(self, event: Any) -> None:
        self.outcomes.append((event.delivery.remote_state, event.delivery.remote.condition))
        if not self.bodies and len(self.outcomes) >= self.total:
            event.connection.close()

    def on_accepted(self, event: Any) -> None:
        self._settled(event)

    def on_rejected(self, event: Any) -> None:
        self._settled(event)

    def on_released(self, event: Any) -> None:
        self._settled(event)

    def on_link_error(self, event: Any) -> None:
        self.link_condition = event.link.remote_condition
        event.connection.close()


def send(url: str, bodies: list[Any]) -> Sender:
    """Send ``bodies`` to ``url`` (HOST:PORT/ADDRESS); the sender, with every outcome."""
    sender = Sender(url, bodies)
    sender.total = len(bodies)
    return run(sender)
