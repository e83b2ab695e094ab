"""Compiled kernels carried from one machine's cache to another's.

A Spark executor's Python workers start with whatever kernel cache their
machine has, on an ephemeral cluster none: each would compile what the driver
compiled seconds before. The driver packs its cache's newest compiled code
(``collect``: every fixed kernel, decoder and scans, then the most recently
used generated kernels and their modules, up to ``MAX_BUNDLE_BYTES``) and each
worker writes the files its own cache lacks (``install``) before its first
batch. A compiled file's name holds a digest of the CPU, numba and the source
it was compiled from (``jit.py``): on a machine where any of them differs
the name is not the one asked for, and the kernel is compiled there as usual.
"""
from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

MAX_BUNDLE_BYTES = 48 << 20
"""Bytes of compiled code one bundle carries at most (the message decoder
alone is about 1.3 MB; a fused kernel 20-400 KB)."""

_NAME = re.compile(r"[A-Za-z0-9_.\-]+\Z")
"""A file name a bundle may hold: no directory, nothing hidden."""


def collect(directory: Path, max_bytes: int = MAX_BUNDLE_BYTES) -> dict[str, bytes]:
    """``relative path -> bytes`` of the cache's compiled code: the fixed
    kernels' first, then the newest generated kernels' with their modules,
    while the total stays within ``max_bytes``."""
    code = directory / "__pycache__"
    try:
        found = [(p, p.stat()) for p in code.iterdir() if p.suffix == ".nbc"]
    except OSError:
        return {}
    fixed = [p for p, _ in found if not p.name.startswith("filtex_kernel_")]
    generated = [p for p, _ in sorted(
        ((p, s) for p, s in found if p.name.startswith("filtex_kernel_")),
        key=lambda item: item[1].st_mtime, reverse=True)]
    files: dict[str, bytes] = {}
    total = 0
    for path in fixed + generated:
        parts = [path]
        if path.name.startswith("filtex_kernel_"):
            parts.append(directory / f"{path.name.split('.')[0]}.py")
        try:
            data = [p.read_bytes() for p in parts]
        except OSError:   # pruned meanwhile
            continue
        size = sum(map(len, data))
        if total + size > max_bytes:
            continue
        total += size
        for p, content in zip(parts, data):
            files[str(p.relative_to(directory))] = content
    return files


def install(files: dict[str, bytes], directory: Path) -> int:
    """Write the files of a bundle the cache ``directory`` lacks (each whole or
    not at all); the number written. A name that is not a plain file name in
    the cache or its ``__pycache__`` is ignored."""
    written = 0
    for name, content in files.items():
        head, _, base = name.rpartition("/")
        if head not in ("", "__pycache__") or not _NAME.match(base):
            continue
        target = directory / name
        if target.exists():
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, temporary = tempfile.mkstemp(dir=target.parent, suffix=".tmp")
            with os.fdopen(handle, "wb") as out:
                out.write(content)
            os.replace(temporary, target)
            written += 1
        except OSError:   # a read-only or full disk: those kernels compile there
            continue
    return written
