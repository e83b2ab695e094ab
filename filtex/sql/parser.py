"""SQL filter text to the raw syntax tree (PLY LALR parser).

The grammar layers precedence explicitly: OR < AND < NOT < predicates
(comparison, IS, LIKE, IN, BETWEEN) < ``+ -`` < ``* / %`` < unary ``+ -``.
Comparison operands are arithmetic expressions, so ``a = b = c`` is a syntax
error and ``BETWEEN x AND y`` does not clash with logical AND. AND and OR
chains are flattened into one n-ary node, so long conjunctions stay shallow.

Parsing is linear in the text: AND/OR chains and IN lists grow Python lists
in place (never by copying a tuple per item), and nodes and nesting depth are
counted as nodes are made, so an oversized filter is refused while it is read.

The LALR tables are built in memory on first use (never written to disk) and
shared; parsing is serialised by a lock because PLY's parser keeps its stacks
on the parser object.
"""
from __future__ import annotations

import re
import threading

import ply.yacc as yacc

from ..errors import DefinitionProblem
from ..limits import DEFAULT_LIMITS, RESOURCE_LIMIT, Limits
from ..tree import ast
from ..dialects import Dialect
from .lexer import SqlLexer, tokens  # noqa: F401  (PLY reads ``tokens``)
from .parameters import parameter_literal

