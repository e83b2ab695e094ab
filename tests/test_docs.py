"""The documentation runs as written, and its site builds without a warning.

- Every ``>>>`` example of README.md, examples/README.md and every docs/ page is a
  doctest, run from the repository root (where its paths point), page by page
  with one namespace per page, in the order the examples appear.
- Every fenced ``console`` block is run: each line ``$ COMMAND`` (a trailing
  backslash continues it on the next line) runs in bash in a temporary directory
  that sees the repository's ``examples/``, with this interpreter's ``filtex`` and
  ``python`` first on PATH. The exit code must be 0, or N when the command ends
  with the comment ``# exit N``; when lines of output follow the command, the
  output (stdout and stderr together) must match them, ``...`` matching
  anything, as in a doctest.
- A block directly under the line ``<!-- test: spark -->`` needs the name
  ``spark`` (a SparkSession): it runs in a test of marker ``spark`` instead.
- Python blocks without ``>>>`` (a sketch around a Kafka topic, a cluster) must
  at least be valid Python; ``sh`` blocks are shown, not run (a set-up command,
  a cluster, a benchmark of minutes): say near one why it cannot run here.
- Every option of every ``filtex`` command (argparse's own list) is named on
  docs/cli.md.
- ``mkdocs build --strict`` (mkdocs.yml: every page in the nav, every link and
  anchor resolved) succeeds, and README.md's links lead to files that exist.
"""
from __future__ import annotations

import ast
import doctest
import os
import re
import subprocess
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

import pytest

import stopping
from optional import optional

REPO = Path(__file__).resolve().parents[1]
PAGES = ([REPO / "README.md", REPO / "examples" / "README.md"]
         + sorted((REPO / "docs").rglob("*.md")))
OPTIONS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
SPARK_MARK = "<!-- test: spark -->"
FENCE = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
EXIT = re.compile(r"#\s*exit (\d+)\s*$")


@dataclass
class Block:
    """One fenced block of a page: its language, first line (0-based, the
    line after the fence), its lines, and whether it needs Spark."""
    language: str
    start: int
    lines: list[str]
    spark: bool


def blocks(path: Path) -> list[Block]:
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    fence = None
    for number, line in enumerate(lines):
        opened = FENCE.match(line)
        if fence is None and opened:
            above = next((lines[i].strip() for i in range(number - 1, -1, -1)
                          if lines[i].strip()), "")
            fence = opened.group(1)
            found.append(Block(opened.group(2).lower(), number + 1, [], above == SPARK_MARK))
        elif fence is not None and line.strip() == fence:
            fence = None
        elif fence is not None:
            found[-1].lines.append(line)
    assert fence is None, f"{path.name}: a fenced block is never closed"
    return found


def page_id(path: Path) -> str:
    return str(path.relative_to(REPO))


def doctest_text(path: Path, spark: bool) -> str:
    """The page with every line outside its (Spark or other) examples blanked,
    so that a failure reports the page's own line numbers."""
    total = len(path.read_text(encoding="utf-8").splitlines())
    kept = [""] * total
    for block in blocks(path):
        if block.spark == spark and any(line.lstrip().startswith(">>>") for line in block.lines):
            kept[block.start:block.start + len(block.lines)] = block.lines
    return "\n".join(kept) + "\n"


def run_doctests(path: Path, spark_session=None) -> tuple[int, str]:
    text = doctest_text(path, spark_session is not None)
    globs = {"__name__": "docs"} | ({"spark": spark_session} if spark_session else {})
    test = doctest.DocTestParser().get_doctest(text, globs, page_id(path), str(path), 0)
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=OPTIONS)
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    return runner.tries, "".join(report)


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_examples_run_as_written(path, monkeypatch):
    monkeypatch.chdir(REPO)
    in_blocks = sum(line.lstrip().startswith(">>>") for block in blocks(path)
                    for line in block.lines)
    on_page = sum(line.lstrip().startswith(">>>")
                  for line in path.read_text(encoding="utf-8").splitlines())
    assert in_blocks == on_page, f"{page_id(path)}: a >>> example outside a fenced block"
    run_doctests(path)


SPARK_PAGES = [path for path in PAGES if any(block.spark for block in blocks(path))]


@pytest.mark.spark
@pytest.mark.parametrize("path", SPARK_PAGES, ids=page_id)
def test_spark_examples_run_as_written(path, spark, monkeypatch, tmp_path):
    monkeypatch.chdir(REPO)
    tries = 0
    if any(block.spark and block.language != "console" for block in blocks(path)):
        tries += run_doctests(path, spark)[0]
    tries += run_console(path, tmp_path, spark=True)
    assert tries, f"{page_id(path)}: marked for Spark, but no example ran"


def test_some_pages_need_spark():
    assert SPARK_PAGES, "the Spark examples lost their marker (<!-- test: spark -->)"


