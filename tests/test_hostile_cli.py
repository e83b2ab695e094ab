"""The command line on hostile files of every format it reads.

A stranger writes the files ``filtex match`` and ``filtex why`` read: JSON
lines, size-prefixed AMQP frames, Parquet and Arrow IPC. Whatever they hold,
the command ends with exit 0, 1 or 2, one line per problem and no traceback;
every record is counted (read, or reported unreadable); the messages it writes
are exactly those the library selects from the same records. Each file runs in
a child process, so a crash is a failure of this test, not of the test run.
"""
from __future__ import annotations

import json
import os
import random
import struct
import subprocess
import sys
from pathlib import Path

import pytest
import proton
from proton import symbol

import filtex
from filtex.files import read_records

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]

FULL = bytes(proton.Message(
    id="id-1", user_id=b"u", address="to", subject="a.b", reply_to="r", correlation_id=7,
    content_type="text/plain", creation_time=5.0, durable=True, priority=7, ttl=1.5,
    properties={"a": "x", "b": 1, "c": [1, "y"]},
    annotations={symbol("k"): 2, symbol("x-opt-partition"): 3}, body={"k": 1}).encode())
FILTERS = ["a = 'x'", "b > 0 OR p.subject LIKE 'a%'", "h.priority > 4 AND m.k = 2",
           "p.to = 'to'", "amqp_value.k = 1"]


def _frames(messages: list[bytes]) -> bytes:
    return b"".join(struct.pack(">I", len(m)) + m for m in messages)


def _mutated(rng: random.Random, count: int) -> list[bytes]:
    out = []
    for _ in range(count):
        raw = bytearray(FULL)
        for _ in range(rng.randrange(1, 4)):
            raw[rng.randrange(len(raw))] = rng.choice([0x2d, 0x40, 0xa1, 0xff, 0x00, 0x45])
        out.append(bytes(raw))
    return out


def _message_files(tmp_path: Path) -> dict[str, bytes]:
    rng = random.Random(23)
    good = json.dumps({"application-properties": {"a": "x", "b": 2}}).encode()
    lines = {
        "bad-json": b"{\n[1]\n" + good + b"\n\"x\"\nnull\n{\"header\": 5}\n",
        "deep-json": b"[" * 100_000 + b"\n" + good + b"\n",
        "bad-utf8": b'{"application-properties": {"a": "\xff"}}\n' + good + b"\n",
        "bom-crlf": b"\xef\xbb\xbf" + good + b"\r\n" + good + b"\r\n",
        "typed-json-lies": json.dumps({"application-properties": {
            "a": {"@type": "ubyte", "value": 999}, "b": {"@type": "nope"}}}).encode() + b"\n"
            + good + b"\n",
        "long-line": b'{"application-properties": {"a": "' + b"x" * 3_000_000 + b'"}}\n' + good,
    }
    frames = {
        "mutated-frames": _frames(_mutated(rng, 300)),
        "random-frames": _frames([rng.randbytes(rng.randrange(1, 60)) for _ in range(200)]),
        "zero-frame": _frames([FULL, b"", FULL]),
        "truncated-frame": _frames([FULL, FULL])[:-7],
        "size-lies": _frames([FULL]) + struct.pack(">I", 2**31) + FULL,
    }
    files = {}
    for name, data in {**lines, **{n: b"\x00" + d[1:] if d[:1] != b"\x00" else d
                                   for n, d in frames.items()}}.items():
        files[name] = data
    return files


