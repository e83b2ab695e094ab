"""The on-disk kernel cache, shared by processes, never hands one signature's
machine code to another (issue 22).

numba's own cache maps signatures to numbered files through one index per
function; two processes compiling different signatures at once could both
take number 1, after which int64 code read float64 values (numba checks only
the item size) and the Arrow UDF gave wrong verdicts in every later run.
``filtex.codegen.jit`` names each file by a digest of its key instead. The first
test replays every outcome of such a race deterministically: each process
compiles into its own directory, the directories are merged with either
process winning every file both wrote, and the merged cache must give every
signature its own code, loaded from disk. The others run real processes
compiling and loading the same and different kernels in one directory at once.
"""
from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")
pytest.importorskip("pyarrow")

REPO = Path(__file__).resolve().parents[1]

PROBE = textwrap.dedent('''
    from filtex.codegen.jit import njit

    @njit(cache=True)
    def first(values):
        return values[0]
''')

KINDS = {   # 8-byte values of every kind (numba's unboxing checks only the item size)
    "int64": "np.array([7, 1], np.int64)",
    "float64": "np.array([2.5, 1.0], np.float64)",
    "uint64": "np.array([2**64 - 3, 1], np.uint64)",
    "strided": "np.array([-3, 0, 1, 0], np.int64)[::2]",
    "readonly": "_readonly(np.array([11, 1], np.int64))",
}
WANT = {"int64": 7, "float64": 2.5, "uint64": 2**64 - 3, "strided": -3, "readonly": 11}

RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import probe

    def _readonly(a):
        a.flags.writeable = False
        return a

    kinds = json.loads(sys.argv[2])
    out = {}
    for kind, make in kinds.items():
        value = probe.first(eval(make))
        out[kind] = value.item() if hasattr(value, "item") else value
    hits = sum(probe.first.stats.cache_hits.values())
    print(json.dumps({"values": out, "hits": hits}))
''')


def _run(module_dir: Path, cache: Path, kinds: dict) -> dict:
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(cache), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", RUN, str(module_dir), json.dumps(kinds)],
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _root(path: Path) -> Path:
    """A directory with the probe module (``src``) and a cache (``cache``); the
    module's file has a fixed modification time, as a copy of it would."""
    (path / "src").mkdir(parents=True)
    (path / "src" / "probe.py").write_text(PROBE)
    os.utime(path / "src" / "probe.py", (1_700_000_000, 1_700_000_000))
    return path


@pytest.mark.slow
def test_a_merged_cache_gives_every_signature_its_own_code(tmp_path):
    """Every way two processes' files can interleave in one directory."""
    roots = []
    for kind in ("int64", "float64"):   # each alone: both would take the first number
        root = _root(tmp_path / kind)
        got = _run(root / "src", root / "cache", {kind: KINDS[kind]})
        assert got["values"] == {kind: WANT[kind]}
        roots.append(root)
    files = [{p.relative_to(root): p for p in root.rglob("*") if p.is_file()} for root in roots]
    shared = sorted(r for r in set(files[0]) & set(files[1]) if r.suffix != ".py")
    assert len(shared) <= 4, shared
    wrong = []
    for winners in itertools.product((0, 1), repeat=len(shared)):
        merged = tmp_path / "merged"
        shutil.rmtree(merged, ignore_errors=True)
        for which in (0, 1):
            for relative, path in files[which].items():
                if relative in shared and winners[shared.index(relative)] != which:
                    continue
                (merged / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, merged / relative)
        got = _run(merged / "src", merged / "cache",
                   {k: KINDS[k] for k in ("int64", "float64")})
        if got != {"values": {"int64": 7, "float64": 2.5}, "hits": 2}:   # both from disk
            wrong.append((winners, got))
    assert not wrong, wrong


@pytest.mark.slow
def test_processes_compiling_one_function_at_once_each_get_their_own_code(tmp_path):
    """Five processes compile five signatures of one function at the same
    moment into one directory; then one process loads them all from disk."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "probe.py").write_text(PROBE)
    cache = tmp_path / "cache"
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(cache), PYTHONPATH=str(REPO))
    gate = tmp_path / "go"
    start = ("import os, sys, time\nwhile not os.path.exists(sys.argv[3]): time.sleep(0.001)\n"
             + RUN.replace("import json, sys", "import json"))
    procs = [subprocess.Popen([sys.executable, "-c", start, str(source),
                               json.dumps({kind: make}), str(gate)],
                              env=env, stdout=subprocess.PIPE, text=True)
             for kind, make in KINDS.items()]
    gate.touch()   # every process is past its imports: they compile together
    results = [json.loads(p.communicate(timeout=300)[0]) for p in procs]
    assert [p.returncode for p in procs] == [0] * len(KINDS)
    assert [r["values"] for r in results] == [{k: WANT[k]} for k in KINDS]
    again = _run(source, cache, KINDS)
    assert again["values"] == WANT
    assert again["hits"] == len(KINDS), again   # five signatures, each from its own file


ENGINE_RUN = textwrap.dedent('''
    import sys
    import filtex, filtex.arrow as fa
    from proton import ulong
    seed = int(sys.argv[1])
    texts = ["a % 2 = 0", "v * 2 > 3", "a IN (1, 2, 9) AND NOT (b = 3 OR b = 4)",
             "c = 2.5 OR c = 3", "u > 5", "(a = 1 OR c < 0) AND u = 2 + a"]
    values = [1, 2, 3, 2.5, -0.0, 2**53, 2.0**53, 7, None, "x", ulong(2**63 + 5), float("nan")]
    def value(i, k):
        v = values[(i * (k + 3) + seed) % len(values)]
        return v
    ms = []
    for i in range(300):
        props = {}
        for k, key in enumerate("abcvu"):
            v = value(i, k)
            if v is not None:
                props[key] = v
        ms.append(filtex.Message(application_properties=props))
    table = fa.message_table(ms)
    for text in texts:
        f = filtex.compile_sql(text)
        want = [f.evaluate(m) for m in ms]
        for start, rows in ((0, table), (5, table.slice(5)), (64, table.slice(64, 131))):
            for engine in ("fused", "passes"):
                got = fa.evaluate(f, rows, engine=engine).verdicts.to_pylist()
                assert got == want[start:start + rows.num_rows], (seed, text, engine)
    print("ok")
