"""``filtex match``: run messages from files or stdin through one or more
subscriptions, writing what each would get (or counting).

Each message is read once; each subscription evaluates a whole batch with
``map(flt.evaluate, messages)`` (the generated function itself, called from
C: no Python loop or function layer per message), and the batch's counts are
``list.count`` of the results. Matching records are written as they were
read, byte for byte (a line and its newline, or the frame's size and bytes).

With several ``--filter NAME=TEXT`` each subscription gets its own output, as
a broker gives each subscriber its own queue: ``-o`` is a template holding
``{name}`` (``-o 'out/{name}.amqp'``); with ``--count`` no output is needed.
They are matched together by ``filtex.Subscriptions``: a message is read once
and only the subscriptions its indexed fields may match are evaluated.

Parquet and Arrow IPC files of message tables (``filtex.arrow``) are read a
record batch at a time and evaluated by the batch engine (numba kernels);
each subscription's matching rows are written in the input's format.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import time
from contextlib import ExitStack
from itertools import chain, compress, islice
from operator import itemgetter, not_
from typing import Any, Iterator

from ..files import read_records, write_records
from .common import BAD, NO_MATCH, OK, CommandError, load_filter
from .progress import Progress
from .report import Subscription, Unreadable, counts_table, final_report

BATCH = 64
"""Records read before the subscriptions evaluate them (a batch a redraw
of the progress line at most). Small, so a batch's messages are still in the
processor's cache when each subscription reads them: with 2,048 records of
about 700 bytes a batch, a single subscription ran 35% slower than a bare
read-and-evaluate loop; with 64 it runs as fast."""
REASON_SAMPLE = 100
_NAME = re.compile(r"[\w.:@+-]+\Z")
_MESSAGE, _RAW = itemgetter(2), itemgetter(1)   # Record fields, read in C


def _same_terminal(out: Any, err: Any) -> bool:
    """Do stdout and stderr write to one terminal?"""
    try:
        return out.isatty() and err.isatty() and os.path.samestat(
            os.fstat(out.fileno()), os.fstat(err.fileno()))
    except (AttributeError, OSError, ValueError):
        return False


class _Stop(Exception):
    """--strict met an unreadable record."""


def run(args: argparse.Namespace) -> int:
    subscriptions, inputs = _subscriptions(args)
    if args.strict:   # stop before any output file is created, not after truncating it
        for path in inputs:
            if path != "-" and not os.access(path, os.R_OK):
                why = "No such file or directory" if not os.path.exists(path) else \
                    "Permission denied"
                raise CommandError(f"{path}: cannot read: {why}")
    with ExitStack() as stack:
        _open_outputs(args, subscriptions, inputs, stack)
        matcher = _Matcher(subscriptions, args)
        try:
            for source in inputs:
                matcher.read(source)
        except _Stop:
            matcher.progress.clear()
            return BAD
        finally:
            matcher.close_writers()
            for sub in subscriptions:
                if sub.output is not None:
                    sub.output.flush()
    return matcher.finish()


def _subscriptions(args: argparse.Namespace) -> tuple[list[Subscription], list[str]]:
    """The subscriptions (compiled) and the inputs, from the operands."""
    operands = list(args.operands)
    sample = max(0, args.reasons)
    if args.filters:
        named = []
        for item in args.filters:
            name, sep, text = item.partition("=")   # NAME=TEXT: no blank before the =
            if not sep or not _NAME.match(name) or not text.strip():
                raise CommandError(f"--filter takes NAME=TEXT (a name of letters, digits and "
                                   f"._:@+-, then the filter), not {item[:60]!r}")
            if name in {n for n, _ in named}:
                raise CommandError(f"--filter: the name {name!r} is given twice")
            named.append((name, text))
        inputs = operands
    else:
        if not operands:
            raise CommandError("match needs a FILTER (or --filter NAME=TEXT)")
        named, inputs = [("filter", operands[0])], operands[1:]
    subs = []
    for name, text in named:
        try:
            flt = load_filter(text, args.dialect, args.filter_json)
        except CommandError as error:
            prefix = f"{name}: " if args.filters else ""
            raise CommandError(prefix + error.message) from None
        subs.append(Subscription(name, flt, sample))
    return subs, inputs or ["-"]


def _open_outputs(args: argparse.Namespace, subs: list[Subscription], inputs: list[str],
                  stack: ExitStack) -> None:
    """Each subscription's output: ``-o`` (per subscription with ``{name}``),
    else stdout for one subscription; none with ``--count`` and no ``-o``."""
    if args.output is None:
        if args.count:
            return
        if len(subs) > 1:
            raise CommandError("several --filter write one output each: give -o with {name} "
                               "in it (-o 'out/{name}.amqp'), or use --count")
        subs[0].output = getattr(sys.stdout, "buffer", None)
        if subs[0].output is None:
            raise CommandError("stdout takes no bytes here: use -o FILE")
        return
    if len(subs) > 1 and "{name}" not in args.output:
        raise CommandError("several --filter write one output each: -o needs {name} in it "
                           "(-o 'out/{name}.amqp')")
    taken = set()   # (device, inode) of every input: a link or another name is the same file
    for path in inputs:
        try:
            stat = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
        except (OSError, AttributeError, ValueError):   # no such input, stdin closed
            continue
        taken.add((stat.st_dev, stat.st_ino))
    for sub in subs:
        path = args.output.replace("{name}", sub.name)
        try:
            stat = os.stat(path)
        except OSError:
            stat = None
        if stat is not None and (stat.st_dev, stat.st_ino) in taken:
            raise CommandError(f"-o {path} would overwrite an input")
        try:
            sub.output = stack.enter_context(open(path, "wb"))
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror or error}") from None


class _Matcher:
    """One run: the subscriptions, the output format, the counts."""

    def __init__(self, subscriptions: list[Subscription], args: argparse.Namespace) -> None:
        self.subscriptions = subscriptions
        self.args = args
        self.writing = any(sub.output is not None for sub in subscriptions)
        self.output_format: str | None = None
        self.messages = 0
        self.failed = False   # an input could not be read at all
        self.unreadable = Unreadable()
        self.progress = Progress(sys.stderr)
        self.writers: dict[str, Any] = {}   # a table writer per subscription (Parquet, IPC)
        if self.writing and _same_terminal(sys.stdout, sys.stderr):
            self.progress.enabled = False   # it would be drawn among the messages written
        self.start = time.perf_counter()
        # several named filters: one Subscriptions pass a message (indexed gates,
        # the message adapted once), each verdict exactly the filter's own
        self.shared = None
        if len(subscriptions) > 1:
            from ..subscriptions import Subscriptions
            self.shared = Subscriptions((sub.name, sub.filter) for sub in subscriptions)

    def error(self, text: str) -> None:
        self.progress.clear()
        print(f"filtex: {text}", file=sys.stderr)

    def read(self, source: str) -> None:
        """Every record of one input, a batch at a time."""
        shown = "<stdin>" if source == "-" else source
        columnar = _columnar_format(source) if self.args.format is None else None
        if columnar is not None:
            self.read_table(source, shown, columnar)
            return
        try:
            records = read_records(source, self.args.format)
            first = next(records, None)
        except (OSError, ValueError) as error:
            self.error(f"{shown}: {_why(error)}")
            self.failed = True
            if self.args.strict:
                raise _Stop from None
            return
        if first is None:
            return
        fmt = self.args.format or ("amqp" if first.position.startswith("frame") else "jsonl")
        if not self.use_format(fmt, shown):
            return
        batches = _batches(chain((first,), records))
        while True:
            try:
                batch = next(batches, None)
            except OSError as error:
                self.error(f"{shown}: {_why(error)}")
                self.failed = True
                return
            if batch is None:
                return
            messages = list(map(_MESSAGE, batch))
            stop = False
            if None in messages:
                batch, stop = self.readable(batch, shown)
                messages = list(map(_MESSAGE, batch))
            if messages:
                self.evaluate(batch, messages)
            if stop:
                raise _Stop

    def read_table(self, source: str, shown: str, fmt: str) -> None:
        """A Parquet or Arrow IPC message table, a record batch at a time, through
        the batch engine."""
        from ..arrow import read_batches
        if not self.use_format(fmt, shown):
            return
        try:
            for batch in read_batches(source):
                self.evaluate_table(batch)
        except (OSError, ValueError) as error:
            self.error(f"{shown}: {_why(error)}")
            self.failed = True
            if self.args.strict:
                raise _Stop from None

    def evaluate_table(self, batch: Any) -> None:
        """Every subscription over one record batch with the batch engine."""
        import pyarrow.compute as pc
        from ..arrow import evaluate
        from ..arrow.rows import batch_rows
        count = batch.num_rows
        self.messages += count
        clock = time.perf_counter
        for sub in self.subscriptions:
            started = clock()
            verdicts = evaluate(sub.filter, batch).verdicts
            sub.seconds += clock() - started
            sub.evaluated += count
            sub.matched += verdicts.true_count
            unknown = verdicts.null_count
            if unknown:
                sub.unknown += unknown
                room = sub.sample - sum(sub.reasons.values())
                if room > 0:
                    rows = pc.indices_nonzero(verdicts.is_null())[:room]
                    for view in batch_rows(batch.take(rows)):
                        sub.reasons[sub.filter.outcome(view).reason or "unknown"] += 1
            if sub.output is not None:
                keep = pc.fill_null(verdicts, False)
                self.write_table(sub, batch.filter(pc.invert(keep) if self.args.invert
                                                   else keep))
        self.show_progress()

    def write_table(self, sub: Subscription, rows: Any) -> None:
        writer = self.writers.get(sub.name)
        if writer is None:
            if self.output_format == "parquet":
                import pyarrow.parquet as pq
                writer = pq.ParquetWriter(sub.output, rows.schema)
            else:
                import pyarrow.ipc as ipc
                writer = ipc.new_file(sub.output, rows.schema)
            self.writers[sub.name] = writer
        if rows.num_rows:
            writer.write_batch(rows) if self.output_format == "ipc" else writer.write(rows)

    def close_writers(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writers.clear()

    def use_format(self, fmt: str, shown: str) -> bool:
        """Outputs hold one format, the first input's: a later input of the
        other format cannot be copied byte for byte, so it is skipped."""
        if not self.writing:
            return True
        if self.output_format is None:
            buffer = getattr(sys.stdout, "buffer", None)
            stdout = any(sub.output is buffer for sub in self.subscriptions)
            if fmt != "jsonl" and stdout and sys.stdout.isatty():
                shown_format = {"amqp": "framed AMQP", "parquet": "Parquet", "ipc": "Arrow IPC"}
                raise CommandError(f"not writing {shown_format[fmt]} messages to a terminal: use "
                                   "-o FILE or --count")
            self.output_format = fmt
            return True
        if fmt != self.output_format:
            self.error(f"{shown}: skipped: its messages are {fmt}, the output is "
                       f"{self.output_format} (messages are copied as they are)")
            self.failed = True
            return False
        return True

    def readable(self, batch: list, shown: str) -> tuple[list, bool]:
        """The batch without its unreadable records, each reported; with
        ``--strict``, the records before the first one, and stop."""
        kept = []
        for record in batch:
            if record.message is not None:
                kept.append(record)
                continue
            self.unreadable.add(f"{shown}: {record.position}", record.error, sys.stderr,
                                self.progress.clear)
            if record.fatal:   # the rest of this input cannot be read: not a success
                self.failed = True
            if self.args.strict:
                print("filtex: --strict: stopping at the first unreadable record",
                      file=sys.stderr)
                return kept, True
        return kept, False

    def evaluate(self, batch: list, messages: list) -> None:
        """Every subscription over one batch: the per-message work is the
        generated function called by ``map`` (one filter), or one
        ``Subscriptions.evaluate_all`` a message (several); counting is
        ``list.count``."""
        count = len(messages)
        self.messages += count
        invert = self.args.invert
        raws = None
        clock = time.perf_counter
        verdicts = None
        if self.shared is not None:
            started = clock()
            verdicts = list(map(self.shared.evaluate_all, messages))
            share = (clock() - started) / len(self.subscriptions)   # one pass for all
        for sub in self.subscriptions:
            if verdicts is not None:
                name = sub.name
                results = [found.get(name, False) for found in verdicts]
                sub.seconds += share
            else:
                started = clock()
                results = list(map(sub.evaluate, messages))
                sub.seconds += clock() - started
            sub.evaluated += count
            sub.matched += results.count(True)
            unknown = results.count(None)
            if unknown:
                sub.unknown += unknown
                sub.note_unknown(results, messages)
            if sub.output is not None:
                if raws is None:
                    raws = list(map(_RAW, batch))
                selected = compress(raws, map(not_, results) if invert else results)
                write_records(sub.output, selected, self.output_format)
        self.show_progress()

    def show_progress(self) -> None:
        if self.progress.enabled:
            self.progress.update(self.messages, sum(s.matched for s in self.subscriptions),
                                 sum(s.unknown for s in self.subscriptions))

    def finish(self) -> int:
        """The counts (``--count``), the report on stderr, the exit code."""
        self.progress.clear()
        seconds = time.perf_counter() - self.start
        args = self.args
        if args.count:
            print(counts_table(self.subscriptions))
            sys.stdout.flush()
        final_report(self.subscriptions, self.unreadable, self.messages, seconds, sys.stderr,
                     throughput=args.count or self.progress.enabled)
        if self.failed or self.unreadable.count:   # reported above; a script must see it too
            return BAD
        if not args.count:
            return OK
        selected = sum(s.not_matched + s.unknown if args.invert else s.matched
                       for s in self.subscriptions)
        return OK if selected else NO_MATCH


def _columnar_format(source: str) -> str | None:
    """``parquet`` or ``ipc`` for a file of a message table, else None."""
    if source == "-":
        return None
    try:
        with open(source, "rb") as stream:
            head = stream.read(8)
    except OSError:
        return None   # read_records reports it
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:6] == b"ARROW1" or head[:4] == b"\xff\xff\xff\xff":
        return "ipc"
    return None


def _batches(records: Iterator) -> Iterator[list]:
    while True:
        batch = list(islice(records, BATCH))
        if not batch:
            return
        yield batch


def _why(error: BaseException) -> str:
    if isinstance(error, OSError):
        return f"cannot read: {error.strerror or error}"
    return str(error)
