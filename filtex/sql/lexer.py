"""Tokens of SQL filter text (PLY lexer, built once per process).

The master regular expression is the same for every dialect; what a dialect
reads differently (keywords and their case, identifier, string, number and
binary forms, ``!=`` and ``%``) is decided in the token rules from the
``Dialect`` the lexer is cloned with.

Two tokens depend on context, which is why ``SqlLexer.token`` remembers the
previous token: ``[`` right after a field reference opens a positional
reference ``x[0]``, elsewhere a delimited identifier ``[order-status]``; and a
keyword right after ``.`` is a plain name (``a.in``).
"""
from __future__ import annotations

import re
import threading

import ply.lex as lex

from ..errors import DefinitionProblem, excerpt
from ..limits import RESOURCE_LIMIT
from ..dialects import Dialect

KEYWORDS = ("AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
            "EXISTS", "TRUE", "FALSE", "INF", "NAN")

tokens = KEYWORDS + (
    "IDENT", "DIDENT", "STRING", "INTEGER", "DECIMAL", "APPROX", "BINARY",
    "EQ", "NE", "LT", "LE", "GT", "GE", "PLUS", "MINUS", "TIMES", "DIVIDE", "MOD",
    "LPAREN", "RPAREN", "COMMA", "DOT", "LBRACKET", "RBRACKET", "COLON", "PARAM",
)

# Number constants longer than this are refused before any conversion (Python's
# int() of a long digit string is quadratic and refuses 4,300 digits and more).
MAX_NUMBER_TEXT = 1_000

_FIELD_END = frozenset({"IDENT", "DIDENT", "RBRACKET"})
_HYPHENATED = {"application-properties": "application_properties",
               "delivery-annotations": "delivery_annotations",
               "message-annotations": "message_annotations"}

_INF = float("inf")
_HYPHENATED_TAIL = re.compile(r"[A-Za-z0-9_$-]*")


