"""``filtex match``: run messages from files or stdin through one or more
subscriptions, writing what each would get (or counting, or only telling by
the exit status whether any message is selected: ``-q``).

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

Parquet and Arrow IPC files (``tables.py``: message tables, or flat tables
with ``--mapping``) are read a record batch at a time and evaluated by the
batch engine (numba kernels); each subscription's matching rows are written
in the input's format.

The exit status is grep's: 0 when at least one message was selected (by any
subscription; ``--invert``: not delivered), 1 when none was, 2 on an error,
an unreadable record included; ``-q`` stops at the first message selected
and exits 0 even after an error.
"""
from __future__ import annotations

import argparse
import errno
import os
import re
import stat
import sys
import time
from contextlib import ExitStack
from itertools import chain, compress, islice
from operator import itemgetter, not_
from typing import Any, Callable, Iterator

from ..files import read_records, write_records
from . import frames
from .common import BAD, NO_MATCH, OK, CommandError, CompileNotice, require
from .definition import compile_named, file_name_hint, names_a_file, single_filter
from .live import LiveStream, live_batches
from .progress import Progress
from .report import Subscription, Unreadable, counts_json, counts_table, final_report
from .tables import TableInput, parse_mapping, table_format

BATCH = 64
"""Records read before the subscriptions evaluate them (a batch a redraw
of the progress line at most). Small, so a batch's messages are still in the
processor's cache when each subscription reads them: with 2,048 records of
about 700 bytes a batch, a single subscription ran 35% slower than a bare
read-and-evaluate loop; with 64 it runs as fast. A pipe or terminal is read in
batches of what has arrived (``live.py``), so matches of a live stream show at
once and ``-q`` answers at the first match without waiting for more."""
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


class _Found(Exception):
    """-q: a message is selected; nothing more to read."""


def run(args: argparse.Namespace) -> int:
    _check_options(args)
    subscriptions, inputs = _subscriptions(args)
    if args.strict:   # stop before any output file is created, not after truncating it
        for path in inputs:
            if path != "-" and not os.access(path, os.R_OK):
                why = "No such file or directory" if not os.path.exists(path) else \
                    "Permission denied"
                raise CommandError(f"{path}: cannot read: {why}")
    with ExitStack() as stack:
        _open_outputs(args, subscriptions, inputs, stack)
        matcher = _Matcher(subscriptions, args, inputs)
        try:
            for source in inputs:
                matcher.read(source)
        except _Stop:
            return BAD
        except _Found:
            return OK
        finally:
            matcher.progress.clear()   # also before an error's line
            matcher.close_writers()
            for sub in subscriptions:
                if sub.output is not None:
                    sub.output.flush()
    return matcher.finish()


def _check_options(args: argparse.Namespace) -> None:
    """Options that contradict each other, refused before anything is read."""
    if args.quiet and (args.count or args.output is not None or args.json):
        raise CommandError("-q writes nothing: it takes no --count, --json or -o")
    if args.json and not args.count:
        raise CommandError("--json prints the counts as JSON: give --count too")
    if args.count and args.output == "-":
        raise CommandError("--count prints its table on stdout: -o - would mix the messages "
                           "into it (give -o FILE)")
    if args.filters and args.filter_file is not None:
        raise CommandError("give the filter as -f FILE or as --filter NAME=TEXT, not both")
    args.mapping = parse_mapping(args.mapping)


def _subscriptions(args: argparse.Namespace) -> tuple[list[Subscription], list[str]]:
    """The subscriptions (compiled) and the inputs, from the operands."""
    operands = list(args.operands)
    sample = 0 if args.quiet else args.reasons
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
        compiled = compile_named(named, args)
        inputs = operands
    elif args.filter_file is not None:
        inputs = operands
        if args.filter_file == "-" and (not inputs or "-" in inputs):
            raise CommandError("-f - reads the filter from stdin: give the messages as INPUT "
                               "files")
        compiled = [("filter", single_filter(None, args))]
    else:
        if not operands:
            raise CommandError("match needs a FILTER (or -f FILE, or --filter NAME=TEXT)")
        text, inputs = operands[0], operands[1:]
        compiled = [("filter", single_filter(text, args))]
        if not inputs and names_a_file(text):
            print(f"filtex: warning: FILTER {text!r} is not an input: with no INPUT the "
                  f"messages are read from stdin; {file_name_hint(text)}", file=sys.stderr)
    return [Subscription(name, flt, sample) for name, flt in compiled], inputs or ["-"]


