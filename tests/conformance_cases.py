"""Loading conformance cases: the shared suites and filtex's own.

Shared cases live in ``../shared/conformance`` beside the repository (CI puts
``shared/`` next to the clone); ``FILTEX_SHARED`` overrides the location.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OWN_CASES = REPO / "tests" / "conformance"


def shared_dir() -> Path:
    root = Path(os.environ.get("FILTEX_SHARED", REPO.parent / "shared"))
    return root / "conformance"


def case_files() -> list[Path]:
    shared = shared_dir()
    if not shared.is_dir():
        raise RuntimeError(f"shared conformance cases not found at {shared}: put the "
                           "workplace's shared/ beside the repository or set FILTEX_SHARED")
    return sorted(shared.glob("*.jsonl")) + sorted(OWN_CASES.glob("*.jsonl"))


def load_cases() -> list[tuple[str, dict]]:
    """(``file:id``, case) for every case of every file."""
    cases = []
    for path in case_files():
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    case = json.loads(line)
                    cases.append((f"{path.stem}:{case.get('id', number)}", case))
    return cases
