"""Start-up: ``import filtex``, one compile, and ``filtex check``, side by side.

    python -m benchmarks.startup [--runs N] [--imports]

Each command runs N times (default 20) in a new interpreter, the commands taking turns
so that the machine's load falls on all alike, after one run each to warm the file cache
and write the bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped for the children: an
installed filtex has its bytecode), except the last: ``filtex check`` importing a copy
of filtex without bytecode and writing none. The first table gives each command's median
and minimum wall time, and its median over that of ``import filtex`` and one compile; the
second, the parts of that first compile, timed inside the interpreter: importing the
compiler's modules, PLY's LALR tables (built at the first parse of each process, never
written to disk), the lexer, the compile itself. ``--imports`` adds what ``filtex check``
imports beyond ``import filtex`` and one compile (``python -X importtime``, one run).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PYTHON = sys.executable
FILTEX = str(Path(PYTHON).parent / "filtex")   # the console script beside this python
BASE = "import filtex; compile_sql('a = 1')"
CHECK = "from filtex.cli import main; main(['check', 'a = 1'])"
UNCOMPILED = "filtex check, no bytecode of filtex"
COMMANDS = {
    "python -c pass": [PYTHON, "-c", "pass"],
    "import filtex": [PYTHON, "-c", "import filtex"],
    BASE: [PYTHON, "-c", "import filtex; filtex.compile_sql('a = 1')"],
    "filtex check 'a = 1'": [FILTEX, "check", "a = 1"],
    UNCOMPILED: [PYTHON, "-c", CHECK],   # a copy of filtex without __pycache__, not written
}
PARTS = """
import json, time
clock = time.perf_counter
parts, start = {}, clock()
import filtex
parts["import filtex"], start = clock() - start, clock()
import filtex.compiler
parts["import the compiler's modules"], start = clock() - start, clock()
from filtex.sql import lexer, parser
parser._lr_parser()
parts["PLY's LALR tables"], start = clock() - start, clock()
lexer._master_lexer()
parts["the lexer"], start = clock() - start, clock()
filtex.compile_sql("a = 1")
parts["compile_sql('a = 1')"] = clock() - start
print(json.dumps(parts))
"""


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def uncompiled(directory: Path) -> dict[str, str]:
    """The environment of a run that imports a copy of filtex without bytecode and
    writes none: every module of filtex compiled from source at each start, as with
    ``PYTHONDONTWRITEBYTECODE=1`` or a read-only install without compiled files."""
    import filtex
    shutil.copytree(Path(filtex.__file__).parent, directory / "filtex",
                    ignore=shutil.ignore_patterns("__pycache__"))
    env = {**environment(), "PYTHONPATH": str(directory), "PYTHONDONTWRITEBYTECODE": "1"}
    found = subprocess.run([PYTHON, "-c", "import filtex; print(filtex.__file__)"], env=env,
                           cwd=directory.parent, check=True, capture_output=True,
                           text=True).stdout
    assert found.startswith(str(directory)), found   # the copy, not the installed filtex
    return env


def once(command: list[str], env: dict[str, str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, env=env, cwd=cwd, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def parts(env: dict[str, str], cwd: Path) -> dict[str, float]:
    done = subprocess.run([PYTHON, "-c", PARTS], env=env, cwd=cwd, check=True,
                          capture_output=True, text=True)
    return dict(json.loads(done.stdout))


def measure(runs: int) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Run in an empty directory: filtex is the installed one (a checkout's own
    directory would come first on the path of ``python -c``)."""
    env = environment()
    with tempfile.TemporaryDirectory() as temporary:
        cwd = Path(temporary)
        envs = {name: uncompiled(cwd / "copy") if name == UNCOMPILED else env
                for name in COMMANDS}
        for name, command in COMMANDS.items():   # warm-up: file cache, bytecode
            once(command, envs[name], cwd)
        times: dict[str, list[float]] = {name: [] for name in COMMANDS}
        inside: dict[str, list[float]] = {}
        for _ in range(runs):
            for name, command in COMMANDS.items():
                times[name].append(once(command, envs[name], cwd))
            for name, seconds in parts(env, cwd).items():
                inside.setdefault(name, []).append(seconds)
    return times, inside


def table(times: dict[str, list[float]], ratio: bool) -> str:
    base = statistics.median(times[BASE]) if ratio else 1.0
    width = max(len(name) for name in times)
    head = f"{'':<{width}}  median ms  min ms" + ("  median / import + compile" if ratio else "")
    lines = [head, "-" * len(head)]
    for name, values in times.items():
        median = statistics.median(values)
        lines.append(f"{name:<{width}}  {median * 1000:9.1f}  {min(values) * 1000:6.1f}"
                     + (f"  {median / base:26.2f}" if ratio else ""))
    return "\n".join(lines)


def importtime(code: str) -> dict[str, int]:
    """Each module ``code`` imports: its own import time in microseconds (one run)."""
    done = subprocess.run([PYTHON, "-X", "importtime", "-c", code], env=environment(),
                          cwd=tempfile.gettempdir(), capture_output=True, text=True,
                          check=True)
    found = {}
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "cumulative" not in line:
            own, _, name = line[len("import time:"):].split("|")
            found[name.strip()] = int(own)
    return found


def imports(limit: int = 12) -> str:
    base = importtime("import filtex; filtex.compile_sql('a = 1')")
    check = importtime(CHECK)
    extra = sorted(((own, name) for name, own in check.items() if name not in base),
                   reverse=True)
    lines = [f"filtex check imports {len(check)} modules, {BASE} {len(base)}; the "
             f"{len(extra)} more take {sum(own for own, _ in extra) / 1000:.1f} ms "
             "(their own import time; the slowest):"]
    lines += [f"  {own / 1000:6.1f} ms  {name}" for own, name in extra[:limit]]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--imports", action="store_true",
                        help="what filtex check imports beyond import filtex and one compile")
    args = parser.parse_args()
    times, inside = measure(args.runs)
    print(f"{args.runs} runs each, {PYTHON}\n")
    print(table(times, ratio=True))
    print(f"\n{BASE}, inside the interpreter:\n")
    print(table(inside, ratio=False))
    if args.imports:
        print()
        print(imports())


if __name__ == "__main__":
    main()
