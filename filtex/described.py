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

from typing import Any, Mapping

from proton import Array, Data, Described, symbol

from . import descriptors
from .compiler import compile_sql, load
from .errors import FilterError, internal_error
from .filter import Filter
from .limits import DEFAULT_LIMITS, Limits, check_limits, exceeded
from .message import HEADER_DEFAULTS
from .property_filters import check_entries, match_value, string_rule
from .sql import ast
from .sql.codegen import CodeGenerator
from .dialects import get_dialect
from .topic import compile_topic
from .typed_json import value_from_json
from .validation import check_value
from .values import FLOAT_CLASSES, INT_CLASSES, double_value, exact, kind_of

_GROUPS = ("all", "any", "none", "not")
_SYMBOL_KEYED = ("delivery_annotations", "message_annotations", "footer")


def _invalid(problem: str) -> FilterError:
    return FilterError(problem, condition="amqp:invalid-field")


# --- input forms -----------------------------------------------------------------------

def _from_json(obj: dict, limits: Limits) -> tuple[descriptors.FilterType, Any]:
    if "described" in obj:
        ftype = descriptors.lookup(obj["described"])
    elif "code" in obj:
        ftype = descriptors.lookup(descriptors.parse_code(obj["code"]))
    else:
        raise _invalid(f"a filter object names 'described' or 'code': {obj!r:.80}")
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
        raise _invalid(f"not a filter: a {cls.__name__[:40]} (expected proton.Described, "
                       "(descriptor, value) or a filter object)")
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

def compile_filter(f: Any, dialect: str = "amqp", *, limits: Limits | None = None) -> Filter:
    """Compile one filter of any type filtex knows; ``FilterError`` otherwise
    (``condition`` ``amqp:not-implemented`` for an unknown descriptor,
    ``amqp:resource-limit-exceeded`` past ``limits``)."""
    if type(f) is Filter:
        return f
    return _guarded(lambda dialect, limits: _compile(f, dialect, 0, _Budget(limits)), dialect,
                    limits, "compiling a described filter")


def _guarded(build, dialect: Any, limits: Any, what: str) -> Filter:
    """Run ``build(dialect, limits)`` so that nothing but a FilterError leaves it."""
    try:
        limits = check_limits(limits)
        if not issubclass(type(dialect), str):
            raise FilterError(f"a dialect is named by a string, not {type(dialect).__name__}")
        dialect = str.__str__(dialect)
        get_dialect(dialect)
        return build(dialect, limits)
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


def _compile(f: Any, dialect: str, depth: int, budget: _Budget) -> Filter:
    budget.take()
    limits = budget.limits
    if type(f) is Filter:
        return f
    if depth > limits.max_group_depth:
        raise exceeded("max_group_depth", limits,
                       f"group filters nested more than {limits.max_group_depth} deep")
    ftype, value = normalize(f, limits)
    if type(value) is Described:
        value = value.value
    kind = ftype.kind
    options = {} if limits is DEFAULT_LIMITS else {"limits": limits}
    if kind == "sql":
        return compile_sql(_text(value, ftype), dialect, **options)
    if kind == "selector":
        return compile_sql(_text(value, ftype), ftype.dialect, **options)
    generator = _Generator(limits)
    members: list[Filter] = []
    if kind in _GROUPS:
        items = _members(value, ftype, limits)
        members = [_compile(m, dialect, depth + 1, budget) for m in items]
        result = generator.group(kind, members)
        text = (str(ftype.name), [_member_text(m) for m in members])
    else:
        result = generator.simple(ftype, value, dialect)
        text = _canonical(ftype, value)
    source = generator.function(result)
    evaluate, matches = load(source, generator.namespace, ftype.name)
    return Filter(text, dialect, ftype.name, source, evaluate, matches, tuple(members),
                  (compile_filter, (text, dialect), options))


def _member_text(member: Filter) -> Any:
    if member.kind == "sql":
        return (get_dialect(member.dialect).sql_descriptor, member.text)
    return member.text


def _text(value: Any, ftype: descriptors.FilterType) -> str:
    if not issubclass(type(value), str):
        raise _invalid(f"{ftype.name} holds a string, not {type(value).__name__}")
    return str.__str__(value)


def _members(value: Any, ftype: descriptors.FilterType, limits: Limits) -> list:
    if ftype.kind == "not" and type(value) not in (list, tuple, Array):
        value = [value]  # the Apache not-filter is a composite with one field
    if type(value) is Array:
        value = value.elements
    if type(value) not in (list, tuple):
        raise _invalid(f"{ftype.name} holds a list of filters, not {type(value).__name__}")
    if not value:
        raise _invalid(f"{ftype.name} needs at least one filter")
    if ftype.kind == "not" and len(value) != 1:
        raise _invalid(f"{ftype.name} negates exactly one filter, not {len(value)}")
    if len(value) > limits.max_group_members:
        raise exceeded("max_group_members", limits,
                       f"{ftype.name} has more than {limits.max_group_members:,} filters")
    return list(value)


