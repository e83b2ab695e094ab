"""Convert a message file between typed-JSON lines and framed AMQP messages.

    python tools/convert_messages.py orders.jsonl -o orders.amqp
    python tools/convert_messages.py orders.amqp -o orders.jsonl   # bodies included
    cat orders.amqp | python tools/convert_messages.py - --to jsonl -o -

The input format is detected (``filtex.files.detect_format``); the output is the
other one unless ``--to`` says. JSON lines are encoded with
``filtex.amqp.encode.encode_message``; frames are decoded with ``codec`` (header,
annotations, properties, application properties, footer) and
``encode.decode_body`` (the body), then written with ``message_to_json``. A
record that cannot be read or converted is reported on stderr with its position
and skipped; the exit status is then 1.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import IO, Any

try:
    import filtex
except ModuleNotFoundError as missing:   # not installed: use the source checkout
    if missing.name != "filtex":
        raise
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import filtex
from filtex.amqp import codec
from filtex.amqp.encode import decode_body, encode_message
from filtex.files import FORMATS, Record, read_records, write_record
from filtex.message import SECTIONS, Message
from filtex.typed_json import message_to_json


def frame_to_message(raw: bytes) -> Message:
    """The whole message of an encoded frame, body included."""
    head = codec.decode_message(raw)
    return Message(**{name: getattr(head, name) for name in SECTIONS}, body=decode_body(raw))


def input_format(record: Record) -> str:
    """The format a record was read in: lines are JSON, frames AMQP."""
    return "jsonl" if record.position.startswith("line ") else "amqp"


def converted(record: Record, to: str) -> bytes:
    """The raw record in format ``to`` (its own bytes when it is in it already)."""
    if input_format(record) == to:
        return record.raw
    if to == "amqp":
        return encode_message(record.message)
    return json.dumps(message_to_json(frame_to_message(record.raw)), ensure_ascii=False,
                      separators=(",", ":")).encode("utf-8")


def convert(source: Any, out: IO[bytes], to: str | None = None,
            errors: IO[str] | None = None) -> tuple[int, int]:
    """Convert every record of ``source`` to ``out`` (in ``to``, by default
    the other format); report each bad record to ``errors`` (stderr).
    Returns (converted, failed)."""
    errors = errors or sys.stderr
    done = failed = 0
    for record in read_records(source):
        if to is None:
            to = "amqp" if input_format(record) == "jsonl" else "jsonl"
        reason = record.error
        if reason is None:
            try:
                write_record(out, converted(record, to), to)
                done += 1
                continue
            except (ValueError, TypeError, codec.DecodeError) as exc:
                reason = str(exc)
        failed += 1
        print(f"{record.position}: {reason}", file=errors)
    return done, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog=f"filtex {filtex.__version__}")
    parser.add_argument("input", help="a message file ('-': stdin)")
    parser.add_argument("-o", "--output", required=True, help="file to write ('-': stdout)")
    parser.add_argument("--to", choices=FORMATS, help="output format (default: the other one)")
    args = parser.parse_args(argv)
    try:
        if args.output == "-":
            done, failed = convert(args.input, sys.stdout.buffer, args.to)
            sys.stdout.buffer.flush()
        else:
            with open(args.output, "wb") as out:
                done, failed = convert(args.input, out, args.to)
    except (OSError, ValueError) as exc:   # unreadable input, or in neither format
        print(f"convert_messages: {exc}", file=sys.stderr)
        return 2
    print(f"{done:,} messages converted, {failed:,} failed", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
