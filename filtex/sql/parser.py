"""SQL filter text to the raw syntax tree (PLY LALR parser).

The grammar layers precedence explicitly: OR < AND < NOT < predicates
(comparison, IS, LIKE, IN, BETWEEN) < ``+ -`` < ``* / %`` < unary ``+ -``.
Comparison operands are arithmetic expressions, so ``a = b = c`` is a syntax
error and ``BETWEEN x AND y`` does not clash with logical AND. AND and OR
chains are flattened into one n-ary node, so long conjunctions stay shallow.

The LALR tables are built in memory on first use (never written to disk) and
shared; parsing is serialised by a lock because PLY's parser keeps its stacks
on the parser object.
"""
from __future__ import annotations

import threading

import ply.yacc as yacc

from ..errors import DefinitionProblem
from . import ast
from .dialects import Dialect
from .lexer import SqlLexer, tokens  # noqa: F401  (PLY reads ``tokens``)

_CMP = {"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


class _Grammar:
    tokens = tokens
    start = "filter"

    def p_filter(self, p):
        "filter : or_expr"
        p[0] = p[1]

    def p_or(self, p):
        "or_expr : or_expr OR and_expr"
        left = p[1]
        items = left.items if isinstance(left, ast.Or) else (left,)
        p[0] = ast.Or(items=items + (p[3],), offset=_start(left))

    def p_and(self, p):
        "and_expr : and_expr AND not_expr"
        left = p[1]
        items = left.items if isinstance(left, ast.And) else (left,)
        p[0] = ast.And(items=items + (p[3],), offset=_start(left))

    def p_pass(self, p):
        """or_expr : and_expr
        and_expr : not_expr
        not_expr : predicate
        predicate : sum
        sum : product
        product : unary
        unary : primary
        primary : literal
                | call
                | field"""
        p[0] = p[1]

    def p_not(self, p):
        "not_expr : NOT not_expr"
        p[0] = ast.Not(operand=p[2], offset=p.lexpos(1))

    def p_compare(self, p):
        """predicate : sum EQ sum
                     | sum NE sum
                     | sum LT sum
                     | sum LE sum
                     | sum GT sum
                     | sum GE sum"""
        p[0] = ast.Compare(op=_CMP[p[2]], left=p[1], right=p[3], offset=p.lexpos(2))

    def p_is_null(self, p):
        """predicate : sum IS NULL
                     | sum IS NOT NULL"""
        p[0] = ast.IsNull(operand=p[1], negated=len(p) == 5, offset=p.lexpos(2))

    def p_like(self, p):
        """predicate : sum LIKE sum
                     | sum LIKE sum ESCAPE sum
                     | sum NOT LIKE sum
                     | sum NOT LIKE sum ESCAPE sum"""
        negated = p[2].upper() == "NOT"
        at = 3 if negated else 2
        escape = p[at + 3] if len(p) > at + 2 else None
        p[0] = ast.Like(operand=p[1], pattern=p[at + 1], escape=escape, negated=negated,
                        offset=p.lexpos(at))

    def p_in(self, p):
        """predicate : sum IN LPAREN sum_list RPAREN
                     | sum NOT IN LPAREN sum_list RPAREN"""
        negated = len(p) == 7
        p[0] = ast.In(operand=p[1], items=tuple(p[len(p) - 2]), negated=negated,
                      offset=p.lexpos(3 if negated else 2))

    def p_between(self, p):
        """predicate : sum BETWEEN sum AND sum
                     | sum NOT BETWEEN sum AND sum"""
        negated = len(p) == 7
        at = 3 if negated else 2
        if not self.dialect.allow_between:
            raise DefinitionProblem(
                f"BETWEEN is not supported in the {self.dialect.name} dialect", p.lexpos(at))
        p[0] = ast.Between(operand=p[1], low=p[at + 1], high=p[at + 3], negated=negated,
                           offset=p.lexpos(at))

    def p_sum_list(self, p):
        """sum_list : sum
                    | sum_list COMMA sum"""
        p[0] = [p[1]] if len(p) == 2 else p[1] + [p[3]]

    def p_arith(self, p):
        """sum : sum PLUS product
               | sum MINUS product
           product : product TIMES unary
                   | product DIVIDE unary
                   | product MOD unary"""
        p[0] = ast.Binary(op=p[2], left=p[1], right=p[3], offset=p.lexpos(2))

    def p_unary(self, p):
        """unary : MINUS unary
                 | PLUS unary"""
        after = self.text[p.lexpos(1) + 1:].lstrip()
        if self.dialect.unary_on_primary_only and after[:1] in ("+", "-"):
            raise DefinitionProblem(f"a sign applies to a value, not to another sign, in the "
                                    f"{self.dialect.name} dialect (write -(-x))", p.lexpos(1))
        p[0] = ast.Unary(op=p[1], operand=p[2], offset=p.lexpos(1))

    def p_paren(self, p):
        "primary : LPAREN or_expr RPAREN"
        p[0] = p[2]

    def p_exists(self, p):
        "primary : EXISTS LPAREN field RPAREN"
        if not self.dialect.allow_exists:
            raise DefinitionProblem(
                f"EXISTS is not supported in the {self.dialect.name} dialect", p.lexpos(1))
        p[0] = ast.Exists(ref=p[3], offset=p.lexpos(1), typ="bool")

    def p_literal(self, p):
        """literal : INTEGER
                   | DECIMAL
                   | APPROX
                   | STRING
                   | BINARY
                   | TRUE
                   | FALSE
                   | NULL
                   | INF
                   | NAN"""
        kind = p.slice[1].type
        value, typ = {
            "INTEGER": (p[1], "int"), "DECIMAL": (p[1], "decimal"),
            "APPROX": (p[1], "float"), "STRING": (p[1], "string"),
            "BINARY": (p[1], "binary"), "TRUE": (True, "bool"), "FALSE": (False, "bool"),
            "NULL": (None, "null"), "INF": (float("inf"), "float"),
            "NAN": (float("nan"), "float"),
        }[kind]
        p[0] = ast.Literal(value=value, typ=typ, offset=p.lexpos(1))

    def p_call(self, p):
        """call : IDENT LPAREN RPAREN
                | IDENT LPAREN sum_list RPAREN
                | IDENT COLON IDENT LPAREN RPAREN
                | IDENT COLON IDENT LPAREN sum_list RPAREN"""
        vendor = p[2] == ":"
        name = f"{p[1]}:{p[3]}" if vendor else p[1].upper()
        args = tuple(p[len(p) - 2]) if p[len(p) - 2] != "(" else ()
        p[0] = ast.Call(name=name, args=args, offset=p.lexpos(1))

    def p_field_name(self, p):
        """field : IDENT
                 | DIDENT"""
        p[0] = ast.Name(name=p[1], delimited=p.slice[1].type == "DIDENT", offset=p.lexpos(1))

    def p_field_member(self, p):
        """field : field DOT IDENT
                 | field DOT DIDENT"""
        p[0] = ast.Member(base=p[1], name=p[3], delimited=p.slice[3].type == "DIDENT",
                          offset=p.lexpos(3))

    def p_field_index(self, p):
        "field : field LBRACKET sum RBRACKET"
        p[0] = ast.Index(base=p[1], index=p[3], offset=p.lexpos(2))

    def p_error(self, tok):
        if tok is None:
            raise DefinitionProblem("unexpected end of filter", len(self.text))
        shown = self.text[tok.lexpos:tok.lexpos + 20].split("\n")[0] or tok.type
        raise DefinitionProblem(f"syntax error at {shown!r}", tok.lexpos)


def _start(node: ast.Node) -> int:
    while isinstance(node, (ast.And, ast.Or)):
        node = node.items[0]
    return node.offset


_grammar = _Grammar()
_parser = None
_lock = threading.Lock()


def _lr_parser():
    global _parser
    if _parser is None:
        _parser = yacc.yacc(module=_grammar, write_tables=False, debug=False,
                            errorlog=yacc.NullLogger(), tabmodule="filtex_no_parsetab")
    return _parser


def parse(text: str, dialect: Dialect) -> ast.Node:
    """The raw syntax tree of ``text``; raises ``DefinitionProblem``."""
    if dialect.max_length is not None and len(text) > dialect.max_length:
        raise DefinitionProblem(
            f"filter is longer than {dialect.max_length} characters", dialect.max_length)
    if not text.strip():
        raise DefinitionProblem("empty filter", 0)
    lexer = SqlLexer(dialect)
    with _lock:
        parser = _lr_parser()
        _grammar.dialect, _grammar.text = dialect, text
        try:
            return parser.parse(text, lexer=lexer)
        finally:
            _grammar.dialect = _grammar.text = None
