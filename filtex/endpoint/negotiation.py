"""Negotiating a filter set at attach: what to echo, what to apply, what to refuse.

A receiver proposes a filter set on the source of its attach; the sender echoes
the filters *actually in place* (AMQP core 3.5.3) or refuses the link (filtex
CSD01 2.3). ``negotiate`` decides both from the set alone, entry by entry, with
no link or container: a broker, a router, a test peer or a consumer checking
an echo calls it the same way. Each entry is found by its descriptor (symbol or
numeric code) under any key, as Artemis and Qpid Broker-J do, unless the
profile reads a type under one key only (RabbitMQ's ``sql-filter``).

A profile with a ``session`` (RabbitMQ's releases, ``rabbitmq.Release``)
also reads the set as that broker's session does: plain stream options,
option values of the wrong type, and the filters its combination rule drops
(one SQL filter or property filters, the last winning) are ``dropped``.

A null entry acts as if absent (3.5.8). Entries a broker interprets itself
(``profiles.DELEGATED``, plus any descriptor the caller names) are echoed and
left to the caller. Every other entry is compiled on its own, so a failure
names its key, with the compiler's line and column; under the ``detach`` policy
the first failure refuses the link, under ``omit`` it is left out of the echo.
A limit violation is ``amqp:resource-limit-exceeded``, or, when the caller
masks limits (CSD01 7.1), a generic ``amqp:internal-error`` with the detail
logged for the operator.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from proton import Data, Described, symbol

from .. import proton_copies
from ..proton_copies import UnreadableValue
from ..compiler import compile_filter, compile_filter_set, compile_sql
from ..described import descriptors
from ..described.lower import set_entries
from ..errors import INTERNAL_ERROR, FilterError
from ..filter import Filter
from ..limits import RESOURCE_LIMIT, Limits, check_limits
from ..names import DIALECT_NAMES, Dialect
from .profiles import SPEC, Policy, Profile, get_profile
from .rabbitmq import STREAM_PREFIX

LOG = logging.getLogger("filtex.endpoint")

Status = Literal["accepted", "refused", "null", "delegated", "dropped"]
NOT_IMPLEMENTED = "amqp:not-implemented"
DECODE_ERROR = "amqp:decode-error"
INVALID_FIELD = "amqp:invalid-field"
INFO = {"field": "filter"}   # the refusal's info: which field of the attach was wrong


@dataclass(frozen=True)
class Entry:
    """One entry of a filter set and what became of it. ``condition``,
    ``message``, ``line`` and ``column`` are set for a refused entry (under the
    ``omit`` policy too: the entry is then left out of the echo, not the link).
    A ``dropped`` entry is one the profile's broker leaves out by its own
    reading of the set, whatever the policy (``problem`` says why)."""

    key: str
    status: Status
    descriptor: str | None = None
    condition: str | None = None
    message: str | None = None
    line: int | None = None
    column: int | None = None
    problem: str | None = None   # the compiler's words, without the profile's wording


@dataclass(frozen=True)
class Refusal:
    """What a refusing source detaches with: condition, description, info."""

    condition: str
    description: str
    info: Mapping[str, str] = field(default_factory=lambda: dict(INFO))


@dataclass(frozen=True)
class Negotiation:
    """The outcome of one attach's filter set.

    ``in_place``: the entries to echo (accepted and delegated), by key, as
    received. ``filter``: one compiled ``Filter`` of the accepted entries (it
    matches every message when there are none), None when the link is refused.
    ``delegated``: the entries left to the caller. ``refusal``: None, or what to
    detach with."""

    in_place: dict[str, Any]
    filter: Filter | None
    entries: tuple[Entry, ...]
    refusal: Refusal | None
    delegated: dict[str, Any]
    profile: str = "spec"

    @property
    def refused(self) -> bool:
        return self.refusal is not None

    def summary(self) -> str:
        """One line for a log: each entry's key and fate."""
        if not self.entries:
            parts = ["no filters"]
        else:
            parts = []
            for e in self.entries:
                text = f"{e.status} {e.key}"
                if e.descriptor:
                    text += f" ({e.descriptor})"
                if e.status == "refused":
                    text += f": {e.condition} {e.message}"
                elif e.status == "dropped":
                    text += f": {e.problem}"
                parts.append(text)
        if self.refusal is not None:
            parts.append(f"link refused: {self.refusal.condition} {self.refusal.description}")
        return "; ".join(parts)


