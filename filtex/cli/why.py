"""``filtex why``: one message through one filter, with every
sub-expression's value, so a user sees which part decided."""
from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any

from .common import NO_MATCH, OK, CommandError, load_filter

MAX_DOCUMENT = 64 << 20
"""The largest pretty-printed (multi-line) JSON message read whole."""


def run(args: argparse.Namespace) -> int:
    flt = load_filter(args.filter, args.dialect, args.filter_json)
    message, connection = read_message(args.message, args.format)
    outcome = flt.outcome(message, connection)
    verdict = {True: "true", False: "false", None: "unknown"}[outcome.result]
    _print(f"result: {verdict}" + (f" ({outcome.reason})" if outcome.reason else ""))
    _print(str(flt.explain(message, connection)))
    return OK if outcome.result is True else NO_MATCH


def read_message(spec: str, fmt: str | None) -> tuple[Any, Any]:
    """(message, receiving connection) from MESSAGE: a JSON object's text,
    ``-`` (stdin) or a path: the first message of the input."""
    if spec.lstrip().startswith("{"):
        return _from_json_text(spec.encode("utf-8", "surrogatepass"), "MESSAGE")
    if spec == "-":
        if sys.stdin is None:
            raise CommandError("<stdin>: cannot read: stdin is closed")
        data = sys.stdin.buffer.read(MAX_DOCUMENT + 1)
        return _first(io.BytesIO(data), fmt, "<stdin>", lambda: data)
    return _first(spec, fmt, spec, lambda: _whole(spec))


def _first(source: Any, fmt: str | None, shown: str, whole: Any) -> tuple[Any, Any]:
    """The first record of an input (read as a stream: a large file is not
    read whole); an input that is one pretty-printed JSON object rather than
    JSON lines is read as that object (``whole()`` gives its bytes)."""
    from ..files import read_records
    try:
        first = next(read_records(source, fmt), None)
    except (OSError, ValueError) as error:
        reason = f"cannot read: {error.strerror or error}" if isinstance(error, OSError) \
            else str(error)
        raise CommandError(f"{shown}: {reason}") from None
    if first is None:
        raise CommandError(f"{shown}: no message in it")
    if first.error is None:
        return first.message, _connection(first.raw)
    if first.position.startswith("line"):
        data = whole()
        if data is not None and len(data) <= MAX_DOCUMENT:
            try:
                return _from_json_text(data, shown)
            except CommandError:
                pass
    raise CommandError(f"{shown}: {first.position}: {first.error}")


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
    """The ``receiving-connection`` of a JSON line (conformance cases' messages
    carry it for the no-local filter); None for a frame."""
    if not raw.lstrip()[:1] == b"{":
        return None
    try:
        obj = json.loads(raw)
    except ValueError:
        return None
    return obj.get("receiving-connection") if type(obj) is dict else None
