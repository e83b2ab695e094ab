"""AMQP 1.0 frames written byte by byte, for clients and brokers no library
would be: a filter set of any bytes, a name that is not UTF-8, a peer that
grants credit and never reads. Frames are read back with filtex's own
decoder. Only loopback addresses are used.
"""
from __future__ import annotations

import socket
import struct
import time
from typing import Any

from proton import Described

from filtex.amqp.codec import DecodeError, decode_value

UNREADABLE = "(unreadable)"

HEADER = b"AMQP\x00\x01\x00\x00"
OPEN, BEGIN, ATTACH, FLOW, TRANSFER, DISPOSITION, DETACH, END, CLOSE = range(0x10, 0x19)


# --- encoding ---------------------------------------------------------------------------

def null() -> bytes:
    return b"\x40"


def boolean(value: bool) -> bytes:
    return b"\x41" if value else b"\x42"


def uint(value: int) -> bytes:
    return b"\x70" + struct.pack(">I", value)


def ulong(value: int) -> bytes:
    return b"\x80" + struct.pack(">Q", value)


def ubyte(value: int) -> bytes:
    return b"\x50" + bytes([value])


def string(value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return b"\xb1" + struct.pack(">I", len(raw)) + raw


def sym(value: bytes | str) -> bytes:
    raw = value.encode() if isinstance(value, str) else value
    return b"\xb3" + struct.pack(">I", len(raw)) + raw


def items(*encoded: bytes) -> bytes:
    """A list32 of already encoded items."""
    body = b"".join(encoded)
    return b"\xd0" + struct.pack(">II", len(body) + 4, len(encoded)) + body


def map32(*pairs: bytes) -> bytes:
    """A map32 of already encoded keys and values, alternating."""
    body = b"".join(pairs)
    return b"\xd1" + struct.pack(">II", len(body) + 4, len(pairs)) + body


def described(code: int, value: bytes) -> bytes:
    return b"\x00" + ulong(code) + value


def frame(body: bytes, channel: int = 0) -> bytes:
    return struct.pack(">IBBH", len(body) + 8, 2, 0, channel) + body


def performative(code: int, *fields: bytes, channel: int = 0, payload: bytes = b"") -> bytes:
    return frame(described(code, items(*fields)) + payload, channel)


def open_frame(max_frame: int = 65536, idle: int | None = None) -> bytes:
    return performative(OPEN, string("raw-client"), null(), uint(max_frame), null(),
                        uint(idle) if idle is not None else null())


def begin_frame() -> bytes:
    return performative(BEGIN, null(), uint(0), uint(1 << 20), uint(1 << 20))


def source(address: bytes | str = "s", filter_set: bytes | None = None) -> bytes:
    """A source terminus; ``filter_set`` is spliced in as encoded."""
    return described(0x28, items(string(address), null(), null(), null(), null(), null(),
                                 null(), filter_set if filter_set is not None else null()))


def target(address: bytes | str = "") -> bytes:
    return described(0x29, items(string(address)))


def attach_receiver(name: bytes | str, handle: int, address: bytes | str = "s",
                    filter_set: bytes | None = None) -> bytes:
    """The attach of a receiving link (role true), the peer being its source."""
    return performative(ATTACH, string(name), uint(handle), boolean(True), null(), null(),
                        source(address, filter_set), target())


def attach_sender(name: bytes | str, handle: int, address: bytes | str) -> bytes:
    return performative(ATTACH, string(name), uint(handle), boolean(False), null(), null(),
                        described(0x28, items(null())), target(address))


def begin_reply() -> bytes:
    """A broker's begin answering channel 0."""
    return performative(BEGIN, b"\x60\x00\x00", uint(0), uint(1 << 20), uint(1 << 20))


def attach_sender_reply(name: str, filter_set: bytes) -> bytes:
    """A broker's attach answering a receiver: it is the source, echoing ``filter_set``."""
    return performative(ATTACH, string(name), uint(0), boolean(False), null(), null(),
                        source("s", filter_set), target(), null(), null(), uint(0))


def flow_frame(handle: int, credit: int) -> bytes:
    return performative(FLOW, uint(0), uint(1 << 20), uint(0), uint(1 << 20), uint(handle),
                        uint(0), uint(credit))


def detach_frame(handle: int, closed: bool = True) -> bytes:
    return performative(DETACH, uint(handle), boolean(closed))


def end_frame() -> bytes:
    return performative(END)


def transfer_frame(handle: int, delivery_id: int, tag: bytes, payload: bytes,
                   more: bool = False) -> bytes:
    """An unsettled transfer of a message (``more``: a part, more to come)."""
    return performative(TRANSFER, uint(handle), uint(delivery_id),
                        b"\xa0" + bytes([len(tag)]) + tag, uint(0), boolean(False),
                        boolean(more), payload=payload)


def sql_set(text: bytes | str, key: bytes | str = "f") -> bytes:
    return map32(sym(key), described(0x120, string(text)))


# --- reading ----------------------------------------------------------------------------

class RawClient:
    """A blocking socket client that speaks AMQP without SASL."""

    def __init__(self, address: str | None, timeout: float = 30.0,
                 sock: socket.socket | None = None) -> None:
        if sock is None:
            assert address is not None
            host, port = address.rsplit(":", 1)
            sock = socket.create_connection((host, int(port)), timeout=timeout)
        sock.settimeout(timeout)
        self.sock = sock
        self.buffer = b""

    def send(self, *frames: bytes) -> None:
        self.sock.sendall(b"".join(frames))

    def start(self, max_frame: int = 65536) -> None:
        """Header, open and begin, and the peer's header, open and begin read."""
        self.send(HEADER, open_frame(max_frame), begin_frame())
        assert self._exactly(8) == HEADER
        self.until(OPEN)
        self.until(BEGIN)

    def _exactly(self, count: int) -> bytes:
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the peer closed the connection")
            self.buffer += chunk
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def read(self) -> tuple[int, list[Any], bytes]:
        """The next frame: (performative code, fields, payload); heartbeats skipped."""
        while True:
            size, doff, _, _ = struct.unpack(">IBBH", self._exactly(8))
            body = self._exactly(size - 8)[doff * 4 - 8:]
            if not body:
                continue
            try:
                value, end = decode_value(body)
            except DecodeError:   # the peer echoed bytes it was sent (a name not UTF-8)
                return body[2], [UNREADABLE], b""
            assert type(value) is Described
            return int(value.descriptor), list(value.value), body[end:]

    def until(self, code: int, deadline: float = 30.0) -> list[Any]:
        """The fields of the next frame of kind ``code`` (earlier frames skipped)."""
        stop = time.monotonic() + deadline
        while time.monotonic() < stop:
            got, fields, _ = self.read()
            if got == code:
                return fields
            if got == CLOSE and code != CLOSE:
                raise ConnectionError(f"the peer closed the connection: {fields}")
        raise TimeoutError(f"no frame 0x{code:02x}")

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def condition_name(fields: list[Any], at: int) -> str | None:
    """The condition of a frame's error field (detach: field 2; close: field 0)."""
    error = fields[at] if len(fields) > at else None
    return str(error.value[0]) if type(error) is Described else None
