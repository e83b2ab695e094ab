"""filtex.files: reading and writing files of messages.

Records carry their position; a bad record is a record with an error, never an
exception, and reading goes on past a bad line or an empty frame but stops at a
frame it cannot frame (that record alone is ``fatal``). Chunk boundaries never
change what is read.
"""
from __future__ import annotations

import io
import json
import struct
import sys
from pathlib import Path

import pytest
from proton import symbol, ubyte

import filtex
from filtex import files
from filtex.amqp import codec
from filtex.amqp.encode import decode_body, encode_message
from filtex.amqp.encoded import EncodedMessage
from filtex.files import Record, detect_format, read_messages, read_records, write_record
from filtex.message import SECTIONS, Body, Message
from filtex.typed_json import message_to_json

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"

MESSAGES = [
    Message(header={"priority": ubyte(7)}, application_properties={"color": "blue", "n": 1}),
    Message(properties={"subject": "order.created"}, message_annotations={symbol("x-opt-a"): 2},
            body=Body.value({"lines": [1, 2]})),
    Message(application_properties={"color": "red"}, body=Body.data(b"\x00" * 300)),
]


def jsonl(*lines: str) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def line_of(message: Message) -> str:
    return json.dumps(message_to_json(message))


def framed(*payloads: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(p)) + p for p in payloads)


ENCODED = [encode_message(m) for m in MESSAGES]


def whole(raw: bytes) -> Message:
    head = codec.decode_message(raw)
    return Message(**{n: getattr(head, n) for n in SECTIONS}, body=decode_body(raw))


@pytest.fixture(params=[1 << 20, 7, 1], ids=["big-chunks", "7-byte-chunks", "1-byte-chunks"])
def chunk(request, monkeypatch):
    """Every reading test at the real chunk size and at chunks that split
    every line, size prefix and frame."""
    monkeypatch.setattr(files, "CHUNK", request.param)
    return request.param


# --- detection --------------------------------------------------------------------------

def test_detect_format():
    """A first byte 0x00 (a frame size below 16 MiB) is framed AMQP; any other
    first byte is JSON lines; only an empty input has no format."""
    assert detect_format(framed(ENCODED[0])[:16]) == "amqp"
    assert detect_format(b"\x00") == "amqp"
    assert detect_format(b"\x00\x00\x00\x05\x40\x40") == "amqp"
    for head in (b'{"header": {}}', b' \r\n\t{', b"[1, 2]", b"hello world", b"\xef\xbb\xbf{",
                 b"\x01\x00\x00\x00"):
        assert detect_format(head) == "jsonl"
    with pytest.raises(ValueError, match="empty input has no format"):
        detect_format(b"")


def test_a_garbage_first_line_is_an_error_record_and_reading_goes_on(chunk):
    records = list(read_records(io.BytesIO(b"hello, world\n" + jsonl(line_of(MESSAGES[0])))))
    assert [(r.position, r.error is None, r.fatal) for r in records] == [
        ("line 1", False, False), ("line 2", True, False)]
    assert records[0].error.startswith("invalid JSON") and records[1].message == MESSAGES[0]
    with pytest.raises(ValueError, match="format is one of"):
        list(read_records(io.BytesIO(b""), "csv"))


def test_a_utf8_bom_is_skipped_for_json_lines(chunk):
    data = jsonl(line_of(MESSAGES[0]), line_of(MESSAGES[1]))
    for format in (None, "jsonl"):
        records = list(read_records(io.BytesIO(b"\xef\xbb\xbf" + data), format))
        assert [r.message for r in records] == MESSAGES[:2]
        assert records[0].raw == line_of(MESSAGES[0]).encode()   # the BOM is no part of it
    assert list(read_records(io.BytesIO(b"\xef\xbb\xbf"))) == []


@pytest.mark.parametrize("data", [b"", b"\n\n  \n"])
def test_empty_inputs_hold_no_records(data, chunk):
    assert list(read_records(io.BytesIO(data))) == []
    assert list(read_records(io.BytesIO(data), "jsonl")) == []
    assert list(read_records(io.BytesIO(b""), "amqp")) == []


# --- JSON lines -------------------------------------------------------------------------

