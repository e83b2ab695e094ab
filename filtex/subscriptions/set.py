"""``Subscriptions``: many named filters matched against a message in one pass.

Each subscription is compiled as usual (the compile cache shares equal
filters) and gets a gate (``gates.py``) when one of its conjuncts is
indexable. Per message, each gated field is read once and looked up in its
index (``index.py``); only the subscriptions an index names, and those without
a gate, are evaluated, by their own generated functions on one view of the
message (encoded bytes and proton messages are adapted once, not once per
subscription). A subscription whose gate is not TRUE cannot be TRUE, in any
dialect and whatever fails, so ``match`` is exactly the one-by-one answer.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from threading import RLock
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Literal, cast

from proton import Data, Terminus

from ..dialects import get_dialect
from ..filter import Dialect, Filter, check_dialect_type
from ..forms import view
from ..limits import Limits, check_limits
from ..sql import ast
from .failures import requirements, satisfied
from .gates import Gate, find_gates
from .index import FieldIndex

if TYPE_CHECKING:
    from ..message import MessageForm

_UNREADABLE = object()   # a field whose reading raised (a malformed encoded message)


class _Entry:
    """One subscription: its name, filter, order of addition and gate."""

    __slots__ = ("name", "filter", "seq", "gate", "matches", "evaluate", "always", "required",
                 "offered")

    def __init__(self, name: str, flt: Filter, seq: int, gate: Gate | None,
                 always: bool, required: frozenset | None = None) -> None:
        self.name, self.filter, self.seq, self.gate = name, flt, seq, gate
        self.matches, self.evaluate = flt.matches, flt.evaluate
        # evaluate_all must evaluate it whatever its gate says: its evaluation can
        # fail (a failure makes it unknown even where the gate is FALSE), or its
        # gate is an OR (no one index says it is FALSE)
        self.always = always
        self.required = required   # (amqp) the fields' kinds under which it cannot fail
        self.offered: list = []    # (field, kind, key) of every indexable term it has


class Subscriptions:
    """A mutable set of named filters, matched against a message at once.

    ``add(name, filter)`` takes SQL text (in ``dialect``, or the set's), a
    ``Filter``, a described filter in any form ``filtex.compile_filter``
    accepts, or a filter set (a mapping of names to filters). ``match(message)``
    returns the names whose filter is TRUE, in the order they were added;
    ``evaluate_all(message)`` returns ``{name: True or None}`` for those whose
    verdict is not FALSE. Both accept every message form ``Filter.evaluate``
    accepts and give exactly what evaluating each filter would.

    Adding and removing cost one compile (a cache hit for a filter already
    compiled) and a few index updates. ``match`` may run in several threads
    while another adds and removes: a concurrent change is seen or not, never
    half.
    """

    def __init__(self, filters: Mapping[str, object] | Iterable[tuple[str, object]] | None = None,
                 *, dialect: Dialect = "amqp", limits: Limits | None = None) -> None:
        check_dialect_type(dialect)
        check_limits(limits)
        # an unknown name is a FilterError (amqp:not-implemented), as in compile_sql
        self.dialect: Dialect = get_dialect(str.__str__(dialect)).name
        self.limits = limits
        self._lock = RLock()
        self._entries: dict[str, _Entry] = {}
        self._fields: dict[tuple, FieldIndex] = {}
        self._plain: dict[int, _Entry] = {}    # no gate: evaluated on every message
        self._always: dict[int, _Entry] = {}   # evaluate_all evaluates them on every message
        # evaluate_all evaluates them where a required field holds a value of another
        # kind (then they may fail): required (field, kind) pairs -> seq -> entry
        self._guarded: dict[frozenset, dict[int, _Entry]] = {}
        # the constants the subscriptions' indexable terms name: (field, kind, key) ->
        # how many name it; (field, kind) -> how many distinct (for choosing gates)
        self._offered: dict[tuple, int] = {}
        self._distinct: dict[tuple, int] = {}
        self._snapshots: dict[str, tuple[Any, ...]] = {}
        self._seq = itertools.count()
        if filters is not None:
            for name, flt in _pairs(filters):
                self.add(name, flt)  # type: ignore[arg-type]  # add checks the name's type

    # --- the set ------------------------------------------------------------------------

    def add(self, name: str, flt: object, dialect: Dialect | None = None) -> Filter:
        """Add (or replace) the subscription ``name``; returns its compiled filter.
        A filter that cannot compile raises ``FilterError`` and changes nothing."""
        name = _name(name)
        if dialect is not None:
            check_dialect_type(dialect)
        compiled = _compile(flt, self.dialect if dialect is None else dialect, self.limits)
        gates = []
        if compiled.tree is not None:
            try:
                gates = find_gates(compiled.tree, get_dialect(compiled.dialect).semantics)
            except Exception:   # a tree the analysis does not know: evaluated every time
                gates = []
        with self._lock:
            offered = [(t.field, t.kind, key) for g in gates for t in g.terms
                       if t.kind not in ("range", "null") for key in t.keys]
            for item in offered:   # what the subscriptions test, chosen as gate or not
                self._offered[item] = self._offered.get(item, 0) + 1
                if self._offered[item] == 1:
                    self._distinct[item[:2]] = self._distinct.get(item[:2], 0) + 1
            gate = min(gates, key=lambda g: (self._share(g), -g.rank)) if gates else None
            required = None   # the fields' kinds under which it cannot fail (amqp)
            always = gate is None or len(gate.terms) > 1
            if not always and _may_fail(compiled):
                required = requirements(compiled.tree, get_dialect(compiled.dialect).semantics)
                always = required is None
            if name in self._entries:
                self._drop(self._entries.pop(name))
            entry = _Entry(name, compiled, next(self._seq), gate, always, required)
            entry.offered = offered
            self._entries[name] = entry
            if gate is None:
                self._plain[entry.seq] = entry
                self._snapshots.pop("plain", None)
            else:
                for term in gate.terms:
                    field = self._fields.get(term.field)
                    if field is None:
                        field = self._fields[term.field] = FieldIndex(term.field, self._lock)
                        self._snapshots.pop("fields", None)
                    field.index(term.kind, term.never_null).add(_keys(term), entry)
                    field.changed()
            if always:
                self._always[entry.seq] = entry
                self._snapshots.pop("always", None)
            elif required is not None:
                self._guarded.setdefault(required, {})[entry.seq] = entry
                self._snapshots.pop("guarded", None)
        return compiled

    def _share(self, gate: Gate) -> float:
        """The share of messages the gate lets through, as the set sees it now: a
        term of k constants on a field the subscriptions test against n distinct
        ones (in any of their conjuncts), k/n; a range or IS NULL, one half. A
        field with fewer than 10 constants counts as 10."""
        share = 0.0
        for term in gate.terms:
            if term.kind in ("range", "null"):
                share += 0.5
                continue
            distinct = self._distinct.get((term.field, term.kind), 0)
            share += len(term.keys) / max(distinct, 10)
        return share

    def remove(self, name: str) -> None:
        """Remove the subscription ``name`` (KeyError if there is none)."""
        name = _name(name)
        with self._lock:
            self._drop(self._entries.pop(name))

    def _drop(self, entry: _Entry) -> None:
        for item in entry.offered:
            left = self._offered[item] - 1
            if left:
                self._offered[item] = left
            else:
                del self._offered[item]
                self._distinct[item[:2]] -= 1
                if not self._distinct[item[:2]]:
                    del self._distinct[item[:2]]
        if entry.gate is None:
            del self._plain[entry.seq]
            self._snapshots.pop("plain", None)
        else:
            for term in entry.gate.terms:
                field = self._fields[term.field]
                field.kinds[(term.kind, term.never_null)].remove(_keys(term), entry)
                field.changed()
                if not field.size:
                    del self._fields[term.field]
                    self._snapshots.pop("fields", None)
        if self._always.pop(entry.seq, None) is not None:
            self._snapshots.pop("always", None)
        if entry.required is not None:
            group = self._guarded[entry.required]
            del group[entry.seq]
            if not group:
                del self._guarded[entry.required]
            self._snapshots.pop("guarded", None)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._entries))

    def __getitem__(self, name: str) -> Filter:
        return self._entries[name].filter

    def stats(self) -> dict[str, Any]:
        """How the set is indexed: subscriptions with a gate, without, the fields."""
        with self._lock:
            return {"subscriptions": len(self._entries), "ungated": len(self._plain),
                    "fields": {f"{s}.{k}": fi.size for (s, k, _), fi in self._fields.items()}}

    # --- per message --------------------------------------------------------------------

    def _snapshot(self, which: str) -> tuple[Any, ...]:
        found = self._snapshots.get(which)
        if found is None:
            with self._lock:
                if which == "guarded":
                    found = tuple((required, tuple(group.values()))
                                  for required, group in self._guarded.items())
                else:
                    sources: dict[str, dict[Any, Any]] = {
                        "fields": self._fields, "plain": self._plain, "always": self._always}
                    source = sources[which]
                    found = tuple(source.values())
                self._snapshots[which] = found
        return found

    def _candidates(self, message: Any, exact: bool) -> dict:
        """seq -> entry: every subscription an index names for ``message`` (and
        with ``exact``, those whose gate is not known to be FALSE)."""
        found: dict[int, _Entry] = {}
        for field in self._snapshot("fields"):
            try:
                value = field.read(message)
            except Exception:   # unreadable: its subscriptions evaluate (and say why)
                value = _UNREADABLE
            for terms in field.term_indexes():
                if value is _UNREADABLE:
                    entries, settled = terms.members(), False
                else:
                    entries, settled = terms.lookup(value)
                if exact and not settled:   # the candidates are among the members
                    entries = terms.members()
                for entry in entries:
                    found[entry.seq] = entry
        for entry in self._snapshot("plain"):
            found[entry.seq] = entry
        if exact:
            for entry in self._snapshot("always"):
                found[entry.seq] = entry
            for required, group in self._snapshot("guarded"):
                if not satisfied(required, message):
                    for entry in group:
                        found[entry.seq] = entry
        return found

    def match(self, message: MessageForm, receiving_connection: object = None) -> list[str]:
        """The names of the subscriptions whose filter is TRUE for ``message``."""
        message = view(message)
        found = self._candidates(message, exact=False)
        return [found[seq].name for seq in sorted(found)
                if found[seq].matches(message, receiving_connection)]

    def evaluate_all(self, message: MessageForm, receiving_connection: object = None
                     ) -> dict[str, Literal[True] | None]:
        """``{name: True or None}`` for every subscription whose verdict for
        ``message`` is not FALSE (None: unknown)."""
        message = view(message)
        found = self._candidates(message, exact=True)
        results: dict[str, Literal[True] | None] = {}
        for seq in sorted(found):
            entry = found[seq]
            result = entry.evaluate(message, receiving_connection)
            if result is not False:
                results[entry.name] = result
        return results

    def __repr__(self) -> str:
        return f"<Subscriptions of {len(self)} filters, {len(self._fields)} indexed fields>"


def _keys(term: Any) -> tuple:
    if term.kind == "null":
        return (term.keys[0], term.semantics)
    return term.keys


def _name(name: object) -> str:
    """A subscription's name as an exact str; ``TypeError`` for another type."""
    if not issubclass(type(name), str):
        raise TypeError(f"a subscription is named by a str, not {type(name).__name__}")
    return str.__str__(cast(str, name))


def _pairs(filters: object) -> Iterator[tuple[object, object]]:
    """(name, filter) of the constructor's ``filters``: a mapping of names to
    filters, or an iterable of (name, filter) pairs; a ``TypeError`` naming
    what is accepted for anything else (names are checked by ``add``)."""
    accepted = "a mapping of names to filters or an iterable of (name, filter) pairs"
    if isinstance(filters, Mapping):
        yield from filters.items()
        return
    if issubclass(type(filters), (str, bytes, bytearray)) or not isinstance(filters, Iterable):
        raise TypeError(f"Subscriptions takes {accepted}, not {type(filters).__name__}")
    for index, item in enumerate(filters):
        if type(item) not in (tuple, list) or len(item) != 2:
            shape = f"a {type(item).__name__}" + (
                f" of {len(item)} items" if type(item) in (tuple, list) else "")
            raise TypeError(f"Subscriptions takes {accepted}; item {index} is {shape}")
        yield item[0], item[1]


def _compile(flt: Any, dialect: Dialect, limits: Limits | None) -> Filter:
    """A filter in any accepted form, compiled."""
    from ..compiler import compile_sql
    from ..described import compile_filter, compile_filter_set
    if type(flt) is Filter:
        return flt
    if issubclass(type(flt), str):
        return compile_sql(flt, dialect, limits=limits)
    if isinstance(flt, Mapping) and not ("described" in flt or "code" in flt):
        return compile_filter_set(flt, dialect, limits=limits)
    if isinstance(flt, (Data, Terminus)):   # a filter set as proton holds it
        return compile_filter_set(flt, dialect, limits=limits)
    return compile_filter(flt, dialect, limits=limits)


def _may_fail(flt: Filter) -> bool:
    """Can evaluating the filter fail (amqp rules anywhere, or no-local)? Then
    a FALSE gate does not make it FALSE: a failure elsewhere makes it unknown."""
    if flt.tree is None or get_dialect(flt.dialect).semantics.failures:
        return True
    return any((isinstance(node, ast.Scope) and node.dialect.semantics.failures)
               or isinstance(node, ast.NoLocal) for node in ast.walk(flt.tree))
