"""The front door: every filter becomes a ``Filter`` here, and only here.

SQL text goes through the SQL front end (``sql/front.py``), a described filter
or filter set through the described-filter front end (``described/lower.py``);
both give one checked tree rooted in a ``Scope`` of its dialect, which the row
engine turns into the filter's two functions (``_build``). The other engines
read the finished ``Filter``'s tree; none of them compiles text.

SQL filters are cached: an LRU bounded in entries and in bytes (the one piece
of global mutable state), keyed by the filter's definition (text, dialect,
limits and the bound parameters as typed values), so a subscription's filter
is compiled once however many links use it.
"""
from __future__ import annotations

import builtins
import sys
from typing import Any, Callable, Mapping

from .cache import BoundedCache
from .errors import FilterError, internal_error
from .filter import Filter
from .names import Dialect, check_dialect_type
from .limits import DEFAULT_LIMITS, Limits, check_limits, exceeded
from .tree import ast
from .row import RowGenerator, load
from .row.generator import BASE_NAMESPACE
from .dialects import AMQP, DIALECTS, get_dialect
from .footprint import footprint
from .sql.front import sql_tree
from .sql.parameters import normalize_parameters

CACHE_ENTRIES = 4096
CACHE_BYTES = 64 << 20


def entry_size(flt: Filter) -> int:
    """The bytes a cached filter keeps: its text, source and code object, the
    constants, sets and matchers hoisted into its functions' globals, and its
    checked tree (not what every filter shares: the runtime, the dialects)."""
    function: Any = flt.evaluate   # a generated function (typed as a protocol)
    return footprint(flt, flt.text, flt.source, flt.recipe, flt.tree, function.__code__,
                     function.__globals__, shared=_shared_ids()) \
        + 2 * sys.getsizeof(function)   # evaluate and matches


_SHARED: list[frozenset[int]] = []


def _shared_ids() -> frozenset[int]:
    """What every filter's functions and tree refer to and nobody pays for
    alone: the base namespace's values, the dialect records, default limits."""
    if not _SHARED:
        shared = [*BASE_NAMESPACE.values(), *DIALECTS.values(), DEFAULT_LIMITS,
                  vars(builtins)]   # exec puts the builtins in every generated scope
        shared += [d.semantics for d in DIALECTS.values()]
        for namespace in [BASE_NAMESPACE] + [d.semantics.namespace() for d in DIALECTS.values()]:
            shared += namespace.keys()   # names every generated scope shares
        _SHARED.append(frozenset(map(id, shared)))
    return _SHARED[0]


_cache = BoundedCache(CACHE_ENTRIES, CACHE_BYTES, entry_size)


def compile_sql(text: str, dialect: Dialect = "amqp", *, limits: Limits | None = None,
                parameters: Mapping[str, Any] | None = None) -> Filter:
    """Compile an SQL filter expression; raises ``FilterError`` if it cannot be.

    ``limits`` bounds what the filter may ask (``filtex.Limits``; the defaults
    when None). ``parameters`` binds ``@name`` references to typed constants
    (``compile_sql("region = @r", parameters={"r": "EU"})``); without it ``@``
    is not part of the language. The text and the parameters' values are the
    filter's definition (a remote client's, perhaps): whatever they hold, only
    ``FilterError`` leaves. Arguments of the wrong type (``text`` not a str,
    ``dialect``, ``limits``, ``parameters`` not a mapping) are the calling
    program's error: ``TypeError``.
    """
    if type(text) is str and type(dialect) is str and limits is None and parameters is None:
        found = _cache.get((text, dialect))   # the common case: a plain cache hit
        if found is not None:
            return found
    if not issubclass(type(text), str):
        raise TypeError(f"compile_sql takes the filter text as a str, not {type(text).__name__}"
                        " (a described filter's value: compile_filter)")
    check_arguments(dialect, limits)
    if parameters is not None and not issubclass(type(parameters), Mapping):
        raise TypeError(f"parameters is a mapping of names to values or None, not "
                        f"{type(parameters).__name__}")
    try:
        # exact str copies: a str subclass controls none of the steps below
        text, name = str.__str__(text), str.__str__(dialect)
        limits = check_limits(limits)
        if len(text) > limits.max_length:
            raise exceeded("max_length", limits,
                           f"filter is longer than {limits.max_length:,} characters")
        # (name, class, key, value) each (sql/parameters.py's annotation says three)
        bound: tuple[tuple[Any, ...], ...] | None = normalize_parameters(parameters)
        if bound is None and limits is DEFAULT_LIMITS:
            key: tuple[Any, ...] = (text, name)
        else:
            key = (text, name, limits, None if bound is None else tuple(b[:3] for b in bound))
        cached: Filter | None = _cache.get(key)
        if cached is not None:
            return cached
        values = None if bound is None else {b[0]: b[3] for b in bound}
        if values and sum(len(v) for v in values.values()
                          if type(v) in (str, bytes)) > limits.max_length:
            raise exceeded("max_length", limits, "parameter values are longer than "
                           f"{limits.max_length:,} characters")
        compiled = _compile_sql(text, name, limits, values)
    except FilterError:
        raise
    except RecursionError:
        raise exceeded("max_depth", check_limits(limits),
                       "filter is too deeply nested") from None
    except Exception as exc:  # a bug in filtex or a hostile object: generic, and logged
        raise internal_error(exc, "compiling an SQL filter") from None
    _cache.put(key, compiled)
    return compiled


