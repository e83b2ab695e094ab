"""Filter text to a ``Filter``: lex, parse, check, generate, compile; cached.

The cache is the one piece of global mutable state: a bounded LRU keyed by
``(text, dialect)``, so a subscription's filter is compiled once however many
links use it.
"""
from __future__ import annotations

import hashlib
import linecache
import types
from functools import lru_cache

from .errors import DefinitionProblem, FilterError, line_and_column
from .filter import Filter
from .semantics import SEMANTICS
from .sql.checker import Checker
from .sql.codegen import BASE_NAMESPACE, CodeGenerator
from .sql.dialects import get_dialect
from .sql.parser import parse

CACHE_SIZE = 4096


def compile_sql(text: str, dialect: str = "amqp") -> Filter:
    """Compile an SQL filter expression; raises ``FilterError`` if it cannot be."""
    if not isinstance(text, str):
        raise FilterError(f"an SQL filter is a string, not {type(text).__name__}")
    if not isinstance(dialect, str):
        raise FilterError(f"a dialect is named by a string, not {type(dialect).__name__}")
    return _compile_sql_cached(text, dialect)


@lru_cache(maxsize=CACHE_SIZE)
def _compile_sql_cached(text: str, dialect: str) -> Filter:
    rules = get_dialect(dialect)
    try:
        tree = Checker(rules).check(parse(text, rules))
        generator = CodeGenerator(semantics=SEMANTICS[rules.semantics])
        source = generator.generate(tree)
        evaluate, matches = load(source, generator.namespace, f"sql:{dialect}:{text}")
    except DefinitionProblem as problem:
        line, column = line_and_column(text, problem.offset)
        raise FilterError(problem.problem, line, column) from None
    except RecursionError:
        raise FilterError("filter is too deeply nested") from None
    except FilterError:
        raise
    except Exception as exc:  # a bug in filtex: still a FilterError, never a crash
        raise FilterError(f"cannot compile filter (internal error: "
                          f"{type(exc).__name__}: {exc})") from exc
    return Filter(text, dialect, "sql", source, evaluate, matches, tree)


def load(source: str, namespace: dict, identity: str):
    """Compile generated source once; return ``evaluate`` and ``matches``, two
    functions over the same code object (``matches`` defaults ``_mode`` to
    True). The source is registered with ``linecache`` for tracebacks."""
    digest = hashlib.sha1(identity.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    filename = f"<filtex {digest}>"
    scope = dict(BASE_NAMESPACE)
    scope.update(namespace)
    exec(compile(source, filename, "exec"), scope)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    evaluate = scope["evaluate"]
    matches = types.FunctionType(evaluate.__code__, scope, "matches", (True, None))
    return evaluate, matches


def cache_clear() -> None:
    """Forget every compiled filter (for tests and long-lived reconfiguration)."""
    _compile_sql_cached.cache_clear()
