"""Optional packages of the tests: missing on a laptop, a test does without
them or skips; missing in CI (``FILTEX_CI=1``, set by ``.ci/run``, whose
``test`` extra installs them all), the test fails instead."""
from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def optional(name: str) -> ModuleType | None:
    """The module ``name``, or None when it is not installed (a failure in CI)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if os.environ.get("FILTEX_CI") == "1":
            pytest.fail(f"CI must install {name} (the test extra has it)")
        return None