def test_json_lines_with_blank_lines_and_positions(chunk):
    data = jsonl(line_of(MESSAGES[0]), "", "   ", line_of(MESSAGES[1])) + b"\r\n" + (
        line_of(MESSAGES[2]) + "\r\n").encode() + line_of(MESSAGES[0]).encode()   # no newline
    records = list(read_records(io.BytesIO(data)))
    assert [r.position for r in records] == ["line 1", "line 4", "line 6", "line 7"]
    assert [r.message for r in records] == [MESSAGES[0], MESSAGES[1], MESSAGES[2], MESSAGES[0]]
    assert all(r.error is None and r.fatal is False for r in records)
    assert records[2].raw == line_of(MESSAGES[2]).encode() + b"\r"   # no \n, the \r kept
    assert records[3].raw == line_of(MESSAGES[0]).encode()


def test_crlf_lines_are_copied_byte_for_byte(chunk):
    data = (line_of(MESSAGES[0]) + "\r\n" + line_of(MESSAGES[1]) + "\r\n").encode()
    out = io.BytesIO()
    for record in read_records(io.BytesIO(data)):
        assert record.error is None
        write_record(out, record, "jsonl")
    assert out.getvalue() == data


def test_bad_lines_are_error_records_and_reading_goes_on(chunk):
    data = jsonl(line_of(MESSAGES[0]), '{"header": ', '{"nope": {}}',
                 '{"application-properties": {"a": {"@type": "ubyte", "value": 300}}}',
                 "[" * 100_000, line_of(MESSAGES[1]))
    data += b'{"a": "\xff"}\n' + line_of(MESSAGES[2]).encode() + b"\n"
    records = list(read_records(io.BytesIO(data), "jsonl"))
    assert [r.position for r in records] == [f"line {n}" for n in range(1, 9)]
    assert [r.message for r in records if r.error is None] == MESSAGES
    errors = {r.position: r.error for r in records if r.error is not None}
    assert errors["line 2"].startswith("invalid JSON: Expecting value")
    assert errors["line 3"] == "not a message: bad typed JSON value: unknown message section 'nope'"
    assert "300 is not a ubyte" in errors["line 4"]
    assert errors["line 5"] == "invalid JSON: nested too deeply"
    assert errors["line 7"].startswith("invalid UTF-8")
    assert records[1].raw == b'{"header": ' and records[1].message is None
    assert not any(r.fatal for r in records)


def test_an_over_long_line_is_one_error_and_skipped(chunk):
    data = jsonl(line_of(MESSAGES[0]), '{"application-properties": {"a": "' + "x" * 500 + '"}}',
                 line_of(MESSAGES[1]))
    records = list(read_records(io.BytesIO(data), max_frame=200))
    assert [(r.position, r.error is None) for r in records] == [
        ("line 1", True), ("line 2", False), ("line 3", True)]
    assert records[1].error == "line longer than the maximum of 200 bytes"
    assert len(records[1].raw) <= 64 and records[1].fatal is False


# --- frames -----------------------------------------------------------------------------

def test_frames_with_positions(chunk):
    data = framed(*ENCODED)
    records = list(read_records(io.BytesIO(data)))
    assert [r.position for r in records] == [
        "frame 1 at byte 0", f"frame 2 at byte {4 + len(ENCODED[0])}",
        f"frame 3 at byte {8 + len(ENCODED[0]) + len(ENCODED[1])}"]
    assert [r.raw for r in records] == ENCODED
    assert all(type(r.message) is EncodedMessage and r.error is None and r.fatal is False
               for r in records)
    assert [whole(r.raw) for r in records] == MESSAGES
    flt = filtex.compile_sql("color = 'blue' OR h.priority > 4")
    assert [flt.evaluate(r.message) for r in records] == [True, None, False]


def test_a_truncated_frame_ends_the_input(chunk):
    data = framed(*ENCODED)[:-10]
    records = list(read_records(io.BytesIO(data)))
    assert [r.error is None for r in records] == [True, True, False]
    assert records[2].position == f"frame 3 at byte {8 + len(ENCODED[0]) + len(ENCODED[1])}"
    assert records[2].error == (f"truncated frame: {len(ENCODED[2])} bytes announced, "
                                f"{len(ENCODED[2]) - 10} left; the rest of the input is not read")
    assert records[2].message is None
    assert [r.fatal for r in records] == [False, False, True]


