"""The background compiler (``python -m filtex.codegen.background``).

Reads requests from stdin (``tiers.py``: a length, then the pickle of ``(key,
"compile", module, path, qualname, signature)``, one signature of one
function, or ``(key, "job", "filtex.module:function", args)``, a function of
filtex run on a sample of an input), compiles what each needs with numba into
the shared disk cache (``jit.py``) and answers ``(key, ok)`` on stdout. It
ends when stdin ends (its parent has gone or closed it) and its queue is done.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import pickle
import struct
import sys
import threading
import traceback
from queue import Queue
from typing import Any, BinaryIO


def _function(module_name: str, path: str | None, qualname: str) -> Any:
    """The dispatcher ``qualname`` of a filtex module, or of a generated kernel
    module read from its file in the cache directory."""
    module = sys.modules.get(module_name)
    if module is None:
        if path is None:
            if not module_name.startswith("filtex."):
                raise ImportError(f"not a filtex module: {module_name}")
            module = importlib.import_module(module_name)
        else:
            spec = importlib.util.spec_from_file_location(module_name, path)
            if spec is None or spec.loader is None:
                raise ImportError(path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module   # before exec: numba's cache locator needs it
            spec.loader.exec_module(module)
    found: Any = module
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def _log(text: str) -> None:
    """A failure, written to ``FILTEX_COMPILE_LOG`` when it names a file."""
    path = os.environ.get("FILTEX_COMPILE_LOG")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as log:
                log.write(text)
        except OSError:
            pass


def _answer(out: BinaryIO, key: Any, ok: bool) -> None:
    data = pickle.dumps((key, ok))
    out.write(struct.pack(">I", len(data)) + data)
    out.flush()


def _requests(stream: BinaryIO, queue: "Queue[bytes | None]") -> None:
    """Read every request as it comes (the parent's writes never wait for a
    compile to finish, and nothing it sent is lost when it exits), then None."""
    try:
        while True:
            head = stream.read(4)
            if len(head) < 4:
                break
            queue.put(stream.read(struct.unpack(">I", head)[0]))
    finally:
        queue.put(None)


def main() -> None:
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)   # whatever numba prints goes where stderr goes, not into the answers
    queue: "Queue[bytes | None]" = Queue()
    threading.Thread(target=_requests, args=(sys.stdin.buffer, queue), daemon=True).start()
    while True:
        body = queue.get()
        if body is None:
            return
        try:
            key, kind, *request = pickle.loads(body)
        except Exception:
            return
        try:
            if kind == "compile":   # one signature of one function
                module, path, qualname, signature = request
                _function(module, path, qualname).compile(signature)
            else:   # a job: a function of filtex run on a sample, compiling what it calls
                function, args = request
                module, _, name = function.partition(":")
                _function(module, None, name)(*args)
            ok = True
        except Exception:   # the caller compiles it itself, and meets the error there
            ok = False
            _log(traceback.format_exc())
        try:
            _answer(out, key, ok)
        except OSError:   # the parent has gone: the rest is still worth compiling
            pass


if __name__ == "__main__":
    main()
