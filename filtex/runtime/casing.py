"""LOWER/UPPER with a language tag: RFC 5646 tag syntax and the
language-sensitive rules of Unicode's SpecialCasing.txt (tr, az, lt).

Python's ``str.lower``/``str.upper`` give the full, language-independent
mappings; the few language rules are applied to the characters they concern
first, then Python maps the rest.
"""
from __future__ import annotations

import re
import unicodedata

_ALNUM = "[A-Za-z0-9]"
_LANGUAGE = r"(?:[A-Za-z]{2,3}(?:-[A-Za-z]{3}){0,3}|[A-Za-z]{4}|[A-Za-z]{5,8})"
_LANGTAG = re.compile(
    rf"(?P<language>{_LANGUAGE})"
    r"(?:-[A-Za-z]{4})?"                                   # script
    r"(?:-(?:[A-Za-z]{2}|[0-9]{3}))?"                      # region
    rf"(?:-(?:{_ALNUM}{{5,8}}|[0-9]{_ALNUM}{{3}}))*"        # variants
    rf"(?:-[0-9A-WYZa-wyz](?:-{_ALNUM}{{2,8}})+)*"         # extensions
    rf"(?:-[xX](?:-{_ALNUM}{{1,8}})+)?")                   # private use
_PRIVATE_USE = re.compile(rf"[xX](?:-{_ALNUM}{{1,8}})+")
_GRANDFATHERED = frozenset(t.lower() for t in (
    "en-GB-oed i-ami i-bnn i-default i-enochian i-hak i-klingon i-lux i-mingo i-navajo "
    "i-pwn i-tao i-tay i-tsu sgn-BE-FR sgn-BE-NL sgn-CH-DE art-lojban cel-gaulish "
    "no-bok no-nyn zh-guoyu zh-hakka zh-min zh-min-nan zh-xiang").split())


MAX_TAG = 256


def primary_language(tag: str) -> str | None:
    """The lower-case primary language of a well-formed RFC 5646 tag ('' for
    private-use and grandfathered tags), or None if the tag is malformed or
    longer than any real tag (``MAX_TAG``: the regex need not see long text)."""
    if len(tag) > MAX_TAG:
        return None
    if tag.lower() in _GRANDFATHERED or _PRIVATE_USE.fullmatch(tag):
        return ""
    found = _LANGTAG.fullmatch(tag)
    return None if found is None else found.group("language").split("-")[0].lower()


DOT_ABOVE = "\u0307"
# Soft_Dotted characters (PropList.txt) that can precede a combining dot above.
_SOFT_DOTTED = frozenset("ij\u012f\u0249\u0268\u029d\u02b2\u03f3\u0456\u0458\u1d62\u1d96"
                         "\u1da4\u1da8\u1e2d\u1ecb\u2071\u2148\u2149\u2c7c")


def _stops(char: str) -> bool:
    """Combining class 0 or 230: where SpecialCasing's contexts look."""
    return unicodedata.combining(char) in (0, 230)


def _next_stops(text: str) -> list[str | None]:
    """For each index, the nearest later character of class 0 or 230 (None if
    there is none): one backward pass, where a scan per index is quadratic."""
    after: list[str | None] = [None] * len(text)
    following = None
    for index in range(len(text) - 1, -1, -1):
        after[index] = following
        char = text[index]
        if _stops(char):
            following = char
    return after


_LT_ACCENTED = {0xCC: "i\u0307\u0300", 0xCD: "i\u0307\u0301", 0x128: "i\u0307\u0303"}
_LT_DOTTED = {"I": "i" + DOT_ABOVE, "J": "j" + DOT_ABOVE, "\u012e": "\u012f" + DOT_ABOVE}


def lower(text: str, language: str) -> str:
    """Full lower-casing with the tr/az/lt rules. The contexts (the nearest
    class 0 or 230 character before or after) come from one forward running
    variable and one backward pass, so the cost is linear."""
    if language in ("tr", "az"):
        if "I" not in text:
            return text.replace("\u0130", "i").lower()
        after, previous, out = _next_stops(text), None, []
        for index, char in enumerate(text):
            if char == "\u0130":
                out.append("i")
            elif char == DOT_ABOVE and previous == "I":
                pass                          # I + dot above is plain i
            elif char == "I":
                out.append("i" if after[index] == DOT_ABOVE else "\u0131")
            else:
                out.append(char)
            if _stops(char):
                previous = char
        text = "".join(out)
    elif language == "lt":
        if "I" in text or "J" in text or "\u012e" in text:
            after, out = _next_stops(text), []
            for index, char in enumerate(text):
                following = after[index]
                if char in _LT_DOTTED and following and unicodedata.combining(following) == 230:
                    out.append(_LT_DOTTED[char])
                else:
                    out.append(char)
            text = "".join(out)
        text = text.translate(_LT_ACCENTED)
    return text.lower()


def upper(text: str, language: str) -> str:
    """Full upper-casing with the tr/az/lt rules, in one pass."""
    if language in ("tr", "az"):
        text = text.replace("i", "\u0130")
    elif language == "lt" and DOT_ABOVE in text:
        out, previous = [], None
        for char in text:
            if not (char == DOT_ABOVE and previous in _SOFT_DOTTED):
                out.append(char)
            if _stops(char):
                previous = char
        text = "".join(out)
    return text.upper()