def test_a_truncated_size_ends_the_input(chunk):
    records = list(read_records(io.BytesIO(framed(ENCODED[0]) + b"\x00\x00"), "amqp"))
    assert records[-1].error == ("truncated frame size: 2 of 4 bytes; "
                                 "the rest of the input is not read")
    assert records[-1].position == f"frame 2 at byte {4 + len(ENCODED[0])}"
    assert [r.fatal for r in records] == [False, True]


def test_an_oversized_frame_ends_the_input(chunk):
    data = framed(ENCODED[0], ENCODED[2], ENCODED[0])
    records = list(read_records(io.BytesIO(data), max_frame=len(ENCODED[0])))
    assert [r.error is None for r in records] == [True, False]
    assert records[1].error == (f"frame size {len(ENCODED[2])} is larger than the maximum "
                                f"of {len(ENCODED[0])} bytes; the rest of the input is not read")
    assert [r.fatal for r in records] == [False, True]
    # a huge size is refused at once, without waiting for its bytes
    records = list(read_records(io.BytesIO(b"\xff\xff\xff\xff\x00S" + b"x" * 10), "amqp"))
    assert records[0].error.startswith("frame size 4294967295 is larger than the maximum")
    assert records[0].fatal is True


def test_a_frame_that_is_no_message_is_an_error_and_reading_goes_on(chunk):
    data = framed(ENCODED[0], b"\x00\x53\x70\xff", b"", ENCODED[1])
    records = list(read_records(io.BytesIO(data), "amqp"))
    assert [r.error is None for r in records] == [True, False, False, True]
    assert records[1].error.startswith("malformed message:") and records[1].message is None
    assert records[2].raw == b"" and records[2].message is None
    assert records[2].error.startswith("empty frame")   # not an empty message that matches
    assert not any(r.fatal for r in records)


def test_zero_padding_after_the_frames_is_error_records_not_messages(chunk):
    records = list(read_records(io.BytesIO(framed(ENCODED[0]) + b"\x00" * 12)))
    assert [(r.error is None, r.fatal) for r in records] == [(True, False)] + [(False, False)] * 3
    assert all(r.error.startswith("empty frame") for r in records[1:])
    flt = filtex.compile_sql("NOT (color = 'x')")
    assert [flt.evaluate(r.message) for r in records if r.message is not None] == [True]


# --- sources ----------------------------------------------------------------------------

class Pipe(io.RawIOBase):
    """A stream that hands over at most three bytes a read, and has no read1."""

    def __init__(self, data: bytes) -> None:
        self.data, self.pos = data, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        piece = self.data[self.pos:self.pos + min(len(buffer), 3)]
        buffer[:len(piece)] = piece
        self.pos += len(piece)
        return len(piece)


@pytest.mark.parametrize("data", [framed(*ENCODED), jsonl(*map(line_of, MESSAGES))],
                         ids=["amqp", "jsonl"])
def test_sources_paths_pipes_and_stdin(data, tmp_path, monkeypatch):
    path = tmp_path / "messages"
    path.write_bytes(data)
    want = [r.raw for r in read_records(io.BytesIO(data))]
    assert len(want) == 3
    assert [r.raw for r in read_records(path)] == want
    assert [r.raw for r in read_records(str(path))] == want
    assert [r.raw for r in read_records(Pipe(data))] == want
    with open(path, "rb", buffering=0) as raw_file:
        assert [r.raw for r in read_records(raw_file)] == want
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(Pipe(data))))
    assert [r.raw for r in read_records("-")] == want


def test_closed_stdin_is_a_clear_error(monkeypatch):
    monkeypatch.setattr(sys, "stdin", None)   # what Python sets under `<&-`
    with pytest.raises(OSError, match="stdin is closed"):
        next(read_records("-"))
    with pytest.raises(OSError, match="stdin is closed"):
        next(read_messages("-"))


