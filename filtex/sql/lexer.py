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
from decimal import Decimal

import ply.lex as lex
from proton import int32

from ..errors import DefinitionProblem
from .dialects import Dialect

KEYWORDS = ("AND", "OR", "NOT", "IS", "NULL", "LIKE", "ESCAPE", "IN", "BETWEEN",
            "EXISTS", "TRUE", "FALSE", "INF", "NAN")

tokens = KEYWORDS + (
    "IDENT", "DIDENT", "STRING", "INTEGER", "DECIMAL", "APPROX", "BINARY",
    "EQ", "NE", "LT", "LE", "GT", "GE", "PLUS", "MINUS", "TIMES", "DIVIDE", "MOD",
    "LPAREN", "RPAREN", "COMMA", "DOT", "LBRACKET", "RBRACKET", "COLON",
)

_FIELD_END = frozenset({"IDENT", "DIDENT", "RBRACKET"})
_HYPHENATED = {"application-properties": "application_properties",
               "delivery-annotations": "delivery_annotations",
               "message-annotations": "message_annotations"}
def _java_integer(text: str) -> int:
    """A Java integer literal: an Integer (``int32``) in int range, else a Long;
    a leading 0 is octal."""
    digits = text.rstrip("lL")
    value = int(digits, 8) if digits[0] == "0" else int(digits)
    return int32(value) if -(1 << 31) <= value < (1 << 31) else value


# Number literal forms per dialect: (pattern, token kind, value from text).
NUMBER_FORMS = {
    "amqp": ((re.compile(r"\d+"), "INTEGER", int),
             (re.compile(r"\d+\.\d+"), "DECIMAL", Decimal),
             (re.compile(r"(?:\d+\.\d+|\d+)[eE][+-]?\d+"), "APPROX", float)),
    "rabbitmq": ((re.compile(r"\d+"), "INTEGER", int),
                 (re.compile(r"\d+\.\d+(?:E[+-]?\d+)?"), "APPROX", float)),
    "jms": ((re.compile(r"[1-9]\d*[lL]?|0[0-7]*"), "INTEGER", _java_integer),
            (re.compile(r"(?:\d+\.\d*|\.\d+)(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+"), "APPROX",
             float)),
}


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
        r"/\*(?:.|\n)*?\*/|--[^\r\n]*(?:\r\n|\r|\n)"
        # JMS selectors as the peers parse them: /* */ and -- to the end of a line
        if not t.lexer.dialect.comments:
            t.lexer.lexpos = t.lexpos + 1   # not a comment here: one '/' or '-'
            t.type, t.value = ("DIVIDE", "/") if t.value[0] == "/" else ("MINUS", "-")
            return t
        t.lexer.lineno += t.value.count("\n")

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
            t.value = t.value[:t.value.index("-")]
            return self._identifier(t)
        t.type, t.value = "IDENT", _HYPHENATED[t.value]
        return t

    def t_BINARY(self, t):
        r"0[xX][0-9A-Za-z]*"
        dialect = t.lexer.dialect
        digits = t.value[2:]
        if dialect.binary_constants is None:  # a hexadecimal integer (Java)
            if not re.fullmatch(r"[0-9A-Fa-f]+", digits):
                raise DefinitionProblem(f"malformed hexadecimal number {t.value!r}", t.lexpos)
            if int(digits, 16) > (1 << 63) - 1:
                raise DefinitionProblem(f"hexadecimal number {t.value} is larger than a long",
                                        t.lexpos)
            t.type, t.value = "INTEGER", _java_integer(str(int(digits, 16)))
            return t
        hex_digits = "[0-9A-F]+" if dialect.binary_constants == "upper" else "[0-9A-Fa-f]+"
        if not digits or not re.fullmatch(hex_digits, digits):
            case = " (upper-case hex digits)" if dialect.binary_constants == "upper" else ""
            raise DefinitionProblem(f"malformed binary constant {t.value!r}{case}", t.lexpos)
        if len(digits) % 2:
            raise DefinitionProblem(
                f"binary constant {t.value!r} needs an even number of hex digits", t.lexpos)
        t.value = bytes.fromhex(digits)
        return t

    def t_NUMBER(self, t):
        r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z_0-9]*"
        text, dialect = t.value, t.lexer.dialect
        for pattern, kind, convert in NUMBER_FORMS[dialect.numbers]:
            if pattern.fullmatch(text):
                break
        else:
            raise DefinitionProblem(f"malformed number {text!r}", t.lexpos)
        if dialect.numbers == "jms" and kind == "INTEGER" and text[0] == "0" \
                and int(text, 8) > (1 << 63) - 1:
            raise DefinitionProblem(f"octal number {text} is larger than a long", t.lexpos)
        t.type, t.value = kind, convert(text)
        if kind == "INTEGER" and dialect.max_integer is not None \
                and t.value > dialect.max_integer:
            limit = "2^64-1" if dialect.max_integer == (1 << 64) - 1 else dialect.max_integer
            raise DefinitionProblem(f"integer constant {text} is larger than {limit}", t.lexpos)
        return t

    def t_STRING(self, t):
        r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\""
        quote = t.value[0]
        if quote == '"' and t.lexer.dialect.quoted_identifiers:
            t.type, t.value = "DIDENT", t.value[1:-1].replace('""', '"')
            return t
        if quote not in t.lexer.dialect.string_quotes:
            raise DefinitionProblem(f"strings are quoted with {t.lexer.dialect.string_quotes} "
                                    f"in the {t.lexer.dialect.name} dialect", t.lexpos)
        t.value = t.value[1:-1].replace(quote * 2, quote)
        t.lexer.lineno += t.value.count("\n")
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
        upper = t.value.upper()
        if lexer.filtex_last != "DOT":
            if upper in dialect.keywords:
                if dialect.keyword_case == "any" or upper == t.value:
                    t.type = upper
                    return t
                raise DefinitionProblem(f"keyword {t.value!r} must be written {upper} in the "
                                        f"{dialect.name} dialect", t.lexpos)
            if upper in dialect.reserved and not (
                    upper == t.value and any(name == upper for name, _ in dialect.functions)):
                raise DefinitionProblem(f"{t.value!r} is a reserved word in the "
                                        f"{dialect.name} dialect", t.lexpos)
        if not re.fullmatch(lexer.identifier_re, t.value):
            raise DefinitionProblem(f"malformed identifier {t.value!r}", t.lexpos)
        return t

    def t_error(self, t):
        char = t.value[0]
        if char in "'\"":
            raise DefinitionProblem("unterminated string constant", t.lexpos)
        raise DefinitionProblem(f"unexpected character {char!r}", t.lexpos)


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
    """A lexer for one filter text in one dialect (a clone of the master)."""

    def __init__(self, dialect: Dialect) -> None:
        self._lexer = _master_lexer().clone()
        self._lexer.dialect = dialect
        self._lexer.identifier_re = re.compile(dialect.identifier)
        self._lexer.filtex_last = None
        self.count = 0

    def input(self, text: str) -> None:
        self._lexer.input(text)
        self._lexer.lineno = 1

    def token(self):
        tok = self._lexer.token()
        if tok is not None:
            self._lexer.filtex_last = tok.type
            self.count += 1
            limit = self._lexer.dialect.max_tokens
            if limit is not None and self.count > limit:
                raise DefinitionProblem(f"filter has more than {limit} tokens", tok.lexpos)
        return tok

    def __iter__(self):
        return iter(self.token, None)
