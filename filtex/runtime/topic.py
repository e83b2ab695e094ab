"""Legacy AMQP topic-binding patterns (``*.stock.#``) as linear-time matchers.

Words are separated by ``.``; ``*`` is exactly one word, ``#`` zero or more.
As for LIKE, the pattern splits at ``#`` into fixed-length runs of words; the
first run is matched at the start, the last at the end, each middle one at
its leftmost place, which is exact and never backtracks.

A middle run is found without trying it at every word (run x words): a run
of plain words with ``str.find`` on the subject text, a run with ``*`` by
Shift-And over the words, O(words x run / 64) word operations.
"""
from __future__ import annotations

from bisect import bisect_left
from functools import lru_cache
from itertools import accumulate
from typing import Callable


def _run_matches(words: list[str], run: list[str], at: int) -> bool:
    return all(token == "*" or token == words[at + i] for i, token in enumerate(run))


class _Subject:
    """A subject's words, and (built on first use) its text framed by dots
    with the offset of the dot before each word, to map ``str.find`` hits
    back to word indices."""
    __slots__ = ("text", "words", "_framed", "_lengths")

    def __init__(self, text: str) -> None:
        self.text, self.words = text, text.split(".")
        self._framed: str | None = None
        self._lengths: list[int] = []

    def _dot(self, index: int) -> int:
        """Offset in the framed text of the dot before word ``index``."""
        return self._lengths[index] + index

    def find_words(self, needle: str, pos: int, end: int) -> int:
        """Leftmost word index >= ``pos`` where the dot-framed ``needle`` of
        plain words occurs ending by word ``end``, or -1."""
        if self._framed is None:
            self._framed = "." + self.text + "."
            self._lengths = list(accumulate(map(len, self.words), initial=0))
        found = self._framed.find(needle, self._dot(pos), self._dot(end) + 1)
        if found < 0:
            return -1
        return bisect_left(range(len(self._lengths)), found, key=self._dot)


def _run_finder(run: list[str]) -> Callable[[_Subject, int, int], int]:
    """``(subject, pos, end) -> index``: the run's leftmost place at or after
    ``pos`` that ends by word ``end``, or -1."""
    if "*" not in run:
        needle = "." + ".".join(run) + "."
        return lambda subject, pos, end: subject.find_words(needle, pos, end)
    size, wild = len(run), 0
    masks: dict[str, int] = {}
    for bit, token in enumerate(run):
        if token == "*":
            wild |= 1 << bit
        else:
            masks[token] = masks.get(token, 0) | 1 << bit
    masks = {token: mask | wild for token, mask in masks.items()}
    hit = 1 << (size - 1)

    def shift_and(subject: _Subject, pos: int, end: int) -> int:
        words, get, state = subject.words, masks.get, 0
        for index in range(pos, end):
            state = ((state << 1) | 1) & get(words[index], wild)
            if state >= hit:                  # bit size - 1, the highest a mask has
                return index - size + 1
        return -1
    return shift_and


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
    finders = [(len(run), _run_finder(run)) for run in middles]
    anywhere = len(runs) > 1
    only_hash = pattern == "#"

    def match(subject: object) -> bool:
        if not issubclass(type(subject), str):
            return only_hash
        target = _Subject(str.__str__(subject))   # its exact characters
        words = target.words
        if not anywhere:
            return len(words) == len(head) and _run_matches(words, head, 0)
        if len(words) < len(head) + len(tail) + sum(map(len, middles)):
            return False
        if not _run_matches(words, head, 0):
            return False
        pos, end = len(head), len(words) - len(tail)
        for size, find in finders:
            found = find(target, pos, end)
            if found < 0:
                return False
            pos = found + size
        return end >= pos and _run_matches(words, tail, end)
    return match
