"""Files of messages: typed-JSON lines, or framed AMQP-encoded messages.

Two formats:

* ``jsonl``: one typed-JSON message a line (FORMAT.md's ``message`` object),
  blank lines skipped;
* ``amqp``: encoded AMQP messages, each preceded by its size as a 4-byte
  big-endian unsigned integer (the framing RabbitMQ streams use for simple
  entries).

Reading streams the input in large chunks and never raises for a bad record:
each record comes as a ``Record`` with its position, raw bytes and either the
message or the reason it is unreadable, so a command can report and go on. A
frame that cannot be framed (larger than ``max_frame``, or cut short) ends its
input: nothing after it can be found again, so its record is ``fatal``.
A JSON line's ``raw`` is its exact bytes (a CRLF line keeps its ``\r``), so
``write_record`` copies a file byte for byte. ``read_messages`` is the simple
API: the messages, or a ``ValueError`` at the first bad record.
"""
from __future__ import annotations

import errno
import json
import os
import struct
import sys
from contextlib import contextmanager
from typing import (IO, Iterable, Iterator, Literal, NamedTuple, Union, cast,
                    overload)

from .amqp.encoded import EncodedMessage
from .message import Message
from .typed_json import message_from_json

Format = Literal["jsonl", "amqp"]
Source = Union[str, "os.PathLike[str]", IO[bytes]]
"""A path, ``-`` (stdin), or a binary file object."""
FORMATS: tuple[Format, ...] = ("jsonl", "amqp")
CHUNK = 1 << 20
"""Bytes read at a time."""
MAX_FRAME = 64 << 20

_SIZE = struct.Struct(">I")
_WHITESPACE = b" \t\r\n"
_BOM = b"\xef\xbb\xbf"
_NOT_READ = "; the rest of the input is not read"


class Record(NamedTuple):
    """One record of a message file.

    ``position``: ``line 12`` or ``frame 7 at byte 1234``; ``raw``: the line
    without its ``\n`` (a ``\r`` kept), or the frame without its size;
    ``message``: a ``filtex.Message`` (jsonl) or ``EncodedMessage`` (amqp),
    None when unreadable; ``error``: None, or a short reason naming the
    problem; ``fatal``: True on the framing error after which the input is not
    read any further (frames cannot be found again), else False.
    """
    position: str
    raw: bytes
    message: Message | EncodedMessage | None
    error: str | None
    fatal: bool


PAUSE = Record("pause", b"", None, None, False)
"""Not a record: yielded (the object itself, compare with ``is``) only when the
stream has ``would_wait()`` and says the next read would wait: the records
before it are all the input holds for now. A live reader (``filtex.cli.live``)
evaluates them then instead of waiting for a full batch, as grep does."""


def detect_format(head: bytes) -> Format:
    """``amqp`` or ``jsonl`` from the first byte of a non-empty input: a first
    byte 0x00 is the high byte of a frame size (below 16 MiB), which no text
    starts with; anything else is JSON lines, so one bad first line is an
    error record, not a refused file. An empty input has no format
    (``ValueError``)."""
    if not head:
        raise ValueError("an empty input has no format")
    return "amqp" if head[0] == 0 else "jsonl"


def _check_arguments(source: object, format: object, max_frame: object = MAX_FRAME) -> None:
    """``TypeError``/``ValueError`` at the call, before any reading, for
    arguments no input could make right."""
    if not (issubclass(type(source), (str, os.PathLike)) or hasattr(source, "read")):
        raise TypeError(f"a message source is a path, '-' or a binary file, "
                        f"not {type(source).__name__}")
    if format is not None and format not in FORMATS:
        error = ValueError if issubclass(type(format), str) else TypeError
        raise error(f"format is one of {', '.join(FORMATS)} or None, not {format!r:.40}")
    if type(max_frame) is not int or max_frame < 1:
        raise (ValueError if type(max_frame) is int else TypeError)(
            f"max_frame is a positive int, not {max_frame!r:.40}")


@contextmanager
def _opened(source: Source) -> Iterator[IO[bytes]]:
    """A binary stream of ``source``: a path, ``-`` (stdin) or a binary file
    object (not closed here: its owner closes it)."""
    if source == "-":
        if sys.stdin is None:   # Python's stdin when fd 0 is closed (``<&-``)
            raise OSError(errno.EBADF, "stdin is closed")
        yield sys.stdin.buffer
    elif isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as stream:
            yield stream
    elif hasattr(source, "read"):
        yield source
    else:
        raise TypeError(f"a message source is a path, '-' or a binary file, "
                        f"not {type(source).__name__}")