class _Rules:
    """PLY token rules. Function rules are tried in the order written."""

    tokens = tokens
    t_ignore = " \t\r\f"

    def t_VT(self, t):
        r"\v"
        if "\v" not in t.lexer.dialect.whitespace:
            raise DefinitionProblem("unexpected character '\\x0b'", t.lexpos)

    t_LE = r"<="
    t_GE = r">="
    t_EQ = r"="
    t_LT = r"<"
    t_GT = r">"
    t_PLUS = r"\+"
    t_MINUS = r"-"
    t_TIMES = r"\*"
    t_DIVIDE = r"/"
    t_LPAREN = r"\("
    t_RPAREN = r"\)"
    t_COMMA = r","
    t_DOT = r"\."
    t_RBRACKET = r"\]"
    t_COLON = r":"

    def t_COMMENT(self, t):
        r"/\*|--"
        # JMS selectors as the peers parse them: /* */ and -- to the end of a line
        # (a line comment needs its line end). The closer is found with str.find
        # and remembered, so runs of '-' or '/*' stay linear.
        lexer = t.lexer
        end = -1
        if lexer.dialect.comments:
            if t.value == "--":
                end = _find_cached(lexer, "eol", t.lexpos + 2)
                if end >= 0:
                    end += 2 if lexer.lexdata.startswith("\r\n", end) else 1
            else:
                end = _find_cached(lexer, "*/", t.lexpos + 2)
                if end >= 0:
                    end += 2
        if end < 0:   # not a comment: one '/' or '-'
            lexer.lexpos = t.lexpos + 1
            t.type, t.value = ("DIVIDE", "/") if t.value[0] == "/" else ("MINUS", "-")
            return t
        lexer.lineno += lexer.lexdata.count("\n", t.lexpos, end)
        lexer.lexpos = end

    def t_NE(self, t):
        r"<>|!="
        if t.value == "!=" and not t.lexer.dialect.not_equal_bang:
            raise DefinitionProblem(f"'!=' is not an operator in the {t.lexer.dialect.name} "
                                    "dialect (use <>)", t.lexpos)
        return t

    def t_MOD(self, t):
        r"%"
        if not t.lexer.dialect.modulo:
            raise DefinitionProblem(f"'%' is not an operator in the {t.lexer.dialect.name} "
                                    "dialect", t.lexpos)
        return t

    def t_newline(self, t):
        r"\n+"
        t.lexer.lineno += len(t.value)

    def t_SECTION(self, t):
        r"(?:application-properties|delivery-annotations|message-annotations)(?=[ \t\r\n]*\.)"
        dialect = t.lexer.dialect
        if not dialect.hyphenated_sections:
            # Not a section here: read as the identifier it starts with.
            t.lexer.lexpos = t.lexpos + t.value.index("-")
            t.type, t.value = "IDENT", t.value[:t.value.index("-")]
            return self._identifier(t)
        t.type, t.value = "IDENT", _HYPHENATED[t.value]
        return t

    def t_BINARY(self, t):
        r"0[xX][0-9A-Za-z]*"
        dialect = t.lexer.dialect
        digits = t.value[2:]
        if dialect.binary_constants is None:  # a hexadecimal integer (Java)
            if not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise DefinitionProblem(f"malformed hexadecimal number {excerpt(t.value)}",
                                        t.lexpos)
            if len(digits.lstrip("0")) > 16 or int(digits, 16) > (1 << 63) - 1:
                raise DefinitionProblem(
                    f"hexadecimal number {excerpt(t.value)} is larger than a long", t.lexpos)
            t.type, t.value = "INTEGER", dialect.integer_constant(int(digits, 16))
            return t
        hex_digits = "[0-9A-F]+" if dialect.binary_constants == "upper" else "[0-9A-Fa-f]+"
        if not digits or not re.fullmatch(hex_digits, digits):
            case = " (upper-case hex digits)" if dialect.binary_constants == "upper" else ""
            raise DefinitionProblem(f"malformed binary constant {excerpt(t.value)}{case}",
                                    t.lexpos)
        if len(digits) % 2:
            raise DefinitionProblem(
                f"binary constant {excerpt(t.value)} needs an even number of hex digits",
                t.lexpos)
        t.value = bytes.fromhex(digits)
        return t

    def t_NUMBER(self, t):
        r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z_0-9]*"
        text, dialect = t.value, t.lexer.dialect
        if len(text) > MAX_NUMBER_TEXT:
            raise DefinitionProblem(f"number constant {excerpt(text, 20)} is longer than "
                                    f"{MAX_NUMBER_TEXT:,} characters", t.lexpos)
        for pattern, kind, convert in dialect.number_forms:
            if pattern.fullmatch(text):
                break
        else:
            raise DefinitionProblem(f"malformed number {excerpt(text)}", t.lexpos)
        if dialect.octal_integers and kind == "INTEGER" and text[0] == "0" \
                and int(text, 8) > (1 << 63) - 1:
            raise DefinitionProblem(f"octal number {excerpt(text)} is larger than a long",
                                    t.lexpos)
        limit = dialect.max_integer
        if kind == "INTEGER" and limit is not None and (
                len(text.lstrip("0")) > len(str(limit)) or int(text) > limit):
            shown = "2^64-1" if limit == (1 << 64) - 1 else limit
            raise DefinitionProblem(f"integer constant {excerpt(text)} is larger than {shown}",
                                    t.lexpos)
        t.type, t.value = kind, convert(text)
        if kind == "APPROX" and dialect.finite_literals and t.value in (_INF, -_INF):
            raise DefinitionProblem(f"number constant {excerpt(text)} is beyond a double's "
                                    f"range ({dialect.name} cannot read it)", t.lexpos)
        return t

    def t_STRING(self, t):
        r"'|\""
        # Scanned with str.find rather than a regular expression: linear, and a
        # few bytes of memory per character whatever the string holds.
        quote, lexer = t.value, t.lexer
        text = _quoted(lexer.lexdata, t.lexpos)
        lexer.lexpos = t.lexpos + 2 + len(text)
        value = text.replace(quote * 2, quote)
        if quote == '"' and lexer.dialect.quoted_identifiers:
            t.type, t.value = "DIDENT", value
            return t
        if quote not in lexer.dialect.string_quotes:
            raise DefinitionProblem(f"strings are quoted with {lexer.dialect.string_quotes} "
                                    f"in the {lexer.dialect.name} dialect", t.lexpos)
        t.value = value
        lexer.lineno += value.count("\n")
        return t

    def t_PARAM(self, t):
        r"@[A-Za-z_][A-Za-z0-9_]*"
        if t.lexer.parameters is None:
            raise DefinitionProblem("unexpected character '@' (a parameter needs "
                                    "compile_sql(..., parameters={...}))", t.lexpos)
        t.value = t.value[1:]
        return t

    def t_LBRACKET(self, t):
        r"\["
        if t.lexer.filtex_last in _FIELD_END:
            return t
        if t.lexer.dialect.delimited_identifiers is None:
            raise DefinitionProblem(f"unexpected character '[' (no delimited identifiers in "
                                    f"the {t.lexer.dialect.name} dialect)", t.lexpos)
        return _delimited_identifier(t)

    def t_IDENT(self, t):
        r"[^\W\d][\w$]*|\$[\w$]*"
        return self._identifier(t)

    def _identifier(self, t):
        lexer = t.lexer
        dialect = lexer.dialect
        if dialect.hyphenated_identifiers:   # Artemis's hyphenated_props: a-b-1 is one name
            tail = _HYPHENATED_TAIL.match(lexer.lexdata, t.lexpos + len(t.value))
            end = tail.end() if tail is not None else t.lexpos + len(t.value)
            t.value, lexer.lexpos = lexer.lexdata[t.lexpos:end], end
        # Keywords are ASCII: folding other letters would read 'ıs' as IS.
        upper = t.value.upper() if t.value.isascii() else t.value
        if lexer.filtex_last != "DOT":
            if upper in dialect.keywords:
                if dialect.keyword_case == "any" or upper == t.value:
                    t.type = upper
                    return t
                raise DefinitionProblem(f"keyword {excerpt(t.value)} must be written {upper} in "
                                        f"the {dialect.name} dialect", t.lexpos)
            if upper in dialect.reserved and not (
                    upper == t.value and upper in dialect.functions):
                raise DefinitionProblem(f"{excerpt(t.value)} is a reserved word in the "
                                        f"{dialect.name} dialect", t.lexpos)
        if not re.fullmatch(lexer.identifier_re, t.value):
            raise DefinitionProblem(f"malformed identifier {excerpt(t.value)}", t.lexpos)
        return t

    def t_error(self, t):
        raise DefinitionProblem(f"unexpected character {t.value[0]!r}", t.lexpos)


