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


def primary_language(tag: str) -> str | None:
    """The lower-case primary language of a well-formed RFC 5646 tag ('' for
    private-use and grandfathered tags), or None if the tag is malformed."""
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


def _after(text: str, index: int) -> str | None:
    return next((c for c in text[index + 1:] if _stops(c)), None)


def _before(text: str, index: int) -> str | None:
    return next((c for c in reversed(text[:index]) if _stops(c)), None)


def lower(text: str, language: str) -> str:
    if language in ("tr", "az"):
        out = []
        for i, char in enumerate(text):
            if char == "\u0130":
                out.append("i")
            elif char == DOT_ABOVE and _before(text, i) == "I":
                continue                      # I + dot above is plain i
            elif char == "I":
                out.append("i" if _after(text, i) == DOT_ABOVE else "\u0131")
            else:
                out.append(char)
        text = "".join(out)
    elif language == "lt":
        out = []
        for i, char in enumerate(text):
            following = _after(text, i)
            if char in "IJ\u012e" and following and unicodedata.combining(following) == 230:
                out.append({"I": "i", "J": "j", "\u012e": "\u012f"}[char] + DOT_ABOVE)
            elif char in "\u00cc\u00cd\u0128":
                out.append("i" + DOT_ABOVE + {"\u00cc": "\u0300", "\u00cd": "\u0301",
                                              "\u0128": "\u0303"}[char])
            else:
                out.append(char)
        text = "".join(out)
    return text.lower()


def upper(text: str, language: str) -> str:
    if language in ("tr", "az"):
        text = text.replace("i", "\u0130")
    elif language == "lt" and DOT_ABOVE in text:
        text = "".join(c for i, c in enumerate(text)
                       if not (c == DOT_ABOVE and _before(text, i) in _SOFT_DOTTED))
    return text.upper()
