"""``filtex spark``: named subscriptions over a Parquet archive of messages,
on Spark, one output directory per subscription (or only the counts).

The archive is message tables in filtex's layout (``filtex.arrow`` writes
them; ``filtex.spark.to_spark`` writes them in Spark's types; both read the
same) or flat Parquet whose columns are properties (``--mapping`` says which
field a column is). It is read once, with ``mergeSchema``: every file of a
message table archive has the layout its own messages needed (keys,
children), and the union of them is the archive's layout (a key a file
lacks reads as absent in its rows).

Work: every subscription's verdict is a column of one DataFrame
(``filtex.spark.column``); one aggregation counts them all in one pass. When
writing, that DataFrame is cached (memory, then disk) before the count, so
the input is read and every filter evaluated once, and each subscription's
write (a Spark job each) scans the cache. ``--count`` caches nothing: its one
job reads only the columns the filters read.

The session: ``SparkSession.builder.getOrCreate()``, so a session that
already runs (a notebook, a test) is used as it is and left running; else
one is started (``--master``, default ``local[*]``; under ``spark-submit``,
spark-submit's master) and stopped at the end; without pyspark, or without
Java for a session to start, the command says so in one line (exit 2).
``main`` is the entry point of ``spark-submit tools/spark_subscriptions.py``.

Exit status as ``filtex match``'s: 0 when some subscription matched a row
(written or counted), 1 when none did, 2 on an error.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import time
from contextlib import contextmanager
from typing import Any, Iterator

from .common import NO_MATCH, OK, CommandError, require
from .definition import compile_named
from .tables import parse_mapping

_NAME = re.compile(r"[^\W_][\w.@+-]*\Z")
"""A subscription name is a directory name under --output: no leading ``.``
or ``_`` (Spark and Hadoop skip those as hidden), no ``/`` or ``:``."""
_MESSAGE_COLUMNS = frozenset({"header", "properties", "amqp_value", "amqp_sequence"})
_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+://")


def run(args: argparse.Namespace) -> int:
    """The command: check everything a run needs, then run it on Spark."""
    require(("pyspark", "pyarrow"), "spark", "filtex spark")
    subscriptions = _subscriptions(args.filters, args)
    _check_inputs(args.inputs)
    mapping = parse_mapping(args.mapping)
    outputs = _outputs(args, [name for name, _ in subscriptions])
    settings = dict(_setting(item) for item in args.conf or [])
    started = time.perf_counter()
    try:
        with _session(args.master, settings) as spark:
            df = spark.read.option("mergeSchema", "true").parquet(*args.inputs)
            options = _layout(df, mapping, args.nulls)
            counts = _apply(df, subscriptions, outputs, options, args.overwrite)
    except CommandError:
        raise
    except Exception as error:   # Spark's own errors: show the cause, exit 2
        message = _spark_error(error)
        if message is None:
            raise
        raise CommandError(message) from None
    print(_json(counts, outputs) if args.json else _table(counts, outputs))
    total = counts[0][1] if counts else 0
    print(f"filtex: {total:,} messages, {len(subscriptions)} subscription"
          f"{'s' if len(subscriptions) != 1 else ''}, {time.perf_counter() - started:.1f} s",
          file=sys.stderr)
    return OK if any(matched for _, _, matched, _, _ in counts) else NO_MATCH


def _subscriptions(items: list[str], args: argparse.Namespace) -> list[tuple[str, Any]]:
    """``NAME=TEXT`` items compiled, before Spark starts: a bad filter costs no JVM."""
    named: list[tuple[str, str]] = []
    for item in items:
        name, sep, text = item.partition("=")
        if not sep or not _NAME.match(name) or not text.strip():
            raise CommandError(f"--filter takes NAME=TEXT (a name of letters, digits and ._@+-, "
                               f"not starting with . or _; then the filter), not {item[:60]!r}")
        if name in {n for n, _ in named}:
            raise CommandError(f"--filter: the name {name!r} is given twice")
        named.append((name, text))
    return compile_named(named, args)


def _local(path: str) -> str | None:
    """The local file system path of ``path``, or None for another file system's URI."""
    if path.startswith("file:"):
        return re.sub(r"\Afile:(//)?", "", path)
    return None if _URI.match(path) else path


