"""What ``filtex match`` counts, and how it reports it: a subscription's
tally, the unreadable records, the counts table and the end-of-run report."""
from __future__ import annotations

import re
from collections import Counter
from typing import Any, Iterable, Iterator, TextIO

SHOWN_UNREADABLE = 20
"""Unreadable records reported one by one as they are met; the rest are
counted and summed up at the end by reason."""
TOP_REASONS = 5


class Subscription:
    """One filter of a run and its counts. ``reasons`` tallies why results
    were unknown, for the first ``sample`` unknown results only: a reason
    costs a second evaluation of the message (``Filter.outcome``)."""

    __slots__ = ("name", "filter", "evaluate", "output", "evaluated", "matched", "unknown",
                 "seconds", "reasons", "sample")

    def __init__(self, name: str, flt: Any, sample: int) -> None:
        self.name = name
        self.filter = flt
        self.evaluate = flt.evaluate
        self.output: Any = None   # the binary stream its messages are written to
        self.evaluated = self.matched = self.unknown = 0
        self.seconds = 0.0        # spent evaluating (reading excluded)
        self.reasons: Counter = Counter()
        self.sample = sample

    @property
    def not_matched(self) -> int:
        return self.evaluated - self.matched - self.unknown

    def note_unknown(self, results: list, messages: list) -> None:
        """Tally the reasons of this batch's unknown results while the sample
        lasts (``results.index`` finds them without a Python loop)."""
        def unknown() -> Iterator[Any]:
            at = -1
            while True:
                try:
                    at = results.index(None, at + 1)
                except ValueError:
                    return
                yield messages[at]
        self.tally(unknown())

    def tally(self, unknown: Iterable[Any]) -> None:
        """Tally why the results of ``unknown`` messages were unknown while the
        sample lasts (a reason costs a second evaluation: taken lazily)."""
        room = self.sample - sum(self.reasons.values())
        for message in unknown if room > 0 else ():
            self.reasons[self.filter.outcome(message).reason or "unknown"] += 1
            room -= 1
            if not room:
                return


_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'" + '|' + r'"(?:[^"\\]|\\.)*"')
MAX_REASONS = 1000
"""Distinct reasons tallied; later new ones count together."""


class Unreadable:
    """Records that could not be read: the first few shown with their
    position as they come, all of them counted by reason."""

    def __init__(self) -> None:
        self.count = 0
        self.reasons: Counter = Counter()

    def add(self, where: str, reason: str, stream: TextIO, clear: Any = None) -> None:
        self.count += 1
        general = _general(reason)
        if general in self.reasons or len(self.reasons) < MAX_REASONS:
            self.reasons[general] += 1
        else:   # bounded: a hostile input cannot grow the tally without end
            self.reasons["(other reasons)"] += 1
        if self.count <= SHOWN_UNREADABLE:
            if clear is not None:
                clear()
            print(f"filtex: {where}: {reason}", file=stream)
            if self.count == SHOWN_UNREADABLE:
                print("filtex: further unreadable records are counted, not shown",
                      file=stream)


def _general(reason: str) -> str:
    """A reason without the positions that make each one unique (JSON's
    ``line 1 column 5 (char 4)``, byte offsets, sizes), to count alike ones."""
    reason = re.sub(r": line \d+ column \d+ \(char \d+\)", "", reason)
    reason = _QUOTED.sub("'...'", reason)   # quoted data: each value would be its own reason
    return re.sub(r"\d+", "N", reason)[:200]


def counts_table(subscriptions: list[Subscription]) -> str:
    """Per subscription: matched, not matched, unknown, and evaluations per
    second of evaluation time."""
    rows = [("subscription", "matched", "not matched", "unknown", "msgs/s")]
    for sub in subscriptions:
        rate = f"{sub.evaluated / sub.seconds:,.0f}" if sub.seconds > 0 else "-"
        rows.append((sub.name, f"{sub.matched:,}", f"{sub.not_matched:,}",
                     f"{sub.unknown:,}", rate))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    return "\n".join(f"{row[0]:<{widths[0]}}  " + "  ".join(
        f"{cell:>{width}}" for cell, width in zip(row[1:], widths[1:])) for row in rows)


def counts_json(subscriptions: list[Subscription], unreadable: Unreadable, messages: int,
                seconds: float) -> str:
    """``--count --json``: one JSON object, the subscriptions in their order::

        {"messages": 50, "unreadable": 0, "seconds": 0.01,
         "subscriptions": {"eu": {"matched": 21, "not_matched": 29, "unknown": 0,
                                  "unknown_reasons": {}}}}

    ``unknown_reasons`` tallies the reasons of the first ``--reasons`` unknown
    results (all of them when ``unknown`` is not larger)."""
    import json
    return json.dumps({
        "messages": messages, "unreadable": unreadable.count, "seconds": round(seconds, 3),
        "subscriptions": {sub.name: {
            "matched": sub.matched, "not_matched": sub.not_matched, "unknown": sub.unknown,
            "unknown_reasons": dict(sub.reasons.most_common())} for sub in subscriptions}})


def final_report(subscriptions: list[Subscription], unreadable: Unreadable, messages: int,
                 seconds: float, stream: TextIO, throughput: bool,
                 compiling: tuple[float, int] = (0.0, 0)) -> None:
    """The end of a run on stderr: unknown results with their most frequent
    reasons, unreadable records by reason, and (``throughput``) the rates:
    the engines' own, the seconds spent compiling kernels here (``compiling``:
    seconds, and messages answered per message while the background compiler
    worked) said apart."""
    for sub in subscriptions:
        if not sub.unknown:
            continue
        sampled = sum(sub.reasons.values())
        scope = ("" if sampled >= sub.unknown else
                 f"; reasons of the first {sampled:,}" if sampled else "; reasons not sampled")
        print(f"filtex: {sub.name}: {sub.unknown:,} unknown result"
              f"{'s' if sub.unknown != 1 else ''} (not delivered){scope}:", file=stream)
        for reason, count in sub.reasons.most_common(TOP_REASONS):
            print(f"  {count:>8,}  {reason}", file=stream)
        if len(sub.reasons) > TOP_REASONS:
            print(f"  ({len(sub.reasons) - TOP_REASONS} other reasons)", file=stream)
    if unreadable.count:
        print(f"filtex: {unreadable.count:,} unreadable record"
              f"{'s' if unreadable.count != 1 else ''} skipped:", file=stream)
        for reason, count in unreadable.reasons.most_common(TOP_REASONS):
            print(f"  {count:>8,}  {reason}", file=stream)
    if throughput:
        compile_seconds, waited = compiling
        running = seconds - compile_seconds
        rate = messages / running if running > 0 else 0.0
        notes = []
        if compile_seconds >= 0.005:
            notes.append(f"and {compile_seconds:.2f} s compiling kernels")
        if waited:
            notes.append(f"{min(waited, messages):,} of them by the per-message engine while "
                         "the kernels compiled in the background")
        said = f" ({'; '.join(notes)})" if notes else ""
        print(f"filtex: {messages:,} messages in {running:.2f} s{said}: {rate:,.0f} msgs/s, "
              f"{rate * len(subscriptions):,.0f} subscription-evaluations/s", file=stream)