def _open_outputs(args: argparse.Namespace, subs: list[Subscription], inputs: list[str],
                  stack: ExitStack) -> None:
    """Each subscription's output: ``-o`` (per subscription with ``{name}``),
    else stdout for one subscription (``-o -`` too); none with ``--count`` and
    no ``-o``, or ``-q``."""
    taken = {}   # (device, inode) of every input: a link or another name is the same file
    for path in inputs:
        try:
            found = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
        except (OSError, AttributeError, ValueError):   # no such input, stdin closed
            continue
        taken[(found.st_dev, found.st_ino)] = "<stdin>" if path == "-" else path
    if args.output is None or args.output == "-":
        if args.quiet or (args.output is None and args.count):
            return
        if len(subs) > 1:
            raise CommandError("several --filter write one output each: give -o with {name} "
                               "in it (-o 'out/{name}.amqp'), or use --count")
        subs[0].output = getattr(sys.stdout, "buffer", None)
        if subs[0].output is None:
            raise CommandError("stdout takes no bytes here: use -o FILE")
        try:
            found = os.fstat(sys.stdout.fileno())
        except (OSError, AttributeError, ValueError):   # not a file (a test's capture)
            return
        if stat.S_ISREG(found.st_mode) and (found.st_dev, found.st_ino) in taken:
            raise CommandError(f"{taken[(found.st_dev, found.st_ino)]}: the input is also the "
                               "output (stdout)")
        return
    if len(subs) > 1 and "{name}" not in args.output:
        raise CommandError("several --filter write one output each: -o needs {name} in it "
                           "(-o 'out/{name}.amqp')")
    for sub in subs:
        path = args.output.replace("{name}", sub.name)
        try:
            found = os.stat(path)
        except OSError:
            found = None
        if found is not None and (found.st_dev, found.st_ino) in taken:
            raise CommandError(f"-o {path} would overwrite an input")
        try:
            sub.output = stack.enter_context(open(path, "wb"))
        except OSError as error:
            raise CommandError(f"cannot write {path}: {error.strerror or error}") from None