def negotiate(filter_set: object, dialect: Dialect | None = None, *,
              profile: Profile | str = SPEC, policy: Policy | None = None,
              limits: Limits | None = None, delegate: Iterable[str | int] = (),
              mask_limits: bool = False, max_echo: int | None = None) -> Negotiation:
    """Decide an attach's filter set (see the module's docstring).

    ``filter_set`` is a ``proton.Data`` or ``Terminus`` (the source), a mapping
    of names to filters in any form ``compile_filter`` takes, the conformance
    format's ``{"set": {...}}``, or the same from another copy of proton.
    ``dialect`` defaults to the profile's; ``policy`` overrides the profile's
    answer to bad and unknown entries alike; ``delegate`` names more
    descriptors (symbols or numeric codes) the caller interprets itself."""
    rules = get_profile(profile) if isinstance(profile, str) else profile
    rules = rules.with_policy(policy)
    dialect = rules.dialect if dialect is None else dialect
    checked = check_limits(limits)
    delegated_names = _descriptor_keys(tuple(rules.delegated) + tuple(delegate))
    try:
        items = _read_set(filter_set, checked)
    except FilterError as error:   # the set itself: no entry can be trusted
        return _refuse_all(error, rules, mask_limits)
    decided = [_decide(key, value, dialect, rules, checked, delegated_names)
               for key, value in items]
    if rules.session is not None:   # what the broker keeps of what it could apply
        superseded = rules.session.superseded([(d.key, d.entry.descriptor or "")
                                               for d in decided if isinstance(d.made, Filter)])
        for d in decided:
            why = superseded.get(d.key)
            if why is not None:
                d.entry, d.made = Entry(d.key, "dropped", d.entry.descriptor, problem=why), None
    entries: list[Entry] = []
    in_place: dict[str, Any] = {}
    delegated: dict[str, Any] = {}
    compiled: dict[str, Filter] = {}
    refusal: Refusal | None = None
    echo = _EchoBudget(max_echo)
    for d in decided:
        key, value, entry = d.key, d.value, d.entry
        if entry.status in ("null", "dropped"):
            entries.append(entry)
            continue
        if entry.status == "delegated" or isinstance(d.made, Filter):
            too_large = echo.refusal(key, value)
            if too_large is None:
                entries.append(entry)
                in_place[key] = value
                if entry.status == "delegated":
                    delegated[key] = value
                elif isinstance(d.made, Filter):
                    compiled[key] = d.made
                continue
            entry = Entry(key, "refused", entry.descriptor, RESOURCE_LIMIT,
                          f"filter {_key_shown(key)}: {too_large}", 1, 1, too_large)
        entry = _reported(entry, mask_limits)
        entries.append(entry)
        if (d.policy == "detach" or d.refuses_link) and refusal is None:
            refusal = Refusal(entry.condition or INVALID_FIELD, entry.message or "")
    if refusal is not None:
        return Negotiation({}, None, tuple(entries), refusal, {}, rules.name)
    try:
        combined = _combine(compiled, dialect, checked)
    except FilterError as error:
        return _refuse_all(error, rules, mask_limits, tuple(entries))
    return Negotiation(in_place, combined, tuple(entries), None, delegated, rules.name)


@dataclass
class _Decided:
    """One entry of the set as decided on its own, before the echo is written."""
    key: str
    value: Any
    entry: Entry
    policy: Policy
    made: Any = None             # the compiled Filter, or the error
    refuses_link: bool = False   # the broker refuses the link for it whatever the policy


