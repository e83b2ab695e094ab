"""How a RabbitMQ session reads a consumer's filter set, release by release.

RabbitMQ (``deps/rabbit/src/rabbit_amqp_session.erl``: ``parse_filter`` and
``parse_filters``, the same from v4.2.0 to v4.3.5 but for the points below)
folds the set from its last entry to its first (``lists:foldr``):

* an SQL filter (the key ``sql-filter``, whatever its descriptor says) and the
  property filters (any other key) exclude each other, and of each property
  section one filter is kept: the *last valid* entry of a kind wins and the
  others are dropped from the echo without a word (an invalid later entry
  leaves an earlier valid one in place);
* its stream options (``rabbitmq:stream-offset-spec``, ``rabbitmq:stream-filter``,
  ``rabbitmq:stream-match-unfiltered``, by symbol descriptor under any key)
  are kept beside them when their values have the types it reads, and
  dropped otherwise;
* a stream option given as a plain value under its own name (the deprecated
  feature ``amqp_filter_set_bug``) is read as if it were described in 4.1 and
  4.2, where the feature is permitted by default, and dropped in 4.3, where it
  is denied; the echo carries the described form;
* anything else is dropped. What is kept is echoed as sent, in wire order.

``Release`` is one release's reading; ``negotiation.negotiate`` asks it about
each entry (``read``, ``option_problem``) and about the entries it accepted
(``superseded``). Where RabbitMQ ends the whole session instead (a value under
``sql-filter`` that is no described string, an empty ``rabbitmq:stream-filter``
list), filtex leaves the entry out and says why: it never copies a crash
(``docs/dialects.md`` says what RabbitMQ does).
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from proton import Described, symbol, timestamp

STREAM_PREFIX = "rabbitmq:stream-"
RABBITMQ_STREAM = ("rabbitmq:stream-offset-spec", "rabbitmq:stream-filter",
                   "rabbitmq:stream-match-unfiltered")
OFFSET_SPEC, STREAM_FILTER, MATCH_UNFILTERED = RABBITMQ_STREAM
SQL_KEY = "sql-filter"
SQL = "amqp:sql-filter"
SECTIONS = {"amqp:properties-filter": "properties",
            "amqp:application-properties-filter": "application_properties"}
# rabbit_amqqueue:check_max_age: digits, then one unit (years, months, days, hours, minutes,
# seconds); rabbit_stream_queue:parse_offset_arg reads first, last and next before it
MAX_AGE = re.compile(r"[0-9]+[YMDhms]")
OFFSET_WORDS = ("first", "last", "next")
MAX_AGE_MS = {"Y": 365 * 86_400_000, "M": 30 * 86_400_000, "D": 86_400_000,
              "h": 3_600_000, "m": 60_000, "s": 1_000}


@dataclass(frozen=True)
class Release:
    """One RabbitMQ release's reading of a filter set (see the module)."""

    name: str                  # "4.2", "4.3"
    tag: str                   # the newest tag of the series the rules were read from
    bare_stream_values: bool   # amqp_filter_set_bug permitted by default

    def read(self, key: str, value: Any) -> tuple[Any, str | None]:
        """An entry as the session reads it before anything else:
        ``(value, None)``, the value possibly rewritten (a plain stream option,
        described), or ``(None, why)`` when it is dropped unread."""
        if type(value) is Described or not key.startswith(STREAM_PREFIX):
            return value, None
        if not self.bare_stream_values:
            return None, (f"a plain value under {key[:60]} (amqp_filter_set_bug) is dropped "
                          f"by RabbitMQ {self.name}")
        if value is True or value is False or value is None:
            # the guard element(1, Value) fails on an atom: no clause reads it
            return None, f"RabbitMQ reads no plain {value!r} under {key[:60]}"
        return Described(symbol(key), value), None

    def option_problem(self, value: Any) -> tuple[str | None, bool]:
        """Why RabbitMQ drops a stream option (``rabbit_amqp_session``
        ``parse_filters`` clauses 1 to 3); ``(why, refuses_link)``: an offset
        string it cannot read refuses the link (``check_max_age``, 4.2.7 and
        4.3.1 on; the releases before end the session)."""
        if type(value) is not Described or type(value.descriptor) is not symbol:
            return "RabbitMQ reads its stream options by symbol descriptor only", False
        name, inner = str(value.descriptor), value.value
        if name == OFFSET_SPEC:
            if type(inner) is timestamp:
                return None, False
            if isinstance(inner, str):   # utf8 or symbol (symbol from 4.2.0)
                if str(inner) in OFFSET_WORDS or MAX_AGE.fullmatch(str(inner)):
                    return None, False
                return (f"failed consuming from stream: invalid offset spec "
                        f"{str(inner)[:40]!r}"), True
            if isinstance(inner, int) and type(inner) is not bool and inner >= 0:
                return None, False
            return f"RabbitMQ reads no offset spec of type {type(inner).__name__}", False
        if name == STREAM_FILTER:
            if type(inner) is list:
                if not any(type(item) is str for item in inner):
                    return "a stream-filter list with no string (RabbitMQ ends the session)", False
                return None, False
            if type(inner) is str:
                return None, False
            return f"RabbitMQ reads no stream-filter of type {type(inner).__name__}", False
        if name == MATCH_UNFILTERED:
            if inner is True or inner is False:
                return None, False
            return "rabbitmq:stream-match-unfiltered is a boolean", False
        return f"RabbitMQ has no stream option {name[:60]}", False

    def superseded(self, accepted: Sequence[tuple[str, str]]) -> dict[str, str]:
        """Of the accepted filters (key, descriptor name) in wire order, those
        RabbitMQ drops, with why: one SQL filter or property filters, one per
        section, the last of each kind winning."""
        dropped: dict[str, str] = {}
        kind: str | None = None          # "sql" or "property", once one is kept
        sections: dict[str, str] = {}    # section -> the key kept for it
        for key, name in reversed(accepted):
            if key == SQL_KEY and name != SQL:
                dropped[key] = f"under {SQL_KEY} RabbitMQ reads an SQL filter, not {name[:60]}"
            elif key == SQL_KEY:
                if kind is None:
                    kind = "sql"
                    continue
                dropped[key] = ("RabbitMQ applies an SQL filter or property filters, not "
                                "both: a later property filter is in place")
            elif name in SECTIONS:
                section = SECTIONS[name]
                if kind == "sql":
                    dropped[key] = ("RabbitMQ applies an SQL filter or property filters, not "
                                    "both: the later SQL filter is in place")
                elif section in sections:
                    dropped[key] = (f"RabbitMQ applies one {name} per attach: the later "
                                    f"{sections[section][:60]} is in place")
                else:
                    kind = "property"
                    sections[section] = key
        return dropped

    def offset(self, spec: Any, chunks: Sequence[int], arrived: Sequence[int],
               count: int, now: int) -> int:
        """Where an offset spec starts reading a stream of ``count`` messages in
        chunks starting at ``chunks``, each written at ``arrived`` (ms): a
        reader starts at a chunk's first message, whole chunks from the first
        that qualifies (``osiris_log:init_offset_reader``), but for a numeric
        offset, read exactly. ``first``, ``last`` (the last chunk), ``next``, an
        offset, a timestamp (to the second: RabbitMQ truncates it) or a max-age
        (``10m``)."""
        if type(spec) is timestamp:
            return self._since(int(spec) // 1000 * 1000, chunks, arrived, count)
        if isinstance(spec, str):
            text = str(spec)
            if text == "first":
                return 0
            if text == "last":
                return chunks[-1] if chunks else count
            if MAX_AGE.fullmatch(text):
                age = int(text[:-1]) * MAX_AGE_MS[text[-1]]
                return self._since(now - age, chunks, arrived, count)
            return count   # next
        if isinstance(spec, int) and type(spec) is not bool:
            return min(max(int(spec), 0), count)
        return count

    @staticmethod
    def _since(moment: int, chunks: Sequence[int], arrived: Sequence[int], count: int) -> int:
        """The first chunk written at ``moment`` or later."""
        return next((start for start, at in zip(chunks, arrived) if at >= moment), count)


RABBITMQ_4_2 = Release("4.2", "v4.2.9", bare_stream_values=True)
RABBITMQ_4_3 = Release("4.3", "v4.3.5", bare_stream_values=False)

__all__ = ["RABBITMQ_4_2", "RABBITMQ_4_3", "Release"]