class _Matcher:
    """One run: the subscriptions, the output format, the counts."""

    records_per_batch = BATCH

    def __init__(self, subscriptions: list[Subscription], args: argparse.Namespace,
                 inputs: list[str]) -> None:
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
        # how far the run has got, for the progress line: the inputs' sizes (None
        # when one is not a regular file), bytes of the inputs done, the current one
        self.sizes = _sizes(inputs)
        self.total = sum(self.sizes) if None not in self.sizes else None
        self.done_bytes = 0
        self.at = 0   # the byte of a framed file the batch engine has reached
        # the batch engine: kernels compiled here (seconds), messages answered per
        # message while they compiled in the background
        self.compile_notice = CompileNotice(sys.stderr, self.progress)
        self.compiling_messages = 0
        self.next_input = 0
        self.current: tuple[int, Callable[[], float | None]] | None = None
        if self.total:
            self.progress.fraction = self.fraction
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

    def fraction(self) -> float | None:
        """The share of all inputs read (by their sizes)."""
        if not self.total:
            return None
        done = self.done_bytes
        if self.current is not None:
            size, part = self.current
            done += size * (part() or 0.0)
        return done / self.total

    def read(self, source: str) -> None:
        """Every record of one input, a batch at a time."""
        size = self.sizes[self.next_input]
        self.next_input += 1
        try:
            self._read(source, size)
        finally:
            self.current = None
            self.done_bytes += size or 0

    def _read(self, source: str, size: int | None) -> None:
        shown = "<stdin>" if source == "-" else source
        columnar = table_format(source) if self.args.format is None else None
        if columnar is not None:
            self.read_table(source, shown, columnar, size)
            return
        if self.args.mapping is not None or self.args.nulls is not None:
            option = "--mapping" if self.args.mapping is not None else "--nulls"
            self.error(f"{shown}: skipped: {option} is for Parquet and Arrow IPC tables, "
                       "and this is a message file")
            self.failed = True
            return
        with ExitStack() as stack:
            try:
                stream = sys.stdin if source == "-" else \
                    stack.enter_context(open(source, "rb"))
                if stream is None:   # Python's stdin when fd 0 is closed (``<&-``)
                    raise OSError(errno.EBADF, "stdin is closed")
                stream = getattr(stream, "buffer", stream)
                if self.framed(stream, size):   # a framed file: the batch engine
                    if self.use_format("amqp", shown):
                        total = size or 1
                        self.at = 0
                        self.current = (total, lambda: self.at / total)
                        if frames.read(self, stream, shown):
                            raise _Found
                    return
                live = size is None and _live(stream)   # a pipe or terminal
                if live:   # batches of what has come, so a live stream's matches show
                    stream = LiveStream(stream.fileno())
                if size:
                    self.current = (size, _position(stream, size))
                records = read_records(stream, self.args.format)
                first = next(records, None)
            except (OSError, ValueError) as error:
                self.error(f"{shown}: {_why(error)}")
                self.failed = True
                if self.args.strict:
                    raise _Stop from None
                return
            if first is None:
                return
            fmt = self.args.format or ("amqp" if first.position.startswith("frame")
                                       else "jsonl")
            if not self.use_format(fmt, shown):
                return
            rest = chain((first,), records)
            batches = live_batches(rest, BATCH) if live else _batches(rest, BATCH)
            while True:
                try:
                    batch = next(batches, None)
                except OSError as error:
                    self.error(f"{shown}: {_why(error)}")
                    self.failed = True
                    return
                if batch is None:
                    return
                self.evaluate_records(batch, shown)
                if live and len(batch) < BATCH:   # the input paused: show what matched
                    self.flush_outputs()

    def framed(self, stream: Any, size: int | None) -> bool:
        """Whether ``stream`` is a framed file the batch engine reads
        (``frames.py``): a regular file of ``COLUMNAR_BYTES`` or more, without
        ``--strict``, with the ``arrow`` extra installed. Its first bytes are
        read and put back."""
        engine = getattr(self.args, "engine", "auto")
        if engine == "messages" or size is None or self.args.strict or \
                self.args.format not in (None, "amqp"):
            return False
        if engine == "auto" and size < frames.COLUMNAR_BYTES:
            return False
        if not frames.available():
            if engine == "batch":
                require(("pyarrow", "numba"), "arrow", "--engine batch")
            return False
        try:
            start = stream.tell()
            head = stream.read(1)
            stream.seek(start)
        except (OSError, ValueError):   # not seekable after all
            return False
        return head == b"\0" if self.args.format is None else True

    def read_table(self, source: str, shown: str, fmt: str, size: int | None) -> None:
        """A Parquet or Arrow IPC table, a record batch at a time, through the
        batch engine."""
        require(("pyarrow", "numba"), "arrow", "reading Parquet and Arrow IPC files")
        if not self.use_format(fmt, shown):
            return
        try:
            table = TableInput(source, fmt, self.args.mapping, self.args.nulls)
            if size:
                self.current = (size, table.fraction)
            first = 0   # the row number of the batch's first row
            for batch, rows in table.batches():
                self.evaluate_table(batch, rows, shown, first)
                first += batch.num_rows
        except (OSError, ValueError) as error:   # pyarrow's errors are ValueError's
            self.error(f"{shown}: {_why(error)}")
            self.failed = True
            if self.args.strict:
                raise _Stop from None

    def evaluate_table(self, batch: Any, rows: Any, shown: str, first: int) -> None:
        """Every subscription over one record batch with the batch engine
        (``batch``: the message table batch; ``rows``: the input's own, written;
        ``first``: the number of its first row in the input, counted from 0)."""
        import pyarrow.compute as pc
        count = batch.num_rows
        self.messages += count
        clock = time.perf_counter
        invert = self.args.invert
        selected = 0
        failed: dict[int, str] = {}   # rows no engine could evaluate: reported once
        for sub in self.subscriptions:
            started = clock()
            verdicts = _table_verdicts(sub.filter, batch, failed)
            sub.seconds += clock() - started
            sub.evaluated += count
            matched = verdicts.true_count
            sub.matched += matched
            selected += count - matched if invert else matched
            unknown = verdicts.null_count
            if unknown:
                sub.unknown += unknown
                room = sub.sample - sum(sub.reasons.values())
                if room > 0:
                    at = pc.indices_nonzero(verdicts.is_null())[:room].to_pylist()
                    for reason in _table_reasons(sub.filter, batch, at, failed):
                        sub.reasons[reason] += 1
            if sub.output is not None:
                keep = pc.fill_null(verdicts, False)
                self.write_table(sub, rows.filter(pc.invert(keep) if invert else keep))
        for row, reason in sorted(failed.items()):
            self.unreadable.add(f"{shown}: row {first + row + 1}", reason, sys.stderr,
                                self.progress.clear)
        if selected and self.args.quiet:
            raise _Found
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

    def evaluate_records(self, batch: list, shown: str) -> None:
        """A batch of records: the unreadable ones reported (``--strict``: and
        the run stopped), every subscription over the rest."""
        messages = list(map(_MESSAGE, batch))
        stop = False
        if None in messages:
            batch, stop = self.readable(batch, shown)
            messages = list(map(_MESSAGE, batch))
        if messages:
            self.evaluate(batch, messages)
        if stop:
            raise _Stop

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
        selected = 0
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
            matched = results.count(True)
            sub.matched += matched
            selected += count - matched if invert else matched
            unknown = results.count(None)
            if unknown:
                sub.unknown += unknown
                sub.note_unknown(results, messages)
            if sub.output is not None:
                if raws is None:
                    raws = list(map(_RAW, batch))
                chosen = compress(raws, map(not_, results) if invert else results)
                write_records(sub.output, chosen, self.output_format)
        if selected and self.args.quiet:
            raise _Found
        self.show_progress()

    def flush_outputs(self) -> None:
        for sub in self.subscriptions:
            if sub.output is not None:
                sub.output.flush()

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
            print(counts_json(self.subscriptions, self.unreadable, self.messages, seconds)
                  if args.json else counts_table(self.subscriptions))
            sys.stdout.flush()
        final_report([] if args.quiet else self.subscriptions, self.unreadable, self.messages,
                     seconds, sys.stderr, throughput=not args.quiet and (
                         args.count or self.progress.enabled),
                     compiling=(self.compile_notice.seconds, self.compiling_messages))
        if self.failed or self.unreadable.count:   # reported above; a script must see it too
            return BAD
        selected = sum(s.not_matched + s.unknown if args.invert else s.matched
                       for s in self.subscriptions)
        return OK if selected else NO_MATCH


