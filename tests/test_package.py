"""The package is ready to publish: an sdist and a wheel build from the
checkout (``python -m build --no-isolation``: the test extra's setuptools and
wheel, no network), ``twine check --strict`` passes on both, the wheel holds
exactly the package (every module, ``py.typed``, the ``filtex`` command; no
tests, no caches, no numba cache files) and the sdist what the tests and docs
need."""
from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CACHE_PARTS = ("__pycache__", ".pyc", ".nbi", ".nbc", ".kernel-cache", ".hypothesis")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    done = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out),
                           str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return out


def only(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    assert len(found) == 1, found
    return found[0]


@pytest.mark.slow
def test_twine_check_strict(dist: Path) -> None:
    files = [str(only(dist, "*.whl")), str(only(dist, "*.tar.gz"))]
    done = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", *files],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count("PASSED") == 2, done.stdout


def test_wheel_holds_the_package_and_nothing_else(dist: Path) -> None:
    with zipfile.ZipFile(only(dist, "filtex-*-py3-none-any.whl")) as wheel:
        names = wheel.namelist()
        info = next(n for n in names if n.endswith(".dist-info/METADATA")).rsplit("/", 1)[0]
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
        metadata = Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
    assert "filtex/py.typed" in names
    modules = {p.relative_to(ROOT).as_posix() for p in (ROOT / "filtex").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert modules <= set(names), sorted(modules - set(names))
    for name in names:
        assert name.startswith(("filtex/", f"{info}/")), name
        assert not any(part in name for part in CACHE_PARTS), name
    assert not any(name.startswith("tests/") for name in names)
    assert "[console_scripts]" in entry_points
    assert "filtex = filtex.cli:main" in entry_points
    assert metadata["Name"] == "filtex"
    assert metadata["Requires-Python"] == ">=3.11"
    assert metadata["License"] == "Apache-2.0"
    assert metadata["Description-Content-Type"] == "text/markdown"
    assert len(metadata.get_payload()) > 1000   # the README
    classifiers = metadata.get_all("Classifier")
    for wanted in ("Typing :: Typed", "License :: OSI Approved :: Apache Software License",
                   "Programming Language :: Python :: 3.11"):
        assert wanted in classifiers
    assert any(c.startswith("Development Status ::") for c in classifiers)
    assert any(c.startswith("Topic ::") for c in classifiers)
    assert {"arrow", "spark", "bench", "test"} <= set(metadata.get_all("Provides-Extra"))
    requires = metadata.get_all("Requires-Dist")
    assert any(r.startswith("ply") for r in requires)
    assert any(r.startswith("pyarrow") and 'extra == "arrow"' in r for r in requires)


def test_sdist_holds_what_tests_and_docs_need(dist: Path) -> None:
    sdist = only(dist, "filtex-*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    for wanted in ("LICENSE", "README.md", "setup.cfg", "pyproject.toml", "MANIFEST.in",
                   "filtex/py.typed", "filtex/__init__.py", "tests/conftest.py",
                   "tests/test_typing.py", "tests/typing/user_script.py",
                   "docs/architecture.md", "examples/orders.jsonl"):
        assert wanted in names, wanted
    assert any(name.startswith("tests/conformance/") for name in names)
    for name in names:
        assert not any(part in name for part in CACHE_PARTS), name
