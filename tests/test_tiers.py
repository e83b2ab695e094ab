"""Tiered execution: no caller waits for a kernel to compile.

With an empty kernel cache and the default mode (``FILTEX_COMPILE`` unset:
background), the batch engine answers rows with the per-message engine while
the background compiler (a real child process) compiles, and switches to the
kernels in the middle of an input once they are in the cache; every verdict is
the per-message engine's whichever engine gave it. The switch is made
deterministic by waiting, inside the per-message tier, until the compiler has
finished what it was asked (an event, not a time). The suite itself runs in
``wait`` mode (``conftest.py``), so every other kernel test tests kernels.
"""
from __future__ import annotations

import json
import random
import struct
import time

import pytest

pytest.importorskip("numba")
pa = pytest.importorskip("pyarrow")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.amqp.encode import encode_message  # noqa: E402
from filtex.codegen import bundle, jit, modules, tiers  # noqa: E402

FILTERS = ["a > 3 AND b = 'x'", "a BETWEEN 2 AND 7 OR NOT (b LIKE 'y%')",
           "b IN ('x', 'z') AND a IS NOT NULL"]


def _messages(n: int, seed: int) -> list[filtex.Message]:
    rng = random.Random(seed)
    values = [None, 1, 4, 9, 2.5, "7", True]
    out = []
    for _ in range(n):
        props = {}
        if rng.random() < 0.9:
            props["a"] = rng.choice(values)
        if rng.random() < 0.9:
            props["b"] = rng.choice(["x", "y1", "z", "", 3])
        out.append(filtex.Message(application_properties=props))
    return out


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """An empty kernel cache, the default (background) mode, nothing in memory;
    the background compiler stopped afterwards."""
    monkeypatch.setattr(jit, "_directory", tmp_path / "kernels")
    monkeypatch.delenv("FILTEX_COMPILE", raising=False)
    modules.clear()
    yield tmp_path / "kernels"
    tiers.stop()
    modules.clear()


def _settled(limit: float = 600.0) -> None:
    """Until the background compiler has finished everything asked of it."""
    deadline = time.monotonic() + limit
    while any(state == "pending" for state in list(tiers._compiler.states.values())):
        assert time.monotonic() < deadline, "the background compiler did not finish"
        time.sleep(0.02)


def _waiting_tier(monkeypatch, module):
    """The per-message tier of ``module``, waiting after each chunk until the
    compiler has finished: the next chunk finds the kernels ready."""
    real = module.row_by_row
    calls = []

    def by_message(*args):
        out = real(*args)
        calls.append(len(out))
        _settled()
        return out
    monkeypatch.setattr(module, "row_by_row", by_message)
    return calls


@pytest.mark.slow
@pytest.mark.parametrize("text", FILTERS)
def test_a_table_switches_to_the_kernel_mid_input(cold, monkeypatch, text):
    from filtex.arrow import engine, tiered
    monkeypatch.setattr(tiered, "CHUNK_ROWS", 64)
    calls = _waiting_tier(monkeypatch, engine)
    source = _messages(1000, seed=len(text))
    table = fa.message_table(source)
    flt = filtex.compile_sql(text)
    expected = [flt.evaluate(m) for m in source]
    first = fa.evaluate(flt, table)
    assert first.verdicts.to_pylist() == expected
    assert 0 < first.compiling_rows < len(source), "answered at once, then by the kernel"
    assert first.compiling_rows == sum(calls) and first.compiling_rows % 64 == 0
    assert first.fallback_rows >= first.compiling_rows
    assert any(key[1:3] == ("job", "table") for key in tiers._compiler.states)
    again = fa.evaluate(flt, table)
    assert again.verdicts.to_pylist() == expected
    assert again.compiling_rows == 0 and again.kernel


@pytest.mark.slow
def test_encoded_messages_switch_to_the_kernel_mid_input(cold, monkeypatch):
    from filtex.arrow import binary, tiered
    monkeypatch.setattr(tiered, "CHUNK_ROWS", 50)
    real = binary.tiered
    chunks = []

    def waiting_tier(kernel, by_message, n, warm):
        def by_message_then_wait(lo, hi):
            out = by_message(lo, hi)
            chunks.append(hi - lo)
            _settled()
            return out
        return real(kernel, by_message_then_wait, n, warm)
    monkeypatch.setattr(binary, "tiered", waiting_tier)
    source = _messages(400, seed=5)
    cells = pa.array([encode_message(m) for m in source], pa.binary())
    flt = filtex.compile_sql(FILTERS[0])
    expected = [flt.evaluate(m) for m in source]
    result = fa.evaluate_encoded(flt, cells)
    assert result.verdicts.to_pylist() == expected
    assert 0 < result.compiling_rows == sum(chunks) < len(source)
    assert any(key[1:3] == ("job", "encoded") for key in tiers._compiler.states)
    again = fa.evaluate_encoded(flt, cells)
    assert again.verdicts.to_pylist() == expected and again.compiling_rows == 0