@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_python_sketches_are_valid_python(path):
    for block in blocks(path):
        code = "\n".join(block.lines)
        if block.language == "python" and ">>>" not in code:
            try:
                ast.parse(code)
            except SyntaxError as problem:
                pytest.fail(f"{page_id(path)} line {block.start + (problem.lineno or 0)}: "
                            f"{problem.msg}")


# --- shell examples ----------------------------------------------------------------------

def commands(block: Block) -> list[tuple[int, str, list[str]]]:
    """(line, command, expected output lines) of a console block."""
    found: list[tuple[int, str, list[str]]] = []
    continuing = False
    for offset, line in enumerate(block.lines):
        if continuing:
            found[-1] = (found[-1][0], found[-1][1] + "\n" + line, [])
        elif line.startswith("$ "):
            found.append((block.start + offset + 1, line[2:], []))
        elif found:
            found[-1][2].append(line)
        else:
            raise AssertionError(f"line {block.start + offset + 1}: output before any $ command")
        continuing = (continuing or line.startswith("$ ")) and line.endswith("\\")
    return found


def shell_environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env["COLUMNS"] = "100"           # argparse wraps help at the terminal's width
    env["PYTHONUNBUFFERED"] = "1"    # stdout and stderr interleaved as written, as on a terminal
    env.pop("PYTHONPATH", None)
    return env


def run_console(path: Path, workdir: Path, spark: bool) -> int:
    (workdir / "examples").symlink_to(REPO / "examples")
    checker = doctest.OutputChecker()
    ran = 0
    for block in blocks(path):
        if block.language != "console" or block.spark != spark:
            continue
        for line, command, expected in commands(block):
            want = EXIT.search(command.splitlines()[-1])
            done = stopping.run(["bash", "-c", command], cwd=workdir, env=shell_environment(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, timeout=600)
            where = f"{page_id(path)} line {line}: $ {command}"
            assert done.returncode == (int(want.group(1)) if want else 0), \
                f"{where}\nexit {done.returncode}\n{done.stdout}"
            shown = "\n".join(expected).strip("\n")
            if shown and not checker.check_output(shown + "\n", done.stdout, OPTIONS):
                pytest.fail(f"{where}\nexpected:\n{shown}\ngot:\n{done.stdout}")
            ran += 1
    return ran


@pytest.mark.slow
@pytest.mark.parametrize("path", PAGES, ids=page_id)
def test_shell_examples_run_as_written(path, tmp_path):
    run_console(path, tmp_path, spark=False)


def test_shell_examples_exist():
    """The parser above finds the command-line page's examples (it would pass
    vacuously if a change of format hid them)."""
    cli = [command for block in blocks(REPO / "docs" / "cli.md")
           if block.language == "console" for command in commands(block)]
    assert sum(command.startswith("filtex ") for _, command, _ in cli) >= 10


def test_every_command_line_option_is_documented():
    """Each option of each command (as argparse knows it) is named on the command-line
    page, so a new option cannot ship without its line in a table."""
    import argparse

    from filtex.cli import build_parser
    page = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, command in [("filtex", parser), *commands.choices.items()]:
        for action in command._actions:
            names = [o for o in action.option_strings if o.startswith("--") and o != "--help"]
            if names and not any(re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", page)
                                 for o in names):
                missing.append(f"{name} {names[0]}")
    assert not missing, f"docs/cli.md does not name: {', '.join(missing)}"


# --- the site and the links --------------------------------------------------------------

def test_site_builds_strictly(tmp_path):
    """Every page in the nav, no broken link or anchor, no warning at all."""
    if optional("mkdocs") is None:
        pytest.skip("mkdocs is not installed (pip install mkdocs)")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
                           "--config-file", str(REPO / "mkdocs.yml"),
                           "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()


LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """A heading's anchor as mkdocs (python-markdown's toc) and GitHub write it, for
    the headings these pages link to."""
    text = unicodedata.normalize("NFKD", re.sub(r"[`*]", "", heading))
    text = re.sub(r"[^\w\s-]", "", text.encode("ascii", "ignore").decode("ascii"))
    return re.sub(r"[-\s]+", "-", text.strip().lower())


@pytest.mark.parametrize("path", [REPO / "README.md", REPO / "examples" / "README.md"],
                         ids=page_id)
def test_links_outside_the_site_resolve(path):
    """mkdocs checks the site's links; these pages are read on the forge and in a clone."""
    text = path.read_text(encoding="utf-8")
    for target in LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue
        file, _, anchor = target.partition("#")
        linked = (path.parent / file).resolve() if file else path
        assert linked.exists(), f"{page_id(path)}: broken link {target}"
        if anchor:
            headings = [slug(h) for h in
                        re.findall(r"^#+ (.*)$", linked.read_text(encoding="utf-8"), re.M)]
            assert anchor in headings, f"{page_id(path)}: no heading for #{anchor}"


def test_readme_stays_short():
    """README is what a newcomer reads first (issue 22); the details live in docs/."""
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 300
