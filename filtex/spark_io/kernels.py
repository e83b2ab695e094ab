"""The driver's compiled kernels, carried to the executors' Python workers.

An executor whose kernel cache is not the driver's (another machine, an
ephemeral cluster, or ``spark.executorEnv.FILTEX_KERNEL_CACHE`` set apart)
would compile, in each Python worker's first batch, what the driver's cache
already holds. Every function filtex hands Spark to run over Arrow batches
(``filtex.spark``'s UDF, the ``mapInArrow`` layouts of ``spark_io``) takes a
broadcast of the driver's compiled code (``codegen/bundle.py``), made once per
Spark context and again only when the driver's cache has changed since; each
worker writes what its cache lacks before its first batch. In local mode with
one cache there is nothing to carry.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

from .workers import setting

_lock = threading.Lock()
_made: dict[int, tuple[float, tuple[str, Any]]] = {}
"""Per Spark context (by id; at most ``MAX_CONTEXTS``): the driver cache's
newest change when the broadcast was made, and (its token, the broadcast)."""
MAX_CONTEXTS = 4


def _newest(directory: Path) -> float:
    try:
        return max((entry.stat().st_mtime for entry in os.scandir(directory / "__pycache__")),
                   default=0.0)
    except OSError:
        return 0.0


def _apart(context: Any, directory: Path) -> bool:
    """Whether the executors may keep their kernels elsewhere than the driver."""
    theirs = setting(context, "spark.executorEnv.FILTEX_KERNEL_CACHE")
    if theirs is not None:
        return Path(theirs) != directory
    return not str(context.master).startswith("local")


def shipped() -> tuple[str, Any] | None:
    """(a token naming it, the broadcast of the driver's compiled kernels) for
    the active Spark context, or None (no classic context, nothing to carry,
    or one cache)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    context = SparkContext._active_spark_context
    if context is None:   # Spark Connect: no broadcast from here
        return None
    from ..codegen.bundle import collect
    from ..codegen.jit import cache_directory
    directory = cache_directory()
    if not _apart(context, directory):
        return None
    newest = _newest(directory)
    with _lock:
        made = _made.get(id(context))
        if made is not None and made[0] >= newest:
            return made[1]
        files = collect(directory)
        if not files:
            return None
        carried = (f"{os.getpid()}-{id(context)}-{newest}", context.broadcast(files))
        if len(_made) >= MAX_CONTEXTS:
            _made.pop(next(iter(_made)))
        _made[id(context)] = (newest, carried)
        return carried


_installed: set[str] = set()
"""The tokens of the bundles this worker has installed (at most ``MAX_CONTEXTS``
kept): a bundle is read from its broadcast once."""


def install(carried: tuple[str, Any] | None) -> None:
    """In a Python worker, before its first batch: the carried kernels its
    cache lacks are written into it."""
    if carried is None or carried[0] in _installed:
        return
    from ..codegen.bundle import install as write
    from ..codegen.jit import cache_directory
    write(carried[1].value, cache_directory())
    if len(_installed) >= MAX_CONTEXTS:
        _installed.clear()
    _installed.add(carried[0])
