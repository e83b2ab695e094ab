"""Front end 2: described filters and filter sets, every filter type of the
specifications, from whatever form a Python user holds it in, lowered into the
checked tree (the front door, ``compiler.py``, makes it a ``Filter``).

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
from typing import Any, Mapping, NamedTuple, cast

from proton import Array, Data, Described, symbol, ulong

from . import descriptors
from ..errors import FilterError
from ..filter import Filter
from ..names import Dialect
from ..proton_copies import is_foreign, to_own
from ..limits import DEFAULT_LIMITS, Limits, exceeded
from ..message import HEADER_DEFAULTS
from ..runtime.property import check_entries
from ..sql.front import sql_tree
from ..tree import ast
from ..dialects import get_dialect
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
    if is_foreign(f):   # another proton copy's Described: rebuilt as proton's own
        f = to_own(f, limits.max_value_depth)
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


def to_described(f: Any, limits: Limits = DEFAULT_LIMITS) -> Described:
    """A filter in the conformance JSON form (``{"sql": TEXT}`` in the amqp
    dialect's descriptor, or a described filter object, groups nested) as the
    ``proton.Described`` a client sends in a source's filter set."""
    if type(f) is dict and type(f.get("sql")) is str and len(f) == 1:
        return Described(symbol("amqp:sql-filter"), f["sql"])
    if type(f) is not dict or not ("described" in f or "code" in f):
        raise FilterError(f"not a filter object: {f!r:.80}")
    try:
        ftype, value = _from_json(f, limits)
    except FilterError as error:   # a type filtex does not know: sent as it is written
        if error.condition != "amqp:not-implemented":
            raise
        descriptor = (symbol(str(f["described"])) if "described" in f
                      else ulong(descriptors.parse_code(f["code"])))
        return Described(descriptor, value_from_json(f.get("value"),
                                                     max_depth=limits.max_value_depth))
    if ftype.kind in _GROUPS:
        members = value if type(value) is list else [value]
        value = [to_described(m, limits) if type(m) is dict and
                 ({"described", "code", "sql"} & set(m)) else
                 value_from_json(m, max_depth=limits.max_value_depth) for m in members]
    descriptor = ulong(ftype.code) if "code" in f else symbol(str(f["described"]))
    return Described(descriptor, value)


def _canonical(ftype: descriptors.FilterType, value: Any) -> tuple:
    """A picklable, re-compilable form: (descriptor symbol, value)."""
    return (str(ftype.name), value)


# --- lowering ---------------------------------------------------------------------------

class SqlText(NamedTuple):
    """A described filter that is an SQL filter: compiled as SQL text (its own
    ``Filter``, cached) by the front door, not lowered here."""
    text: str
    dialect: Dialect


def lower_filter(f: object, dialect: Dialect, limits: Limits
                 ) -> tuple[ast.Node, Any, str] | SqlText:
    """(tree, text, kind) of one filter of any type filtex knows (``FilterError``
    otherwise), groups included; ``text`` is a picklable, re-compilable form of
    the definition. An SQL filter comes back as ``SqlText``."""
    budget = _Budget(limits)
    budget.take()
    ftype, value = normalize(f, limits)
    if ftype.kind in ("sql", "selector"):
        return SqlText(_text(value, ftype), ftype.dialect or dialect)
    tree, text = _lower_value(ftype, value, dialect, 0, budget)
    return tree, text, ftype.name


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


def _lower(f: Any, dialect: Dialect, depth: int, budget: _Budget) -> tuple[ast.Node, Any]:
    """(node, text) of one member of a group or set, counted against the limits:
    a compiled member's own tree, an SQL member's checked tree (a Scope of its
    dialect), or the member lowered here."""
    limits = budget.limits
    budget.take()
    if type(f) is Filter:
        member = f
        return cast(ast.Node, member.tree), _member_text(member)
    if depth > limits.max_group_depth:
        raise exceeded("max_group_depth", limits,
                       f"group filters nested more than {limits.max_group_depth} deep")
    ftype, value = normalize(f, limits)
    if ftype.kind in ("sql", "selector"):
        rules = get_dialect(ftype.dialect or dialect)
        text = _text(value, ftype)
        return sql_tree(text, rules, limits), (rules.sql_descriptor, text)
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


def set_entries(filters: Any, limits: Limits) -> dict[str, Any]:
    """A source's filter set as {name: filter}, from a mapping, a ``proton.Data``,
    a ``Terminus`` or a described map, of this proton or another copy: at most
    ``max_set_entries`` names (one more is read, never the rest: a mapping's
    ``__len__`` may lie, its iteration never end), each a symbol or a str."""
    if type(filters) is dict and any(map(is_foreign, islice(filters.keys(), 1))) \
            or is_foreign(filters):   # another proton copy's: rebuilt as proton's own
        filters = to_own(filters, limits.max_value_depth)
    if type(filters) is Data or type(getattr(filters, "filter", None)) is Data:
        filters = to_own(filters, limits.max_value_depth)   # read by filtex's bounded decoder
    if type(filters) is Described:
        filters = filters.value
    if filters is None:
        filters = {}
    if not isinstance(filters, Mapping):
        raise FilterError(f"a filter set is a map of names to filters, not "
                          f"{type(filters).__name__[:40]}")
    names = list(islice(filters, limits.max_set_entries + 1))
    if len(names) > limits.max_set_entries:
        raise exceeded("max_set_entries", limits,
                       f"filter set has more than {limits.max_set_entries:,} entries")
    for name in names:
        if type(name) not in (str, symbol):
            raise FilterError(f"filter set names are symbols, not {type(name).__name__[:40]}")
    return {str.__str__(name): filters[name] for name in names}


def lower_filter_set(filters: Any, dialect: Dialect, limits: Limits
                     ) -> tuple[ast.Node, Any, str]:
    """(tree, text, "filter-set") of a source's filter set: a message passes
    when every member matches. ``filters`` may hold anything (``FilterError``)."""
    filters = set_entries(filters, limits)
    # a null entry acts as if the key were absent (AMQP 3.5.8)
    filters = {name: f for name, f in filters.items() if f is not None}
    budget = _Budget(limits)
    lowered = [_named(name, f, dialect, budget) for name, f in filters.items()]
    nodes = tuple(node for node, _ in lowered)
    tree = (ast.Literal(value=True, typ="bool") if not nodes else nodes[0] if len(nodes) == 1
            else ast.And(items=nodes, typ="bool"))
    text = ("filter-set", {str.__str__(k): member for k, (_, member) in zip(filters, lowered)})
    return tree, text, "filter-set"


def _named(name: Any, f: Any, dialect: Dialect, budget: _Budget) -> tuple[ast.Node, Any]:
    """One entry of a set lowered; its error names the entry's key."""
    try:
        return _lower(f, dialect, 1, budget)
    except FilterError as error:
        if error.condition == "amqp:resource-limit-exceeded" and \
                error.problem.startswith("more than"):   # the set's own count, not the entry's
            raise
        raise FilterError(f"filter {str.__str__(name)[:80]}: {error.problem}", error.line,
                          error.column, error.condition) from None


__all__ = ["SqlText", "lower_filter", "lower_filter_set", "normalize", "set_entries",
           "to_described"]
