"""RabbitMQ's stream Bloom filter as ``filtex serve`` builds it (``endpoint/bloom.py``):
Erlang's ``phash2`` against values recorded from Erlang/OTP 25, and osiris's
reading of a chunk's filter."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from filtex.endpoint.bloom import (DEFAULT_SIZE, Matcher, chunk_filter, phash2, value_bits,
                                   writer_batches)

VECTORS = json.loads((Path(__file__).parent / "phash2_vectors.json").read_text())


def test_phash2_is_erlangs_on_recorded_vectors():
    """334 binaries of 0 to 300 bytes, at 11 ranges, and one-element lists of
    them: ``erlang:phash2(B, R)`` and ``erlang:phash2([B], R)``."""
    assert len(VECTORS) > 300
    for vector in VECTORS:
        data = bytes.fromhex(vector["bin_hex"])
        assert phash2(data, vector["range"]) == vector["phash2"], vector
        assert phash2([data], vector["range"]) == vector["phash2_list"], vector


def test_phash2_of_otps_own_pinned_values():
    """erts/emulator/test/hash_SUITE.erl, phash2_test."""
    assert phash2(b"") == 147926629
    assert phash2(b"abc") == 1306188027
    assert phash2(b"12345678901234567890") == 3021061640
    assert phash2([b""]) == 440873397
    with pytest.raises(ValueError):
        phash2(b"x", 0)


def test_a_value_sets_two_bits_above_bit_zero():
    for value in (b"", b"v1", b"apple", bytes(range(200))):
        bits = value_bits(value)
        assert bits & 1 == 0 and 1 <= bin(bits).count("1") <= 2
        assert bits < 1 << (8 * DEFAULT_SIZE)
    assert value_bits(b"v1", 255) < 1 << (8 * 255)


def test_a_chunks_filter_and_its_readers():
    """An empty filter (no value in the chunk) lets through only readers asking
    for match-unfiltered; bit 0 marks messages without a value; a reader passes
    a chunk holding one of its values, whatever else the chunk holds."""
    assert chunk_filter([None, None]) is None
    mixed = chunk_filter([b"emea", None, b"amer"])
    assert mixed is not None and mixed & 1
    emea, apac = Matcher(["emea"], False), Matcher(["apac"], False)
    assert emea.passes(mixed) and not Matcher(["emea"], False).passes(None)
    assert Matcher(["emea"], True).passes(None)
    assert Matcher(["apac"], True).passes(mixed)   # the chunk has unfiltered messages
    collides = apac.masks[0] & ~(value_bits(b"emea") | value_bits(b"amer")) == 0
    assert apac.passes(mixed) is collides


def test_writer_batches():
    assert writer_batches(0) == []
    assert writer_batches(100) == [0, 32, 96]
    assert writer_batches(20_000)[:5] == [0, 32, 96, 224, 480]
    starts = writer_batches(50_000)
    assert max(b - a for a, b in zip(starts, starts[1:])) == 8192
    assert writer_batches(10, 3) == [0, 3, 6, 9]
