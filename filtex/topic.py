"""Legacy AMQP topic-binding patterns (``*.stock.#``) as linear-time matchers.

Words are separated by ``.``; ``*`` is exactly one word, ``#`` zero or more.
As for LIKE, the pattern splits at ``#`` into fixed-length runs of words; the
first run is matched at the start, the last at the end, each middle one at
its leftmost place, which is exact and never backtracks.
"""
from __future__ import annotations

from functools import lru_cache
from typing import Callable


def _run_matches(words: list[str], run: list[str], at: int) -> bool:
    return all(token == "*" or token == words[at + i] for i, token in enumerate(run))


@lru_cache(maxsize=256)
def compile_topic(pattern: str) -> Callable[[object], bool]:
    """A function ``subject -> bool``; a missing subject matches only ``#``."""
    runs: list[list[str]] = [[]]
    for token in pattern.split("."):
        if token == "#":
            runs.append([])
        else:
            runs[-1].append(token)
    head, tail, middles = runs[0], runs[-1], [r for r in runs[1:-1] if r]
    anywhere = len(runs) > 1
    only_hash = pattern == "#"

    def match(subject: object) -> bool:
        if not isinstance(subject, str):
            return only_hash
        words = str(subject).split(".")
        if not anywhere:
            return len(words) == len(head) and _run_matches(words, head, 0)
        if len(words) < len(head) + len(tail) + sum(map(len, middles)):
            return False
        if not _run_matches(words, head, 0):
            return False
        pos = len(head)
        for run in middles:
            last = len(words) - len(tail) - len(run)
            while pos <= last and not _run_matches(words, run, pos):
                pos += 1
            if pos > last:
                return False
            pos += len(run)
        end = len(words) - len(tail)
        return end >= pos and _run_matches(words, tail, end)
    return match