def _check_inputs(inputs: list[str]) -> None:
    """A missing local input is named before Spark starts (Spark's own error is a
    stack trace); another file system's paths are Spark's to check."""
    for path in inputs:
        local = _local(path)
        if local is not None and not any(c in local for c in "*?[") \
                and not os.path.exists(local):
            raise CommandError(f"{path}: no such file or directory")


def _outputs(args: argparse.Namespace, names: list[str]) -> dict[str, str] | None:
    """Each subscription's output directory (None with --count); an existing one
    is refused unless --overwrite, before any job runs."""
    if args.count:
        if args.output is not None:
            raise CommandError("--count writes nothing: give --output DIR or --count, not both")
        if args.overwrite:
            raise CommandError("--count writes nothing: --overwrite is for --output DIR")
        return None
    if args.output is None:
        raise CommandError("spark writes each subscription to --output DIR/NAME: give "
                           "--output DIR, or --count")
    outputs = {name: args.output.rstrip("/") + "/" + name for name in names}
    inputs = {os.path.realpath(p) for p in map(_local, args.inputs) if p is not None}
    for path in outputs.values():
        local = _local(path)
        if local is None:
            continue
        real = os.path.realpath(local)
        if any(real == i or i.startswith(real + os.sep) or real.startswith(i + os.sep)
               for i in inputs):
            raise CommandError(f"--output {path} is (or holds, or is in) an input")
        if os.path.exists(local) and not args.overwrite:
            raise CommandError(f"{path} exists: use --overwrite to replace it")
    return outputs


@contextmanager
def _session(master: str | None, settings: dict[str, str]) -> Iterator[Any]:
    """The running session, or one started here (and stopped at the end)."""
    from pyspark.sql import SparkSession
    running = SparkSession.getActiveSession() is not None
    builder = SparkSession.builder.appName("filtex spark")
    if not running:
        submitted = "PYSPARK_GATEWAY_PORT" in os.environ   # spark-submit started this Python
        if not submitted:
            _check_java()
        master = master or (None if submitted else "local[*]")
        if master is not None:
            builder = builder.master(master)
        if master is not None and master.startswith("local"):
            # local workers run this Python, which has filtex
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        for key, value in settings.items():
            builder = builder.config(key, value)
    from ..spark_io.workers import start_session
    spark = start_session(builder)   # a Ctrl-C meanwhile must not orphan the JVM
    case = spark.conf.get("spark.sql.caseSensitive")
    spark.conf.set("spark.sql.caseSensitive", "true")   # AMQP keys are: Color is not color
    try:
        yield spark
    finally:
        if running:
            spark.conf.set("spark.sql.caseSensitive", case)
        else:
            spark.stop()


def _check_java() -> None:
    """Spark's launcher runs ``$JAVA_HOME/bin/java``, else the ``java`` on PATH:
    when there is none, say so before it fails with a Java gateway error."""
    home = os.environ.get("JAVA_HOME")
    if home:
        java = os.path.join(home, "bin", "java")
        if not os.access(java, os.X_OK):
            raise CommandError(f"filtex spark needs Java 17 or newer to start Spark: JAVA_HOME "
                               f"is {home}, which has no bin/java")
    elif shutil.which("java") is None:
        raise CommandError("filtex spark needs Java 17 or newer to start Spark: no java on PATH "
                           "and JAVA_HOME is not set")


