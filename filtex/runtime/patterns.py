"""LIKE patterns compiled to matchers that run in linear time.

A pattern is split at its ``%`` wildcards into fixed-length segments (literal
characters and ``_``). Matching the first segment at the start, the last at
the end and each middle one at its leftmost place is exact for such patterns,
and never backtracks: each segment is found at most once per message. Simple
shapes get the cheapest matcher: ``==``, ``startswith``, ``endswith``, ``in``.

Finding a middle segment that holds ``_`` must not cost (message length) x
(segment length): short segments use a regex (at most ``SHORT`` steps per
character, in C); long ones jump between occurrences of their longest literal
run with ``str.find`` and fall back to bit-parallel Shift-And, O(n * m / 64)
word operations, as soon as checking candidates costs more than scanning.

Compiled matchers are cached in a thread-safe LRU bounded in entries and in
bytes (an upper bound of what each keeps, ``entry_bytes``); patterns longer
than 1,024 characters are never kept. A pattern the message supplies is bounded before it
gets here (``Limits.max_pattern``): its cost is its length to compile, and at
most (value length) x (its longest ``_`` segment) / 64 word operations to run.
"""
from __future__ import annotations

import re
from typing import Any, Callable

from ..cache import BoundedCache
from ..errors import EvaluationFailure, excerpt

Segment = list  # of str (a literal character) or None (``_``)
Finder = tuple[Callable[[str, int], bool], Callable[[str, int], int]]

SHORT = 64                 # segments up to this long are searched with a regex
_REGEXES = 16              # regexes one pattern compiles at most (see ``_finder``)
_TABLE_BITS = 1 << 16      # Shift-And tables up to this size stay with the matcher
_CACHE_ENTRIES = 512
_CACHE_BYTES = 4 << 20       # what the kept matchers hold at most (``entry_bytes``)
_CACHE_PATTERN_CHARS = 1024  # longer patterns (computed from messages) are not kept


class PatternError(ValueError):
    """A pattern/escape pair that cannot be a LIKE pattern."""


def segments_of(pattern: str, escape: str | None,
              mode: str = "escape-any") -> list[list[str | None]]:
    """The pattern as segments between ``%``; in a segment ``None`` is ``_``.

    ``mode`` ``escape-any`` (amqp): the escape makes the next character literal,
    whatever it is, and may not end the pattern. ``escape-wildcards`` (jms, as
    ActiveMQ and Artemis): it escapes only ``_``, ``%`` and itself; elsewhere, and
    at the end, it is an ordinary pattern character (a wildcard if it is one)."""
    if escape is not None and len(escape) != 1:
        raise PatternError(f"LIKE escape must be one character, not {excerpt(escape)}")
    if escape is None or escape not in pattern:   # no escapes: split in C
        return [list(part) if "_" not in part else [None if c == "_" else c for c in part]
                for part in pattern.split("%")]
    segments: list[list[str | None]] = [[]]
    position, size = 0, len(pattern)
    while position < size:
        char = pattern[position]
        position += 1
        following = pattern[position] if position < size else None
        if char == escape and (mode == "escape-any" or following in ("_", "%", escape)):
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


def _literal_runs(segment: Segment) -> list[tuple[int, str]]:
    """The segment's maximal runs of literal characters, as (offset, text)."""
    runs, start = [], None
    for offset, char in enumerate(segment + [None]):
        if char is not None and start is None:
            start = offset
        elif char is None and start is not None:
            runs.append((start, "".join(segment[start:offset])))
            start = None
    return runs


def _shift_and_tables(segment: Segment) -> tuple[dict[str, int], int]:
    """Shift-And masks: bit j of ``masks[c]`` is set when position j accepts
    ``c``; ``wild`` (the ``_`` positions) is the mask of any other character.
    Built as binary digit strings, so in O(m x distinct characters) C steps."""
    size = len(segment)
    wild_row = bytes(49 if char is None else 48 for char in reversed(segment))
    places: dict[str, list[int]] = {}
    for offset, char in enumerate(segment):
        if char is not None:
            places.setdefault(char, []).append(size - 1 - offset)
    masks = {}
    for char, digits in places.items():
        row = bytearray(wild_row)
        for digit in digits:
            row[digit] = 49
        masks[char] = int(row, 2)
    return masks, int(wild_row, 2)


def _shift_and(s: str, start: int, tables: tuple[dict[str, int], int], size: int) -> int:
    """Leftmost place >= ``start`` of a segment of ``size``, or -1: bit j of
    ``state`` says whether the segment's first j+1 positions match so far
    (the masks have ``size`` bits, so bit ``size - 1`` is set iff state >= hit)."""
    masks, wild = tables
    get, hit, state = masks.get, 1 << (size - 1), 0
    for index in range(start, len(s)):
        state = ((state << 1) | 1) & get(s[index], wild)
        if state >= hit:
            return index - size + 1
    return -1


