"""Proton's Python reactor, made to hold against any number of peers.

Three parts of the reactor a network can break, each replaced from the
outside through proton's public hooks (no proton module is patched):

* ``PollingIO``: the container's I/O handler with a ``select.poll`` selector
  (``polling_container`` makes a container with it).
  Proton's own waits in ``select.select``, which raises for a descriptor of
  1,024 or more and so ends the whole process at about a thousand sockets;
* ``GuardedAcceptor``: the listener, which survives ``accept`` failing (out of
  descriptors: it stops listening for a moment instead of spinning or raising);
* ``Supervisor``: the last line around a handler. An exception that escapes
  one event's handling is logged with its traceback, the connection the event
  belongs to is closed with ``amqp:internal-error``, and the container goes on
  serving every other connection.
"""
from __future__ import annotations

import errno
import logging
import select
import time
from collections.abc import Callable
from typing import Any

from proton import Condition, Endpoint
from proton._handlers import IOHandler
from proton._io import IO
from proton._reactor import Acceptor
from proton.reactor import Container

LOG = logging.getLogger("filtex.serve")
INTERNAL_ERROR = "amqp:internal-error"
_READ = select.POLLIN | select.POLLPRI | select.POLLHUP | select.POLLERR
_WRITE = select.POLLOUT | select.POLLHUP | select.POLLERR
BACKLOG = 1_024      # connections the kernel holds for the listener to accept
ACCEPT_BATCH = 64    # connections accepted per wake-up of the listener
ACCEPT_PAUSE = 0.1   # seconds the listener rests after accept failed for want of descriptors


class PollSelector(IO.Selector):
    """Proton's selector (the same bookkeeping of reading, writing and
    deadlines) waiting in ``poll``, which takes any descriptor number."""

    def select(self, timeout: float | None) -> tuple[list[Any], list[Any], list[Any]]:
        now = time.time()
        deadline = self._deadline
        wait = timeout
        if deadline is not None:
            left = max(0.0, deadline - now)
            wait = left if wait is None else min(wait, left)
        poller = select.poll()
        by_fd: dict[int, Any] = {}
        for selectable in self._reading | self._writing:
            fd = selectable.fileno()
            if fd is None or fd < 0:
                continue
            mask = (_READ if selectable in self._reading else 0) | \
                (_WRITE if selectable in self._writing else 0)
            by_fd[fd] = selectable
            poller.register(fd, mask)
        readable: list[Any] = []
        writable: list[Any] = []
        if by_fd:
            try:
                ready = poller.poll(None if wait is None else max(0, int(wait * 1000 + 0.999)))
            except InterruptedError:
                ready = []
            for fd, events in ready:
                selectable = by_fd[fd]
                if events & _READ and selectable in self._reading:
                    readable.append(selectable)
                if events & _WRITE and selectable in self._writing:
                    writable.append(selectable)
        elif wait:
            time.sleep(wait)
        now = time.time()
        expired = [s for s in self._selectables if s.deadline and now > s.deadline]
        self._deadline = None
        self.update_deadline()
        return readable, writable, expired


class PollingIO(IOHandler):
    """The container's global I/O handler, waiting in ``PollSelector``.
    ``written(transport)`` is called after bytes of a transport went out on its
    socket: a writer that stopped for a full buffer goes on at once, with no
    timer to poll it."""

    def __init__(self, written: Callable[[Any], object] | None = None) -> None:
        super().__init__()
        self._selector = PollSelector()
        self._written = written

    def on_selectable_writable(self, event: Any) -> None:
        super().on_selectable_writable(event)
        transport = event.selectable._transport
        if self._written is not None and transport is not None:
            try:
                self._written(transport)
            except Exception:   # the supervisor's line: the I/O loop never sees it
                LOG.exception("unexpected error after a write")


def polling_container(*handlers: Any,
                      written: Callable[[Any], object] | None = None) -> Container:
    """A proton ``Container`` whose I/O waits in ``poll`` (its connect and
    reconnect overrides kept: proton wraps the handler given here)."""
    return Container(*handlers, global_handler=PollingIO(written))


class GuardedAcceptor(Acceptor):
    """A listener with room for a crowd: a backlog of ``BACKLOG`` (proton's
    is 10, so a burst of clients waits seconds for SYN retries), up to
    ``ACCEPT_BATCH`` connections accepted per wake-up, and ``accept`` failures
    (``EMFILE``, ``ENFILE``, a client gone before it was accepted) logged in
    one line, never raised."""

    def __init__(self, container: Any, host: str, port: int, handler: Any = None) -> None:
        super().__init__(container, host, port, handler)
        self._container = container
        sock: Any = self._selectable._delegate
        sock.listen(BACKLOG)

    def on_selectable_readable(self, event: Any) -> None:
        for _ in range(ACCEPT_BATCH):
            if not self._accept(event):
                return

    def _accept(self, event: Any) -> bool:
        try:
            super().on_selectable_readable(event)
            return True
        except BlockingIOError:   # no one else waiting
            return False
        except OSError as error:
            if error.errno in (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM):
                LOG.error("cannot accept a connection: %s; listening again in %.1f s",
                          error.strerror, ACCEPT_PAUSE)
                self._selectable.reading = False
                self._selectable.update()
                self._container.schedule(ACCEPT_PAUSE, _Resume(self._selectable))
            else:   # the client left before it was accepted
                LOG.info("a connection ended before it was accepted: %s", error.strerror)
            return False

    def port(self) -> int:
        sock: Any = self._selectable._delegate
        return int(sock.getsockname()[1])


class _Resume:
    def __init__(self, selectable: Any) -> None:
        self.selectable = selectable

    def on_timer_task(self, event: Any) -> None:
        if not self.selectable.is_terminal:
            self.selectable.reading = True
            self.selectable.update()


class Supervisor:
    """Dispatches every event to ``inner``; an exception out of it is the
    supervisor's: logged with its traceback, the event's connection closed
    with ``amqp:internal-error``, ``on_fault(connection)`` called so the
    handler can drop what it kept for it (and cut the connection if its client
    does not answer the close). Nothing escapes to the container."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.faults = 0

    def on_unhandled(self, method: str, event: Any) -> None:
        try:
            event.dispatch(self.inner)
        except Exception:
            self.faults += 1
            LOG.exception("unexpected error in %s; closing that connection with %s",
                          method, INTERNAL_ERROR)
            self._close(event)

    def _close(self, event: Any) -> None:
        try:
            connection = event.connection
        except Exception:
            connection = None
        if connection is None:
            return
        try:
            fault = getattr(self.inner, "on_fault", None)
            if fault is not None:
                fault(connection)
            if not connection.state & Endpoint.LOCAL_CLOSED:
                connection.condition = Condition(INTERNAL_ERROR, "internal error")
                connection.close()   # a client that never answers: on_fault's to cut
        except Exception:
            LOG.exception("unexpected error while closing a connection after an error")


__all__ = ["GuardedAcceptor", "PollSelector", "PollingIO", "Supervisor", "polling_container"]
