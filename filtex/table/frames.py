"""A framed AMQP file as zero-copy binary columns, a bounded chunk at a time.

A framed file is a sequence of frames, each a 4-byte big-endian size and that
many bytes of an encoded message (``files.py``). Here the file is read in
chunks of about ``CHUNK_BYTES``; a compiled pass finds each chunk's frame
boundaries, and the chunk's complete frames become one ``large_binary``
column over the chunk's bytes, without a copy: each cell is a frame, size
included (the decoder skips it: ``decode_column(prefix=4)``), so a matching
record is copied out as it was read. A frame cut by the chunk's end is carried
into the next chunk. What ``files.read_records`` reports, this reports too, at
the same positions: an empty frame is an error record, and reading goes on; a
frame larger than ``max_frame`` or cut by the end of the file ends the input.
"""
from __future__ import annotations

import struct
from typing import IO, Any, Iterator, NamedTuple

import numpy as np

from ..codegen import tiers
from ..codegen.jit import njit
from ..files import MAX_FRAME

CHUNK_BYTES = 1 << 25
"""About this many bytes of frames are read and evaluated at once (32 MiB)."""
PREFIX = 4
_SIZE_AT = struct.Struct(">I").unpack_from
"""A frame's 4-byte big-endian size at an offset (the Python frame finder's read)."""


@njit(cache=True, nogil=True)
def _bounds(data, max_frame, out):   # pragma: no cover - compiled
    """Frame starts in ``data`` (into ``out``; then the end of the last whole
    frame): (frames, end, status), status 0 when the data ends on or inside a
    frame, 1 when a frame's size is larger than ``max_frame``."""
    n = data.shape[0]
    pos = np.int64(0)
    count = 0
    while pos + 4 <= n:
        size = (np.int64(data[pos]) << 24) | (np.int64(data[pos + 1]) << 16) | \
            (np.int64(data[pos + 2]) << 8) | np.int64(data[pos + 3])
        if size > max_frame:
            out[count] = pos
            return count, pos, 1
        if pos + 4 + size > n:
            break
        out[count] = pos
        count += 1
        pos += 4 + size
    out[count] = pos
    return count, pos, 0


def _bounds_here(data: np.ndarray, max_frame: int, out: np.ndarray) -> tuple[int, int, int]:
    """``_bounds`` in Python: what the frame finder answers while it compiles
    (about a second, once per machine; a 32 MiB chunk of 700-byte frames takes
    tens of milliseconds here)."""
    view = data.data   # the array's bytes, as a memoryview
    n = len(data)
    pos = count = 0
    while pos + 4 <= n:
        size = _SIZE_AT(view, pos)[0]
        if size > max_frame:
            out[count] = pos
            return count, pos, 1
        if pos + 4 + size > n:
            break
        out[count] = pos
        count += 1
        pos += 4 + size
    out[count] = pos
    return count, pos, 0


def find_bounds(data: np.ndarray, max_frame: int, out: np.ndarray) -> tuple[int, int, int]:
    """``_bounds`` compiled, or in Python while it compiles in the background
    (under ``tiers.background()``, the default: no reader waits for it)."""
    try:
        with tiers.background():
            count, stop, status = _bounds(data, max_frame, out)
            return int(count), int(stop), int(status)
    except tiers.NotReady:
        return _bounds_here(data, max_frame, out)


class Frames(NamedTuple):
    """One chunk's whole frames: ``cells`` (pa.LargeBinaryArray, each a frame,
    size included), ``data`` (the chunk's bytes, uint8), ``offsets`` (frame
    ``i`` is ``data[offsets[i]:offsets[i+1]]``), ``base`` (the file offset of
    ``data[0]``) and ``first`` (the number of the chunk's first frame, from 1)."""
    cells: Any
    data: np.ndarray
    offsets: np.ndarray
    base: int
    first: int

    def sizes(self) -> np.ndarray:
        sizes: np.ndarray = np.diff(self.offsets) - PREFIX
        return sizes

    def position(self, row: int) -> str:
        """As ``files.read_records`` names a record."""
        return f"frame {self.first + row} at byte {self.base + int(self.offsets[row])}"

    def payload(self, row: int) -> bytes:
        return self.data[int(self.offsets[row]) + PREFIX:int(self.offsets[row + 1])].tobytes()

    def rows(self, lo: int, hi: int) -> "Frames":
        """Frames ``lo`` to ``hi`` (excluded) of the chunk, the same bytes."""
        return Frames(self.cells.slice(lo, hi - lo), self.data, self.offsets[lo:hi + 1],
                      self.base, self.first + lo)


