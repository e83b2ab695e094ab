"""AMQP 1.0 wire decoding for filtex: values and messages straight from bytes.

See ``codec`` for why it is exact, bounded and total.
"""
from __future__ import annotations

from .codec import DecodeError, decode_message, decode_value, locate_sections

__all__ = ["DecodeError", "decode_message", "decode_value", "locate_sections"]