def compile_filter_set(filters: Any, dialect: str = "amqp", *,
                       limits: Limits | None = None) -> Filter:
    """A source's filter set: a message passes when every member matches."""
    return _guarded(lambda dialect, limits: _compile_set(filters, dialect, limits), dialect,
                    limits, "compiling a filter set")


def _compile_set(filters: Any, dialect: str, limits: Limits) -> Filter:
    if type(filters) is Data:
        filters = _data_object(filters)
    elif type(getattr(filters, "filter", None)) is Data:
        filters = _data_object(filters.filter)
    if type(filters) is Described:
        filters = filters.value
    if filters is None:
        filters = {}
    if not isinstance(filters, Mapping):
        raise _invalid(f"a filter set is a map of names to filters, not "
                       f"{type(filters).__name__}")
    if len(filters) > limits.max_set_entries:
        raise exceeded("max_set_entries", limits,
                       f"filter set has more than {limits.max_set_entries:,} entries")
    filters = dict(filters)
    for name in filters:
        if type(name) not in (str, symbol):
            raise _invalid(f"filter set names are symbols, not {type(name).__name__}")
    budget = _Budget(limits)
    members = [_compile(f, dialect, 1, budget) for f in filters.values()]
    generator = _Generator(limits)
    result = generator.group("all", members) if members else "True"
    text = ("filter-set", {str.__str__(k): _member_text(m) for k, m in zip(filters, members)})
    source = generator.function(result)
    evaluate, matches = load(source, generator.namespace, "filter-set")
    options = {} if limits is DEFAULT_LIMITS else {"limits": limits}
    return Filter(text, dialect, "filter-set", source, evaluate, matches, tuple(members),
                  (compile_filter_set, (dict(text[1]), dialect), options))


def _data_object(data: Data) -> Any:
    data.rewind()
    if not data.next():
        return {}
    return data.get_object()


# --- code generation ------------------------------------------------------------------------

