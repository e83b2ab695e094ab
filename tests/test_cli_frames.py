"""``filtex match --engine batch`` over framed files (``cli/frames.py``) against
``--engine messages``, on the same files: the same exit status, the
same counts and unknown reasons, the same unreadable records reported at the
same positions, and the same output files byte for byte. The inputs are the
hostile message generator's (mutated encodings, malformed sections, values of
every type), with empty frames, a frame too large and a file cut inside a
frame. Each run is a child process: a kernel reading past a buffer would be a
crash of that process, reported here, not of the test run.
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

pytest.importorskip("numba")
pytest.importorskip("pyarrow")

from hostile_messages import SQL, messages  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RUN = "import sys; from filtex.cli import main; sys.exit(main(sys.argv[1:]))"
NAMED = {f"s{i}": text for i, text in enumerate(SQL[::3])}


def _frames(raws: list[bytes]) -> bytes:
    return b"".join(struct.pack(">I", len(raw)) + raw for raw in raws)


def _run(engine: str, argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-c", RUN, "match", "--engine", engine, *argv], cwd=cwd,
                          capture_output=True, text=True, timeout=600,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin",
                               **{k: os.environ[k] for k in ("FILTEX_KERNEL_CACHE",
                                                             "FILTEX_COMPILE")
                                  if k in os.environ}})
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2), (done.returncode, done.stderr)
    return done


def _report(stderr: str) -> list[str]:
    """The report without its timings."""
    return [line for line in stderr.splitlines() if "msgs/s" not in line]


def _both(tmp_path: Path, data: bytes, extra: list[str]) -> None:
    """The file through both paths, everything compared."""
    (tmp_path / "in.amqp").write_bytes(data)
    results = {}
    for path, threshold in (("rows", "messages"), ("columns", "batch")):
        out = tmp_path / path
        out.mkdir(exist_ok=True)
        filters = [a for name, text in NAMED.items() for a in ("--filter", f"{name}={text}")]
        written = _run(threshold, [*filters, *extra, "-o", f"{path}/{{name}}.amqp", "in.amqp"],
                       tmp_path)
        counted = _run(threshold, [*filters, *extra, "--count", "--json", "in.amqp"], tmp_path)
        counts = json.loads(counted.stdout)
        counts.pop("seconds")
        results[path] = (written.returncode, _report(written.stderr), counted.returncode,
                         counts, {name: (out / f"{name}.amqp").read_bytes() for name in NAMED})
    assert results["columns"] == results["rows"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 17])
def test_hostile_frames_give_the_per_message_paths_results(tmp_path, seed):
    raws = messages(250, seed)
    rng = random.Random(seed)
    for _ in range(5):   # empty frames among them
        raws.insert(rng.randrange(len(raws)), b"")
    _both(tmp_path, _frames(raws), [])


@pytest.mark.slow
def test_invert_and_the_ends_of_a_file(tmp_path):
    raws = messages(120, 5)
    data = _frames(raws)
    _both(tmp_path, data[:-9], ["--invert"])   # cut inside the last frame
    _both(tmp_path, data[:-2] if len(raws[-1]) > 2 else data, [])
    too_large = _frames(raws[:40]) + struct.pack(">I", (64 << 20) + 1) + b"x" * 16
    _both(tmp_path, too_large, [])


@pytest.mark.slow
def test_a_quiet_run_answers_as_the_per_message_path(tmp_path):
    (tmp_path / "in.amqp").write_bytes(_frames(messages(60, 9)))
    for text in ("TRUE", "FALSE", "a = 1"):
        codes = {_run(threshold, ["-q", text, "in.amqp"], tmp_path).returncode
                 for threshold in ("messages", "batch")}
        assert len(codes) == 1, text


def test_large_frames_and_small_chunks(tmp_path, monkeypatch):
    """Frames larger than a chunk, and chunks cutting frames anywhere: the
    chunk reader (``table/frames.py``) gives every frame once, in order, mapped
    or read from a stream."""
    import io

    import filtex.table.frames as reader
    raws = [bytes([i % 251]) * ((i * 7919) % 5000) for i in range(300)] + [b"y" * 70_000]
    data = _frames(raws)
    path = tmp_path / "in.amqp"
    path.write_bytes(data)
    for chunk in (64, 1000, 4096, 1 << 20):
        for source in ("map", "stream"):
            got: list[bytes] = []
            stream = path.open("rb") if source == "map" else io.BytesIO(data)
            with stream:
                for part in reader.read_frames(stream, chunk_bytes=chunk):
                    assert isinstance(part, reader.Frames), part
                    got += [part.payload(r) for r in range(len(part.cells))]
                    assert part.cells.to_pylist() == [
                        struct.pack(">I", len(p)) + p for p in got[-len(part.cells):]]
            assert got == raws, (chunk, source)


def test_the_frame_finder_answers_alike_compiled_and_while_it_compiles():
    """``_bounds`` (compiled) and ``_bounds_here`` (Python, what reading uses while
    ``_bounds`` compiles in the background) find the same frames, stop at the
    same byte and report a frame too large alike, on random cuts of frames of
    every size, empty ones included."""
    import numpy as np

    import filtex.table.frames as reader
    rng = random.Random(38)
    raws = [bytes(rng.randrange(256) for _ in range(rng.choice((0, 1, 3, 4, 200, 5000))))
            for _ in range(120)]
    data = _frames(raws) + struct.pack(">I", 1 << 30) + b"rest"
    cases = [(0, len(data), max_frame) for max_frame in (0, 4, 300, 1 << 20, 1 << 31)]
    cases += [(lo, rng.randrange(lo, len(data) + 1), rng.choice((200, 1 << 20)))
              for lo in (rng.randrange(len(data)) for _ in range(300))]
    for lo, hi, max_frame in cases:
        window = np.frombuffer(data[lo:hi], np.uint8)
        outs = [np.full(len(window) // 4 + 2, -1, np.int64) for _ in range(2)]
        found = [tuple(int(x) for x in finder(window, max_frame, out))
                 for finder, out in zip((reader._bounds, reader._bounds_here), outs)]
        assert found[0] == found[1], (lo, hi, max_frame)
        count = found[0][0]
        assert outs[0][:count + 1].tolist() == outs[1][:count + 1].tolist(), (lo, hi)


def test_reading_frames_never_waits_for_the_frame_finder(tmp_path, monkeypatch):
    """Under background compiling (the default outside the tests) a frame finder
    not compiled yet is ``NotReady``: the chunk's frames are found in Python,
    the same frames."""
    import filtex.table.frames as reader
    from filtex.codegen import tiers

    def compiling(*args):
        raise tiers.NotReady("compiling")
    raws = [bytes([i % 251]) * ((i * 7919) % 3000) for i in range(200)]
    path = tmp_path / "in.amqp"
    path.write_bytes(_frames(raws))
    found = []
    for bounds in (reader._bounds, compiling):
        monkeypatch.setattr(reader, "_bounds", bounds)
        with path.open("rb") as stream:
            found.append([part.payload(r) for part in reader.read_frames(stream, chunk_bytes=4096)
                          for r in range(len(part.cells))])
    assert found[0] == found[1] == raws


@pytest.mark.parametrize("engine, size, expected", [
    ("auto", 1000, False), ("auto", 2 << 20, True), ("messages", 3 << 20, False),
    ("batch", 1000, True)])
def test_which_path_a_framed_file_takes(tmp_path, monkeypatch, capsys, engine, size, expected):
    """``auto``: the batch engine for files of 1 MiB or more (until its kernels
    are compiled it answers per message: ``test_tiers.py``); ``messages`` and
    ``batch`` as named."""
    import filtex.cli.frames as frames
    from filtex.cli import main
    raws = messages(40, 2)
    one = _frames(raws)
    (tmp_path / "in.amqp").write_bytes((one * (1 + size // len(one)))[:size] if size > len(one)
                                       else one)
    taken = []
    monkeypatch.setattr(frames, "read", lambda *a: taken.append(True))
    monkeypatch.chdir(tmp_path)
    main(["match", "--engine", engine, "--count", "a = 1", "in.amqp"])
    capsys.readouterr()
    assert bool(taken) is expected