@pytest.mark.slow
def test_wait_mode_compiles_in_the_foreground(cold, monkeypatch):
    monkeypatch.setenv("FILTEX_COMPILE", "wait")
    source = _messages(200, seed=9)
    flt = filtex.compile_sql(FILTERS[1])
    result = fa.evaluate(flt, fa.message_table(source))
    assert result.verdicts.to_pylist() == [flt.evaluate(m) for m in source]
    assert result.compiling_rows == 0 and result.fallback_rows == 0
    assert tiers._compiler.states == {} or all(
        key[0] != str(cold) for key in tiers._compiler.states)


@pytest.mark.slow
def test_a_bundle_carries_compiled_kernels_to_an_empty_cache(tmp_path, monkeypatch):
    """What a Spark driver ships to a fresh executor: once installed, the
    executor's first batch loads every kernel and compiles none."""
    driver, executor = tmp_path / "driver", tmp_path / "executor"
    source = _messages(300, seed=2)
    table = fa.message_table(source)
    flt = filtex.compile_sql(FILTERS[2])
    monkeypatch.setattr(jit, "_directory", driver)
    monkeypatch.setenv("FILTEX_COMPILE", "wait")
    modules.clear()
    fa.evaluate(flt, table)
    files = bundle.collect(driver)
    assert files and any(name.startswith("__pycache__/") for name in files)
    assert bundle.install(files, executor) == len(files)
    assert bundle.install(files, executor) == 0   # present: not written again
    monkeypatch.setattr(jit, "_directory", executor)
    monkeypatch.delenv("FILTEX_COMPILE")
    modules.clear()
    try:
        result = fa.evaluate(flt, table)
        assert result.compiling_rows == 0 and result.kernel
        assert result.verdicts.to_pylist() == [flt.evaluate(m) for m in source]
        assert not any(key[0] == str(executor) for key in tiers._compiler.states)
    finally:
        tiers.stop()
        modules.clear()


def test_a_bundle_writes_only_plain_names_in_the_cache(tmp_path):
    files = {"../escape.py": b"x", "__pycache__/../../up.nbc": b"x", "a/b.py": b"x",
             ".hidden": b"x", "__pycache__/ok.nbc": b"code", "ok.py": b"src"}
    files = {k: v for k, v in files.items() if k != ".hidden"}
    assert bundle.install(files, tmp_path / "c") == 2
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file()) == [
        "c/__pycache__/ok.nbc", "c/ok.py"]


def _framed(messages: list[filtex.Message]) -> bytes:
    return b"".join(struct.pack(">I", len(raw)) + raw for raw in map(encode_message, messages))


@pytest.mark.slow
def test_the_command_line_answers_at_once_on_a_cold_machine(cold, tmp_path, monkeypatch,
                                                            capsys):
    """``filtex match --engine batch`` with nothing compiled: every message by
    the per-message engine while the kernels compile in the background, the
    same counts and outputs as ``--engine messages``, and the summary says so."""
    from filtex.cli import main
    source = _messages(3000, seed=11)
    (tmp_path / "in.amqp").write_bytes(_framed(source))
    monkeypatch.chdir(tmp_path)
    filters = [a for i, text in enumerate(FILTERS) for a in ("--filter", f"f{i}={text}")]
    runs = {}
    for engine in ("messages", "batch"):
        (tmp_path / engine).mkdir()
        main(["match", "--engine", engine, *filters, "-o", f"{engine}/{{name}}.amqp", "in.amqp"])
        capsys.readouterr()
        main(["match", "--engine", engine, *filters, "--count", "--json", "in.amqp"])
        out, err = capsys.readouterr()
        counts = json.loads(out)
        counts.pop("seconds")
        runs[engine] = (counts, {p.name: p.read_bytes() for p in (tmp_path / engine).iterdir()},
                        err)
    assert runs["batch"][:2] == runs["messages"][:2]
    assert runs["batch"][0]["messages"] > 2000
    # the background compiler was handed a sample to compile the whole chain from (the
    # frames' when the decoder is missing, else a filter's table: a test before this one in
    # the process may have compiled the decoder in memory)
    assert any(key[1:3] in (("job", "frames"), ("job", "table"))
               for key in tiers._compiler.states)
    assert f"{runs['batch'][0]['messages']:,} of them by the per-message engine while the " \
        "kernels compiled in the background" in runs["batch"][2]