def check_arguments(dialect: object, limits: object) -> None:
    """``TypeError`` for a ``dialect`` that is no str or ``limits`` that are no
    ``Limits``: the calling program's errors, not a filter's. (An unknown
    dialect name is a ``FilterError``, ``amqp:not-implemented``.)"""
    check_dialect_type(dialect)
    check_limits(limits)


def _compile_sql(text: str, dialect: str, limits: Limits, parameters: dict[str, Any] | None
                 ) -> Filter:
    tree = sql_tree(text, get_dialect(dialect), limits, parameters)
    options: dict[str, Any] = {}
    if parameters is not None:
        options["parameters"] = parameters
    if limits is not DEFAULT_LIMITS:
        options["limits"] = limits
    return _build(tree, text, tree.dialect.name, "sql", limits,
                  (compile_sql, (text, dialect), options), f"sql:{dialect}")


def compile_filter(f: object, dialect: Dialect = "amqp", *,
                   limits: Limits | None = None) -> Filter:
    """Compile one filter of any type filtex knows; ``FilterError`` otherwise
    (``condition`` ``amqp:not-implemented`` for an unknown descriptor,
    ``amqp:resource-limit-exceeded`` past ``limits``). ``f`` is a definition,
    perhaps a remote client's: whatever object it is, only ``FilterError``
    leaves; a ``dialect`` or ``limits`` of the wrong type is a ``TypeError``.
    The forms accepted are ``described/lower.py``'s."""
    check_arguments(dialect, limits)
    if type(f) is Filter:
        return f
    from .described.lower import SqlText, lower_filter

    def build(dialect: Dialect, limits: Limits) -> Filter:
        lowered = lower_filter(f, dialect, limits)
        if isinstance(lowered, SqlText):   # an SQL filter: compiled (and cached) as SQL
            return compile_sql(lowered.text, lowered.dialect,
                               limits=None if limits is DEFAULT_LIMITS else limits)
        return _described(*lowered, dialect, limits, compile_filter)
    return _guarded(build, dialect, limits, "compiling a described filter")


def compile_filter_set(filters: object, dialect: Dialect = "amqp", *,
                       limits: Limits | None = None) -> Filter:
    """A source's filter set: a message passes when every member matches. As
    for ``compile_filter``, ``filters`` may hold anything (``FilterError``)."""
    from .described.lower import lower_filter_set
    return _guarded(lambda dialect, limits: _described(
        *lower_filter_set(filters, dialect, limits), dialect, limits, compile_filter_set),
        dialect, limits, "compiling a filter set")


def _described(tree: ast.Node, text: Any, kind: str, dialect: Dialect, limits: Limits,
               entry: Callable[..., Filter]) -> Filter:
    """A described filter's ``Filter``. Its own nodes follow the amqp
    specification's rules whatever the dialect (which chose its SQL members'
    dialect and its property-matching rules, both already in the tree): a
    ``Scope`` of amqp at the root says so to every engine."""
    argument = dict(text[1]) if entry is compile_filter_set else text
    options = {} if limits is DEFAULT_LIMITS else {"limits": limits}
    scoped = ast.Scope(body=tree, dialect=AMQP, typ="bool", offset=tree.offset)
    return _build(scoped, text, dialect, kind, limits, (entry, (argument, dialect), options),
                  kind)


def _build(tree: ast.Scope, text: Any, dialect: Dialect, kind: str, limits: Limits,
           recipe: tuple[Any, ...], origin: str) -> Filter:
    """The one place a checked tree becomes a ``Filter``: the row engine
    generates its function (for the dialect of the root ``Scope``) and
    ``load`` compiles it. Groups' junctions evaluate every member in order, so
    a failing member makes the group unknown whatever the others say."""
    generator = RowGenerator(semantics=tree.dialect.semantics, limits=limits)
    generator.with_matches = True
    source = generator.generate(tree)
    evaluate, matches = load(source, generator.namespace, origin)
    return Filter(text, dialect, kind, source, evaluate, matches, tree, recipe)


def _guarded(build: Callable[[Dialect, Limits], Filter], dialect: Dialect, limits: Limits | None,
             what: str) -> Filter:
    """Run ``build(dialect, limits)`` so that nothing but a FilterError leaves it
    (the arguments' types are checked: ``check_arguments``)."""
    check_arguments(dialect, limits)
    try:
        checked = check_limits(limits)
        # exactly the known name (a str subclass controls nothing), or a FilterError
        return build(get_dialect(str.__str__(dialect)).name, checked)
    except FilterError:
        raise
    except RecursionError:
        raise exceeded("max_value_depth", check_limits(limits),
                       "filter is nested too deeply") from None
    except Exception as exc:  # a bug, or an object that would not be read: generic, logged
        raise internal_error(exc, what) from None


def cache_clear() -> None:
    """Forget every compiled filter, LIKE matcher and kernel kept in memory
    (for tests and long-lived reconfiguration)."""
    from .codegen import modules
    from .runtime import patterns as like
    _cache.clear()
    like.cache_clear()
    modules.clear()


def cache_info() -> tuple[int, int]:
    """(entries, estimated bytes) of the compiled-filter cache."""
    return _cache.stats()
