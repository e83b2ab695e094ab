"""numba's ``njit`` with an on-disk cache that processes can share safely.

numba's own cache (``cache=True``) keeps one index file per function that maps
each compiled signature to a *numbered* data file. Two processes compiling
different signatures of one function at the same moment both read the index
before either writes it, both take number 1, and the index left behind names
one signature's machine code for the other. numba checks only an array's item
size when it unboxes one, so code compiled for int64 values then reads float64
or uint64 values as int64 and answers wrongly, and it keeps doing so in every
later process until the cache is deleted. ``scan.gather`` is compiled for three
value types, and Spark runs several Python workers compiling at once: this is
how the Arrow UDF gave wrong verdicts under load (issue 22).

Here a compiled signature is stored in a file named by a digest of everything
it depends on (the signature, the CPU, the function's bytecode, its source
file's content, numba's version): there is no shared index, so nothing to race
on, and a file can only ever hold the code its name stands for. A file is
written whole under a temporary name and renamed into place, so a reader sees
all of it or nothing; a file that is missing or unreadable is a cache miss.

Every function filtex compiles with numba goes through ``njit`` below: the
generated kernels and the fixed passes (``scan.py``, ``decode/``) alike, and
all of their files live in ``cache_directory()``. A signature in no cache is
compiled here, or, under ``tiers.background()``, by the background compiler
while the caller answers its rows another way (``tiers.py``).
"""
from __future__ import annotations

import hashlib
import inspect
import os
import pickle
import sys
import tempfile
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from . import tiers

_directory: Path | None = None


def cache_directory() -> Path:
    """Where kernel modules and their compiled code are kept: ``set_cache_directory``'s,
    else ``FILTEX_KERNEL_CACHE``, else ``$XDG_CACHE_HOME/filtex/kernels``."""
    if _directory is not None:
        return _directory
    env = os.environ.get("FILTEX_KERNEL_CACHE")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "filtex" / "kernels"


def set_cache_directory(path: str | os.PathLike[str] | None) -> None:
    """Keep compiled kernels in ``path`` (None: the default)."""
    global _directory
    _directory = None if path is None else Path(path)


def compiled_code_directory() -> Path:
    """The directory of the compiled code (``cache_directory()/__pycache__``)."""
    return cache_directory() / "__pycache__"


def njit(*args: Any, cache: bool = False, **options: Any) -> Any:
    """``numba.njit``; with ``cache=True`` the compiled code is kept on disk by
    ``_KeyedFiles`` instead of numba's shared index."""
    import numba
    if not cache:
        return numba.njit(*args, **options)
    if args and callable(args[0]):
        return _with_cache(numba.njit(**options)(args[0]))

    def decorate(function: Callable[..., Any]) -> Any:
        return _with_cache(numba.njit(*args, **options)(function))
    return decorate


def _with_cache(dispatcher: Any) -> Any:
    """The dispatcher with a ``_KeyedCache``; without any disk cache when numba's
    internals are not what this module expects (correct, only slower to start)."""
    try:
        dispatcher._cache = _keyed_cache_class()(dispatcher.py_func)
    except Exception as error:   # an unexpected numba: compile in memory only
        warnings.warn(f"filtex: compiled kernels are not cached on disk ({error})",
                      RuntimeWarning, stacklevel=3)
        return dispatcher
    compile_here = dispatcher.compile

    def compile(sig: Any) -> Any:
        with _alone(dispatcher.py_func, sig):
            return compile_here(sig)
    dispatcher.compile = compile
    return dispatcher


@contextmanager
def _alone(py_func: Callable[..., Any], sig: Any) -> Iterator[None]:
    """One process at a time compiles a signature: the others wait for its
    file and load it (test workers, Spark's Python workers and the background
    compiler start together and need the same kernels). Under
    ``tiers.background()`` a signature another process is compiling is
    ``NotReady`` at once. The lock is an ``flock`` on a file beside the
    compiled code, released by the system if its holder dies."""
    try:
        import fcntl
    except ImportError:   # no flock here: processes may compile the same code twice
        yield
        return
    directory = compiled_code_directory()
    digest = hashlib.sha256(repr(sig).encode()).hexdigest()[:24]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle = os.open(directory / f"{_base_name(py_func)}.{digest}.lock",
                         os.O_CREAT | os.O_RDWR, 0o600)
    except OSError:   # an unwritable cache: nothing to share
        yield
        return
    try:
        if tiers.waiting():
            fcntl.flock(handle, fcntl.LOCK_EX)
        else:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:   # being compiled elsewhere: pending, or ours to wait for
                tiers.request(py_func, sig, str(cache_directory()))
                fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        os.close(handle)


