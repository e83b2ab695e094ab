"""Described filters and filter sets: every filter type of the specifications,
from whatever form a Python user holds it in, compiled to generated functions.

Forms accepted: a ``proton.Described``; a ``(descriptor, value)`` pair; the
conformance format's JSON object (``{"described": NAME | "code": CODE,
"value": TYPED}``, group members nested as such objects); an already compiled
``Filter``. A filter set (a source's ``filter`` field) is a mapping of names
to filters, a ``proton.Data`` holding one, or a ``proton.Terminus``'s filter.

Groups use SQL's three-valued logic (all = AND, any = OR, not = NOT any): a
member that is unknown makes ``all`` unknown unless another member is false.
A member whose evaluation *fails* makes the whole group unknown with that
member's reason; members are evaluated in order.
"""
from __future__ import annotations

from itertools import islice
from typing import Any, Callable, Mapping, cast

from proton import Array, Data, Described, symbol

from . import descriptors
from ..compiler import check_arguments, compile_sql
from ..errors import FilterError, internal_error
from ..filter import Filter
from ..names import Dialect
from ..limits import DEFAULT_LIMITS, Limits, check_limits, exceeded
from ..message import HEADER_DEFAULTS
from ..runtime.property import check_entries
from ..tree import ast
from ..row import RowGenerator, load
from ..dialects import AMQP, get_dialect
from ..runtime.topic import compile_topic
from ..typed_json import value_from_json
from .validation import check_value

_GROUPS = ("all", "any", "none", "not")
_SYMBOL_KEYED = ("delivery_annotations", "message_annotations", "footer")


# --- input forms -----------------------------------------------------------------------

def _from_json(obj: dict, limits: Limits) -> tuple[descriptors.FilterType, Any]:
    if "described" in obj:
        ftype = descriptors.lookup(obj["described"])
    elif "code" in obj:
        ftype = descriptors.lookup(descriptors.parse_code(obj["code"]))
    else:
        raise FilterError(f"a filter object names 'described' or 'code': {obj!r:.80}")
    raw = obj.get("value")
    if ftype.kind in _GROUPS:
        return ftype, raw  # members are filter objects themselves
    return ftype, value_from_json(raw, symbol_keys=ftype.section in _SYMBOL_KEYED,
                                  max_depth=limits.max_value_depth)


def normalize(f: Any, limits: Limits = DEFAULT_LIMITS) -> tuple[descriptors.FilterType, Any]:
    """(filter type, value) of a filter in any accepted form. Forms are told
    apart by exact class: a subclass would control its own ``len`` and ``[]``."""
    cls = type(f)
    if cls is Described:
        ftype, value = descriptors.lookup(f.descriptor), f.value
    elif cls is tuple and len(f) == 2:
        ftype, value = descriptors.lookup(f[0]), f[1]
    elif cls is dict and ("described" in f or "code" in f):
        ftype, value = _from_json(f, limits)
    else:
        raise FilterError(f"not a filter: a {cls.__name__[:40]} (expected proton.Described, "
                          "(descriptor, value) or a filter object)")
    if type(value) is Described:   # a value may itself come described
        value = value.value
    if ftype.kind in ("property", "headers") and type(value) is dict \
            and len(value) > limits.max_property_entries:   # refused before it is read
        raise exceeded("max_property_entries", limits, f"{ftype.name} has more than "
                       f"{limits.max_property_entries:,} entries")
    if ftype.kind not in _GROUPS:
        check_value(value, limits, f"the {ftype.name} filter")
    return ftype, value


def _canonical(ftype: descriptors.FilterType, value: Any) -> tuple:
    """A picklable, re-compilable form: (descriptor symbol, value)."""
    return (str(ftype.name), value)


# --- compilation -----------------------------------------------------------------------

def compile_filter(f: object, dialect: Dialect = "amqp", *,
                   limits: Limits | None = None) -> Filter:
    """Compile one filter of any type filtex knows; ``FilterError`` otherwise
    (``condition`` ``amqp:not-implemented`` for an unknown descriptor,
    ``amqp:resource-limit-exceeded`` past ``limits``). ``f`` is a definition,
    perhaps a remote client's: whatever object it is, only ``FilterError``
    leaves; a ``dialect`` or ``limits`` of the wrong type is a ``TypeError``."""
    check_arguments(dialect, limits)
    if type(f) is Filter:
        return f
    return _guarded(lambda dialect, limits: _compile(f, dialect, 0, _Budget(limits)), dialect,
                    limits, "compiling a described filter")


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


