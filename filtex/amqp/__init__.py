"""AMQP 1.0 on the wire for filtex: values and messages straight from bytes
(``codec``: exact, bounded and total), messages read in place (``encoded``),
and the encoder of a ``filtex.Message`` (``encode``).
"""
from __future__ import annotations

from .codec import DecodeError, decode_message, decode_value, locate_sections
from .encode import encode_message
from .encoded import EncodedMessage

__all__ = ["DecodeError", "EncodedMessage", "decode_message", "decode_value", "encode_message",
           "locate_sections"]
