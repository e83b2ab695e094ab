"""LIKE, topic-binding and language-sensitive casing run in time linear in the
message value, and give exactly the results of simple reference readings.

Equivalence: each matcher against an independent reference (a fully
anchored regex for LIKE, a recursive matcher for topics, the former
quadratic implementation for casing). Growth: the time at 10n over the time
at n stays near 10 (a quadratic algorithm gives 100).
"""
from __future__ import annotations


import re
import threading
import unicodedata
from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from randomness import examples

from filtex.runtime import casing
from filtex.runtime import patterns as like
from filtex.runtime.patterns import PatternError, compile_like
from filtex.runtime.topic import compile_topic
from timing import growth

# --- LIKE ------------------------------------------------------------------------


def reference_like(pattern: str, escape: str | None, mode: str) -> re.Pattern | None:
    """The pattern as one anchored regex (None for a PatternError), read
    straight from the rules: ``amqp`` escapes any character and may not end
    the pattern; ``jms`` escapes only ``_``, ``%`` and itself."""
    parts, chars = [], list(pattern)
    while chars:
        char = chars.pop(0)
        if char == escape and (mode == "escape-any" or (chars and chars[0] in "_%" + escape)):
            if not chars:
                return None
            parts.append(re.escape(chars.pop(0)))
        else:
            parts.append({"%": ".*", "_": "."}.get(char, re.escape(char)))
    return re.compile("".join(parts), re.DOTALL)


def check_like(pattern: str, subject: str, escape: str | None, mode: str) -> None:
    expected = reference_like(pattern, escape, mode)
    if expected is None:
        with pytest.raises(PatternError):
            compile_like(pattern, escape, mode)
        return
    assert compile_like(pattern, escape, mode)(subject) is (
        expected.fullmatch(subject) is not None), (pattern, subject, escape, mode)


LIKE_CHARS = "ab_%\\"
escapes = st.sampled_from([None, "\\", "a", "%"])
modes = st.sampled_from(["escape-any", "escape-wildcards"])


@pytest.mark.slow
@settings(max_examples=examples(1500), deadline=None)
@given(st.text(LIKE_CHARS, max_size=10), st.text(LIKE_CHARS, max_size=14), escapes, modes)
def test_like_agrees_with_an_anchored_regex(pattern, subject, escape, mode):
    check_like(pattern, subject, escape, mode)


@pytest.mark.slow
@settings(max_examples=examples(1000), deadline=None)
@given(st.text(LIKE_CHARS, max_size=10), st.text(LIKE_CHARS, max_size=14), escapes, modes)
def test_like_without_regexes_agrees(pattern, subject, escape, mode):
    """Every ``_`` segment through the long-segment finder (find + Shift-And)."""
    short, like.SHORT = like.SHORT, 0
    like.cache_clear()
    try:
        check_like(pattern, subject, escape, mode)
    finally:
        like.SHORT = short
        like.cache_clear()


def naive_search(segment: list, subject: str, start: int) -> int:
    for at in range(start, len(subject) - len(segment) + 1):
        if all(c is None or c == subject[at + i] for i, c in enumerate(segment)):
            return at
    return -1


@pytest.mark.slow
@settings(max_examples=examples(1500), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", None]), min_size=1, max_size=12),
       st.text("ab", max_size=30), st.integers(0, 8))
def test_shift_and_finds_the_leftmost_place(segment, subject, start):
    tables = like._shift_and_tables(segment)
    assert like._shift_and(subject, start, tables, len(segment)) == \
        naive_search(segment, subject, start)


def test_dense_candidates_fall_back_to_shift_and(monkeypatch):
    """Long segments with candidates everywhere: the fallback runs, and agrees."""
    calls = []
    real = like._shift_and

    def counting(*args):
        calls.append(args[1])
        return real(*args)
    monkeypatch.setattr(like, "_shift_and", counting)
    like.cache_clear()
    pieces = ["a_", "_a", "aa", "a_", "ab"]
    for seed in range(300):
        body = "".join(pieces[(seed * 7 + i * i) % len(pieces)] for i in range(35 + seed % 20))
        pattern = "%" + body + "b%" + ("a_" * 40 + "b%" if seed % 3 else "")
        subject = "".join("b" if (i * 31 + seed) % (97 + seed % 50) == 0 else "a"
                          for i in range(2000 + seed * 3))
        check_like(pattern, subject, None, "escape-any")
    like.cache_clear()
    assert calls


def test_like_cache_is_bounded_and_thread_safe():
    like.cache_clear()
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def worker(number: int) -> None:
        try:
            barrier.wait()
            for i in range(300):
                pattern = f"%{number}_{i}%" if i % 5 else "%a_" * (400 + i) + "%"
                subject = f"x{number}y{i}z" if i % 5 else "ab" * 700
                assert compile_like(pattern)(subject) is (i % 5 != 0 or 400 + i < 700)
                if i % 50 == number:
                    like.cache_clear()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(like._cache) <= like._CACHE_ENTRIES
    assert all(len(key[0]) <= like._CACHE_PATTERN_CHARS for key in like._cache)
    like.cache_clear()
    assert not like._cache
    compile_like("%a%b%")
    assert len(like._cache) == 1
    compile_like.cache_clear()
    assert not like._cache


# --- topic bindings --------------------------------------------------------------


