"""``Subscriptions``: many named filters matched against a message in one pass.

Each subscription is compiled as usual (the compile cache shares equal
filters) and gets a gate (``gates.py``) when one of its conjuncts is
indexable. Per message, each gated field is read once and looked up in its
index (``index.py``); only the subscriptions an index names, and those without
a gate, are evaluated, by their own generated functions on one view of the
message (encoded bytes and proton messages are adapted once, not once per
subscription). A subscription whose gate is not TRUE cannot be TRUE, in any
dialect and whatever fails, so ``match`` is exactly the one-by-one answer.

A subscription that *is* its gate (``verify.py``) is not evaluated when the
index's hit is on a value of a class that settles the test: the hit is its
verdict, TRUE. A set of a few subscriptions (``LOOP_MATCH``, ``LOOP_ALL``) is
matched by a plain loop over them, which costs less than the lookups there.
"""
from __future__ import annotations

import itertools
from collections.abc import Mapping
from itertools import compress, repeat
from operator import attrgetter, call
from threading import RLock
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Literal, cast

from proton import Data, Terminus

from ..codegen.loader import compile_matches
from ..dialects import get_dialect
from ..errors import internal_error
from ..filter import Filter
from ..names import Dialect, check_dialect_type
from ..forms import view
from ..message import Message
from ..limits import Limits, check_limits
from ..tree import ast
from .failures import requirements, satisfied
from .gates import Gate, Term, find_gates
from .index import FieldIndex
from .verify import MAYBE, PLAIN, holds, plan, whole_terms

if TYPE_CHECKING:
    from ..forms import MessageForm

_MATCHES = attrgetter("matches")
_UNREADABLE = object()   # a field whose reading raised (a malformed encoded message)

_SPARE = 16   # emptied fields or groups a roster keeps whatever the live ones

LOOP_MATCH = (16, 8)
LOOP_ALL = (48, 24)
"""``match`` and ``evaluate_all`` of a set of at most this many subscriptions
loop over them, for a ``filtex.Message`` and for another form (a view of
encoded bytes: each read costs more, so the index pays sooner): there the
lookups cost more than the evaluations they save. Measured on samples of
``benchmarks/subscriptions_mixed.py``'s set (mostly one-term filters, which
the index answers best): the crossings lay near 16 and 8 for ``match``, 48
and 24 for ``evaluate_all``, which evaluates more candidates."""
SMALL = max(LOOP_MATCH + LOOP_ALL)


class _Entry:
    """One subscription: its name, filter, order of addition and gate."""

    __slots__ = ("name", "filter", "seq", "gate", "matches", "evaluate", "always", "required",
                 "offered", "modes", "condition")

    def __init__(self, name: str, flt: Filter, seq: int, gate: Gate | None,
                 always: bool, required: frozenset | None = None) -> None:
        self.name, self.filter, self.seq, self.gate = name, flt, seq, gate
        # per gate term, how its index takes a hit (verify.PLAIN, SURE, MAYBE), and
        # what a MAYBE hit needs: ((field index, classes), ...)
        self.modes: tuple[int, ...] = ()
        self.condition: tuple | None = None   # resolved before the entry is indexed
        self.matches, self.evaluate = flt.matches, flt.evaluate
        # evaluate_all must evaluate it whatever its gate says: its evaluation can
        # fail (a failure makes it unknown even where the gate is FALSE), or its
        # gate is an OR (no one index says it is FALSE)
        self.always = always
        self.required = required   # (amqp) the fields' kinds under which it cannot fail
        self.offered: list = []    # (field, kind, key) of every indexable term it has


class _Buckets(list[dict[int, str]]):
    """Where a SURE index puts the buckets it hits: ``update`` appends the
    bucket itself, and ``_ordered`` reads them once."""

    __slots__ = ()
    update = list.append