def _table_bytes(segment: Segment) -> int:
    """The bytes Shift-And tables for ``segment`` take if the finder keeps
    them (``_TABLE_BITS``), else 0: counted before they exist (``reserve``)."""
    distinct = len(set(segment) - {None})
    if distinct * len(segment) > _TABLE_BITS:
        return 0
    return distinct * (len(segment) // 7 + 100) + 200


def _long_finder(segment: Segment) -> Finder:
    """(anchored match, leftmost search) for a long segment holding ``_``,
    without a regex (Python's regex cache keeps what it compiles)."""
    size, runs = len(segment), _literal_runs(segment)
    if not runs:
        return (lambda s, pos: len(s) - pos >= size,
                lambda s, pos: pos if len(s) - pos >= size else -1)
    anchor_at, anchor = max(runs, key=lambda run: len(run[1]))
    others = sorted((run for run in runs if run[0] != anchor_at), key=lambda run: -len(run[1]))
    kept: list = []

    def match(s: str, pos: int) -> bool:
        return len(s) - pos >= size and all(s.startswith(text, pos + at) for at, text in runs)

    def search(s: str, pos: int) -> int:
        last = len(s) - size          # the last place the segment fits
        origin, spent = pos, 0
        while pos <= last:
            found = s.find(anchor, pos + anchor_at, last + anchor_at + len(anchor))
            if found < 0:
                return -1
            pos = found - anchor_at
            spent += 1
            for at, text in others:
                spent += 1
                if not s.startswith(text, pos + at):
                    break
            else:
                return pos
            pos += 1
            # Candidates cost more than scanning each character once would: scan.
            if spent > pos - origin + 2 * len(runs):
                tables = kept[0] if kept else _shift_and_tables(segment)
                if not kept and len(tables[0]) * size <= _TABLE_BITS:
                    kept.append(tables)
                return _shift_and(s, pos, tables, size)
        return -1
    search.reserve = _table_bytes(segment)  # type: ignore[attr-defined]  # see footprint
    return match, search


def _finder(segment: Segment, regexes: list[int]) -> Finder:
    """(anchored match at pos, leftmost search from pos) for one segment;
    ``regexes`` holds how many more regular expressions the pattern may
    compile (each costs about 20 us: a pattern of a thousand segments with
    ``_`` would take 20 ms to compile; past the allowance the finder of long
    segments serves, set up in a few steps a literal run)."""
    if None not in segment:
        text = "".join(segment)  # type: ignore[arg-type]
        return (lambda s, pos: s.startswith(text, pos),
                lambda s, pos: s.find(text, pos))
    if len(segment) > SHORT or regexes[0] <= 0:
        return _long_finder(segment)
    regexes[0] -= 1
    regex = re.compile("".join("." if c is None else re.escape(c) for c in segment),
                       re.DOTALL)

    def search(s: str, pos: int) -> int:
        found = regex.search(s, pos)
        return -1 if found is None else found.start()
    return (lambda s, pos: regex.match(s, pos) is not None), search


def _compile(pattern: str, escape: str | None, mode: str) -> Callable[[str], bool]:
    segments = segments_of(pattern, escape, mode)
    regexes = [_REGEXES]
    finders: dict[tuple[str | None, ...], Finder] = {}   # one for each distinct segment

    def finder(segment: Segment) -> Finder:
        key = tuple(segment)
        found = finders.get(key)
        if found is None:
            found = finders[key] = _finder(segment, regexes)
        return found

    plain = [None not in seg for seg in segments]
    texts = ["".join(seg) if ok else None for seg, ok in zip(segments, plain)]  # type: ignore
    if len(segments) == 1:
        seg = segments[0]
        if plain[0]:
            text = texts[0]
            return lambda s: s == text
        size, match_at = len(seg), finder(seg)[0]
        return lambda s: len(s) == size and match_at(s, 0)
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
    head_match = finder(head)[0]
    tail_match = finder(tail)[0]
    # a middle segment: its text (found with str.find) or its search function
    middles: list[tuple[int, Any]] = [(len(seg), text if text is not None else finder(seg)[1])
                                      for seg, text in zip(segments[1:-1], texts[1:-1]) if seg]
    head_len, tail_len = len(head), len(tail)

    def match(s: str) -> bool:
        if len(s) < head_len + tail_len or not head_match(s, 0):
            return False
        pos = head_len
        for size, search in middles:
            found = s.find(search, pos) if search.__class__ is str else search(s, pos)
            if found < 0:
                return False
            pos = found + size
        end = len(s) - tail_len
        return end >= pos and tail_match(s, end)
    return match


def entry_bytes(pattern: str) -> int:
    """An upper bound of what the matcher of ``pattern`` keeps, in bytes
    (``footprint`` measures at most about 470 a character, for a pattern of
    distinct three-character segments with ``_``; tests hold the bound over
    random and worst patterns). A bound, not a walk of the matcher: the walk
    would cost as much as compiling a pattern a message supplies."""
    return _ENTRY_OVERHEAD + _ENTRY_PER_CHARACTER * len(pattern)


_ENTRY_OVERHEAD, _ENTRY_PER_CHARACTER = 2048, 640
_cache = BoundedCache(_CACHE_ENTRIES, _CACHE_BYTES, lambda entry: entry[1])


def compile_like(pattern: str, escape: str | None = None,
                 mode: str = "escape-any") -> Callable[[str], bool]:
    """A function ``str -> bool`` for the pattern. Raises ``PatternError``.

    The last 512 patterns of at most 1024 characters are kept, 4 MiB of
    matchers at most (``entry_bytes``) (a filter's patterns come back with every message;
    longer ones are rebuilt)."""
    if len(pattern) > _CACHE_PATTERN_CHARS:
        return _compile(pattern, escape, mode)
    key = (pattern, escape, mode)
    found = _cache.get(key)
    if found is None:
        found = (_compile(pattern, escape, mode), entry_bytes(pattern))
        _cache.put(key, found)
    return found[0]


def cache_clear() -> None:
    """Forget every compiled LIKE pattern."""
    _cache.clear()


compile_like.cache_clear = cache_clear  # type: ignore[attr-defined]  # as lru_cache had


def like_matcher(pattern: str, escape: str | None) -> Callable[[str], bool]:
    """``compile_like`` for patterns computed per message: errors are failures."""
    try:
        return compile_like(pattern, escape)
    except PatternError as exc:
        raise EvaluationFailure(str(exc)) from None