def _sizes(inputs: list[str]) -> list[int | None]:
    """Each input's size in bytes, None when it is not a regular file (a pipe);
    an input that cannot be read counts 0 (it is reported when it is read)."""
    sizes: list[int | None] = []
    for path in inputs:
        try:
            found = os.fstat(sys.stdin.fileno()) if path == "-" else os.stat(path)
        except (OSError, AttributeError, ValueError):
            sizes.append(None if path == "-" else 0)
            continue
        sizes.append(found.st_size if stat.S_ISREG(found.st_mode) else None)
    return sizes


def _table_verdicts(flt: Any, batch: Any, failed: dict[int, str]) -> Any:
    """The batch engine's verdicts; should it fail on a batch (it is not meant
    to: a malformed row is unknown), the batch row by row, a row that still
    fails unknown and noted in ``failed``, so one bad row never costs the
    others their verdicts or the rest of the input."""
    import pyarrow as pa
    from ..arrow import evaluate
    try:
        return evaluate(flt, batch).verdicts
    except Exception:   # isolated below, row by row
        pass
    out: list[bool | None] = []
    for row in range(batch.num_rows):
        try:
            out.append(evaluate(flt, batch.slice(row, 1)).verdicts[0].as_py())
        except Exception as error:
            failed.setdefault(row, f"cannot evaluate this row: {_why(error)}")
            out.append(None)
    return pa.array(out, pa.bool_())


def _table_reasons(flt: Any, batch: Any, rows: list[int], failed: dict[int, str]) -> list[str]:
    """Why each of ``rows`` is unknown, from its row view; a row no view can
    be made of says what is wrong with it."""
    from ..table.rows import batch_rows
    try:
        views = batch_rows(batch.take(rows))
        return [flt.outcome(view).reason or "unknown" for view in views]
    except Exception:   # a malformed row among them: each alone
        pass
    reasons = []
    for row in rows:
        if row in failed:
            reasons.append(failed[row])
            continue
        try:
            reasons.append(flt.outcome(batch_rows(batch.slice(row, 1))[0]).reason or "unknown")
        except Exception as error:
            reasons.append(f"malformed row: {_why(error)}")
    return reasons


def _live(stream: Any) -> bool:
    """Is ``stream`` a pipe, FIFO, socket or terminal with a descriptor? (Nothing
    has been read from it yet: match reads its inputs only here.)"""
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, AttributeError, ValueError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _position(stream: Any, size: int) -> Callable[[], float | None]:
    """The share of a regular file's bytes ``stream`` has read (from where it
    was when given: stdin may start part-way)."""
    try:
        start: int = stream.tell()
    except (OSError, AttributeError, ValueError):
        return lambda: None
    if size <= start:
        return lambda: None

    def share() -> float | None:
        try:
            read: int = stream.tell() - start
            return min(1.0, read / (size - start))
        except (OSError, ValueError):
            return None
    return share


def _batches(records: Iterator, size: int = BATCH) -> Iterator[list]:
    while True:
        batch = list(islice(records, size))
        if not batch:
            return
        yield batch


def _why(error: BaseException) -> str:
    if isinstance(error, OSError):
        return f"cannot read: {error.strerror or error}"
    return str(error)
