"""Tiered execution: no caller waits for a kernel to compile.

A numba kernel takes from a fraction of a second (a filter's fused kernel) to
tens of seconds (the message decoder) to compile the first time a machine
needs it; the per-message engine answers the same rows at once. So, as the
JVM and PyPy tier their execution, a caller that runs under ``background()``
(the batch engine by default: ``FILTEX_COMPILE``) never compiles: when a kernel
it calls is neither in memory nor in the disk cache, ``jit.py`` asks this
module, which hands the compile to a child process (``background.py``) and
raises ``NotReady``; the caller answers those rows with the per-message
engine and tries the kernel again once ``progress()`` says a compile has
finished. The child writes the compiled code to the shared disk cache, where
the caller's next attempt loads it in milliseconds.

A child process and not a thread: numba's compiler holds the GIL for most of
its work, so a compiling thread halves the per-message engine answering
meanwhile; on two cores the child takes the other one. It outlives its parent
until its queue is done (a short run still leaves the machine warm for the
next) and stops when its parent has gone and nothing is left to compile.

``FILTEX_COMPILE=wait`` (the test suite's setting, and ``wait()``) compiles in
the foreground instead, as a caller that must run the kernel itself does.
"""
from __future__ import annotations

import contextvars
import os
import pickle
import struct
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

__all__ = ["NotReady", "background", "mode", "progress", "request", "stop", "wait", "waiting",
           "warm"]


class NotReady(Exception):
    """A kernel the call needs is compiling in the background: answer its rows
    another way (the per-message engine) and try again later."""


_mode: contextvars.ContextVar[str | None] = contextvars.ContextVar("filtex_compile", default=None)


def mode() -> str:
    """``"background"`` or ``"wait"``: this context's (``background()``,
    ``wait()``), else ``FILTEX_COMPILE``'s, else ``"background"``."""
    chosen = _mode.get()
    if chosen is not None:
        return chosen
    return "wait" if os.environ.get("FILTEX_COMPILE", "").strip().lower() == "wait" \
        else "background"


def waiting() -> bool:
    """Whether a kernel missing from the caches is compiled here and now."""
    return _mode.get() != "background"


@contextmanager
def background() -> Iterator[None]:
    """Within it, a missing kernel raises ``NotReady`` (compiled meanwhile in
    the child) when the mode is ``"background"``; it compiles here otherwise."""
    token = _mode.set(mode())
    try:
        yield
    finally:
        _mode.reset(token)


@contextmanager
def wait() -> Iterator[None]:
    """Within it, a missing kernel is compiled here and now."""
    token = _mode.set("wait")
    try:
        yield
    finally:
        _mode.reset(token)


