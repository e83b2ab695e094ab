"""SQL text to the checked tree, positions turned into ``FilterError``s: the
SQL front end's one entry, used by the front door for SQL filters and by the
described-filter front end for SQL members of groups and sets."""
from __future__ import annotations

from typing import Any

from ..dialects.base import Dialect as DialectRules
from ..errors import DefinitionProblem, FilterError, line_and_column
from ..limits import Limits, exceeded
from ..tree import ast
from .checker import Checker
from .parser import parse


def sql_tree(text: str, rules: DialectRules, limits: Limits,
             parameters: dict[str, Any] | None = None) -> ast.Scope:
    """The checked tree of ``text`` in the dialect ``rules``, rooted in a
    ``Scope`` of that dialect (the tree every engine reads carries its
    dialect); a ``FilterError`` with line and column if it has none."""
    if len(text) > limits.max_length:
        raise exceeded("max_length", limits,
                       f"filter is longer than {limits.max_length:,} characters")
    if rules.read_prefixes is not None:
        text, rules = rules.read_prefixes(text)
    try:
        tree = Checker(rules, limits=limits).check(parse(text, rules, limits, parameters))
    except DefinitionProblem as problem:
        line, column = line_and_column(text, problem.offset)
        raise FilterError(problem.problem, line, column, problem.condition) from None
    except RecursionError:
        raise exceeded("max_depth", limits, "filter is too deeply nested") from None
    return ast.Scope(body=tree, dialect=rules, typ="bool", offset=tree.offset)
