"""filtex's public API type-checks for its users: mypy --strict and pyright's
strict mode on scripts under tests/typing/, with filtex found as an installed
package is (a ``site`` folder on PYTHONPATH holding the package, py.typed and
all), so only the scripts' own lines are reported, as for a user.

- ``user_script.py`` uses every name of ``filtex.__all__``; its
  ``assert_type`` lines pin the public types, and it must give no error;
- ``batch_script.py`` calls the public functions of ``filtex.arrow`` and
  ``filtex.spark``; pyarrow has no type information, so mypy ignores its
  missing stubs and pyright's unknown-type reports are off in that file: what
  is checked is filtex's own part of each type;
- ``must_fail.py``: every line marked ``# expect-error`` must be reported by
  both checkers, and no other, so this test cannot pass by checking nothing.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import filtex

HERE = Path(__file__).parent / "typing"
SCRIPTS = ("user_script.py", "batch_script.py", "must_fail.py")
MYPY_CONFIG = """\
[mypy]
strict = True
# pyarrow ships no stubs or py.typed: its types are Any to the user's script
[mypy-pyarrow.*]
ignore_missing_imports = True
"""
PYRIGHT_CONFIG = '{"typeCheckingMode": "strict"}\n'


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The scripts, their checkers' settings and ``site/filtex`` (a link to the
    package under test) in a folder outside the repository, whose settings the
    checkers would read otherwise."""
    root = tmp_path_factory.mktemp("typing")
    site = root / "site"
    site.mkdir()
    package = Path(filtex.__file__).parent
    assert (package / "py.typed").is_file()
    (site / "filtex").symlink_to(package, target_is_directory=True)
    for name in SCRIPTS:
        shutil.copy(HERE / name, root / name)
    (root / "mypy.ini").write_text(MYPY_CONFIG)
    (root / "pyrightconfig.json").write_text(PYRIGHT_CONFIG)
    return root


def run(command: list[str], workdir: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(workdir / "site"))
    env.pop("MYPYPATH", None)
    return subprocess.run(command, cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=600)


def errors_by_file(output: str, pattern: str) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {name: set() for name in SCRIPTS}
    for match in re.finditer(pattern, output, re.MULTILINE):
        name = Path(match.group("path")).name
        found.setdefault(name, set()).add(int(match.group("line")))
    return found


def expected_errors() -> set[int]:
    lines = (HERE / "must_fail.py").read_text().splitlines()
    marked = {number for number, line in enumerate(lines, 1) if "  # expect-error:" in line}
    assert len(marked) >= 15
    return marked


def check(found: dict[str, set[int]], output: str) -> None:
    assert found["user_script.py"] == set(), output
    assert found["batch_script.py"] == set(), output
    assert found["must_fail.py"] == expected_errors(), output
    assert set(found) == set(SCRIPTS), output   # nothing reported in filtex itself


@pytest.mark.slow
def test_mypy_strict(workdir: Path) -> None:
    done = run([sys.executable, "-m", "mypy", "--config-file", "mypy.ini", "--no-incremental",
                "--cache-dir", os.devnull, "--show-absolute-path", *SCRIPTS], workdir)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output   # must_fail.py's errors, and only those
    check(errors_by_file(output, r"^(?P<path>[^:\n]+\.py):(?P<line>\d+): error:"), output)


@pytest.mark.slow
def test_pyright_strict(workdir: Path) -> None:
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent)) or \
        shutil.which("pyright")
    assert pyright, "pyright is in the test extra"
    done = run([pyright, "--pythonpath", sys.executable, *SCRIPTS], workdir)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    check(errors_by_file(output, r"^\s*(?P<path>/[^:\n]+\.py):(?P<line>\d+):\d+ - error:"),
          output)


def test_the_user_script_runs() -> None:
    """What the script's types describe is what it does (assert_type is a no-op
    at run time, so the script's calls are real ones)."""
    done = subprocess.run([sys.executable, str(HERE / "user_script.py")], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
