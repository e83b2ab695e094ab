"""LIKE patterns compiled to matchers that run in linear time.

A pattern is split at its ``%`` wildcards into fixed-length segments (literal
characters and ``_``). Matching the first segment at the start, the last at
the end and each middle one at its leftmost place is exact for such patterns,
and never backtracks: each segment is found at most once per message. Simple
shapes get the cheapest matcher: ``==``, ``startswith``, ``endswith``, ``in``.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable

from .errors import EvaluationFailure


class PatternError(ValueError):
    """A pattern/escape pair that cannot be a LIKE pattern."""


def _segments(pattern: str, escape: str | None,
              mode: str = "amqp") -> list[list[str | None]]:
    """The pattern as segments between ``%``; in a segment ``None`` is ``_``.

    ``mode`` ``amqp``: the escape makes the next character literal, whatever it
    is, and may not end the pattern. ``jms`` (ActiveMQ and Artemis): it escapes
    only ``_``, ``%`` and itself; elsewhere, and at the end, it is an ordinary
    pattern character (a wildcard if it is one)."""
    if escape is not None and len(escape) != 1:
        raise PatternError(f"LIKE escape must be one character, not {escape!r}")
    segments: list[list[str | None]] = [[]]
    position, size = 0, len(pattern)
    while position < size:
        char = pattern[position]
        position += 1
        following = pattern[position] if position < size else None
        if char == escape and (mode == "amqp" or following in ("_", "%", escape)):
            if following is None:
                raise PatternError("LIKE pattern ends with its escape character")
            segments[-1].append(following)
            position += 1
        elif char == "%":
            segments.append([])
        elif char == "_":
            segments[-1].append(None)
        else:
            segments[-1].append(char)
    return segments


def _finder(segment: list[str | None]):
    """(anchored match at pos, leftmost search from pos) for one segment."""
    if None not in segment:
        text = "".join(segment)  # type: ignore[arg-type]
        return (lambda s, pos: s.startswith(text, pos),
                lambda s, pos: s.find(text, pos))
    regex = re.compile("".join("." if c is None else re.escape(c) for c in segment),
                       re.DOTALL)

    def search(s: str, pos: int) -> int:
        found = regex.search(s, pos)
        return -1 if found is None else found.start()
    return (lambda s, pos: regex.match(s, pos) is not None), search


@lru_cache(maxsize=512)
def compile_like(pattern: str, escape: str | None = None,
                 mode: str = "amqp") -> Callable[[str], bool]:
    """A function ``str -> bool`` for the pattern. Raises ``PatternError``."""
    segments = _segments(pattern, escape, mode)
    plain = [None not in seg for seg in segments]
    texts = ["".join(seg) if ok else None for seg, ok in zip(segments, plain)]  # type: ignore
    if len(segments) == 1:
        seg = segments[0]
        if plain[0]:
            text = texts[0]
            return lambda s: s == text
        size, match = len(seg), _finder(seg)[0]
        return lambda s: len(s) == size and match(s, 0)
    if all(plain):
        first, last = texts[0], texts[-1]
        middle = [t for t in texts[1:-1] if t]
        if not middle:
            if not last:
                return (lambda s: s.startswith(first)) if first else (lambda s: True)
            if not first:
                return lambda s: s.endswith(last)
        elif len(middle) == 1 and not first and not last:
            text = middle[0]
            return lambda s: text in s
    head, tail = segments[0], segments[-1]
    head_match = _finder(head)[0]
    tail_match = _finder(tail)[0]
    middles = [(len(seg), _finder(seg)[1]) for seg in segments[1:-1] if seg]
    head_len, tail_len = len(head), len(tail)

    def match(s: str) -> bool:
        if len(s) < head_len + tail_len or not head_match(s, 0):
            return False
        pos = head_len
        for size, search in middles:
            found = search(s, pos)
            if found < 0:
                return False
            pos = found + size
        end = len(s) - tail_len
        return end >= pos and tail_match(s, end)
    return match


def like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool]:
    """``compile_like`` for patterns computed per message: errors are failures."""
    try:
        return compile_like(pattern, escape)
    except PatternError as exc:
        raise EvaluationFailure(str(exc)) from None