def reference_topic(pattern: str, subject: object) -> bool:
    if not isinstance(subject, str):
        return pattern == "#"
    tokens, words = pattern.split("."), subject.split(".")

    @lru_cache(maxsize=None)
    def match(t: int, w: int) -> bool:
        if t == len(tokens):
            return w == len(words)
        if tokens[t] == "#":
            return match(t + 1, w) or (w < len(words) and match(t, w + 1))
        return w < len(words) and tokens[t] in ("*", words[w]) and match(t + 1, w + 1)
    return match(0, 0)


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "", "*", "#", "a*", "ab"]), min_size=1, max_size=8),
       st.one_of(st.none(), st.integers(),
                 st.lists(st.sampled_from(["a", "b", "", "ab", "a*", "#"]), max_size=12)))
def test_topic_agrees_with_a_recursive_matcher(tokens, words):
    pattern = ".".join(tokens)
    subject = ".".join(words) if isinstance(words, list) else words
    assert compile_topic(pattern)(subject) is reference_topic(pattern, subject)


# --- casing ----------------------------------------------------------------------
# The former implementation, quadratic (each context rescans the text), as reference.

def _old_stops(char):
    return unicodedata.combining(char) in (0, 230)


def _old_after(text, index):
    return next((c for c in text[index + 1:] if _old_stops(c)), None)


def _old_before(text, index):
    return next((c for c in reversed(text[:index]) if _old_stops(c)), None)


def old_lower(text, language):
    if language in ("tr", "az"):
        out = []
        for i, char in enumerate(text):
            if char == "\u0130":
                out.append("i")
            elif char == "\u0307" and _old_before(text, i) == "I":
                continue
            elif char == "I":
                out.append("i" if _old_after(text, i) == "\u0307" else "\u0131")
            else:
                out.append(char)
        text = "".join(out)
    elif language == "lt":
        out = []
        for i, char in enumerate(text):
            following = _old_after(text, i)
            if char in "IJ\u012e" and following and unicodedata.combining(following) == 230:
                out.append({"I": "i", "J": "j", "\u012e": "\u012f"}[char] + "\u0307")
            elif char in "\u00cc\u00cd\u0128":
                out.append("i" + "\u0307" + {"\u00cc": "\u0300", "\u00cd": "\u0301",
                                             "\u0128": "\u0303"}[char])
            else:
                out.append(char)
        text = "".join(out)
    return text.lower()


def old_upper(text, language):
    if language in ("tr", "az"):
        text = text.replace("i", "\u0130")
    elif language == "lt" and "\u0307" in text:
        text = "".join(c for i, c in enumerate(text)
                       if not (c == "\u0307" and _old_before(text, i) in casing._SOFT_DOTTED))
    return text.upper()


CASING_CHARS = ["I", "i", "J", "j", "\u0130", "\u0131", "\u0307", "\u0300", "\u0301",
                "\u0303", "\u00cc", "\u00cd", "\u0128", "\u012e", "\u012f", "a", "\u0316",
                "\u0345", "\u05b0", "\u0334", "\u0268", " "]


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(st.lists(st.sampled_from(CASING_CHARS), max_size=14).map("".join),
       st.sampled_from(["tr", "az", "lt", "", "en"]))
def test_casing_agrees_with_the_former_implementation(text, language):
    assert casing.lower(text, language) == old_lower(text, language)
    assert casing.upper(text, language) == old_upper(text, language)


def test_overlong_language_tags_are_refused():
    assert casing.primary_language("en-" + "-".join(["abcde"] * 20)) == "en"
    assert casing.primary_language("en-" + "-".join(["abcde"] * 60)) is None
    assert casing.primary_language("a" * 100_000) is None


# --- growth ----------------------------------------------------------------------


_growth = growth


def _like_case(pattern):
    def make(n):
        subject = "a" * n
        matcher = compile_like(pattern)
        return lambda: matcher(subject)
    return make


@pytest.mark.slow
@pytest.mark.parametrize("pattern", ["%a_a_a_a_a_a_a_a_b%", "%" + "a_" * 200 + "b%"])
def test_like_grows_linearly(pattern):
    assert _growth(_like_case(pattern), 30_000) < 25


@pytest.mark.slow
def test_computed_like_pattern_grows_near_linearly():
    """Pattern and subject both grow: Shift-And is O(n x m / 64), so exact
    linearity is impossible; the states stay small next to the per-character
    cost, and the ratio stays far below the 100 of a regex scan."""
    def make(n):
        pattern, subject = "%" + "a_" * (n // 100) + "b%", "a" * n

        def run():
            like.cache_clear()
            return compile_like(pattern)(subject)
        return run
    assert _growth(make, 20_000) < 40


@pytest.mark.slow
def test_topic_grows_linearly():
    matcher = compile_topic("#." + "*.a." * 50 + "b.#")

    def make(n):
        subject = "a." * n
        return lambda: matcher(subject)
    assert _growth(make, 10_000) < 25


@pytest.mark.slow
@pytest.mark.parametrize("function", [casing.lower, casing.upper])
@pytest.mark.parametrize("language", ["lt", "tr"])
@pytest.mark.parametrize("unit", ["\u0316", "I\u0307"])
def test_casing_grows_linearly(function, language, unit):
    def make(n):
        text = ("I" + unit * n) if unit == "\u0316" else unit * n
        return lambda: function(text, language)
    assert _growth(make, 5_000) < 25
