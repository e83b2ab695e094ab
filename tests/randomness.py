"""How much random testing a run does: fixed by default, opt-in exploration.

The suite is deterministic: hypothesis runs derandomised (each test's examples
come from a seed derived from the test itself, the same in every run, with no
example database replaying earlier runs' failures), and every other random
test draws from ``random.Random(fixed seed)``. Long random exploration is a
profile of its own:

    FILTEX_HYPOTHESIS=explore python -m pytest -m slow

draws new examples each run, keeps failures in ``.hypothesis/`` to replay
them, and multiplies every test's number of examples by
``FILTEX_HYPOTHESIS_SCALE`` (10 unless set).
"""
from __future__ import annotations

import os

from hypothesis import settings
from hypothesis.database import DirectoryBasedExampleDatabase

PROFILE = os.environ.get("FILTEX_HYPOTHESIS", "ci")
if PROFILE not in ("ci", "explore"):
    raise RuntimeError(f"FILTEX_HYPOTHESIS is 'ci' or 'explore', not {PROFILE!r}")
SCALE = int(os.environ.get("FILTEX_HYPOTHESIS_SCALE", "10")) if PROFILE == "explore" else 1

settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True,
                          database=DirectoryBasedExampleDatabase(".hypothesis/examples"))
settings.load_profile(PROFILE)


def examples(count: int) -> int:
    """A test's number of hypothesis examples in this run's profile."""
    return count * SCALE