class _Roster:
    """Keyed items that readers iterate while a writer adds and removes: a list
    only ever appended to (a reader's iteration sees an item or not), whose
    emptied items stay (readers skip them) until they outnumber the live ones;
    then a new list replaces it whole. Amortised O(1) a change."""

    def __init__(self, alive: Callable[[Any], bool]) -> None:
        self.by_key: dict[Any, Any] = {}
        self.items: list[Any] = []
        self._alive = alive
        self._empty = 0

    def get(self, key: Any, make: Callable[[Any], Any]) -> Any:
        """The item of ``key`` (``make(key)`` appended if there is none)."""
        item = self.by_key.get(key)
        if item is None:
            item = self.by_key[key] = make(key)
            self.items.append(item)
        elif not self._alive(item):
            self._empty -= 1
        return item

    def emptied(self) -> None:
        """An item's last member is gone."""
        self._empty += 1
        if self._empty > _SPARE and 2 * self._empty > len(self.items):
            self.by_key = {k: v for k, v in self.by_key.items() if self._alive(v)}
            self.items = [item for item in self.items if self._alive(item)]
            self._empty = 0

    def live(self) -> list[Any]:
        return [item for item in self.items if self._alive(item)]


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
    compiled; ``matches`` is compiled then too, so no compile lands inside the
    set's first messages) and a few index updates, O(log n) at most. A failing ``add``
    changes nothing. ``match`` may run in several threads while another adds
    and removes: a concurrent change is seen or not, never half.
    """

    def __init__(self, filters: Mapping[str, object] | Iterable[tuple[str, object]] | None = None,
                 *, dialect: Dialect = "amqp", limits: Limits | None = None) -> None:
        check_limits(limits)
        # a non-str is a TypeError; an unknown name a FilterError (amqp:not-implemented)
        self.dialect: Dialect = _dialect(dialect)
        self.limits = limits
        self._lock = RLock()   # writers only: readers take no lock
        self._entries: dict[str, _Entry] = {}
        self._names: dict[int, str] = {}   # seq -> name, of every entry
        self._fields = _Roster(lambda field: field.size > 0)   # field -> FieldIndex
        self._plain: dict[int, _Entry] = {}    # no gate: evaluated on every message
        self._plain_matches: dict[int, Any] = {}   # their ``matches``, by seq
        self._always: dict[int, _Entry] = {}   # evaluate_all evaluates them on every message
        # evaluate_all evaluates them where a required field holds a value of another
        # kind (then they may fail): required (field, kind) pairs -> (pairs, {seq: entry})
        self._guarded = _Roster(lambda group: bool(group[1]))
        # the constants the subscriptions' indexable terms name: (field, kind, key) ->
        # how many name it; (field, kind) -> how many distinct (for choosing gates)
        self._offered: dict[tuple, int] = {}
        self._distinct: dict[tuple, int] = {}
        self._seq = itertools.count()
        # (name, matches, evaluate) of every entry in order, while they are few
        self._small: tuple[tuple[str, Any, Any], ...] | None = ()
        if filters is not None:
            for name, flt in _pairs(filters):
                self.add(name, flt)  # type: ignore[arg-type]  # add checks the name's type

    # --- the set ------------------------------------------------------------------------

    def add(self, name: str, flt: object, dialect: Dialect | None = None) -> Filter:
        """Add (or replace) the subscription ``name``; returns its compiled filter.
        A filter that cannot compile raises ``FilterError`` and changes nothing."""
        name = _name(name)
        compiled = _compile(flt, self.dialect if dialect is None else _dialect(dialect),
                            self.limits)
        _ready(compiled)
        gates, may_fail, required, whole = _analyse(compiled)
        with self._lock:   # nothing below raises: the set changes entirely or not at all
            offered = [(t.field, t.kind, key) for g in gates for t in g.terms
                       if t.kind not in ("range", "null") for key in t.keys]
            for item in offered:   # what the subscriptions test, chosen as gate or not
                self._offered[item] = self._offered.get(item, 0) + 1
                if self._offered[item] == 1:
                    self._distinct[item[:2]] = self._distinct.get(item[:2], 0) + 1
            gate = min(gates, key=lambda g: (self._share(g), -g.rank)) if gates else None
            always = gate is None or len(gate.terms) > 1
            if always or not may_fail:
                required = None
            else:   # the fields' kinds under which it cannot fail (amqp), if known
                always = required is None
            if name in self._entries:
                self._drop(self._entries.pop(name))
            entry = _Entry(name, compiled, next(self._seq), gate, always, required)
            entry.offered = offered
            modes, condition = plan(whole if compiled.kind == "sql" else None, gate)
            entry.modes = modes
            self._entries[name] = entry
            self._names[entry.seq] = name
            if gate is None:
                self._plain[entry.seq] = entry
                self._plain_matches[entry.seq] = entry.matches
            else:
                fields: dict[tuple, FieldIndex] = {}   # each field's index, got once
                for term in gate.terms:
                    if term.field not in fields:
                        fields[term.field] = self._fields.get(term.field, FieldIndex)
                if condition is not None:   # keyed by field index, as the values read are
                    entry.condition = tuple((fields[field], classes)
                                            for field, classes in condition)
                for term, mode in zip(gate.terms, modes):
                    fields[term.field].add(term.kind, term.never_null, _keys(term), entry,
                                           mode, entry.condition if mode == MAYBE else None)
            if always:
                self._always[entry.seq] = entry
            elif required is not None:
                group = self._guarded.get(required, lambda pairs: (pairs, {}))
                group[1][entry.seq] = entry
            self._resize()
        return compiled

    def _resize(self) -> None:
        """The entries in order for the plain loop while the set is small
        (replaced whole: a reader sees the set before or after a change)."""
        small = len(self._entries) <= SMALL
        self._small = tuple((e.name, e.matches, e.evaluate) for e in self._entries.values()
                            ) if small else None

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
            self._resize()

    def _drop(self, entry: _Entry) -> None:
        """Unindex ``entry``; its name goes last (readers may still name it)."""
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
            del self._plain_matches[entry.seq]
        else:
            for term, mode in zip(entry.gate.terms, entry.modes):
                field = self._fields.by_key[term.field]
                field.remove(term.kind, term.never_null, _keys(term), entry, mode,
                             entry.condition if mode == MAYBE else None)
                if not field.size:
                    self._fields.emptied()
        self._always.pop(entry.seq, None)
        if entry.required is not None:
            group = self._guarded.by_key[entry.required][1]
            del group[entry.seq]
            if not group:
                self._guarded.emptied()
        del self._names[entry.seq]

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        # an exact str copy: a caller's object's __hash__ and __eq__ never run
        return issubclass(type(name), str) and _name(name) in self._entries

    def __iter__(self) -> Iterator[str]:
        with self._lock:
            return iter(list(self._entries))

    def __getitem__(self, name: str) -> Filter:
        return self._entries[_name(name)].filter

    def stats(self) -> dict[str, Any]:
        """How the set is indexed: the subscriptions, those without a gate, those
        a gate hit can verify (``verify.py``: SURE or MAYBE), the fields."""
        with self._lock:
            return {"subscriptions": len(self._entries), "ungated": len(self._plain),
                    "verified": sum(1 for e in self._entries.values()
                                    if any(m != PLAIN for m in e.modes)),
                    "fields": {f"{fi.field[0]}.{fi.field[1]}": fi.size
                               for fi in self._fields.live()}}

    # --- per message --------------------------------------------------------------------

    def _candidates(self, message: Any, exact: bool) -> tuple[dict, dict, list]:
        """(candidates, verified, sure) for ``message``: seq -> entry for every
        subscription an index names but cannot settle (with ``exact``, also those
        whose gate is not known to be FALSE, and those without a gate); seq ->
        name for the MAYBE hits whose condition holds (TRUE: ``verify.py``); and
        the buckets (seq -> name) of the SURE hits, TRUE too, each naming its
        subscriptions once (one term each) and none of the others. Every gated
        field is read first, so that a MAYBE condition can see them all.
        Lock-free: what it iterates is appended to or replaced whole
        (``index.py``)."""
        found: dict[int, _Entry] = {}
        done: dict[int, str] = {}        # verified MAYBE hits: seq -> name
        sure = _Buckets()
        read: list[tuple[tuple, Any]] = []
        values: dict[FieldIndex, Any] = {}   # every field first: MAYBE conditions read them
        for field in self._fields.items:
            terms = field.terms
            if not terms:
                continue
            try:
                value = field.read(message)
            except Exception:   # unreadable: its subscriptions evaluate (and say why)
                value = _UNREADABLE
            values[field] = value
            read.append((terms, value))
        for terms, value in read:
            for index in terms:
                if value is _UNREADABLE:
                    found.update(index.members)
                    continue
                try:
                    mode = index.mode
                    if mode == PLAIN:
                        index.lookup(value, found, found, exact)
                    elif mode == MAYBE:
                        hits: dict[int, str] = {}
                        index.lookup(value, found, hits, exact)
                        if hits:
                            if holds(index.condition, values):
                                done.update(hits)
                            else:
                                found.update(index.members)
                    else:
                        index.lookup(value, found, sure, exact)
                except Exception:   # a value whose class will not be hashed: evaluate them all
                    found.update(index.members)
        if exact:   # (without: match takes those without a gate itself)
            found.update(self._always)
            for required, group in self._guarded.items:
                if group and not satisfied(required, message):
                    found.update(group)
        return found, done, sure

    def _ordered(self, done: dict[int, Any], sure: list[dict[int, str]]) -> list[int]:
        """The seqs of ``done`` and of the ``sure`` buckets, in order: a list
        extended with each bucket (one C call, as a writer changes a bucket one
        item at a time) and sorted, cheaper than merging the buckets into a dict."""
        seqs = list(done)
        for bucket in sure:
            seqs += bucket
        seqs.sort()
        return seqs

    def _named(self, seqs: list[int]) -> list[str]:
        """The names of ``seqs``; one a writer removed since it was found is
        left out (the change is seen)."""
        names = self._names
        try:
            return list(map(names.__getitem__, seqs))
        except KeyError:
            return [name for name in map(names.get, seqs) if name is not None]

    def match(self, message: MessageForm, receiving_connection: object = None) -> list[str]:
        """The names of the subscriptions whose filter is TRUE for ``message``."""
        plain = type(message) is Message   # (no view to make: the common case first)
        if not plain:
            message = view(message)
        small = self._small
        if small is not None and len(small) <= LOOP_MATCH[not plain]:
            if receiving_connection is None:
                return [name for name, matches, _ in small if matches(message)]
            return [name for name, matches, _ in small
                    if matches(message, receiving_connection)]
        found, done, sure = self._candidates(message, exact=False)
        # the candidates and those without a gate (a copy, one C call, that a writer
        # cannot change), each called in turn by map: any order, each verdict its own
        args = (repeat(message),) if receiving_connection is None else (
            repeat(message), repeat(receiving_connection))
        if found:
            done.update(dict.fromkeys(compress(
                found, map(call, map(_MATCHES, found.values()), *args))))
        ungated = self._plain_matches.copy()
        if ungated:
            done.update(dict.fromkeys(compress(ungated, map(call, ungated.values(), *args))))
        return self._named(self._ordered(done, sure))

    def evaluate_all(self, message: MessageForm, receiving_connection: object = None
                     ) -> dict[str, Literal[True] | None]:
        """``{name: True or None}`` for every subscription whose verdict for
        ``message`` is not FALSE (None: unknown)."""
        plain = type(message) is Message
        if not plain:
            message = view(message)
        small = self._small
        results: dict[str, Literal[True] | None] = {}
        if small is not None and len(small) <= LOOP_ALL[not plain]:
            for name, _, evaluate in small:
                result = evaluate(message, receiving_connection)
                if result is not False:
                    results[name] = result
            return results
        found, done, sure = self._candidates(message, exact=True)
        unknown: set[int] = set()
        for bucket in sure:   # (a SURE subscription may be a candidate here: not twice)
            done.update(bucket)
        for seq, entry in found.items():
            if seq not in done:
                result = entry.evaluate(message, receiving_connection)
                if result is True:
                    done[seq] = entry
                elif result is None:
                    done[seq] = entry
                    unknown.add(seq)
        names = self._names
        for seq in sorted(done):
            named = names.get(seq)   # None: removed since it was found (the change is seen)
            if named is not None:
                results[named] = None if seq in unknown else True
        return results

    def _triage(self, message: MessageForm) -> dict[str, int]:
        """How the index answers ``match`` for ``message``: the candidates
        verified by their gate, and those evaluated in full (benchmarks, tests)."""
        message = view(message)
        small = self._small
        if small is not None and len(small) <= LOOP_MATCH[type(message) is not Message]:
            return {"verified": 0, "evaluated": len(small)}
        found, done, sure = self._candidates(message, exact=False)
        found.update(self._plain)
        for bucket in sure:
            done.update(bucket)
        return {"verified": len(done), "evaluated": sum(1 for seq in found if seq not in done)}

    def __repr__(self) -> str:
        return (f"<Subscriptions of {len(self)} filters, {len(self._fields.live())} "
                f"indexed fields>")


def _keys(term: Any) -> tuple:
    if term.kind == "null":
        return (term.keys[0], term.semantics)
    return term.keys


def _name(name: object) -> str:
    """A subscription's name as an exact str; ``TypeError`` for another type.
    (The copy: a str subclass's own ``__hash__`` and ``__eq__`` never run.)"""
    if not issubclass(type(name), str):
        raise TypeError(f"a subscription is named by a str, not {type(name).__name__}")
    return str.__str__(cast(str, name))


def _dialect(dialect: object) -> Dialect:
    """The known dialect name ``dialect`` names, as an exact str: a non-str is a
    ``TypeError`` raised before any of its methods runs, an unknown name a
    ``FilterError`` (``amqp:not-implemented``)."""
    check_dialect_type(dialect)
    return get_dialect(str.__str__(cast(str, dialect))).name


_ACCEPTED = "a mapping of names to filters or an iterable of (name, filter) pairs"


def _pairs(filters: object) -> list[tuple[object, object]]:
    """(name, filter) of the constructor's ``filters``: a mapping of names to
    filters, or an iterable of (name, filter) pairs; a ``TypeError`` naming
    what is accepted for anything else, or for a container whose reading
    raises (names and filters are checked by ``add``)."""
    cls = type(filters)   # by class: an object's __class__ may lie
    if issubclass(cls, (str, bytes, bytearray)) or not issubclass(cls, (Mapping, Iterable)):
        raise TypeError(f"Subscriptions takes {_ACCEPTED}, not {cls.__name__}")
    try:
        items = list(cast(Mapping, filters).items() if issubclass(cls, Mapping)
                     else cast(Iterable, filters))
    except Exception as exc:   # the calling program's container, not a filter's definition
        raise TypeError(f"Subscriptions takes {_ACCEPTED}; reading the {cls.__name__} raised "
                        f"{type(exc).__name__}") from exc
    pairs = []
    for index, item in enumerate(items):
        kind = type(item)
        if (kind is not tuple and kind is not list) or len(item) != 2:
            shape = f"a {kind.__name__}" + (
                f" of {len(item)} items" if kind is tuple or kind is list else "")
            raise TypeError(f"Subscriptions takes {_ACCEPTED}; item {index} is {shape}")
        pairs.append((item[0], item[1]))
    return pairs


def _compile(flt: object, dialect: Dialect, limits: Limits | None) -> Filter:
    """A filter in any accepted form, compiled; only ``FilterError`` for what it
    holds. The form is told by class (an object's ``__class__`` may lie); a
    mapping's keys are read once, and its failure to be read is a FilterError."""
    cls = type(flt)
    if cls is Filter:
        return cast(Filter, flt)
    from ..compiler import compile_filter, compile_filter_set, compile_sql
    if issubclass(cls, str):
        return compile_sql(cast(str, flt), dialect, limits=limits)
    if issubclass(cls, (Data, Terminus)):   # a filter set as proton holds it
        return compile_filter_set(flt, dialect, limits=limits)
    if issubclass(cls, Mapping):   # a filter set, or a described filter as JSON
        try:
            described = "described" in flt or "code" in flt  # type: ignore[operator]
        except Exception as exc:   # a mapping that will not be read: the filter's fault
            raise internal_error(exc, "compiling a filter set") from None
        if not described:
            return compile_filter_set(flt, dialect, limits=limits)
    return compile_filter(flt, dialect, limits=limits)


def _ready(flt: Filter) -> None:
    """Compile the filter's ``matches`` now, if its compile was deferred to its
    first call (``codegen/loader.py``): the set pays it as it takes the filter,
    never inside its first messages. A compile that fails is a ``FilterError``
    (``add`` changes nothing)."""
    try:
        compile_matches(flt.matches)
    except Exception as exc:   # the generated source's evaluate compiled: not expected
        raise internal_error(exc, "compiling a filter's matches") from None


def _analyse(flt: Filter) -> tuple[list[Gate], bool, frozenset | None,
                                   list[tuple[Term, bool]] | None]:
    """The filter's gates, whether its evaluation can fail, the fields' kinds
    under which it cannot (``failures.py``), and its terms when it is one term
    or an OR of them (``verify.py``). A tree the analysis cannot read (a Filter
    built by hand) gives no gate and may fail: evaluated every time."""
    if flt.tree is None:
        return [], True, None, None
    try:
        # the dialect the tree says: its root Scope (amqp for a tree without one)
        tree = flt.tree
        semantics = (tree.dialect if isinstance(tree, ast.Scope) else get_dialect("amqp")
                     ).semantics
        gates = find_gates(tree, semantics)
        may_fail = _may_fail(tree, semantics)
        return (gates, may_fail, requirements(tree, semantics) if may_fail else None,
                whole_terms(tree, semantics))
    except Exception:
        return [], True, None, None


def _may_fail(tree: ast.Node, semantics: Any) -> bool:
    """Can evaluating the filter fail (amqp rules anywhere, or no-local)? Then
    a FALSE gate does not make it FALSE: a failure elsewhere makes it unknown."""
    if semantics.failures:
        return True
    return any((isinstance(node, ast.Scope) and node.dialect.semantics.failures)
               or isinstance(node, ast.NoLocal) for node in ast.walk(tree))