def _paused(stream: IO[bytes]) -> bool:
    """Would the next read of ``stream`` wait for data? Asked only of a stream
    with ``would_wait()`` (a live pipe, ``filtex.cli.live``); a file never waits."""
    would_wait = getattr(stream, "would_wait", None)
    return would_wait is not None and bool(would_wait())


def _read(stream: IO[bytes], size: int) -> bytes:
    """Up to ``size`` bytes: one call (``read1`` where the stream has it, so a
    pipe hands over what it has); a text stream is a clear error."""
    read1 = getattr(stream, "read1", None)
    chunk = read1(size) if read1 is not None else stream.read(size)
    if chunk is None:   # a non-blocking stream with nothing yet: read as the end
        return b""
    if isinstance(chunk, str):
        raise TypeError("a message source must be opened in binary mode ('rb')")
    return chunk


def read_records(source: Source, format: Format | None = None, *,
                 max_frame: int = MAX_FRAME) -> Iterator[Record]:
    """The records of ``source`` (a path, a binary file object, or ``-`` for
    stdin) in ``format`` (detected from the first bytes when None).

    A bad record is a ``Record`` with an ``error``, never an exception: an
    unparsable line or an empty frame, and reading goes on; a frame longer
    than ``max_frame`` bytes or past the end of the input, and reading stops
    (that record is ``fatal``). ``max_frame`` also bounds a line (an over-long
    line is an error record, skipped). An empty input has no records; a
    closed stdin is an ``OSError`` (from the first ``next``); arguments of the
    wrong type or value are a ``TypeError`` or ``ValueError`` from the call.
    """
    _check_arguments(source, format, max_frame)
    return _records(source, format, max_frame)


def _records(source: Source, format: Format | None, max_frame: int) -> Iterator[Record]:
    with _opened(source) as stream:
        head = _read(stream, CHUNK)
        if format is None:
            if not head:
                return   # an empty input holds no records, and has no format
            format = detect_format(head)
        if format == "jsonl":
            while len(head) < 3 and _BOM.startswith(head):   # a BOM split across chunks
                more = _read(stream, CHUNK)
                if not more:
                    break
                head += more
            if head.startswith(_BOM):   # skipped: not part of the first line
                head = head[3:] or _read(stream, CHUNK)
            yield from _lines(stream, head, max_frame)
        else:
            yield from _frames(stream, head, max_frame)


def _line_record(number: int, raw: bytes) -> Record:
    position = f"line {number}"
    try:
        obj = json.loads(raw)
    except RecursionError:
        return Record(position, raw, None, "invalid JSON: nested too deeply", False)
    except UnicodeDecodeError as exc:
        return Record(position, raw, None,
                      f"invalid UTF-8 at byte {exc.start + 1} of the line", False)
    except ValueError as exc:   # json.JSONDecodeError
        return Record(position, raw, None, f"invalid JSON: {exc}", False)
    try:
        return Record(position, raw, message_from_json(obj), None, False)
    except (ValueError, TypeError) as exc:   # FilterError is a ValueError
        reason = getattr(exc, "problem", None) or str(exc)
        return Record(position, raw, None, f"not a message: {reason}", False)


def _lines(stream: IO[bytes], head: bytes, max_line: int) -> Iterator[Record]:
    """JSON lines, a chunk at a time: the chunk split at its newlines, its
    partial last line kept in pieces (joined once) until its newline comes.
    A line longer than ``max_line`` is one error record (holding the line's
    first bytes) and is skipped to its end. A line's ``raw`` keeps a final
    ``\r`` (JSON reads it as whitespace) so CRLF files are copied exactly."""
    number = 0
    pending: list[bytes] = []   # the pieces of a line begun in earlier chunks
    pending_size = 0
    skipping = False            # inside an over-long line
    too_long = f"line longer than the maximum of {max_line} bytes"
    chunk = head
    while chunk:
        lines = chunk.split(b"\n")
        tail = lines.pop()
        if lines:
            if pending:
                lines[0] = b"".join(pending) + lines[0]
                pending, pending_size = [], 0
            for line in lines:
                number += 1
                if skipping:
                    skipping = False
                    continue
                if len(line) > max_line:
                    yield Record(f"line {number}", line[:64], None, too_long, False)
                elif line.strip(_WHITESPACE):
                    yield _line_record(number, line)
        if tail and not skipping:
            pending.append(tail)
            pending_size += len(tail)
            if pending_size > max_line:
                yield Record(f"line {number + 1}", b"".join(pending)[:64], None, too_long,
                             False)
                pending, pending_size, skipping = [], 0, True
        if _paused(stream):
            yield PAUSE
        chunk = _read(stream, CHUNK)
    if pending:   # a last line with no newline
        line = b"".join(pending)
        if line.strip(_WHITESPACE):
            yield _line_record(number + 1, line)


