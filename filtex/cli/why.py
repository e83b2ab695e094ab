"""``filtex why``: one message through one filter, with every
sub-expression's value, so a user sees which part decided.

The message is a typed-JSON object given inline, or one of a file's (or
stdin's): the first, the Nth (``--index N``, counted as the reports of
``filtex match`` count records: line, frame or row), or the first whose
result is true, false or unknown (``--first``). Files are read as a stream,
up to the message wanted; Parquet and Arrow IPC tables a record batch at a
time (``--first`` evaluates a batch with the batch engine).
"""
from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any, Iterator, NamedTuple

from .common import BAD, NO_MATCH, OK, CommandError, require
from .definition import single_filter
from .tables import TableInput, parse_mapping, table_format

MAX_DOCUMENT = 64 << 20
"""The largest pretty-printed (multi-line) JSON message read whole."""
SHOWN_UNREADABLE = 20
_RESULTS = {"true": True, "false": False, "unknown": None}
_WORDS = {True: "true", False: "false", None: "unknown"}


class Found(NamedTuple):
    """A message of an input: its number (1-based), position, the message and
    the receiving connection it names (JSON lines of the conformance cases)."""
    number: int
    position: str
    message: Any
    connection: Any


def run(args: argparse.Namespace) -> int:
    operands = list(args.operands)
    wanted = 1 if args.filter_file is not None else 2
    if len(operands) != wanted:
        raise CommandError("why takes FILTER MESSAGE (or -f FILE MESSAGE)")
    spec = operands[-1]
    if args.filter_file == "-" and spec == "-":
        raise CommandError("-f - and MESSAGE - cannot both read stdin")
    mapping = parse_mapping(args.mapping)
    inline = spec.lstrip().startswith("{")
    if inline and (args.index is not None or args.first is not None):
        raise CommandError("--index and --first pick a message of a file; MESSAGE is one "
                           "message")
    flt = single_filter(None if args.filter_file is not None else operands[0], args)
    picked = args.index is not None or args.first is not None
    if inline:
        if mapping is not None or args.nulls is not None:
            raise CommandError("--mapping and --nulls are for Parquet and Arrow IPC tables")
        message, connection = _from_json_text(spec.encode("utf-8", "surrogatepass"),
                                              "MESSAGE")
        found: Found | None = Found(1, "MESSAGE", message, connection)
    else:
        unreadable = _Skipped()
        found = _find(spec, args, mapping, flt, unreadable)
        if found is None:
            shown = "<stdin>" if spec == "-" else spec
            if args.index is not None:
                raise CommandError(f"{shown}: no message {args.index} (it has "
                                   f"{unreadable.seen:,})")
            print(f"filtex: {shown}: no message's result is {args.first} ({unreadable.seen:,} "
                  f"read{f', {unreadable.count:,} unreadable' if unreadable.count else ''})",
                  file=sys.stderr)
            return BAD if unreadable.count else NO_MATCH
    assert found is not None
    outcome = flt.outcome(found.message, found.connection)
    if picked:
        _print(f"message {found.number} ({found.position})")
    _print(f"result: {_WORDS[outcome.result]}"
           + (f" ({outcome.reason})" if outcome.reason else ""))
    _print(str(flt.explain(found.message, found.connection)))
    return OK if outcome.result is True else NO_MATCH


class _Skipped:
    """Records met before the one wanted: how many, and the unreadable ones
    (reported, the first few one by one)."""

    def __init__(self) -> None:
        self.seen = 0
        self.count = 0

    def add(self, shown: str, position: str, error: str) -> None:
        self.count += 1
        if self.count <= SHOWN_UNREADABLE:
            print(f"filtex: {shown}: {position}: {error} (skipped)", file=sys.stderr)


def _find(spec: str, args: argparse.Namespace, mapping: Any, flt: Any,
          skipped: _Skipped) -> Found | None:
    """The message of ``spec`` (a path or ``-``) to explain: the Nth, or the
    first whose result is ``--first``'s."""
    shown = "<stdin>" if spec == "-" else spec
    fmt = table_format(spec) if args.format is None else None
    if fmt is not None:
        return _find_in_table(spec, fmt, args, mapping, flt, skipped)
    if mapping is not None or args.nulls is not None:
        raise CommandError(f"{shown}: --mapping and --nulls are for Parquet and Arrow IPC "
                           "tables, and this is a message file")
    wanted = args.index or 1
    result = _RESULTS[args.first] if args.first is not None else None
    for number, position, message, raw, error in _records(spec, args.format):
        skipped.seen = number
        if args.first is None:
            if number < wanted:
                continue
            if message is None:
                raise CommandError(f"{shown}: {position}: {error}")
            return Found(number, position, message, _connection(raw))
        if message is None:
            skipped.add(shown, position, error or "unreadable")
            continue
        connection = _connection(raw)
        if flt.evaluate(message, connection) is result:
            return Found(number, position, message, connection)
    return None