def _decide(key: str, value: Any, dialect: Dialect, rules: Profile, limits: Limits,
            delegated_names: frozenset[str | int]) -> _Decided:
    """What becomes of one entry by itself: null (absent), dropped unread by
    the broker's session, delegated, accepted (compiled) or refused."""
    if value is None:
        return _Decided(key, value, Entry(key, "null"), rules.invalid)
    if type(value) is UnreadableValue:   # this entry alone cannot be decoded
        unread = f"the value cannot be decoded: {value.reason}"
        return _Decided(key, value, Entry(key, "refused", None, DECODE_ERROR,
                                          f"filter {_key_shown(key)}: {unread}", 1, 1, unread),
                        rules.invalid)
    if rules.session is not None:
        value, why = rules.session.read(key, value)
        if why is not None:
            return _Decided(key, value, Entry(key, "dropped", problem=why), rules.invalid)
    raw = _descriptor(value)
    if _descriptor_key(raw) in delegated_names:
        if rules.session is not None:
            why, refuses = rules.session.option_problem(value)
            if refuses:
                return _Decided(key, value, Entry(key, "refused", _shown(raw), INTERNAL_ERROR,
                                                  f"filter {_key_shown(key)}: {why}", 1, 1,
                                                  why), rules.invalid, None, True)
            if why is not None:
                return _Decided(key, value, Entry(key, "dropped", _shown(raw), problem=why),
                                rules.invalid)
        return _Decided(key, value, Entry(key, "delegated", _shown(raw)), rules.invalid)
    entry, policy, made = _entry(key, value, raw, dialect, rules, limits)
    return _Decided(key, value, entry, policy, made)


def _entry(key: str, value: Any, raw: Any, dialect: Dialect, rules: Profile,
           limits: Limits) -> tuple[Entry, Policy, Any]:
    """(entry, the policy a failure falls under, the compiled Filter or the error)."""
    try:
        if raw is None:   # no descriptor to be found: the compiler says what it is not
            compile_filter(value, dialect, limits=limits)
        ftype = descriptors.lookup(raw)
    except FilterError as error:
        if raw is None and isinstance(value, (str, bytes, int, float, list)):
            return _plain_value(key, value), rules.invalid, error
        unknown = error.condition == NOT_IMPLEMENTED
        message = (rules.describe_unknown(key, _shown(raw)) if unknown
                   else rules.describe_invalid(key, error))
        return (Entry(key, "refused", _shown(raw), error.condition, message, error.line,
                      error.column, error.problem),
                rules.unknown if unknown else rules.invalid, error)
    wanted_key = rules.keys.get(ftype.name)
    if (rules.types is not None and ftype.name not in rules.types) or \
            (wanted_key is not None and wanted_key != key):
        return (Entry(key, "refused", ftype.name, NOT_IMPLEMENTED,
                      rules.describe_unknown(key, ftype.name), 1, 1,
                      f"filter type {ftype.name} is not applied here"), rules.unknown, None)
    try:
        compiled = compile_filter(value, dialect, limits=limits)
    except FilterError as error:
        policy = rules.unknown if error.condition == NOT_IMPLEMENTED else rules.invalid
        return (Entry(key, "refused", ftype.name, error.condition,
                      rules.describe_invalid(key, error), error.line, error.column,
                      error.problem), policy, error)
    return Entry(key, "accepted", ftype.name), rules.invalid, compiled


def _plain_value(key: str, value: Any) -> Entry:
    """An entry that is no described value: refused with what it is (no text,
    so no line and column), and where RabbitMQ reads such a value, which
    profile copies it."""
    problem = (f"a plain {type(value).__name__[:40]} is no filter (a filter is a described "
               "value)")
    if key.startswith(STREAM_PREFIX):
        problem += ("; RabbitMQ 4.1 and 4.2 read a plain value under this key as described "
                    "(the rabbitmq-4.2 profile)")
    return Entry(key, "refused", "(none)", INVALID_FIELD, f"filter {_key_shown(key)}: {problem}",
                 None, None, problem)


class _EchoBudget:
    """The bytes left for the echo in the client's max-frame-size."""

    def __init__(self, room: int | None) -> None:
        self.left = room

    def refusal(self, key: str, value: Any) -> str | None:
        """Why ``key``'s entry cannot be echoed; None when it fits (and is counted)."""
        if self.left is None:
            return None
        try:
            data = Data()
            data.put_map()
            data.enter()
            data.put_symbol(symbol(key))
            data.put_object(value)
            data.exit()
            size = len(data.encode())
        except Exception:   # a value proton cannot encode cannot be echoed
            return "its value cannot be encoded again"
        if size > self.left:
            return (f"its echo of {size:,} bytes does not fit the receiver's max-frame-size "
                    f"({max(self.left, 0):,} bytes left in the attach)")
        self.left -= size
        return None