_CLASS: Any = None


def _keyed_cache_class() -> Any:
    """numba's ``FunctionCache`` with its index and numbered files replaced by
    ``_KeyedFiles`` (made on first use: numba is imported lazily)."""
    global _CLASS
    if _CLASS is None:
        from numba.core.caching import FunctionCache

        class KeyedCache(FunctionCache):  # type: ignore[misc, valid-type]
            def __init__(self, py_func: Callable[..., Any]) -> None:
                super().__init__(py_func)
                self._cache_file = _KeyedFiles(_base_name(py_func), _source_stamp(py_func))
                self._cache_path = str(compiled_code_directory())

            def _load_overload(self, sig: Any, target_context: Any) -> Any:
                if not self._enabled:
                    return None
                data = self._cache_file.load(self._index_key(sig, target_context.codegen()))
                if data is None:
                    tiers.request(self._py_func, sig, str(cache_directory()))   # or NotReady
                    return None
                try:
                    return self._impl.rebuild(target_context, data)
                except Exception:   # a file numba cannot rebuild: compile again
                    return None

            def _save_overload(self, sig: Any, data: Any) -> None:
                # numba's version also makes its locator's directory; ours is made on write
                if not self._enabled or not self._impl.check_cachable(data):
                    return
                key = self._index_key(sig, data.codegen)
                self._cache_file.save(key, self._impl.reduce(data))

        _CLASS = KeyedCache
    return _CLASS


def _base_name(py_func: Callable[..., Any]) -> str:
    """``<module>.<function>-<line>.py<version>``: unique per function in the directory."""
    module = getattr(py_func, "__module__", None) or "module"
    name = getattr(py_func, "__qualname__", py_func.__name__).replace("<", "").replace(">", "")
    line = py_func.__code__.co_firstlineno
    return f"{module}.{name}-{line}.py{sys.version_info[0]}{sys.version_info[1]}"


def _source_stamp(py_func: Callable[..., Any]) -> str:
    """A digest of the source file's content (a kernel module's name is already
    the digest of its source; a package module changes with filtex's version)."""
    path = inspect.getfile(py_func)
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class _KeyedFiles:
    """numba's ``IndexDataCacheFile`` interface (``load``, ``save``, ``flush``)
    over one file per key, named ``<base>.<stamp>.<digest of key>.nbc``."""

    def __init__(self, base: str, stamp: str) -> None:
        import numba
        self.base = base
        self.stamp = stamp
        self.version = numba.__version__

    def path(self, key: Any) -> Path:
        digest = hashlib.sha256(repr((key, self.stamp, self.version)).encode()).hexdigest()
        return compiled_code_directory() / f"{self.base}.{self.stamp[:12]}.{digest[:32]}.nbc"

    def load(self, key: Any) -> Any:
        try:
            data = self.path(key).read_bytes()
            return pickle.loads(data)
        except Exception:   # missing, pruned meanwhile, or unreadable: compile again
            return None

    def save(self, key: Any, data: Any) -> None:
        from numba.core.serialize import dumps
        path = self.path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(dumps(data))
                os.replace(temporary, path)   # whole or not at all, for every reader
            except BaseException:
                try:
                    os.unlink(temporary)
                except OSError:
                    pass
                raise
        except OSError:
            return   # a read-only or full disk: the code stays in memory only
        self._forget_stale(path)

    def _forget_stale(self, kept: Path) -> None:
        """Remove this function's files compiled from an older source."""
        for old in kept.parent.glob(f"{self.base}.*.nbc"):
            if not old.name.startswith(f"{self.base}.{self.stamp[:12]}."):
                try:
                    old.unlink()
                except OSError:
                    pass

    def flush(self) -> None:
        """numba calls this to forget every signature; the files stay harmless."""
