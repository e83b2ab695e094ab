"""The README's code examples run as written: every ``>>>`` example in
README.md is a doctest (run from the repository root, where its paths point)."""
from __future__ import annotations

import doctest
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def test_readme_examples_run_as_written(monkeypatch):
    monkeypatch.chdir(REPO)
    results = doctest.testfile(str(REPO / "README.md"), module_relative=False,
                               optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert results.attempted >= 30, "the README lost its examples"
    assert results.failed == 0