def in_context(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` run in a copy of this context (for a worker thread: the
    mode goes with it)."""
    context = contextvars.copy_context()
    return lambda *args: context.copy().run(function, *args)


MAX_REQUESTS = 4096
"""Requests remembered (pending, done or failed); past it the finished ones
are forgotten (asked for again, a finished one is found in the disk cache)."""


class _Compiler:
    """The child process compiling in the background, and what it was asked."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.states: dict[tuple[Any, ...], str] = {}
        self.finished = 0
        self.child: subprocess.Popen[bytes] | None = None
        self.broken = False
        self.directory = ""
        self.sent: dict[int, set[Any]] = {}   # per child: the keys sent to it

    def state(self, key: tuple[Any, ...], request: tuple[Any, ...], directory: str) -> str:
        """``"pending"``, ``"done"`` or ``"failed"`` for one request into the
        cache ``directory``; asked for the first time, it is sent to the child
        (a new one when the directory has changed)."""
        key = (directory, *key)
        with self.lock:
            found = self.states.get(key)
            if found is not None:
                return found
            if directory != self.directory:
                self._stop()
                self.directory = directory
            if self.broken or not self._send((key, *request)):
                return "failed"
            if len(self.states) >= MAX_REQUESTS:
                for old in [k for k, v in self.states.items() if v != "pending"]:
                    del self.states[old]
            self.states[key] = "pending"
            return "pending"

    def _stop(self) -> None:
        """Close the child's requests: it finishes its queue and ends."""
        child, self.child = self.child, None
        if child is not None and child.stdin is not None:
            try:
                child.stdin.close()
            except OSError:
                pass

    def _send(self, request: Any) -> bool:
        try:
            data = pickle.dumps(request)
        except Exception:   # a signature that cannot travel: compiled here instead
            return False
        for _ in range(2):   # a child that has exited is started again
            child = self.child
            if child is None or child.poll() is not None:
                child = self._start()
                if child is None:
                    return False
            try:
                assert child.stdin is not None
                child.stdin.write(struct.pack(">I", len(data)) + data)
                child.stdin.flush()
                self.sent.setdefault(child.pid, set()).add(request[0])
                return True
            except (OSError, ValueError):
                self.child = None
        self.broken = True
        return False

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            child = subprocess.Popen(
                [sys.executable, "-m", "filtex.codegen.background"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                env=_child_environment(self.directory))
        except OSError:
            self.broken = True
            return None
        self.child = child
        threading.Thread(target=self._read, args=(child,), daemon=True,
                         name="filtex-compile-results").start()
        return child

    def _read(self, child: subprocess.Popen[bytes]) -> None:
        """Results from the child: ``<length><pickle of (key, ok)>``."""
        stream = child.stdout
        assert stream is not None
        while True:
            head = stream.read(4)
            if len(head) < 4:
                break
            body = stream.read(struct.unpack(">I", head)[0])
            try:
                key, ok = pickle.loads(body)
            except Exception:
                break
            with self.lock:
                self.states[key] = "done" if ok else "failed"
                self.sent.get(child.pid, set()).discard(key)
                self.finished += 1
        with self.lock:   # the child is gone: what it did not finish is compiled here
            for key in self.sent.pop(child.pid, ()):
                if self.states.get(key) == "pending":
                    self.states[key] = "failed"
            self.finished += 1


def _child_environment(directory: str) -> dict[str, str]:
    """The parent's environment, its kernel cache, waiting compiles, and the
    filtex it runs first on the path (a checkout not installed is found too)."""
    env = dict(os.environ)
    env["FILTEX_KERNEL_CACHE"] = directory
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join([here, *filter(None, [env.get("PYTHONPATH")])])
    env["FILTEX_COMPILE"] = "wait"
    return env


_compiler = _Compiler()


def request(py_func: Callable[..., Any], signature: Any, directory: str) -> None:
    """Called by ``jit.py`` when a kernel's compiled code is in no cache
    (``directory``, the one the background compiler writes to): here
    (``waiting()``) nothing; under ``background()``, the compile is sent to the
    child and ``NotReady`` raised, until the child has finished it (then the
    caller loads it from the disk cache, or compiles it itself if the child
    could not)."""
    if waiting():
        return
    module = getattr(py_func, "__module__", "")
    path = None
    if module.startswith("filtex_kernel_"):   # a generated module: imported from its file
        path = py_func.__code__.co_filename
    qualname = py_func.__qualname__
    state = _compiler.state((module, qualname, repr(signature)),
                            ("compile", module, path, qualname, signature), directory)
    if state == "pending":
        raise NotReady(f"{module}.{qualname} is compiling in the background")


def warm(directory: str, key: tuple[Any, ...], function: str, *args: Any) -> None:
    """Have the background compiler run ``function`` (``"filtex.module:name"``)
    on ``args`` once per ``key``, compiling every kernel it calls: a sample of
    the input a caller met ``NotReady`` on, so the whole chain of kernels it
    needs (the decoder's passes, then the filter's) compiles in one go rather
    than one kernel per attempt (into the cache ``directory``). Nothing when
    kernels are compiled where they are needed (``mode()``)."""
    if mode() == "wait":
        return
    _compiler.state(("job", *key), ("job", function, args), directory)


def stop() -> None:
    """End the background compiler now, leaving its queue: what it had not
    finished is compiled when next asked for (tests; a process that must not
    leave a child behind)."""
    with _compiler.lock:
        child = _compiler.child
        _compiler._stop()
    if child is not None:
        child.kill()
        child.wait()


def progress() -> int:
    """A count that grows each time a background compile finishes: worth
    trying the kernels again when it has changed."""
    return _compiler.finished