class Fatal(NamedTuple):
    """Why the input ends here (a frame too large, or cut by the end of the file)."""
    position: str
    reason: str


_NOT_READ = "; the rest of the input is not read"


def read_frames(stream: IO[bytes], *, chunk_bytes: int = CHUNK_BYTES,
                max_frame: int = MAX_FRAME) -> Iterator[Frames | Fatal]:
    """The frames of ``stream`` in chunks, then a ``Fatal`` if the input does not
    end on a frame boundary. A regular file is mapped (its pages are read by
    the kernel in place, never copied); anything else is read."""
    import mmap
    try:
        start = stream.tell()
        mapped = mmap.mmap(stream.fileno(), 0, access=mmap.ACCESS_READ)
    except (AttributeError, OSError, ValueError):   # not a regular file: read it
        yield from _read_frames(stream, chunk_bytes, max_frame)
        return
    # not closed here: the chunks' arrays are views of it; it is unmapped when
    # the last of them is gone
    yield from _frames_of(memoryview(mapped), start, chunk_bytes, max_frame)


def _frames_of(view: memoryview, start: int, chunk_bytes: int, max_frame: int
               ) -> Iterator[Frames | Fatal]:
    """The frames of a mapped file from byte ``start``, a chunk at a time."""
    size = len(view)
    data = np.frombuffer(view, np.uint8)
    base = start
    number = 1
    while base < size:
        end = min(size, base + chunk_bytes)
        if base + PREFIX <= size:   # at least the first frame whole, however large
            first = int.from_bytes(view[base:base + PREFIX], "big")
            if first <= max_frame:
                end = max(end, min(size, base + PREFIX + first))
        frames, stop, fatal = _chunk(data[base:end], base, number, max_frame)
        if frames is not None:
            yield frames
            number += len(frames.cells)
        if fatal is not None:
            yield fatal
            return
        base += stop
        if end == size and base < size:   # the file ends inside a frame
            yield Fatal(f"frame {number} at byte {base}", _truncated(view[base:size]))
            return


def _chunk(window: np.ndarray, base: int, number: int, max_frame: int
           ) -> tuple[Frames | None, int, Fatal | None]:
    """One chunk's whole frames as a zero-copy column (None: none whole), where
    they end in the chunk, and the ``Fatal`` of a frame too large after them.
    ``window``: the chunk's bytes (uint8), from file offset ``base``;
    ``number``: its first frame's number."""
    import pyarrow as pa
    out = np.empty(len(window) // PREFIX + 2, np.int64)
    count, stop, status = find_bounds(window, max_frame, out)
    frames = None
    if count:
        offsets = out[:count + 1].copy()
        cells = pa.Array.from_buffers(pa.large_binary(), count,
                                      [None, pa.py_buffer(offsets), pa.py_buffer(window)])
        frames = Frames(cells, window, offsets, base, number)
    fatal = None
    if status == 1:
        size = int.from_bytes(window[stop:stop + PREFIX].tobytes(), "big")
        fatal = Fatal(f"frame {number + count} at byte {base + stop}",
                      f"frame size {size} is larger than the maximum of {max_frame} bytes"
                      + _NOT_READ)
    return frames, int(stop), fatal


def _truncated(tail: Any) -> str:
    left = len(tail)
    return (f"truncated frame: {int.from_bytes(tail[:PREFIX], 'big')} bytes announced, "
            f"{left - PREFIX} left" if left >= PREFIX else
            f"truncated frame size: {left} of 4 bytes") + _NOT_READ


def _read_frames(stream: IO[bytes], chunk_bytes: int, max_frame: int
                 ) -> Iterator[Frames | Fatal]:
    """The frames of a stream that cannot be mapped, read a chunk at a time."""
    carried = b""
    base = 0
    number = 1
    eof = False
    while not eof:
        want = chunk_bytes   # and at least the rest of a frame the last chunk cut
        if len(carried) >= PREFIX:
            want = max(want, PREFIX + int.from_bytes(carried[:PREFIX], "big") - len(carried))
        chunk = stream.read(want)
        eof = not chunk
        data = carried + chunk if carried else chunk
        if not data:
            return
        frames, end, fatal = _chunk(np.frombuffer(data, np.uint8), base, number, max_frame)
        if frames is not None:
            yield frames
            number += len(frames.cells)
        if fatal is not None:
            yield fatal
            return
        carried = data[end:]
        base += end
        if eof and carried:
            yield Fatal(f"frame {number} at byte {base}", _truncated(carried))
            return


__all__ = ["CHUNK_BYTES", "Fatal", "Frames", "read_frames"]