def _records(spec: str, fmt: str | None) -> Iterator[tuple[int, str, Any, Any, str | None]]:
    """(number, position, message or None, raw bytes, error) of each record of
    a message file or stdin, streamed; an input that is one pretty-printed JSON
    object rather than JSON lines is that one message (its raw: the object)."""
    from ..files import read_records
    shown = "<stdin>" if spec == "-" else spec
    source: Any = spec
    if spec == "-":
        if sys.stdin is None:
            raise CommandError("<stdin>: cannot read: stdin is closed")
        source = _Recording(sys.stdin.buffer, MAX_DOCUMENT)
    try:
        records = read_records(source, fmt)
        first = next(records, None)
        if first is None:
            raise CommandError(f"{shown}: no message in it")
        if first.error is not None and first.position.startswith("line"):
            data = source.whole() if spec == "-" else _whole(spec)
            if data is not None and len(data) <= MAX_DOCUMENT:
                try:
                    message, _ = _from_json_text(data, shown)
                except CommandError:
                    pass
                else:
                    yield 1, "the whole input", message, data, None
                    return
        if spec == "-":
            source.recording = False
        number = 1
        yield number, first.position, first.message, first.raw, first.error
        for record in records:
            number += 1
            yield number, record.position, record.message, record.raw, record.error
    except (OSError, ValueError) as error:
        reason = f"cannot read: {error.strerror or error}" if isinstance(error, OSError) \
            else str(error)
        raise CommandError(f"{shown}: {reason}") from None


class _Recording(io.RawIOBase):
    """stdin as ``read_records`` reads it, keeping the bytes it hands over (up
    to ``limit`` + 1) while ``recording``: when the first line is no JSON
    message, the input may be one pretty-printed JSON object, and ``whole()``
    gives it without stdin having been read whole beforehand."""

    def __init__(self, stream: Any, limit: int) -> None:
        super().__init__()
        self.stream, self.limit = stream, limit
        self.kept = bytearray()
        self.recording = True

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        read1 = getattr(self.stream, "read1", None)
        data = (read1(len(buffer)) if read1 is not None else self.stream.read(len(buffer))) \
            or b""
        buffer[:len(data)] = data
        if self.recording and len(self.kept) <= self.limit:
            self.kept += data[:self.limit + 1 - len(self.kept)]
        return len(data)

    def whole(self) -> bytes:
        """Everything (up to ``limit`` + 1 bytes): what was handed over, and the rest."""
        room = self.limit + 1 - len(self.kept)
        return bytes(self.kept) + (self.stream.read(room) if room > 0 else b"")


def _find_in_table(path: str, fmt: str, args: argparse.Namespace, mapping: Any, flt: Any,
                   skipped: _Skipped) -> Found | None:
    """The row of a Parquet or Arrow IPC table to explain: the Nth, or (``--first``)
    the first whose verdict from the batch engine is the one asked for."""
    require(("pyarrow",) if args.first is None else ("pyarrow", "numba"), "arrow",
            "reading Parquet and Arrow IPC files")
    from ..arrow import evaluate
    from ..table.rows import batch_rows
    try:
        table = TableInput(path, fmt, mapping, args.nulls)
        before = 0
        for batch, _ in table.batches():
            count = batch.num_rows
            if args.first is None:
                at = (args.index or 1) - before - 1
            else:
                result = _RESULTS[args.first]
                verdicts = evaluate(flt, batch).verdicts.to_pylist()
                at = next((i for i, v in enumerate(verdicts) if v is result), -1)
            if 0 <= at < count:
                number = before + at + 1
                return Found(number, f"row {number}", batch_rows(batch.slice(at, 1))[0], None)
            before += count
            skipped.seen = before
    except (OSError, ValueError) as error:
        raise CommandError(f"{path}: {error.strerror if isinstance(error, OSError) else error}"
                           ) from None
    return None


def _print(text: str) -> None:
    """A line on stdout whatever it holds (a lone surrogate from a message is
    shown escaped, not a UnicodeEncodeError)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    print(text.encode(encoding, "backslashreplace").decode(encoding))


def _whole(path: str) -> bytes | None:
    try:
        with open(path, "rb") as stream:
            return stream.read(MAX_DOCUMENT + 1)
    except OSError:
        return None


def _from_json_text(data: bytes, shown: str) -> tuple[Any, Any]:
    import filtex
    try:
        obj = json.loads(data)
    except ValueError as error:   # JSONDecodeError, UnicodeDecodeError, a number too long
        raise CommandError(f"{shown}: invalid JSON: {error}") from None
    except RecursionError:
        raise CommandError(f"{shown}: invalid JSON: nested too deeply") from None
    try:
        message = filtex.message_from_json(obj)
    except (ValueError, TypeError) as error:
        raise CommandError(f"{shown}: not a message: "
                           f"{getattr(error, 'problem', None) or error}") from None
    return message, obj.get("receiving-connection") if type(obj) is dict else None


def _connection(raw: bytes) -> Any:
    """The ``receiving-connection`` of a JSON message (conformance cases' messages
    carry it for the no-local filter); None for a frame."""
    if not raw.lstrip()[:1] == b"{" or b"receiving-connection" not in raw:
        return None
    try:
        obj = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return obj.get("receiving-connection") if type(obj) is dict else None