def _frames(stream: IO[bytes], buffer: bytes, max_frame: int) -> Iterator[Record]:
    """Size-prefixed frames. The loop over a chunk is a ``struct`` read and a
    slice a frame; a frame that straddles chunks is read in pieces joined once.
    A frame of size 0 holds no message: an error record, and reading goes on."""
    unpack = _SIZE.unpack_from
    new = tuple.__new__   # Record(...) without the keyword-handling __new__
    base = pos = number = size = 0   # base: the input offset of buffer[0]
    eof = False
    while True:
        end = len(buffer)
        while pos + 4 <= end:
            size = unpack(buffer, pos)[0]
            stop = pos + 4 + size
            if stop > end or size > max_frame:
                break
            number += 1
            raw = buffer[pos + 4:stop]
            if size:
                message = EncodedMessage(raw)
                problem = message.problem   # None, or why its sections cannot be found
            else:   # read as a message it would be empty, and match filters
                problem = "empty frame (size 0): not a message"
            if problem is None:
                yield new(Record, (f"frame {number} at byte {base + pos}", raw, message, None,
                                   False))
            else:
                yield new(Record, (f"frame {number} at byte {base + pos}", raw, None, problem,
                                   False))
            pos = stop
        whole = pos + 4 <= end   # the next frame's size is in the buffer
        position = f"frame {number + 1} at byte {base + pos}"
        if whole and size > max_frame:
            yield Record(position, buffer[pos:pos + 4], None,
                         f"frame size {size} is larger than the maximum of {max_frame} bytes"
                         + _NOT_READ, True)
            return
        if eof:
            if pos < end:
                reason = (f"truncated frame: {size} bytes announced, {end - pos - 4} left"
                          if whole else f"truncated frame size: {end - pos} of 4 bytes")
                yield Record(position, buffer[pos:], None, reason + _NOT_READ, True)
            return
        missing = (size + 4 if whole else 4) - (end - pos)
        pieces = [buffer[pos:]]
        while True:
            if _paused(stream):
                yield PAUSE
            chunk = _read(stream, max(CHUNK, missing))
            if not chunk:
                eof = True
                break
            pieces.append(chunk)
            missing -= len(chunk)
            if missing <= 0:
                break
        buffer = b"".join(pieces)
        base += pos
        pos = 0


@overload
def read_messages(source: Source, format: Literal["jsonl"]) -> Iterator[Message]: ...
@overload
def read_messages(source: Source, format: Literal["amqp"]) -> Iterator[EncodedMessage]: ...
@overload
def read_messages(source: Source, format: None = None) -> Iterator[Message | EncodedMessage]: ...


def read_messages(source: Source, format: Format | None = None
                  ) -> Iterator[Message | EncodedMessage]:
    """The messages of a file (see ``read_records``): ``filtex.Message`` for
    JSON lines, ``EncodedMessage`` for framed AMQP. The first unreadable record
    is a ``ValueError`` naming its position and the problem."""
    _check_arguments(source, format)
    return _messages(source, format)


def _messages(source: Source, format: Format | None) -> Iterator[Message | EncodedMessage]:
    name = "<stdin>" if source == "-" else (
        os.fspath(source) if isinstance(source, (str, os.PathLike)) else None)
    for record in read_records(source, format):
        if record.error is not None:
            where = f"{name}, {record.position}" if name else record.position
            raise ValueError(f"{where}: {record.error}")
        yield cast("Message | EncodedMessage", record.message)   # no error: it has one


def write_record(stream: IO[bytes], record_or_raw: Record | bytes, format: Format) -> None:
    """Write one record (a ``Record`` or its raw bytes) to a binary stream in
    ``format``: a line and its newline, or the frame's size and bytes."""
    raw = record_or_raw.raw if isinstance(record_or_raw, Record) else record_or_raw
    write_records(stream, (raw,), format)


def write_records(stream: IO[bytes], raws: Iterable[bytes], format: Format) -> None:
    """Write records' raw bytes to a binary stream in ``format``, in one write."""
    pack = _SIZE.pack
    parts = []
    if format == "amqp":
        for raw in raws:
            parts.append(pack(len(raw)))
            parts.append(raw)
    elif format == "jsonl":
        for raw in raws:
            if b"\n" in raw:
                raise ValueError("a JSON line cannot hold a newline")
            parts.append(raw)
            parts.append(b"\n")
    else:
        raise ValueError(f"format is one of {', '.join(FORMATS)}, not {format!r}")
    if parts:
        stream.write(b"".join(parts))
