"""LIKE: every matcher filtex generates (inline expressions and the linear
matcher) agrees with a plain dynamic-programming reading of the pattern, and
none of them backtracks exponentially."""
from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from randomness import examples

import filtex
from filtex.runtime.patterns import PatternError, compile_like

from timing import growth


def dp_like(text: str, pattern: str, escape: str | None) -> bool:
    tokens, chars = [], iter(pattern)
    for char in chars:
        if char == escape:
            tokens.append(("lit", next(chars)))
        elif char in "%_":
            tokens.append((char, None))
        else:
            tokens.append(("lit", char))

    @lru_cache(maxsize=None)
    def match(t: int, s: int) -> bool:
        if t == len(tokens):
            return s == len(text)
        kind, char = tokens[t]
        if kind == "%":
            return match(t + 1, s) or (s < len(text) and match(t, s + 1))
        if s == len(text):
            return False
        return (kind == "_" or text[s] == char) and match(t + 1, s + 1)
    return match(0, 0)


patterns = st.text(alphabet="ab%_!", max_size=7).filter(lambda p: not p.endswith("!")
                                                        or p.endswith("!!"))
texts = st.text(alphabet="ab%_!", max_size=8)


@pytest.mark.slow
@settings(max_examples=examples(3000), deadline=None)
@given(patterns, texts, st.sampled_from([None, "!"]))
def test_generated_like_agrees_with_dynamic_programming(pattern, text, escape):
    try:
        compile_like(pattern, escape)
    except PatternError:
        return
    expected = dp_like(text, pattern, escape)
    assert compile_like(pattern, escape)(text) is expected
    sql_pattern = pattern.replace("'", "''")
    clause = f" ESCAPE '{escape}'" if escape else ""
    message = filtex.Message(application_properties={"s": text})
    assert filtex.compile_sql(f"s LIKE '{sql_pattern}'{clause}").evaluate(message) is expected
    assert filtex.compile_sql(f"s NOT LIKE '{sql_pattern}'{clause}").evaluate(message) is (
        not expected)


@pytest.mark.parametrize("pattern", ["%a%a%a%a%a%a%a%a%b", "%_%_%_%_%_%_%_%_%b",
                                     "a%a%a%a%a%a%a%a%a%a%a%b%"])
def test_pathological_patterns_stay_linear(pattern):
    """A backtracking matcher takes astronomically long here; a linear one,
    ten times as long for ten times the subject."""
    flt = filtex.compile_sql(f"s LIKE '{pattern}'")
    assert flt.evaluate(filtex.Message(application_properties={"s": "a" * 200_000})) is False

    def operation(n):
        message = filtex.Message(application_properties={"s": "a" * n})
        return lambda: flt.evaluate(message)
    assert growth(operation, 20_000) < 30


def test_rabbitmq_match_limit_counts_as_erlangs_pcre():
    """RabbitMQ's regex LIKE gives FALSE when PCRE hits its match limit: the
    count of PCRE's calls for a pattern that matches, checked on vectors
    recorded from Erlang/OTP 25's re:run with small limits
    (400 patterns with two or more % or a _, each at 6 limits)."""
    import json
    from pathlib import Path

    from filtex.dialects.rabbitmq import within_match_limit
    from filtex.runtime.patterns import segments_of
    vectors = json.loads((Path(__file__).parent / "like_limit_vectors.json").read_text())
    checked = misses = 0
    for case in vectors:
        segments = segments_of(case["pattern"], None)
        for limit, answer in zip(case["limits"], case["erlang"]):
            checked += 1
            misses += within_match_limit(segments, case["subject"], limit) != (answer == "m")
    assert checked == 2_400 and misses == 0, misses
    assert any("n" in case["erlang"] for case in vectors)   # limits that bite