def _run(*argv: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "filtex", *argv], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode in (0, 1, 2), (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr, done.stderr[-3000:]


def test_message_files_of_strangers(tmp_path):
    for name, data in _message_files(tmp_path).items():
        path = tmp_path / name
        path.write_bytes(data)
        records = list(read_records(path))
        filters = [f"--filter=f{n}={text}" for n, text in enumerate(FILTERS)]
        done = _run("match", "--count", "--json", *filters, str(path), cwd=tmp_path)
        _clean(done)
        counts = json.loads(done.stdout)
        assert counts["messages"] + counts["unreadable"] == len(records), name
        for n, text in enumerate(FILTERS):
            flt = filtex.compile_sql(text)
            verdicts = [flt.evaluate(r.message) for r in records if r.message is not None]
            sub = counts["subscriptions"][f"f{n}"]
            assert (sub["matched"], sub["not_matched"], sub["unknown"]) == (
                verdicts.count(True), verdicts.count(False), verdicts.count(None)), (name, text)
        # what it writes is what the library selects, byte for byte
        done = _run("match", FILTERS[1], str(path), "-o", "out", cwd=tmp_path)
        _clean(done)
        flt = filtex.compile_sql(FILTERS[1])
        want = [r.raw for r in records if r.message is not None and flt.evaluate(r.message)]
        assert [r.raw for r in read_records(tmp_path / "out")] == want if want else \
            not (tmp_path / "out").exists() or not (tmp_path / "out").read_bytes(), name
        done = _run("why", "--first", "unknown", FILTERS[0], str(path), cwd=tmp_path)
        _clean(done)


def test_tables_of_strangers(tmp_path):
    """Arrow IPC and Parquet message tables whose cells lie: tags out of range,
    null children under their tag, undecodable composites, negative and huge
    dictionary codes, invalid UTF-8 in a dictionary, several record batches."""
    pa = pytest.importorskip("pyarrow")
    pytest.importorskip("numba")
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq

    import filtex.arrow as fa
    messages = [filtex.Message(application_properties={
        "x": [1, 2] if i % 5 == 1 else i, "s": ["EU", "US", "é"][i % 3]}) for i in range(40)]
    table = fa.message_table(messages)
    props = table.column("application_properties").combine_chunks()
    x, s = props.field("x"), props.field("s")
    n = len(x)

    def with_props(xs, ss):
        struct = pa.StructArray.from_arrays([xs, ss], names=["x", "s"])
        return pa.Table.from_arrays([struct if c == "application_properties" else table.column(c)
                                     for c in table.schema.names], schema=table.schema)

    tags = x.field("t").to_pylist()
    codes = s.field("s").indices.to_numpy().copy()
    variants = {}
    bad_tags = [t if i % 7 else [100, -3, 25, 0][i % 4] for i, t in enumerate(tags)]
    variants["tags"] = with_props(pa.StructArray.from_arrays(
        [pa.array(bad_tags, pa.int8()), x.field("i"), x.field("e")], names=["t", "i", "e"]), s)
    nulled = x.field("i").to_pylist()
    nulled[2] = None   # a long tag whose child is null
    variants["null-child"] = with_props(pa.StructArray.from_arrays(
        [x.field("t"), pa.array(nulled, pa.int64()), x.field("e")], names=["t", "i", "e"]), s)
    encoded = x.field("e").to_pylist()
    encoded[1] = b"\xff\xff"
    variants["composite"] = with_props(pa.StructArray.from_arrays(
        [x.field("t"), x.field("i"), pa.array(encoded, pa.binary())], names=["t", "i", "e"]), s)
    for label, bad in (("negative-code", -1), ("huge-negative-code", -2**31),
                       ("huge-code", 2**31 - 1)):
        lying = codes.copy()
        lying[5] = bad
        dictionary = pa.DictionaryArray.from_buffers(
            s.field("s").type, n, [None, pa.py_buffer(lying.astype("int32").tobytes())],
            dictionary=s.field("s").dictionary) if hasattr(pa.DictionaryArray, "from_buffers") \
            else pa.Array.from_buffers(s.field("s").type, n,
                                       [None, pa.py_buffer(lying.astype("int32").tobytes())],
                                       dictionary=s.field("s").dictionary)
        variants[label] = with_props(x, pa.StructArray.from_arrays([s.field("t"), dictionary],
                                                                  names=["t", "s"]))
    raw_dictionary = pa.Array.from_buffers(pa.string(), 3, s.field("s").dictionary.buffers()[:2]
                                           + [pa.py_buffer(b"EUUS\xff\xfe")])
    bad_utf8 = pa.DictionaryArray.from_arrays(s.field("s").indices, raw_dictionary)
    variants["bad-utf8"] = with_props(x, pa.StructArray.from_arrays([s.field("t"), bad_utf8],
                                                                    names=["t", "s"]))
    for label, hostile in variants.items():
        for fmt in ("ipc", "parquet"):
            path = tmp_path / f"{label}.{fmt}"
            if fmt == "parquet":   # Parquet holds values, not indices: only a valid table
                try:
                    hostile.validate(full=True)
                except (pa.ArrowException, ValueError):
                    continue   # (pyarrow's writer crashes on an invalid one)
                pq.write_table(hostile, path, row_group_size=8)
            else:   # IPC writes the buffers as they are: what a stranger can send
                with ipc.new_file(path, hostile.schema) as writer:
                    for batch in hostile.to_batches(max_chunksize=8):
                        writer.write_batch(batch)
            done = _run("match", "--count", "--json", "x > 3 AND s = 'EU'", str(path),
                        cwd=tmp_path)
            _clean(done)
            counts = json.loads(done.stdout)
            assert counts["messages"] + counts["unreadable"] == 40 or done.returncode == 2, (
                label, fmt, done.stdout, done.stderr[-1000:])
            done = _run("match", "x > 3 OR s = 'US'", str(path), "-o", f"out-{label}.{fmt}",
                        cwd=tmp_path)
            _clean(done)
