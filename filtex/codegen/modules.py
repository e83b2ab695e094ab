"""Generated kernel modules to compiled functions: the one home of every
numba module filtex writes (the batch engine's fused kernels, the walker's,
the pass-per-atom engine's), beside ``jit.py``, which keeps their compiled code.

numba caches compiled code only for functions defined in a file, so a
generated module is written to ``<cache dir>/filtex_kernel_<hash>.py`` and
imported (registered in ``sys.modules`` first, as numba's cache loader needs);
its compiled code is kept by ``jit.py`` (one file per signature, safe for
processes compiling at once). The directory keeps the most recently used
modules, written atomically, so processes can share it. In memory, compiled
kernels are kept per key (a kernel's *shape*: the constants of a filter are
its arguments, so filters that differ only in constants share one kernel).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable

from ..cache import BoundedCache
from .jit import cache_directory, compiled_code_directory

__all__ = ["cached", "clear"]

MAX_CACHED_FILES = 4096
"""Kernel modules kept on disk (``FILTEX_KERNEL_CACHE_FILES`` overrides it), the
least recently used pruned past it with their compiled code (about 80 KB a
module): room for every filter shape of the test suite (about 2,000 over its
layouts), so that a run never compiles a kernel again that it pruned itself."""


def _max_files() -> int:
    try:
        return max(1, int(os.environ.get("FILTEX_KERNEL_CACHE_FILES", "")))
    except ValueError:
        return MAX_CACHED_FILES

_memory = BoundedCache(256, 1 << 62, lambda _: 1)
_lock = threading.Lock()
MAX_MODULES = 1024
_modules: "OrderedDict[str, None]" = OrderedDict()
"""Kernel modules registered in ``sys.modules`` (numba's cache loader imports a
kernel's module by name), the oldest dropped past ``MAX_MODULES``: a process
that meets ever new filter shapes does not keep every module. A dropped
module's kernel, asked for again, is imported again (from numba's disk cache)."""
def cached(key: Any, text: Callable[[], str], function: str) -> Callable[..., Any]:
    """``function`` of the module made from ``text()``, compiled once per ``key``
    (in memory, then the disk cache, then numba)."""
    found: Callable[..., Any] | None = _memory.get(key)
    if found is None:
        with _lock:
            found = _memory.get(key)
            if found is None:
                found = _load(text(), function)
                _memory.put(key, found)
    return found


def _load(text: str, function: str) -> Callable[..., Any]:
    digest = hashlib.sha256(text.encode()).hexdigest()[:32]
    name = f"filtex_kernel_{digest}"
    module = sys.modules.get(name)
    if module is None:
        module = _import(name, text)
        _modules[name] = None
        while len(_modules) > MAX_MODULES:
            sys.modules.pop(_modules.popitem(last=False)[0], None)
    found: Callable[..., Any] = getattr(module, function)
    return found


def _import(name: str, text: str) -> Any:
    """The module ``name`` made from ``text``, through its file in the cache
    directory. Another process may prune the file between writing and
    importing it: then it is written again (the newest file is never pruned)."""
    directory = cache_directory()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.py"
    for attempt in range(3):
        _write(path, text)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module   # before exec: numba's cache locator imports it by name
        try:
            spec.loader.exec_module(module)
            return module
        except FileNotFoundError:
            sys.modules.pop(name, None)
            if attempt == 2:
                raise
        except BaseException:
            sys.modules.pop(name, None)
            raise
    raise AssertionError("unreachable")


def _write(path: Path, text: str) -> None:
    """Write ``path`` atomically unless it holds ``text`` already; either way
    mark it as the newest (pruning keeps the most recently used)."""
    try:
        same = path.read_text(encoding="utf-8") == text
    except OSError:
        same = False
    if same:
        try:
            os.utime(path)
            return
        except OSError:
            pass   # pruned meanwhile: written again below
    handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)   # atomic: a concurrent reader sees old or new
    _prune(path.parent)


def _prune(directory: Path) -> None:
    """Keep the newest ``_max_files()`` kernel modules and their compiled code;
    compiled code whose module is gone goes too. Below the bound it only lists
    the directory (no file is read or stat'ed)."""
    limit = _max_files()
    try:
        modules = list(directory.glob("filtex_kernel_*.py"))
        if len(modules) <= limit:
            return
        modules.sort(key=_modified)
    except OSError:
        return
    kept = {p.stem for p in modules[-limit:]}
    code = compiled_code_directory()
    doomed = modules[:-limit]
    doomed += [p for p in code.glob("filtex_kernel_*") if p.name.split(".")[0] not in kept]
    for path in doomed:
        try:
            path.unlink()
        except OSError:
            pass


def _modified(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:   # pruned by another process meanwhile: the oldest
        return 0.0


def clear() -> None:
    """Forget the compiled kernels kept in memory, and their modules
    (``filtex.cache_clear``): asked for again, they are loaded from the disk
    cache."""
    with _lock:
        _memory.clear()
        while _modules:
            sys.modules.pop(_modules.popitem(last=False)[0], None)