class _Generator(CodeGenerator):
    """Statements for non-SQL filters, on the SQL generator's plumbing."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(limits=limits)
        self.depth = 2

    def group(self, kind: str, members: list[Filter]) -> str:
        values = []
        for member in members:
            fn = self.hoist("member", member.evaluate)
            var = self.temp()
            # explain mode: a member's failure propagates, with its reason, and ends the group
            self.emit(f"{var} = {fn}(message, receiving_connection, False)")
            values.append(var)
        if kind == "all":
            return self._junction_values(values, "False", "True")
        combined = self._junction_values(values, "True", "False")
        if kind == "any":
            return combined
        var = self.temp()  # amqp:not-filter (none of them) and apache.org:not-filter
        self.booleans.add(var)
        self.emit(f"{var} = None if {combined} is None else not {combined}")
        return var

    def _junction_values(self, values: list[str], decisive: str, neutral: str) -> str:
        if len(values) == 1:
            return values[0]
        var = self.temp()
        self.booleans.add(var)
        any_decisive = " or ".join(f"{v} is {decisive}" for v in values)
        any_null = " or ".join(f"{v} is None" for v in values)
        self.emit(f"{var} = {decisive} if {any_decisive} else "
                  f"(None if {any_null} else {neutral})")
        return var

    def simple(self, ftype: descriptors.FilterType, value: Any, dialect: str = "amqp") -> str:
        kind = ftype.kind
        if kind in ("true", "false"):
            if value is not None and not type(value) is bool:
                raise _invalid(f"{ftype.name} holds a boolean, not {type(value).__name__}")
            return repr(kind == "true")
        if kind == "property":
            rules = get_dialect(dialect)
            entries = check_entries(ftype.section, value, rules, self.limits)
            if rules.semantics.property_match == "present":
                return self.present_property_filter(ftype.section, entries, rules)
            return self.property_filter(ftype.section, entries)
        if kind == "direct":
            return self.direct(_text(value, ftype))
        if kind == "topic":
            pattern = _text(value, ftype)
            if len(pattern) > self.limits.max_topic_length:
                raise exceeded("max_topic_length", self.limits, f"topic pattern is longer "
                               f"than {self.limits.max_topic_length:,} characters")
            matcher = self.hoist("topic", compile_topic(pattern))
            subject = self.field_read("properties", "subject")
            var = self.temp()
            self.booleans.add(var)
            self.emit(f"{var} = {matcher}({subject})")
            return var
        if kind == "headers":
            return self.headers(value, ftype)
        if kind == "no-local":
            return self.no_local()
        raise FilterError(f"filter type {ftype.name} is not implemented",
                          condition="amqp:not-implemented")

    def field_read(self, section: str, key: Any, default: Any = None) -> str:
        return self.gen_Field(ast.Field(section=section, key=key, default=default))

    # property filters -------------------------------------------------------------------

    def property_filter(self, section: str, entries: list[tuple[Any, Any]]) -> str:
        """One short-circuit expression: each entry's field is read only if the
        entries before it matched, as a hand-written early-exit function would."""
        tests = []
        section_var = self.section(section)
        for key, ref in entries:
            if ref is None:
                continue  # a null reference matches whatever is there
            value = self.temp()
            read = self.accessor.field(section, section_var, self.key(key))
            default = HEADER_DEFAULTS.get(key) if section == "header" else None
            if default is not None:
                read = f"_v if (_v := {read}) is not None else {self.const(default)}"
            tests.append(self.match_expression(f"({value} := {read})", ref, value))
        if not tests:
            return "True"
        var = self.temp()
        self.booleans.add(var)   # every test is of exact classes: True or False
        self.emit(f"{var} = {' and '.join(f'({t})' for t in tests)}")
        return var

    def present_property_filter(self, section: str, entries: list[tuple[Any, Any]],
                                rules: Any) -> str:
        """A dialect whose entries need their value present, null references
        included (RabbitMQ), matched by its own rule; short-circuits like
        ``property_filter``."""
        self.namespace["_match_present"] = rules.semantics.match_property
        section_var = self.section(section)
        tests = [f"_match_present({self.accessor.field(section, section_var, self.key(key))}, "
                 f"{self.hoist('ref', ref)})" for key, ref in entries]
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = {' and '.join(tests)}")
        return var

    def match_expression(self, first: str, ref: Any, value: str) -> str:
        """A Python expression: does the value match the reference (4.1)?
        ``first`` is the expression for the value's first use (it assigns
        ``value``), later uses are ``value``."""
        kind = kind_of(ref)
        if kind == "string":
            rule, text = string_rule(ref)
            literal = self.const(text)
            test = {"eq": f"{value} == {literal}", "prefix": f"{value}.startswith({literal})",
                    "suffix": f"{value}.endswith({literal})"}[rule]
            return f"type({first}) in _STRS_CHAR and {test}"
        if ref.__class__ in INT_CLASSES:
            as_float = self.const(double_value(ref))
            return (f"({value} == {self.const(int(ref))} if type({first}) in _INTS else "
                    f"(type({value}) in _FLOATS and _double({value}) == {as_float}))")
        if ref.__class__ in FLOAT_CLASSES:
            as_float = self.const(double_value(ref))
            return f"type({first}) in _NUMS_F and _double({value}) == {as_float}"
        if ref is True or ref is False:
            return f"{first} is {ref!r}"
        self.namespace["_match_value"] = match_value
        return f"_match_value({first}, {self.hoist('ref', ref)})"

    # Apache exchange and JMS filters ----------------------------------------------------------

    def direct(self, key: str) -> str:
        subject = self.field_read("properties", "subject")
        var = self.temp()
        self.emit(f"{var} = type({subject}) in _STRS_CHAR and {subject} == {self.const(key)}")
        self.booleans.add(var)
        return var

    def headers(self, value: Any, ftype: descriptors.FilterType) -> str:
        if not isinstance(value, Mapping):
            raise _invalid(f"{ftype.name} holds a map, not {type(value).__name__}")
        if len(value) > self.limits.max_property_entries:
            raise exceeded("max_property_entries", self.limits, f"{ftype.name} has more than "
                           f"{self.limits.max_property_entries:,} entries")
        mode = value.get("x-match", "all")
        if not issubclass(type(mode), str) or str(mode) not in ("all", "any"):
            raise _invalid(f"x-match must be the symbol any or all, not {mode!r}")
        tests = []
        for key, ref in value.items():
            if not issubclass(type(key), str):
                raise _invalid(f"{ftype.name} keys are strings, not {key!r}")
            if str(key).startswith("x-"):
                continue
            if isinstance(ref, (Mapping, list, tuple, Array)):
                raise _invalid(f"{ftype.name} values are simple types, not "
                               f"{type(ref).__name__}")
            section = self.section("application_properties")
            literal = self.key(key)
            if ref is None:
                tests.append(f"{literal} in {section}")
                continue
            entry = self.field_read("application_properties", str.__str__(key))
            self.namespace["_same_value"] = same_value
            tests.append(f"_same_value({entry}, {self.hoist('ref', ref)})")
        var = self.temp()
        if not tests:
            self.emit(f"{var} = {str(mode) == 'all'}")
        else:
            joiner = " and " if str(mode) == "all" else " or "
            self.emit(f"{var} = {joiner.join(f'({t})' for t in tests)}")
        self.booleans.add(var)
        return var

    def no_local(self) -> str:
        var = self.temp()
        self.emit("if receiving_connection is None:")
        self.emit("    raise _Failure('the no-local filter needs the receiving connection')")
        self.emit(f"{var} = {self.accessor.connection()} != receiving_connection")
        return var


def same_value(value: Any, ref: Any) -> bool:
    """Legacy headers binding: same type (string and symbol alike) and value."""
    if value is None:
        return False
    value = exact(value)
    return kind_of(value) == kind_of(ref) and value == ref


__all__ = ["compile_filter", "compile_filter_set", "normalize"]
