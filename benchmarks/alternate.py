"""The side-by-side loop of the ``*_against`` benchmarks: a child script run in a
fresh process in another checkout and in this one, alternated, round after round,
so both see the same machine (read the ratios)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Iterator

HERE = Path(__file__).resolve().parents[1]


def alternated(child: str, before: Path, rounds: int
               ) -> Iterator[tuple[int, list[float], list[float]]]:
    """(round, this checkout's numbers, the other's) for each round: ``child``
    gets the checkout's path as its argument and prints numbers."""
    for round_ in range(1, rounds + 1):
        found = {}
        for name, checkout in (("before", before.resolve()), ("now", HERE)):
            out = subprocess.run([sys.executable, "-c", child, str(checkout)], check=True,
                                 capture_output=True, text=True).stdout.split()
            found[name] = [float(v) for v in out]
        yield round_, found["now"], found["before"]