''')


@pytest.mark.slow
def test_processes_sharing_a_cache_directory_agree_with_the_per_message_engine(tmp_path):
    """The batch engines in four processes at once over one empty cache directory
    (fused kernels, arithmetic passes, and the pass-per-atom engine's kernels and
    per-value scans compiled for int64, uint64 and float64 values), then again
    from the filled cache."""
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(tmp_path), PYTHONPATH=str(REPO))
    for wave in range(2):
        procs = [subprocess.Popen([sys.executable, "-c", ENGINE_RUN, str(seed)], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for seed in range(4)]
        outs = [p.communicate(timeout=600) for p in procs]
        assert [p.returncode for p in procs] == [0] * 4, [e for _, e in outs]
    assert not list(tmp_path.rglob("*.nbi")), "numba's shared index must not be used"
    assert list((tmp_path / "__pycache__").glob("filtex.arrow.scan.gather-*.nbc"))


def test_every_numba_function_of_filtex_is_compiled_through_jit():
    """A function cached by numba's own ``cache=True`` would bring the race back."""
    offenders = []
    for path in (REPO / "filtex").rglob("*.py"):
        if path.name == "jit.py":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("from numba import njit", "from numba import jit", "numba.njit(",
                       "numba.jit(", "from numba import njit"):
            if needle in text:
                offenders.append(f"{path.relative_to(REPO)}: {needle}")
    assert not offenders, offenders


def test_a_pruned_module_is_written_again(tmp_path, monkeypatch):
    """Another process may prune a kernel module while this one imports it."""
    from filtex.arrow import kernel
    from filtex.codegen import modules
    monkeypatch.setattr(modules, "cache_directory", lambda: tmp_path)
    text = kernel.source(("and", (("atom",), ("not", ("atom",)))))
    real = modules._write
    calls = []

    def write_then_prune(path, source):   # the file vanishes after the first write
        real(path, source)
        calls.append(path)
        if len(calls) == 1:
            path.unlink()
    monkeypatch.setattr(modules, "_write", write_then_prune)
    name = "filtex_kernel_pruned_test"
    try:
        module = modules._import(name, text)
        assert callable(module.kernel) and len(calls) == 2
    finally:
        sys.modules.pop(name, None)


def test_the_least_recently_used_modules_are_pruned_with_their_code(tmp_path, monkeypatch):
    """Past ``FILTEX_KERNEL_CACHE_FILES`` modules the least recently used go, and
    the compiled code of a module that is gone goes with it; a module used again
    is the newest."""
    import time
    from filtex.codegen import modules
    monkeypatch.setattr(modules, "cache_directory", lambda: tmp_path)
    monkeypatch.setattr(modules, "compiled_code_directory", lambda: tmp_path / "__pycache__")
    monkeypatch.setenv("FILTEX_KERNEL_CACHE_FILES", "2")
    (tmp_path / "__pycache__").mkdir()
    paths = [tmp_path / f"filtex_kernel_{n}.py" for n in "abc"]
    for n, path in enumerate(paths[:2]):
        modules._write(path, f"X = {n}\n")
        (tmp_path / "__pycache__" / f"{path.stem}.kernel-1.py311.nbc").write_bytes(b"code")
        os.utime(path, (time.time() - 100 + n, time.time() - 100 + n))
    modules._write(paths[0], "X = 0\n")   # used again: now the newest
    modules._write(paths[2], "X = 2\n")
    assert sorted(p.name for p in tmp_path.glob("filtex_kernel_*.py")) == \
        ["filtex_kernel_a.py", "filtex_kernel_c.py"]
    assert [p.name for p in (tmp_path / "__pycache__").iterdir()] == \
        ["filtex_kernel_a.kernel-1.py311.nbc"]