_CMP = {"=": "=", "<>": "<>", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


_SIGN_AFTER = re.compile(r"\s*[+-]")


class _Grammar:
    tokens = tokens
    start = "filter"

    def node(self, cls, *children, **fields):
        """A new node, counted and measured against the limits as it is made."""
        made = cls(**fields)
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            raise DefinitionProblem(
                f"filter has more than {self.limits.max_nodes:,} elements "
                f"(limit max_nodes = {self.limits.max_nodes:,})", made.offset, RESOURCE_LIMIT)
        heights = self.heights
        height = 1 + max((heights.get(id(c), 1) for c in children), default=0)
        heights[id(made)] = height   # always: an id may be reused after a node is dropped
        if height > 1:
            if height > self.limits.max_depth:
                raise DefinitionProblem(
                    f"filter is nested more than {self.limits.max_depth} levels deep "
                    f"(limit max_depth = {self.limits.max_depth})", made.offset,
                    RESOURCE_LIMIT)
        return made

    def p_filter(self, p):
        "filter : or_expr"
        p[0] = self.finish(p[1])

    def finish(self, item):
        """A chain list (``[kind, items]``) becomes its n-ary node, made once."""
        if item.__class__ is not list:
            return item
        cls, items = item
        return self.node(cls, *items, items=tuple(items), offset=_start(items[0]))

    def p_or(self, p):
        """or_expr : or_expr OR and_expr
        and_expr : and_expr AND not_expr"""
        cls = ast.Or if p.slice[2].type == "OR" else ast.And
        left = p[1]
        if left.__class__ is list and left[0] is cls:
            left[1].append(self.finish(p[3]))    # grows in place: linear in the chain
            p[0] = left
            return
        left = self.finish(left)
        if left.__class__ is cls:                 # (a OR b) OR c reads as one chain
            self.nodes -= 1
            items = list(left.items)
        else:
            items = [left]
        items.append(self.finish(p[3]))
        p[0] = [cls, items]

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
        operand = self.finish(p[2])
        p[0] = self.node(ast.Not, operand, operand=operand, offset=p.lexpos(1))

    def p_compare(self, p):
        """predicate : sum EQ sum
                     | sum NE sum
                     | sum LT sum
                     | sum LE sum
                     | sum GT sum
                     | sum GE sum"""
        p[0] = self.node(ast.Compare, p[1], p[3], op=_CMP[p[2]], left=p[1], right=p[3],
                         offset=p.lexpos(2))

    def p_is_null(self, p):
        """predicate : sum IS NULL
                     | sum IS NOT NULL"""
        p[0] = self.node(ast.IsNull, p[1], operand=p[1], negated=len(p) == 5,
                         offset=p.lexpos(2))

    def p_like(self, p):
        """predicate : sum LIKE sum
                     | sum LIKE sum ESCAPE sum
                     | sum NOT LIKE sum
                     | sum NOT LIKE sum ESCAPE sum"""
        negated = p[2].upper() == "NOT"
        at = 3 if negated else 2
        escape = p[at + 3] if len(p) > at + 2 else None
        p[0] = self.node(ast.Like, p[1], p[at + 1], *([escape] if escape else []),
                         operand=p[1], pattern=p[at + 1], escape=escape, negated=negated,
                         offset=p.lexpos(at))

    def p_in(self, p):
        """predicate : sum IN LPAREN sum_list RPAREN
                     | sum NOT IN LPAREN sum_list RPAREN"""
        negated = len(p) == 7
        items = p[len(p) - 2]
        p[0] = self.node(ast.In, p[1], *items, operand=p[1], items=tuple(items),
                         negated=negated, offset=p.lexpos(3 if negated else 2))

    def p_between(self, p):
        """predicate : sum BETWEEN sum AND sum
                     | sum NOT BETWEEN sum AND sum"""
        negated = len(p) == 7
        at = 3 if negated else 2
        if not self.dialect.allow_between:
            raise DefinitionProblem(
                f"BETWEEN is not supported in the {self.dialect.name} dialect", p.lexpos(at))
        p[0] = self.node(ast.Between, p[1], p[at + 1], p[at + 3], operand=p[1],
                         low=p[at + 1], high=p[at + 3], negated=negated, offset=p.lexpos(at))

    def p_sum_list(self, p):
        """sum_list : sum
                    | sum_list COMMA sum"""
        if len(p) == 2:
            p[0] = [p[1]]
            return
        p[0] = p[1]
        p[0].append(p[3])   # in place: linear in the list
        if len(p[0]) > self.limits.max_in_items:
            raise DefinitionProblem(
                f"a list has more than {self.limits.max_in_items:,} items "
                f"(limit max_in_items = {self.limits.max_in_items:,})", p.lexpos(2),
                RESOURCE_LIMIT)

    def p_arith(self, p):
        """sum : sum PLUS product
               | sum MINUS product
           product : product TIMES unary
                   | product DIVIDE unary
                   | product MOD unary"""
        p[0] = self.node(ast.Binary, p[1], p[3], op=p[2], left=p[1], right=p[3],
                         offset=p.lexpos(2))

    def p_unary(self, p):
        """unary : MINUS unary
                 | PLUS unary"""
        if self.dialect.unary_on_primary_only and _SIGN_AFTER.match(self.text, p.lexpos(1) + 1):
            raise DefinitionProblem(f"a sign applies to a value, not to another sign, in the "
                                    f"{self.dialect.name} dialect (write -(-x))", p.lexpos(1))
        p[0] = self.node(ast.Unary, p[2], op=p[1], operand=p[2], offset=p.lexpos(1))

    def p_paren(self, p):
        "primary : LPAREN or_expr RPAREN"
        p[0] = self.finish(p[2])

    def p_exists(self, p):
        "primary : EXISTS LPAREN field RPAREN"
        if not self.dialect.allow_exists:
            raise DefinitionProblem(
                f"EXISTS is not supported in the {self.dialect.name} dialect", p.lexpos(1))
        p[0] = self.node(ast.Exists, p[3], ref=p[3], offset=p.lexpos(1), typ="bool")

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
        p[0] = self.node(ast.Literal, value=value, typ=typ, offset=p.lexpos(1))

    def p_parameter(self, p):
        "literal : PARAM"
        name = p[1]
        if name not in self.parameters:
            raise DefinitionProblem(f"no value is given for parameter @{name}", p.lexpos(1))
        self.used.add(name)
        value, typ = parameter_literal(name, self.parameters[name], self.dialect, p.lexpos(1))
        p[0] = self.node(ast.Literal, value=value, typ=typ, offset=p.lexpos(1))

    def p_call(self, p):
        """call : IDENT LPAREN RPAREN
                | IDENT LPAREN sum_list RPAREN
                | IDENT COLON IDENT LPAREN RPAREN
                | IDENT COLON IDENT LPAREN sum_list RPAREN"""
        vendor = p[2] == ":"
        # function names are ASCII: 'ſubstring' is not SUBSTRING
        name = f"{p[1]}:{p[3]}" if vendor else (p[1].upper() if p[1].isascii() else p[1])
        args = tuple(p[len(p) - 2]) if p[len(p) - 2] != "(" else ()
        p[0] = self.node(ast.Call, *args, name=name, args=args, offset=p.lexpos(1))

    def p_field_name(self, p):
        """field : IDENT
                 | DIDENT"""
        p[0] = self.node(ast.Name, name=p[1], delimited=p.slice[1].type == "DIDENT",
                         offset=p.lexpos(1))

    def p_field_member(self, p):
        """field : field DOT IDENT
                 | field DOT DIDENT"""
        p[0] = self.node(ast.Member, p[1], base=p[1], name=p[3],
                         delimited=p.slice[3].type == "DIDENT", offset=p.lexpos(3))

    def p_field_index(self, p):
        "field : field LBRACKET sum RBRACKET"
        p[0] = self.node(ast.Index, p[1], p[3], base=p[1], index=p[3], offset=p.lexpos(2))

    def p_error(self, tok):
        if tok is None:
            raise DefinitionProblem("unexpected end of filter", len(self.text))
        shown = self.text[tok.lexpos:tok.lexpos + 20].split("\n")[0] or tok.type
        raise DefinitionProblem(f"syntax error at {shown!r}", tok.lexpos)


def _start(node: ast.Node) -> int:
    while isinstance(node, (ast.And, ast.Or)):   # chains start with a non-chain: O(1)
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


def effective_limit(dialect: Dialect, limits: Limits, name: str) -> tuple[int, str]:
    """The smaller of the operator's limit and the dialect's own (RabbitMQ's), and
    the name of the one that binds."""
    own, given = getattr(dialect, name), getattr(limits, name)
    if own is not None and own < given:
        return own, f"{dialect.name} {name}"
    return given, name


def parse(text: str, dialect: Dialect, limits: Limits = DEFAULT_LIMITS,
          parameters: dict | None = None) -> ast.Node:
    """The raw syntax tree of ``text``; raises ``DefinitionProblem``."""
    max_length, length_name = effective_limit(dialect, limits, "max_length")
    if len(text) > max_length:
        raise DefinitionProblem(f"filter is longer than {max_length:,} characters "
                                f"(limit {length_name} = {max_length:,})", max_length,
                                RESOURCE_LIMIT)
    if not text.strip():
        raise DefinitionProblem("empty filter", 0)
    lexer = SqlLexer(dialect, parameters=parameters)
    lexer.max_tokens, lexer.limit_name = effective_limit(dialect, limits, "max_tokens")
    with _lock:
        parser = _lr_parser()
        grammar = _grammar
        grammar.dialect, grammar.text, grammar.limits = dialect, text, limits
        grammar.parameters, grammar.used = parameters or {}, set()
        grammar.nodes, grammar.heights = 0, {}
        try:
            tree = parser.parse(text, lexer=lexer)
            unused = sorted(set(grammar.parameters) - grammar.used)
            if unused:
                raise DefinitionProblem(f"parameter @{unused[0]} is not used in the filter",
                                        0)
            return tree
        finally:
            grammar.dialect = grammar.text = grammar.limits = grammar.parameters = None
            grammar.used, grammar.heights = set(), {}