def _quoted(data: str, start: int) -> str:
    """The raw text between the quote at ``start`` and its closing quote
    (doubled quotes kept doubled)."""
    quote, pos = data[start], start + 1
    while True:
        end = data.find(quote, pos)
        if end < 0:
            raise DefinitionProblem("unterminated string constant", start)
        if not data.startswith(quote, end + 1):
            return data[start + 1:end]
        pos = end + 2


_EOL = re.compile(r"[\r\n]")


def _find_cached(lexer, what: str, start: int) -> int:
    """The first ``*/`` (or line end, ``eol``) at or after ``start``, or -1. The
    last answer is remembered: it holds for every later start up to it, so a
    text full of comment openers is searched once, not once per opener."""
    cache = lexer.filtex_found
    known = cache.get(what)
    if known is not None and known[0] <= start and (known[1] < 0 or known[1] >= start):
        return known[1]
    if what == "eol":
        found = _EOL.search(lexer.lexdata, start)
        position = -1 if found is None else found.start()
    else:
        position = lexer.lexdata.find(what, start)
    cache[what] = (start, position)
    return position


def _delimited_identifier(t):
    """Scan ``[...]`` where ``]]`` and ``[[`` stand for ``]`` and ``[``."""
    data, pos, start = t.lexer.lexdata, t.lexpos + 1, t.lexpos
    chars = []
    while True:
        if pos >= len(data):
            raise DefinitionProblem("unterminated delimited identifier", start)
        char = data[pos]
        if char == "]":
            if data.startswith("]]", pos):
                chars.append("]")
                pos += 2
                continue
            break
        if char == "[":
            if not data.startswith("[[", pos):
                raise DefinitionProblem("'[' inside a delimited identifier must be doubled",
                                        pos)
            chars.append("[")
            pos += 2
            continue
        if char < " " or "\x7f" <= char < "\xa0":
            raise DefinitionProblem("control character in a delimited identifier", pos)
        chars.append(char)
        pos += 1
    if not chars and t.lexer.dialect.delimited_identifiers == "nonempty":
        raise DefinitionProblem("empty delimited identifier", start)
    t.lexer.lexpos = pos + 1
    t.type, t.value = "DIDENT", "".join(chars)
    return t


_master = None
_master_lock = threading.Lock()


def _master_lexer():
    global _master
    if _master is None:
        with _master_lock:
            if _master is None:
                _master = lex.lex(object=_Rules(), reflags=re.UNICODE | re.VERBOSE,
                                  optimize=False, debug=False,
                                  errorlog=lex.NullLogger())
    return _master


class SqlLexer:
    """A lexer for one filter text in one dialect (a clone of the master).

    ``max_tokens`` is checked as tokens are read, so an oversized text is
    refused before it is parsed; ``parameters`` (a mapping, or None) turns on
    ``@name`` parameters."""

    def __init__(self, dialect: Dialect, max_tokens: int | None = None,
                 parameters: dict | None = None) -> None:
        self._lexer = _master_lexer().clone()
        self._lexer.dialect = dialect
        self._lexer.identifier_re = re.compile(dialect.identifier)
        self._lexer.filtex_last = None
        self._lexer.filtex_found = {}
        self._lexer.parameters = parameters
        self.max_tokens = max_tokens
        self.limit_name = "max_tokens"
        self.count = 0

    def input(self, text: str) -> None:
        self._lexer.input(text)
        self._lexer.lineno = 1

    def token(self):
        tok = self._lexer.token()
        if tok is not None:
            self._lexer.filtex_last = tok.type
            self.count += 1
            limit = self.max_tokens
            if limit is not None and self.count > limit:
                raise DefinitionProblem(f"filter has more than {limit:,} tokens "
                                        f"(limit {self.limit_name} = {limit:,})", tok.lexpos,
                                        RESOURCE_LIMIT)
        return tok

    def __iter__(self):
        return iter(self.token, None)