def test_text_streams_and_other_sources_are_type_errors(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text(line_of(MESSAGES[0]))
    with open(path, encoding="utf-8") as text, pytest.raises(TypeError, match="binary"):
        list(read_records(text))
    with pytest.raises(TypeError, match="a path, '-' or a binary file"):
        list(read_records(42))


def test_a_file_object_is_left_open(tmp_path):
    path = tmp_path / "m.amqp"
    path.write_bytes(framed(*ENCODED))
    with open(path, "rb") as stream:
        assert len(list(read_records(stream))) == 3
        assert not stream.closed


# --- writing ----------------------------------------------------------------------------

@pytest.mark.parametrize("data", [framed(*ENCODED), jsonl(*map(line_of, MESSAGES))],
                         ids=["amqp", "jsonl"])
def test_write_record_round_trip(data):
    format = detect_format(data)
    out = io.BytesIO()
    for record in read_records(io.BytesIO(data)):
        write_record(out, record, format)
    assert out.getvalue() == data
    out = io.BytesIO()
    for record in read_records(io.BytesIO(data)):
        write_record(out, record.raw, format)
    assert out.getvalue() == data


def test_write_record_refuses_what_it_cannot_write():
    with pytest.raises(ValueError, match="newline"):
        write_record(io.BytesIO(), b'{"a":\n1}', "jsonl")
    with pytest.raises(ValueError, match="format is one of"):
        write_record(io.BytesIO(), b"x", "csv")


# --- read_messages ----------------------------------------------------------------------

def test_read_messages(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_bytes(jsonl(*map(line_of, MESSAGES)))
    assert list(filtex.read_messages(path)) == MESSAGES
    assert [whole(m.buffer) for m in read_messages(io.BytesIO(framed(*ENCODED)))] == MESSAGES


def test_read_messages_raises_at_the_first_bad_record_naming_it(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(jsonl(line_of(MESSAGES[0]), "", "{oops", line_of(MESSAGES[1])))
    messages = read_messages(path)
    assert next(messages) == MESSAGES[0]
    with pytest.raises(ValueError, match=r"bad\.jsonl, line 3: invalid JSON"):
        next(messages)
    with pytest.raises(ValueError, match=r"^frame 2 at byte \d+: truncated frame"):
        list(read_messages(io.BytesIO(framed(*ENCODED)[:len(ENCODED[0]) + 10])))


# --- the examples -----------------------------------------------------------------------

README_FILTERS = {
    "orders": ["region = 'EU' AND total > 100", "express AND h.priority >= 8",
               "p.subject LIKE 'order.%ed' AND currency = 'USD'",
               "m.[x-opt-partition] < 4 AND item_count >= 3"],
    "telemetry": ["sensor = 'temperature' AND reading > 25", "alarm",
                  "region = 'EU' AND (battery < 0.3 OR rssi < -85)",
                  "p.group_id LIKE 'dev-nyc%'"]}


@pytest.mark.parametrize("kind", sorted(README_FILTERS))
def test_examples_hold_the_same_50_messages_in_both_formats(kind):
    from_json = list(read_messages(EXAMPLES / f"{kind}.jsonl"))
    framed_messages = list(read_messages(EXAMPLES / f"{kind}.amqp"))
    assert len(from_json) == len(framed_messages) == 50
    assert [whole(m.buffer) for m in framed_messages] == from_json
    assert all(9 <= len(m.application_properties) <= 15 or kind == "telemetry"
               and 8 <= len(m.application_properties) <= 15 for m in from_json)


@pytest.mark.parametrize("kind", sorted(README_FILTERS))
def test_example_filters_select_some(kind):
    readme = (EXAMPLES / "README.md").read_text()
    messages = list(read_messages(EXAMPLES / f"{kind}.amqp"))
    for text in README_FILTERS[kind]:
        count = sum(filtex.compile_sql(text).matches(m) for m in messages)
        assert 0 < count < len(messages), text
        assert f"`{text}` ({count})" in readme, text


def test_records_are_named_tuples():
    record = Record("line 1", b"{}", Message(), None, False)
    position, raw, message, error, fatal = record
    assert (position, raw, error, fatal) == ("line 1", b"{}", None, False)
    assert record.message == Message()


@pytest.mark.parametrize("kind", sorted(README_FILTERS))
def test_convert_tool_turns_each_example_into_the_other(kind, tmp_path):
    import subprocess
    tool = REPO / "tools" / "convert_messages.py"
    for source, target in (("jsonl", "amqp"), ("amqp", "jsonl")):
        out = tmp_path / f"{kind}.{target}"
        subprocess.run([sys.executable, str(tool), str(EXAMPLES / f"{kind}.{source}"),
                        "-o", str(out)], check=True, capture_output=True)
        assert out.read_bytes() == (EXAMPLES / f"{kind}.{target}").read_bytes()