class _Budget:
    """Counts the filters of one group tree or filter set against the limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.filters = 0

    def take(self) -> None:
        self.filters += 1
        if self.filters > self.limits.max_group_filters:
            raise exceeded("max_group_filters", self.limits,
                           f"more than {self.limits.max_group_filters:,} filters in one "
                           "group tree or filter set")


def _options(limits: Limits) -> dict:
    """The keyword arguments a filter was compiled with (none for the defaults)."""
    return {} if limits is DEFAULT_LIMITS else {"limits": limits}


def _read(f: Any, dialect: Dialect, depth: int,
          budget: _Budget) -> Filter | tuple[descriptors.FilterType, Any]:
    """One filter of a tree, counted against the limits: a ``Filter`` for one
    already compiled or an SQL filter (compiled as SQL), else (type, value)."""
    limits = budget.limits
    budget.take()
    if type(f) is Filter:
        return f
    if depth > limits.max_group_depth:
        raise exceeded("max_group_depth", limits,
                       f"group filters nested more than {limits.max_group_depth} deep")
    ftype, value = normalize(f, limits)
    if ftype.kind in ("sql", "selector"):
        return compile_sql(_text(value, ftype), ftype.dialect or dialect, **_options(limits))
    return ftype, value


def _compile(f: Any, dialect: Dialect, depth: int, budget: _Budget) -> Filter:
    """One filter: an SQL filter compiles as SQL; any other is lowered into the
    checked tree and generated as one function, groups included."""
    read = _read(f, dialect, depth, budget)
    if isinstance(read, Filter):   # _read's filters are exactly Filter
        return read
    ftype, value = read
    tree, text = _lower_value(ftype, value, dialect, depth, budget)
    return _function(tree, text, dialect, ftype.name, budget.limits,
                     (compile_filter, (text, dialect), _options(budget.limits)))


def _function(tree: ast.Node, text: Any, dialect: Dialect, kind: str, limits: Limits,
              recipe: tuple) -> Filter:
    """The one generated function of a lowered tree. Its junctions are the
    groups': every member is evaluated, in order, so a failing member makes the
    group unknown whatever the others say (each SQL member keeps its dialect in
    its ``Scope``)."""
    generator = RowGenerator(semantics=AMQP.semantics, limits=limits)
    source = generator.generate(tree)
    evaluate, matches = load(source, generator.namespace, kind)
    return Filter(text, dialect, kind, source, evaluate, matches, tree, recipe)


def _lower(f: Any, dialect: Dialect, depth: int, budget: _Budget) -> tuple[ast.Node, Any]:
    """(node, text) of one member of a group or set: a compiled member's own tree
    (an SQL filter's is a Scope of its dialect), or the member lowered here."""
    read = _read(f, dialect, depth, budget)
    if isinstance(read, Filter):   # _read's filters are exactly Filter
        return cast(ast.Node, read.tree), _member_text(read)
    ftype, value = read
    return _lower_value(ftype, value, dialect, depth, budget)


def _lower_value(ftype: descriptors.FilterType, value: Any, dialect: Dialect, depth: int,
                 budget: _Budget) -> tuple[ast.Node, Any]:
    kind, limits = ftype.kind, budget.limits
    if kind in _GROUPS:
        lowered = [_lower(m, dialect, depth + 1, budget) for m in _members(value, ftype, limits)]
        nodes = tuple(node for node, _ in lowered)
        text = (str(ftype.name), [member_text for _, member_text in lowered])
        if kind == "all":
            tree = nodes[0] if len(nodes) == 1 else ast.And(items=nodes, typ="bool")
        else:
            tree = nodes[0] if len(nodes) == 1 else ast.Or(items=nodes, typ="bool")
            if kind in ("none", "not"):   # amqp:not-filter (none of them), apache.org:not-filter
                tree = ast.Not(operand=tree, typ="bool")
        return tree, text
    return _lower_simple(ftype, value, dialect, limits), _canonical(ftype, value)


def _lower_simple(ftype: descriptors.FilterType, value: Any, dialect: Dialect,
                  limits: Limits) -> ast.Node:
    kind = ftype.kind
    if kind in ("true", "false"):
        if value is not None and type(value) is not bool:
            raise FilterError(f"{ftype.name} holds a boolean, not {type(value).__name__}")
        return ast.Literal(value=kind == "true", typ="bool")
    if kind == "property":
        rules = get_dialect(dialect)
        entries = check_entries(ftype.section, value, rules)
        present = rules.semantics.property_match == "present"
        items = tuple(ast.PropertyMatch(
            section=ftype.section, key=key, ref=ref, typ="bool", present=present,
            match=rules.semantics.match_property if present else None,
            default=HEADER_DEFAULTS.get(key) if ftype.section == "header" else None)
            for key, ref in entries)
        if not items:
            return ast.Literal(value=True, typ="bool")
        return ast.And(items=items, typ="bool")
    if kind == "direct":
        return ast.Direct(key=_text(value, ftype), typ="bool")
    if kind == "topic":
        pattern = _text(value, ftype)
        if len(pattern) > limits.max_topic_length:
            raise exceeded("max_topic_length", limits, f"topic pattern is longer "
                           f"than {limits.max_topic_length:,} characters")
        return ast.Topic(pattern=pattern, matcher=compile_topic(pattern), typ="bool")
    if kind == "headers":
        return _lower_headers(value, ftype, limits)
    if kind == "no-local":
        return ast.NoLocal(typ="bool")
    raise FilterError(f"filter type {ftype.name} is not implemented",
                      condition="amqp:not-implemented")


def _lower_headers(value: Any, ftype: descriptors.FilterType, limits: Limits) -> ast.Node:
    if not isinstance(value, Mapping):
        raise FilterError(f"{ftype.name} holds a map, not {type(value).__name__}")
    mode = value.get("x-match", "all")
    if not issubclass(type(mode), str) or str(mode) not in ("all", "any"):
        raise FilterError(f"x-match must be the symbol any or all, not {mode!r}")
    items = []
    for key, ref in value.items():
        if not issubclass(type(key), str):
            raise FilterError(f"{ftype.name} keys are strings, not {key!r}")
        if str(key).startswith("x-"):
            continue
        if isinstance(ref, (Mapping, list, tuple, Array)):
            raise FilterError(f"{ftype.name} values are simple types, not {type(ref).__name__}")
        items.append(ast.HeaderMatch(key=str.__str__(key), ref=ref, typ="bool"))
    if not items:
        return ast.Literal(value=str(mode) == "all", typ="bool")
    cls = ast.And if str(mode) == "all" else ast.Or
    return cls(items=tuple(items), typ="bool")


def _member_text(member: Filter) -> Any:
    if member.kind == "sql":
        return (get_dialect(member.dialect).sql_descriptor, member.text)
    return member.text


def _text(value: Any, ftype: descriptors.FilterType) -> str:
    if not issubclass(type(value), str):
        raise FilterError(f"{ftype.name} holds a string, not {type(value).__name__}")
    return str.__str__(value)


def _members(value: Any, ftype: descriptors.FilterType, limits: Limits) -> list:
    if ftype.kind == "not" and type(value) not in (list, tuple, Array):
        value = [value]  # the Apache not-filter is a composite with one field
    if type(value) is Array:
        value = value.elements
    if type(value) not in (list, tuple):
        raise FilterError(f"{ftype.name} holds a list of filters, not {type(value).__name__}")
    if not value:
        raise FilterError(f"{ftype.name} needs at least one filter")
    if ftype.kind == "not" and len(value) != 1:
        raise FilterError(f"{ftype.name} negates exactly one filter, not {len(value)}")
    if len(value) > limits.max_group_members:
        raise exceeded("max_group_members", limits,
                       f"{ftype.name} has more than {limits.max_group_members:,} filters")
    return list(value)


def compile_filter_set(filters: object, dialect: Dialect = "amqp", *,
                       limits: Limits | None = None) -> Filter:
    """A source's filter set: a message passes when every member matches. As
    for ``compile_filter``, ``filters`` may hold anything (``FilterError``)."""
    return _guarded(lambda dialect, limits: _compile_set(filters, dialect, limits), dialect,
                    limits, "compiling a filter set")


def _compile_set(filters: Any, dialect: Dialect, limits: Limits) -> Filter:
    if type(filters) is Data:
        filters = _data_object(filters)
    elif type(getattr(filters, "filter", None)) is Data:
        filters = _data_object(filters.filter)
    if type(filters) is Described:
        filters = filters.value
    if filters is None:
        filters = {}
    if not isinstance(filters, Mapping):
        raise FilterError(f"a filter set is a map of names to filters, not "
                          f"{type(filters).__name__}")
    # at most one name past the limit is read: a mapping's __len__ may lie, its
    # iteration never end
    names = list(islice(filters, limits.max_set_entries + 1))
    if len(names) > limits.max_set_entries:
        raise exceeded("max_set_entries", limits,
                       f"filter set has more than {limits.max_set_entries:,} entries")
    filters = {name: filters[name] for name in names}
    for name in filters:
        if type(name) not in (str, symbol):
            raise FilterError(f"filter set names are symbols, not {type(name).__name__}")
    budget = _Budget(limits)
    lowered = [_lower(f, dialect, 1, budget) for f in filters.values()]
    nodes = tuple(node for node, _ in lowered)
    tree = (ast.Literal(value=True, typ="bool") if not nodes else nodes[0] if len(nodes) == 1
            else ast.And(items=nodes, typ="bool"))
    text = ("filter-set", {str.__str__(k): member for k, (_, member) in zip(filters, lowered)})
    return _function(tree, text, dialect, "filter-set", limits,
                     (compile_filter_set, (dict(text[1]), dialect), _options(limits)))


def _data_object(data: Data) -> Any:
    data.rewind()
    if not data.next():
        return {}
    return data.get_object()


__all__ = ["compile_filter", "compile_filter_set", "normalize"]
