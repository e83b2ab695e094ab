"""Tokens of SQL filter text (PLY lexer, built once per process).

The master regular expression is the same for every dialect; what a dialect
reads differently (keyword case, identifier and number forms) is decided in the
token rules from the ``Dialect`` the lexer is cloned with.

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
_AMQP_NUMBER_FORMS = ((re.compile(r"\d+"), "INTEGER"),
                      (re.compile(r"\d+\.\d+"), "DECIMAL"),
                      (re.compile(r"(?:\d+\.\d+|\d+)[eE][+-]?\d+"), "APPROX"))
ULONG_MAX = (1 << 64) - 1


class _Rules:
    """PLY token rules. Function rules are tried in the order written."""

    tokens = tokens
    t_ignore = " \t\r\f\v"

    t_NE = r"<>|!="
    t_LE = r"<="
    t_GE = r">="
    t_EQ = r"="
    t_LT = r"<"
    t_GT = r">"
    t_PLUS = r"\+"
    t_MINUS = r"-"
    t_TIMES = r"\*"
    t_DIVIDE = r"/"
    t_MOD = r"%"
    t_LPAREN = r"\("
    t_RPAREN = r"\)"
    t_COMMA = r","
    t_DOT = r"\."
    t_RBRACKET = r"\]"
    t_COLON = r":"

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
        digits = t.value[2:]
        if not digits or not re.fullmatch(r"[0-9A-Fa-f]+", digits):
            raise DefinitionProblem(f"malformed binary constant {t.value!r}", t.lexpos)
        if len(digits) % 2:
            raise DefinitionProblem(
                f"binary constant {t.value!r} needs an even number of hex digits", t.lexpos)
        t.value = bytes.fromhex(digits)
        return t

    def t_NUMBER(self, t):
        r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[A-Za-z_0-9]*"
        text = t.value
        for pattern, kind in _AMQP_NUMBER_FORMS:
            if pattern.fullmatch(text):
                break
        else:
            raise DefinitionProblem(f"malformed number {text!r}", t.lexpos)
        t.type = kind
        if kind == "INTEGER":
            t.value = int(text)
            if t.value > ULONG_MAX:
                raise DefinitionProblem(
                    f"integer constant {text} is larger than 2^64-1", t.lexpos)
        elif kind == "DECIMAL":
            t.value = Decimal(text)
        else:
            t.value = float(text)
        return t

    def t_STRING(self, t):
        r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\""
        quote = t.value[0]
        t.value = t.value[1:-1].replace(quote * 2, quote)
        t.lexer.lineno += t.value.count("\n")
        return t

    def t_LBRACKET(self, t):
        r"\["
        if t.lexer.filtex_last in _FIELD_END:
            return t
        return _delimited_identifier(t)

    def t_IDENT(self, t):
        r"[^\W\d]\w*|[_$][\w$]*"
        return self._identifier(t)

    def _identifier(self, t):
        lexer = t.lexer
        upper = t.value.upper()
        if upper in KEYWORDS and lexer.filtex_last != "DOT":
            if lexer.dialect.keywords_case_insensitive or upper == t.value:
                t.type = upper
                return t
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
    if not chars:
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
        self._lexer.identifier_re = re.compile(
            f"{dialect.identifier_start}{dialect.identifier_rest}*")
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
