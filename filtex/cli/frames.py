"""``filtex match`` over a framed AMQP file at the batch engine's speed.

A regular framed file past ``COLUMNAR_BYTES`` is read a chunk at a time as a
zero-copy binary column (``table/frames.py``), decoded once for every
subscription (the union of what they read: ``arrow.binary.decode_for``), and
each subscription evaluated over the decoded table by its kernel. What the
decoder leaves (``undecoded`` rows) is read as the per-message path reads it:
a frame whose sections cannot be found, or an empty one, is an unreadable
record, reported at its position; any other is evaluated from its bytes.
Matching frames are copied out as they were read, byte for byte. Counts,
reports, ``--invert`` and ``-q`` are the per-message path's; tiny inputs,
``--strict`` (which stops at the first unreadable record) and pipes keep
that path (``match.py``).
"""
from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

COLUMNAR_BYTES = 1 << 20
"""Framed files from this size on are read as columns (1 MiB: about a
thousand messages; below it importing numba and pyarrow is not worth it).
Until the kernels are compiled the chunks are answered by the per-message
engine (``evaluate``), so the first run on a machine is never slower than
the per-message path, and it leaves the kernels compiled for the next."""


def available() -> bool:
    """Whether the batch engine can run (the ``arrow`` extra)."""
    try:
        import numba  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        return False
    return True


def read(matcher: Any, stream: Any, shown: str) -> bool:
    """Every frame of a framed file through every subscription; True when ``-q``
    can stop (a message was selected)."""
    from ..table.frames import Fatal, read_frames
    for part in read_frames(stream):
        matcher.at = part.base if not isinstance(part, Fatal) else matcher.at
        if isinstance(part, Fatal):   # the rest of the input cannot be read
            matcher.unreadable.add(f"{shown}: {part.position}", part.reason, sys.stderr,
                                   matcher.progress.clear)
            matcher.failed = True
            return False
        with matcher.compile_notice:
            selected = evaluate(matcher, part, shown)
        if selected and matcher.args.quiet:
            return True
    return False


def evaluate(matcher: Any, part: Any, shown: str) -> int:
    """Every subscription over one chunk of frames; the messages the kernels
    selected (the per-message path stops a ``-q`` run itself). While a kernel
    it needs compiles in the background, the frames are answered by the
    per-message path (``by_message``) a slice at a time, the kernels tried
    again on the rest whenever the compiler has finished something."""
    from ..arrow import warmup
    from ..arrow.tiered import CHUNK_ROWS
    from ..codegen import tiers
    n = len(part.cells)
    seen = None
    start = 0
    while start < n:
        if seen != tiers.progress():
            seen = tiers.progress()
            rest = part if not start else part.rows(start, n)
            try:
                with tiers.background():
                    return by_kernels(matcher, rest, shown)
            except tiers.NotReady:   # the decoder is compiling
                warmup.request_frames([sub.filter for sub in matcher.subscriptions],
                                      rest.cells, 4)
        stop = min(n, start + CHUNK_ROWS)
        before = matcher.messages
        by_message(matcher, part.rows(start, stop), shown)
        matcher.compiling_messages += matcher.messages - before
        start = stop
    return 0


def by_kernels(matcher: Any, part: Any, shown: str) -> int:
    """Every subscription over frames by the decoder and the kernels (raises
    ``NotReady`` before anything is counted while one compiles)."""
    import filtex.arrow as fa
    from ..amqp.encoded import EncodedMessage
    from ..arrow.binary import decode_for
    subscriptions = matcher.subscriptions
    clock = time.perf_counter
    started = clock()
    n = len(part.cells)
    decoded = decode_for([sub.filter for sub in subscriptions], part.cells, prefix=4)
    results = [fa.evaluate(sub.filter, decoded.table) for sub in subscriptions]
    # a filter whose kernel is compiling answered its rows per message meanwhile
    matcher.compiling_messages += max(result.compiling_rows for result in results)
    readable = np.ones(n, bool)
    by_bytes: dict[int, Any] = {}   # rows the decoder left: read as the per-message path does
    sizes = part.sizes()
    for row in np.flatnonzero(decoded.undecoded | (sizes == 0)).tolist():
        if sizes[row] == 0:
            problem: str | None = "empty frame (size 0): not a message"
        else:
            message = EncodedMessage(part.payload(row))
            problem = message.problem
        if problem is not None:
            readable[row] = False
            matcher.unreadable.add(f"{shown}: {part.position(row)}", problem, sys.stderr,
                                   matcher.progress.clear)
        else:
            by_bytes[row] = message
    count = int(readable.sum())
    matcher.messages += count
    share = (clock() - started) / len(subscriptions)   # decoding and kernels, shared
    invert = matcher.args.invert
    selected = 0
    for sub, result in zip(subscriptions, results):
        started = clock()
        verdicts = result.verdicts
        true = verdicts.fill_null(False).to_numpy(zero_copy_only=False).copy()
        known = verdicts.is_valid().to_numpy(zero_copy_only=False).copy()
        for row, message in by_bytes.items():
            verdict = sub.evaluate(message)
            true[row], known[row] = verdict is True, verdict is not None
        true &= readable
        unknown = readable & ~known
        sub.seconds += clock() - started + share
        sub.evaluated += count
        matched = int(true.sum())
        sub.matched += matched
        selected += count - matched if invert else matched
        missing = int(unknown.sum())
        if missing:
            sub.unknown += missing
            sub.tally(by_bytes.get(row) or EncodedMessage(part.payload(row))
                      for row in np.flatnonzero(unknown).tolist())
        if sub.output is not None:
            chosen = (readable & ~true) if invert else true
            _write(sub.output, part, chosen)
    matcher.show_progress()
    return selected


def by_message(matcher: Any, part: Any, shown: str) -> None:
    """One chunk of frames through the per-message path (``match.py``), as a
    framed file below ``COLUMNAR_BYTES`` is read: the same records, counts,
    reports, outputs and ``-q``."""
    from ..amqp.encoded import EncodedMessage
    from ..files import Record
    new = tuple.__new__
    sizes = part.sizes().tolist()
    step = matcher.records_per_batch
    for lo in range(0, len(sizes), step):
        batch = []
        for row in range(lo, min(lo + step, len(sizes))):
            raw = part.payload(row)
            if sizes[row]:
                message = EncodedMessage(raw)
                problem = message.problem
            else:
                problem = "empty frame (size 0): not a message"
            batch.append(new(Record, (part.position(row), raw,
                                      message if problem is None else None, problem, False)))
        matcher.evaluate_records(batch, shown)


def _write(stream: Any, part: Any, chosen: np.ndarray) -> None:
    """The chosen frames, size and bytes, as they were read, in one write."""
    rows = np.flatnonzero(chosen)
    if not len(rows):
        return
    starts, ends = part.offsets[rows], part.offsets[rows + 1]
    data = part.data
    if len(rows) == len(part.offsets) - 1:   # every frame: the chunk's bytes as they are
        stream.write(data[int(starts[0]):int(ends[-1])].tobytes())
        return
    lengths = ends - starts
    index = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths)
    index += np.arange(int(lengths.sum()), dtype=np.int64)
    stream.write(data[index].tobytes())