def _setting(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key:
        raise CommandError(f"--conf takes KEY=VALUE, not {item!r}")
    return key, value


def _layout(df: Any, mapping: dict[str, Any] | None, nulls: str | None) -> dict[str, Any]:
    """``filtex.spark`` options for this archive: a mapping and how nulls read,
    only for flat columns."""
    if mapping is None and nulls is None:
        return {}
    if _MESSAGE_COLUMNS <= set(df.columns):
        option = "--mapping" if mapping is not None else "--nulls"
        raise CommandError(f"{option} is for flat Parquet; the input is a message table")
    missing = [c for c in mapping or () if c not in df.columns]
    if missing:
        raise CommandError(f"--mapping names column {missing[0]!r}, which the input does "
                           f"not have (it has {', '.join(df.columns[:12])})")
    options: dict[str, Any] = {"mapping": mapping}
    if nulls is not None:
        options["nulls"] = nulls
    return options


def _apply(df: Any, subscriptions: list[tuple[str, Any]], outputs: dict[str, str] | None,
           options: dict[str, Any], overwrite: bool) -> list[tuple]:
    """Count every subscription in one pass and (``outputs``) write each one's
    rows; the counts per subscription."""
    import filtex.spark as fs
    from pyspark import StorageLevel
    from pyspark.sql import functions as F
    names = _verdict_names(df.columns, len(subscriptions))
    verdicts = []
    for (name, flt), verdict in zip(subscriptions, names):
        try:
            verdicts.append(fs.column(flt, df, **options).alias(verdict))
        except ValueError as error:   # a column no AMQP type stands for, a bad mapping
            raise CommandError(f"{name}: {error}") from None
    tagged = df.select("*", *verdicts)
    if outputs is not None:
        tagged = tagged.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counts = _counts(tagged, subscriptions, names)
        if outputs is not None:
            mode = "overwrite" if overwrite else "errorifexists"
            for (name, _), verdict in zip(subscriptions, names):
                (tagged.where(F.col(verdict)).drop(*names)
                 .write.mode(mode).parquet(outputs[name]))
    finally:
        if outputs is not None:
            tagged.unpersist()
    return counts


def _verdict_names(columns: list[str], count: int) -> list[str]:
    """Names for the verdict columns that no input column has."""
    prefix = "_filtex_verdict"
    while any(c.startswith(prefix) for c in columns):
        prefix = "_" + prefix
    return [f"{prefix}_{i}" for i in range(count)]


def _counts(tagged: Any, subscriptions: list[tuple[str, Any]], names: list[str]) -> list[tuple]:
    """(name, messages, matched, not matched, unknown) per subscription, one job."""
    from pyspark.sql import functions as F
    aggregates = [F.count(F.lit(1))]
    for verdict in names:
        v = F.col(verdict)
        aggregates += [F.count_if(v), F.count_if(~v), F.count_if(v.isNull())]
    row = tagged.agg(*aggregates).first()
    total = row[0]
    return [(name, total, row[1 + 3 * i], row[2 + 3 * i], row[3 + 3 * i])
            for i, (name, _) in enumerate(subscriptions)]


def _table(counts: list[tuple], outputs: dict[str, str] | None) -> str:
    """The counts as ``filtex match --count`` prints them (and where each went)."""
    head = ("subscription", "matched", "not matched", "unknown")
    rows = [head + (("output",) if outputs else ())]
    for name, _, matched, not_matched, unknown in counts:
        rows.append((name, f"{matched:,}", f"{not_matched:,}", f"{unknown:,}")
                    + ((outputs[name],) if outputs else ()))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [f"{row[0]:<{widths[0]}}"] + [f"{c:>{w}}" for c, w in zip(row[1:4], widths[1:4])]
        lines.append("  ".join(cells + list(row[4:])).rstrip())
    return "\n".join(lines)


def _json(counts: list[tuple], outputs: dict[str, str] | None) -> str:
    """``--json``: the counts as one object, as ``filtex match --count --json``
    prints them (and where each subscription's rows went)."""
    return json.dumps({
        "messages": counts[0][1] if counts else 0,
        "subscriptions": {name: {"matched": matched, "not_matched": not_matched,
                                 "unknown": unknown,
                                 **({"output": outputs[name]} if outputs else {})}
                          for name, _, matched, not_matched, unknown in counts}})


def _spark_error(error: BaseException) -> str | None:
    """A Spark failure in one or two lines (the Python error of a UDF, else the
    first line of Spark's message), or None for an error that is not Spark's."""
    try:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException
    except ImportError:
        return None
    if not isinstance(error, (PySparkException, Py4JJavaError)):
        return None
    text = str(error)
    if "JAVA_GATEWAY_EXITED" in text:
        java = os.environ.get("JAVA_HOME") or shutil.which("java") or "no java"
        return (f"Spark could not start: its Java process exited at once ({java}; Spark "
                "needs Java 17 or newer; Java's own message, if any, is above)")
    spark = re.search(r"\[[A-Z][A-Z_.]+\] [^\n]*", text)   # Spark's error class and message
    if spark is not None and "PythonException" not in text:
        return spark.group(0)[:500]
    python = re.findall(r"^(?:\w+\.)*\w*(?:Error|Exception): .*$", text, re.M)
    python = [line for line in python if not line.startswith(("org.", "java.", "py4j."))]
    if python:
        return python[-1]
    first = next((line.strip() for line in text.splitlines() if line.strip()), repr(error))
    return first[:500]