def _key_shown(key: str) -> str:
    return key if len(key) <= 100 else key[:100] + "..."


def _reported(entry: Entry, mask_limits: bool) -> Entry:
    """A refused entry as the client sees it: a limit violation masked as a
    generic error when asked (the detail goes to the operator's log)."""
    if entry.condition == RESOURCE_LIMIT and mask_limits:
        LOG.warning("filter %s refused: %s", entry.key, entry.message)
        return Entry(entry.key, "refused", entry.descriptor, INTERNAL_ERROR,
                     f"filter {entry.key}: internal error", entry.line, entry.column,
                     "internal error")
    if entry.condition == RESOURCE_LIMIT:
        LOG.info("filter %s refused: %s", entry.key, entry.message)
    return entry


def _refuse_all(error: FilterError, rules: Profile, mask_limits: bool,
                entries: tuple[Entry, ...] = ()) -> Negotiation:
    """A set that cannot be read as a whole (too many entries, not a map) is
    refused whatever the policy: there is no entry to leave out of an echo."""
    condition, description = error.condition, f"filter set: {error}"
    if condition == RESOURCE_LIMIT and mask_limits:
        LOG.warning("filter set refused: %s", error)
        condition, description = INTERNAL_ERROR, "filter set: internal error"
    return Negotiation({}, None, entries, Refusal(condition, description), {}, rules.name)


def _combine(compiled: dict[str, Filter], dialect: Dialect, limits: Limits) -> Filter:
    if len(compiled) == 1:
        return next(iter(compiled.values()))
    return compile_filter_set(compiled, dialect, limits=limits)


# --- reading the set ---------------------------------------------------------------------

def _read_set(filter_set: object, limits: Limits) -> list[tuple[str, Any]]:
    """The set's (key, value) pairs (``described.lower.set_entries``), every
    value this proton's, the conformance format's ``{"set": ...}`` and SQL
    members ``{"sql": TEXT}`` read as what they stand for."""
    value = proton_copies.to_own(filter_set, limits.max_value_depth)
    if type(value) is dict and set(value) == {"set"} and type(value["set"]) is dict:
        value = value["set"]
    items = []
    for name, entry in set_entries(value, limits).items():
        if type(entry) is dict and set(entry) == {"sql"}:
            entry = Described(symbol("amqp:sql-filter"), entry["sql"])
        items.append((name, entry))
    return items


def _descriptor(value: Any) -> Any:
    """An entry's descriptor as given (symbol, code, or None when it has none)."""
    cls = type(value)
    if cls is Described:
        return value.descriptor
    if cls is tuple and len(value) == 2:
        return value[0]
    if cls is dict:
        if "described" in value:
            return value["described"]
        if "code" in value:
            try:
                return descriptors.parse_code(value["code"])
            except FilterError:
                return value["code"]
    return None


def _descriptor_key(raw: Any) -> str | int | None:
    if issubclass(type(raw), str):
        return str.__str__(raw)
    if issubclass(type(raw), int) and type(raw) is not bool:
        return int.__int__(raw)
    return None


def _descriptor_keys(names: Iterable[str | int]) -> frozenset[str | int]:
    keys = set()
    for name in names:
        key = _descriptor_key(name)
        if key is None:
            raise TypeError(f"a delegated descriptor is a symbol or a code, not {name!r}")
        keys.add(key)
        known = descriptors.BY_NAME.get(key) if isinstance(key, str) else None
        if known is not None:
            keys.update(known.names)
            keys.add(known.code)
    return frozenset(keys)


def _shown(raw: Any) -> str:
    key = _descriptor_key(raw)
    if isinstance(key, str):
        return key[:80]
    if isinstance(key, int):
        return descriptors.code_text(key)
    return f"(a {type(raw).__name__[:40]})"


def warm_up() -> None:
    """Build the SQL parser's tables and compile one filter per dialect, so the
    first attach does not pay for them (about 0.3 s)."""
    for name in DIALECT_NAMES:
        compile_sql("warm_up IS NULL", name)


__all__ = ["Entry", "Negotiation", "Refusal", "negotiate", "warm_up"]
