"""``python -m benchmarks.spark``: the benchmark filters on Spark, local[2], over
one message table in Parquet written for Spark, side by side in one run, each
timing ``count()`` of the rows the filter matches:

- **native**: ``filtex.spark.where(df, flt)``, filtex's default path (native
  Column translation where it has one; ``filtex.spark.explain`` says which);
- **hand-written**: ``spark.sql("SELECT count(*) FROM orders WHERE ...")``, the
  exact amqp three-valued result written by hand in Spark SQL
  (``columnar_reference.SparkEngine``, the same semantics as the Polars, DuckDB
  and pyarrow references);
- **udf**: ``filtex.spark.where(df, flt, method="udf")``, filtex's Arrow UDF
  fallback (its columnar engine, numba kernels, in the Python workers);
- **per-row**: the row-at-a-time Python UDF a user would write,
  ``F.udf(..., BooleanType())`` building a ``filtex.Message`` from the fields
  the filter reads and calling ``flt.matches``; run on the first ``--udf-rows``
  rows (a file of its own) and extrapolated per row, unless ``--full``.

The counts of every method must be equal (the per-row UDF's against native and
hand-written over the same first rows), else the run fails loudly (exit 1).
Times are the best of ``--repeat`` interleaved rounds, all runs listed (the
first includes code generation, Python worker start-up and kernel loading).
The plan pushdown (``PushedFilters`` of the Parquet scan) is reported for the
native and the hand-written query.

    python -m benchmarks.spark --prepare                 # data/orders-10M.parquet -> *-spark
    python -m benchmarks.spark --check-only              # SparkEngine vs filtex, row by row
    python -m benchmarks.spark --data data/orders-10M-spark.parquet --json out.json
"""
from __future__ import annotations

import argparse
import inspect
import json
import os
import platform
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import filtex  # noqa: E402
from benchmarks.columnar_reference import (EXCLUDED, FILTERS, ORDER, SPARK_NOTES,  # noqa: E402
                                           NotExact, counts, disagreements, per_message)
from benchmarks.columnar_reference.engines import SparkEngine  # noqa: E402
from benchmarks.columnar_reference.run import (check_table, decimal_messages,  # noqa: E402
                                               edge_messages, tags_present)
from benchmarks.columnar_reference.semantics import RECIPES, SECTIONS, Semantics  # noqa: E402
from benchmarks.suite import print_header  # noqa: E402

SOURCE = ROOT / "data" / "orders-10M.parquet"
DATA = ROOT / "data" / "orders-10M-spark.parquet"
ROW_GROUP = 1 << 20
VIEW = "orders"
ROW = "filtex_row"
METHODS = ("native", "hand-written", "udf", "per-row")


# --- the data ------------------------------------------------------------------------

def prepare(source: Path = SOURCE, target: Path = DATA, rows: int | None = None,
            row_group: int = ROW_GROUP) -> Path:
    """Write ``source`` (a message table in Parquet) in Spark's types
    (``filtex.spark.to_spark``), a row group at a time; ``rows``: only the first
    rows. As ``to_spark`` does for a whole table, residual columns that hold
    nothing in the whole file are left out (decided once, so that every row
    group has the same schema). Written to a temporary name first, then renamed."""
    import filtex.spark
    src = pq.ParquetFile(source)
    rest = [n for n in src.schema_arrow.names if n.endswith("_rest")]
    held = dict.fromkeys(rest, 0)
    for batch in src.iter_batches(batch_size=row_group, columns=rest):
        for name in rest:
            held[name] += batch.num_rows - batch.column(name).null_count
    empty = [name for name, n in held.items() if n == 0]
    keep = "keep_empty_residuals" in inspect.signature(filtex.spark.to_spark).parameters
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    writer = None
    done = 0
    try:
        for batch in src.iter_batches(batch_size=row_group):
            if rows is not None and done + batch.num_rows > rows:
                batch = batch.slice(0, rows - done)
            table = pa.Table.from_batches([batch], schema=src.schema_arrow)
            table = (filtex.spark.to_spark(table, keep_empty_residuals=True) if keep
                     else filtex.spark.to_spark(table)).drop_columns(empty)
            if writer is None:
                writer = pq.ParquetWriter(partial, table.schema)
            writer.write_table(table, row_group_size=row_group)
            done += batch.num_rows
            if rows is not None and done >= rows:
                break
    finally:
        if writer is not None:
            writer.close()
    partial.replace(target)
    return target


def first_rows(data: Path, rows: int, work: Path, parts: int = 8) -> Path:
    """The first ``rows`` rows of ``data`` as a file of their own (the per-row
    UDF's slice) in ``parts`` row groups, so that Spark splits it among both
    cores as it does the whole file; reused while it is newer than ``data``."""
    path = work / f"{data.stem}-first{rows}-{parts}groups.parquet"
    if not path.exists() or path.stat().st_mtime < data.stat().st_mtime:
        src = pq.ParquetFile(data)
        group = max(1, -(-rows // parts))
        partial = path.with_name(path.name + ".partial")
        with pq.ParquetWriter(partial, src.schema_arrow) as writer:
            done = 0
            for batch in src.iter_batches(batch_size=group):
                batch = batch.slice(0, min(batch.num_rows, rows - done))
                writer.write_table(pa.Table.from_batches([batch]), row_group_size=group)
                done += batch.num_rows
                if done >= rows:
                    break
        partial.replace(path)
    return path


class Facts:
    """What the hand-written SQL needs to know of a file: its Arrow schema (in
    Spark's types), the type tags each application property holds, and the
    number of rows with residual entries per section."""

    def __init__(self, path: Path) -> None:
        f = pq.ParquetFile(path)
        self.schema = f.schema_arrow
        self.rows = f.metadata.num_rows
        self.tags: dict[str, set[int]] = {}
        self.rest: dict[str, int] = {}
        rest = [n for n in self.schema.names if n.endswith("_rest")]
        wanted = rest + (["application_properties"]
                         if "application_properties" in self.schema.names else [])
        for batch in f.iter_batches(batch_size=ROW_GROUP, columns=wanted):
            table = pa.Table.from_batches([batch])
            for key, tags in tags_present(table).items():
                self.tags.setdefault(key, set()).update(tags)
            for name in rest:
                self.rest[name] = self.rest.get(name, 0) + batch.num_rows \
                    - table.column(name).null_count

    def check(self, name: str) -> None:
        """As ``run.check_table``: the SQL reads typed places only."""
        for section in SECTIONS[name]:
            n = self.rest.get(f"{section}_rest", 0)
            if n:
                raise NotExact(f"{n} rows have {section}_rest entries (values with no typed "
                               "place)")


def spark_sql(name: str, schema: pa.Schema, tags: dict[str, set[int]], view: str = VIEW,
              inline: bool = False) -> tuple[str, str]:
    """The hand-written Spark SQL of a benchmark filter: (the FROM source, the
    exact three-valued verdict). ``SELECT count(*) FROM {source} WHERE
    {verdict}`` counts the TRUE rows. Raises NotExact."""
    E = SparkEngine(inline=inline)
    S = Semantics(E, schema, tags)
    verdict = S.result(RECIPES[name](S))
    return E.source(view), verdict


def count_sql(name: str, facts: Facts, view: str = VIEW) -> str:
    """``SELECT count(*) FROM orders WHERE {verdict}``; with named intermediates
    (arithmetic), ``count_if`` over them instead: Spark pushes a WHERE through
    the subqueries' projections by inlining every name where it is used (the
    arithmetic filter's condition grows to 44 kB of text, its generated code
    past the JVM's 64 kB method limit, and Spark falls back to interpreting
    it, several times slower), while an aggregate over a projection keeps
    them (CollapseProject does not duplicate expensive expressions)."""
    facts.check(name)
    source, verdict = spark_sql(name, facts.schema, facts.tags, view)
    if source == view:
        return f"SELECT count(*) FROM {source} WHERE {verdict}"
    return f"SELECT count_if(filtex_v) FROM (SELECT {verdict} AS filtex_v FROM {source})"


# --- Spark -------------------------------------------------------------------------------

def session(memory: str = "6g", app: str = "filtex-spark-benchmark") -> Any:
    """The one local[2] SparkSession: UI off, UTC, case-sensitive names (AMQP
    keys are), the workers on this Python, the JVM's locale pinned (Spark's
    lower() for non-ASCII text is the JVM's), plan metadata untruncated."""
    os.environ["PYSPARK_PYTHON"] = sys.executable
    paths = [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    from pyspark.sql import SparkSession
    spark = (SparkSession.builder.master("local[2]").appName(app)
             .config("spark.driver.memory", memory)
             .config("spark.driver.extraJavaOptions", "-Duser.language=en -Duser.country=US")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.shuffle.partitions", "2")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.caseSensitive", "true")
             .config("spark.sql.maxMetadataStringLength", "100000")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def plan_text(df: Any) -> str:
    return df._jdf.queryExecution().executedPlan().toString()


def pushed_filters(df: Any) -> list[str]:
    """The ``PushedFilters: [...]`` of every scan in the executed plan."""
    text = plan_text(df)
    out = []
    for match in re.finditer(r"PushedFilters: \[", text):
        depth, i = 1, match.end()
        while i < len(text) and depth:
            depth += {"[": 1, "]": -1}.get(text[i], 0)
            i += 1
        out.append(text[match.end():i - 1])
    return out


# --- the per-row UDF a user would write ------------------------------------------------

def row_udf(flt: Any, df: Any) -> Any:
    """``F.udf`` over the fields ``flt`` reads (header and properties fields,
    application properties' VALUE structs read through their tag, as
    docs/message-table.md describes them), building a ``filtex.Message`` per row
    and calling ``flt.matches``: a boolean Column. The residual maps are not
    read (the benchmark data has none; the hand-written SQL refuses them too)."""
    import uuid
    from proton import (byte, char, decimal32, decimal64, decimal128, float32, int32, short,
                        symbol, timestamp, ubyte, uint, ulong, ushort)
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType
    from filtex.amqp.codec import decode_value
    from filtex.plan.prepared import prepared
    from filtex.table.schema import CHILD_OF_TAG, HEADER_TYPES, PROPERTIES_TYPES

    reads = prepared(flt).columns
    present = {f.name: f.dataType for f in df.schema.fields}

    def fields(section: str) -> list[str]:
        names = reads.get(section)
        if section not in present:
            return []
        have = present[section].fieldNames()
        return [n for n in have if names is None or n in names]

    header, props, keys = fields("header"), fields("properties"), \
        fields("application_properties")
    columns = [F.col("header").getField(n) for n in header]
    for n in props:
        column = F.col("properties").getField(n)
        if n in ("creation-time", "absolute-expiry-time"):
            column = F.unix_millis(column)   # milliseconds, as AMQP has them
        columns.append(column)
    columns += [F.col("application_properties").getField(k) for k in keys]
    header_classes = {n: HEADER_TYPES[n][0] for n in header}
    props_classes = {n: PROPERTIES_TYPES.get(n, (None,))[0] for n in props}
    child_of = dict(CHILD_OF_TAG)

    # tag -> the Python class of the AMQP type (docs/message-table.md)
    of_tag = {2: bool, 3: ubyte, 4: ushort, 5: uint, 6: lambda d: ulong(int(d)), 7: byte,
              8: short, 9: int32, 10: int, 11: float32, 12: float,
              13: lambda x: decimal32(int.from_bytes(x, "big")),
              14: lambda x: decimal64(int.from_bytes(x, "big")),
              15: lambda x: decimal128(bytes(x)), 16: char, 17: timestamp,
              18: lambda x: uuid.UUID(bytes=bytes(x)), 19: bytes, 20: str, 21: symbol}

    def matches(*values: Any) -> bool:
        it = iter(values)
        h = {n: header_classes[n](v) for n, v in zip(header, it) if v is not None}
        p = {}
        for n, v in zip(props, it):
            if v is not None:
                p[n] = props_classes[n](v) if props_classes[n] is not None else v
        ap = {}
        for k, v in zip(keys, it):
            if v is None or v["t"] == 0:      # absent
                continue
            t = v["t"]
            if t == 1:
                ap[k] = None
            elif child_of[t] == "e":          # list, map, array, described: AMQP-encoded
                ap[k] = decode_value(bytes(v["e"]))[0]
            else:
                ap[k] = of_tag[t](v[child_of[t]])
        return flt.matches(filtex.Message(header=h, properties=p, application_properties=ap))

    return F.udf(matches, BooleanType())(*columns)


# --- filtex's paths ------------------------------------------------------------------

def filtex_paths() -> tuple[Callable, Callable, str]:
    """(native, udf, what native is): ``filtex.spark.where`` by default, and
    with ``method="udf"`` (before that keyword existed, the default path was
    the Arrow UDF: both are then that)."""
    import filtex.spark as fs
    params = set(inspect.signature(fs.column).parameters) | \
        set(inspect.signature(fs.where).parameters) - {"options"}
    native = fs.where
    if "method" in params:
        return native, lambda df, flt: fs.where(df, flt, method="udf"), \
            "filtex.spark.where(df, flt) (default method)"
    return native, fs.where, ("filtex.spark.where(df, flt): no `method` keyword yet, so the "
                              "default path (the Arrow UDF) stands for both native and udf")


def explain_summary(text: str, width: int = 400) -> str:
    """``filtex.spark.explain`` on one line, without the native expression itself."""
    lines = []
    for line in text.splitlines():
        if line.startswith("native Spark expressions: "):
            line = f"native Spark expressions ({len(line) - 26:,} characters)"
        lines.append(line.strip() if len(line) <= width else line.strip()[:width] + "...")
    reasons = [i for i, line in enumerate(lines) if line.startswith("predicate ")]
    if len(reasons) > 4:   # one line per predicate and AMQP type: a few say enough
        lines[reasons[3]] = f"(+{len(reasons) - 3} more predicate/type reasons)"
        lines = [line for i, line in enumerate(lines) if i not in reasons[4:]]
    return " / ".join(lines)


def explain(flt: Any, df: Any) -> str:
    import filtex.spark as fs
    try:
        return fs.explain(flt, df)
    except Exception as exc:   # the API is young
        return f"(explain raised {type(exc).__name__}: {exc})"


# --- checking the hand-written SQL --------------------------------------------------------

def _spark_table(spark: Any, table: pa.Table, path: Path, view: str) -> pa.Schema:
    """``table`` in Spark's types with a row number, written to ``path`` and
    read back as ``view``; returns the Spark-typed Arrow schema."""
    import filtex.spark as fs
    typed = fs.to_spark(table)
    rows = pa.array(np.arange(table.num_rows, dtype=np.int64))
    pq.write_table(typed.append_column(ROW, rows), path, row_group_size=ROW_GROUP)
    spark.read.parquet(str(path)).createOrReplaceTempView(view)
    return typed.schema


def lower_audit(spark: Any, constant: str = "acme") -> str:
    """Spark's lower() against Python's str.lower on every code point (and in
    the contexts where they could differ), as ``run.lower_audit`` for the others."""
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    contexts = ["ΑΣ", "ΟΔΟΣ ΑΣ", "İ"]
    df = spark.createDataFrame(pa.table({"s": points + contexts}))
    got = df.selectExpr("lower(s)").toArrow().column(0).to_pylist()
    lows, in_context = got[:len(points)], got[len(points):]
    differ = [(p, p.lower(), lo) for p, lo in zip(points, lows) if p.lower() != lo]
    letters = set(constant)
    risky = [p for p, py, lo in differ if (py and set(py) <= letters) or
             (lo and set(lo) <= letters)]
    sample = ", ".join(f"U+{ord(p):04X} {py!r}/{lo!r}" for p, py, lo in differ[:3])
    wrong = [f"{c!r} -> {lo!r} (Python {c.lower()!r})"
             for c, lo in zip(contexts, in_context) if lo != c.lower()]
    verdict = ("exact for this constant" if not risky else
               f"NOT exact: {len(risky)} code points could match {constant!r}")
    return (f"{len(differ)} code points lower-case differently from Python "
            f"({sample}{', ...' if len(differ) > 3 else ''}); in context: "
            f"{'; '.join(wrong) if wrong else 'same as Python'}; {verdict}")


def check(spark: Any, sample_rows: int = 200_000, seed: int = 11, names=ORDER,
          work: Path | None = None, verbose: bool = True, audit: bool = True) -> int:
    """The hand-written Spark SQL against filtex's per-message engine, row by
    row, on a generated sample, the edge-case table and the decimals table (as
    ``columnar_reference.check`` for the other engines); returns the number of
    disagreeing (filter, table) pairs."""
    import filtex.arrow
    from benchmarks.columnar_data import build_orders
    say = print if verbose else (lambda *a, **k: None)
    work = Path(work or tempfile.mkdtemp(prefix="filtex-spark-check-"))
    tables = {f"sample ({sample_rows:,} rows)": build_orders(sample_rows,
                                                             np.random.default_rng(seed)),
              "edge cases": filtex.arrow.message_table(edge_messages()),
              "decimals": filtex.arrow.message_table(decimal_messages())}
    bad = 0
    for i, (label, table) in enumerate(tables.items()):
        say(f"\n{label}:")
        view = f"check{i}"
        schema = _spark_table(spark, table, work / f"check{i}.parquet", view)
        tags = tags_present(table)
        for name in names:
            flt = filtex.compile_sql(FILTERS[name])
            truth = per_message(flt, table)
            t, f, u = counts(truth)
            try:
                check_table(table, name)
                source, verdict = spark_sql(name, schema, tags, view)
            except NotExact as exc:
                say(f"  {name:<18} filtex T/F/U {t}/{f}/{u}: spark: not exact ({exc})")
                continue
            got = spark.sql(f"SELECT {verdict} AS verdict FROM {source} ORDER BY {ROW}"
                            ).toArrow().column(0).combine_chunks()
            rows = disagreements(truth, got)
            if len(rows):
                bad += 1
                first = int(rows[0])
                say(f"  {name:<18} filtex T/F/U {t}/{f}/{u}: spark: **{len(rows)} DISAGREE** "
                    f"(first row {first}: filtex {truth[first].as_py()}, spark "
                    f"{got[first].as_py()})")
            else:
                say(f"  {name:<18} filtex T/F/U {t}/{f}/{u}: spark: agrees")
    if audit and "functions" in names:
        say("\nLOWER(customer) = 'acme', Spark's lower() against Python's str.lower on every "
            f"code point:\n  spark: {lower_audit(spark)}")
    say("\n" + ("the Spark SQL agrees with filtex row by row" if not bad else
                f"{bad} disagreeing filter/table combinations"))
    return bad


# --- the benchmark -----------------------------------------------------------------------

class _Skipped(Exception):
    """The per-row UDF is not among the methods asked for."""


def _timed(fn: Callable[[], int]) -> tuple[float, int]:
    start = time.perf_counter()
    n = fn()
    return time.perf_counter() - start, n


def versions(spark: Any) -> str:
    import pyspark
    return ", ".join([f"Python {platform.python_version()}", f"pyspark {pyspark.__version__}",
                      f"Spark {spark.version}", f"pyarrow {pa.__version__}",
                      f"numpy {np.__version__}", f"filtex {filtex.__version__}",
                      f"{os.cpu_count()} CPUs"])


def run(spark: Any, data: Path, names=ORDER, repeat: int = 3, udf_rows: int = 1_000_000,
        full: bool = False, work: Path = Path(tempfile.gettempdir()) / "bench-spark",
        say: Callable = print, progress: Callable[[dict], None] | None = None,
        methods: tuple = METHODS) -> tuple[dict[str, Any], bool]:
    """Time every method (of ``methods``) on every filter; returns (results, all
    counts equal).
    ``progress(results)`` is called after each filter (``--json`` writes them)."""
    native_where, udf_where, native_is = filtex_paths()
    work.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    facts = Facts(data)
    say(f"{facts.rows:,} rows in {data} ({data.stat().st_size / 1e6:,.0f} MB); tags and "
        f"residuals read in {time.perf_counter() - start:.1f} s")
    df = spark.read.parquet(str(data))
    df.createOrReplaceTempView(VIEW)
    if full or udf_rows >= facts.rows:
        slice_df, slice_rows, slice_view = df, facts.rows, VIEW
    else:
        path = first_rows(data, udf_rows, work)
        slice_df = spark.read.parquet(str(path))
        slice_rows, slice_view = udf_rows, f"{VIEW}_first"
        slice_df.createOrReplaceTempView(slice_view)
    say(f"native: {native_is}")
    say("per-row UDF: " + ("the whole table" if slice_df is df else
                           f"the first {slice_rows:,} rows, extrapolated per row"))
    say(f"best of {repeat} interleaved rounds (every run listed; the first includes "
        "code generation and Python worker start-up)\n")
    results: dict[str, Any] = {}
    ok = True
    for name in names:
        flt = filtex.compile_sql(FILTERS[name])
        res: dict[str, Any] = {"filter": FILTERS[name], "runs": {}, "ms": {}, "counts": {},
                               "explain": explain(flt, df), "pushed": {}, "notes": []}
        results[name] = res
        jobs: dict[str, Callable[[], int]] = {
            "native": lambda: native_where(df, flt).count(),
            "udf": lambda: udf_where(df, flt).count()}
        try:
            sql = count_sql(name, facts)
        except NotExact as exc:
            res["notes"].append(f"hand-written: not exact ({exc})")
            sql = None
        else:
            res["sql"] = sql
            jobs["hand-written"] = lambda: spark.sql(sql).collect()[0][0]
        order = [m for m in METHODS if m in jobs and m in methods]
        try:
            res["pushed"]["native"] = pushed_filters(native_where(df, flt))
            if sql is not None:
                res["pushed"]["hand-written"] = pushed_filters(spark.sql(sql))
        except Exception as exc:
            res["notes"].append(f"plan: {type(exc).__name__}: {exc}")
        for _ in range(repeat):
            for method in list(order):
                try:
                    seconds, n = _timed(jobs[method])
                except Exception as exc:
                    ok = False
                    say(f"**FAILED: {name} {method}: {type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:300]}**")
                    res["notes"].append(f"{method}: raised {type(exc).__name__}: "
                                        f"{str(exc).splitlines()[0][:300]}")
                    jobs.pop(method)
                    order.remove(method)
                    continue
                res["runs"].setdefault(method, []).append(round(seconds * 1000, 1))
                res["counts"].setdefault(method, set()).add(n)
        # the per-row UDF: once, on the slice; the others count the same slice
        res["per-row rows"] = slice_rows
        slice_counts: dict[str, int] = {}
        res["slice counts"] = slice_counts
        try:
            if "per-row" not in methods:
                raise _Skipped
            column = row_udf(flt, slice_df)
            slice_df.where(column).limit(100).collect()   # warm-up: workers, unpickling
            seconds, n = _timed(lambda: slice_df.where(column).count())
            res["runs"]["per-row"] = [round(seconds * 1000, 1)]
            res["ms"]["per-row"] = seconds * 1000 * facts.rows / slice_rows
            slice_counts["per-row"] = n
            slice_jobs = {"native": lambda: native_where(slice_df, flt).count(),
                          "udf": lambda: udf_where(slice_df, flt).count()}
            if sql is not None:
                slice_jobs["hand-written"] = lambda: spark.sql(
                    count_sql(name, facts, slice_view)).collect()[0][0]
            for method, job in slice_jobs.items():
                if method in jobs and slice_df is not df:
                    slice_counts[method] = job()
                elif method in jobs:
                    slice_counts[method] = next(iter(res["counts"][method]))
        except _Skipped:
            pass
        except Exception as exc:
            ok = False
            say(f"**FAILED: {name} per-row UDF or its slice counts: {type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:300]}**")
            res["notes"].append(f"per-row/slice: raised {type(exc).__name__}")
        for method, runs in res["runs"].items():
            if method != "per-row":
                res["ms"][method] = min(runs)
        res["counts"] = {m: sorted(c) for m, c in res["counts"].items()}
        every = {c for cs in res["counts"].values() for c in cs}
        if len(every) > 1 or any(len(c) > 1 for c in res["counts"].values()):
            ok = False
            say(f"**MISMATCH in {name}: counts differ: {res['counts']}**")
        if len(set(slice_counts.values())) > 1:
            ok = False
            say(f"**MISMATCH in {name}: counts over the first {slice_rows:,} rows differ: "
                f"{slice_counts}**")
        res["true"] = next(iter(every)) if len(every) == 1 else None
        say(f"{name}: " + ", ".join(f"{m} {r}" for m, r in res["runs"].items())
            + f" ms; TRUE {res['counts']}", )
        if progress is not None:
            progress(results)
    return results, ok


def report(results: dict[str, Any], rows: int, native_is: str, say: Callable = print) -> None:
    def ms(res, m):
        v = res["ms"].get(m)
        return "n/a" if v is None else f"{v:,.0f}"

    def ratio(res, a, b):
        x, y = res["ms"].get(a), res["ms"].get(b)
        return "n/a" if x is None or y is None else f"{x / y:,.2f}x"

    per_row = {res.get("per-row rows") for res in results.values()}
    say(f"\n## Milliseconds for count() over {rows:,} rows, Spark local[2] "
        f"(best of the runs; per-row: "
        + ("the whole table" if per_row == {rows} else
           f"extrapolated from the first {', '.join(f'{r:,}' for r in sorted(per_row))} rows")
        + ")\n")
    say(f"native = {native_is}\n")
    print_header("| filter             |     native | hand-written |        udf |     per-row "
                 "| native/hand-written | udf/native | per-row/native |       TRUE |")
    for name, res in results.items():
        true = "n/a" if res["true"] is None else f"{res['true']:,}"
        say(f"| {name:<18} | {ms(res, 'native'):>10} | {ms(res, 'hand-written'):>12} "
            f"| {ms(res, 'udf'):>10} | {ms(res, 'per-row'):>11} "
            f"| {ratio(res, 'native', 'hand-written'):>19} | {ratio(res, 'udf', 'native'):>10} "
            f"| {ratio(res, 'per-row', 'native'):>14} | {true:>10} |")
    say("\n## The issue's targets (native/hand-written <= 1.1, udf/native <= 5, "
        "per-row/native >= 50)\n")
    print_header("| filter             | native vs hand-written | udf vs native | "
                 "per-row vs native |")
    for name, res in results.items():
        cells = []
        for a, b, ok, bound in (("native", "hand-written", lambda r: r <= 1.1, "<= 1.1"),
                                ("udf", "native", lambda r: r <= 5, "<= 5"),
                                ("per-row", "native", lambda r: r >= 50, ">= 50")):
            x, y = res["ms"].get(a), res["ms"].get(b)
            cells.append("n/a" if x is None or y is None else
                         f"{x / y:,.2f} {'met' if ok(x / y) else 'MISSED'}")
        say(f"| {name:<18} | {cells[0]:>22} | {cells[1]:>13} | {cells[2]:>17} |")
    say("\n## Every run (ms)\n")
    print_header("| filter             | method       | runs |")
    for name, res in results.items():
        for method in METHODS:
            if method in res["runs"]:
                extra = (f" on the first {res['per-row rows']:,} rows"
                         if method == "per-row" and res["per-row rows"] != rows else "")
                runs = ", ".join(f"{r:,.1f}" for r in res["runs"][method])
                say(f"| {name:<18} | {method:<12} | {runs}{extra} |")
    say("\n## Plan pushdown (PushedFilters of the Parquet scan)\n")
    for name, res in results.items():
        say(f"- **{name}**: filtex.spark.explain: {explain_summary(res['explain'])}")
        for method, pushed in res["pushed"].items():
            text = "; ".join(f"[{p}]" for p in pushed) if pushed else "(no scan found)"
            say(f"  - {method}: {text}")
    say("\n## Counts over the per-row UDF's rows\n")
    for name, res in results.items():
        say(f"- {name}: " + ", ".join(f"{m} {n:,}" for m, n in res["slice counts"].items()))
    notes = [f"- {name}: {note}" for name, res in results.items() for note in res["notes"]]
    notes += [f"- {engine} (hand-written): {text}" for engine, text in SPARK_NOTES.items()]
    notes += [f"- {name} (not benchmarked): {why}" for name, why in EXCLUDED.items()]
    say("\nNotes:\n" + "\n".join(notes))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DATA,
                        help="the message table in Spark's types (default: %(default)s)")
    parser.add_argument("--prepare", action="store_true",
                        help="first write --data from --source (filtex.spark.to_spark)")
    parser.add_argument("--source", type=Path, default=SOURCE,
                        help="the message table --prepare converts (default: %(default)s)")
    parser.add_argument("--filters", help="comma-separated subset of: " + ", ".join(ORDER))
    parser.add_argument("--repeat", type=int, default=3, help="timed rounds (best kept)")
    parser.add_argument("--methods", default=",".join(METHODS),
                        help="comma-separated subset of: %(default)s")
    parser.add_argument("--udf-rows", type=int, default=1_000_000,
                        help="rows the per-row UDF runs on, extrapolated (default %(default)s)")
    parser.add_argument("--full", action="store_true",
                        help="run the per-row UDF over the whole table")
    parser.add_argument("--check", action="store_true",
                        help="first check the hand-written SQL against filtex, row by row")
    parser.add_argument("--check-only", action="store_true", help="only that check")
    parser.add_argument("--check-rows", type=int, default=200_000,
                        help="sample rows for the check (default %(default)s)")
    parser.add_argument("--show-sql", metavar="FILTER", help="print a filter's Spark SQL")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "bench-spark",
                        help="scratch files (the per-row UDF's slice; default: %(default)s)")
    parser.add_argument("--memory", default="6g", help="spark.driver.memory")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    names = ORDER if not args.filters else tuple(args.filters.split(","))
    unknown = [n for n in names if n not in FILTERS]
    if unknown:
        parser.error(f"unknown filters {unknown}")
    if args.show_sql:
        from benchmarks.columnar_data import build_orders
        import filtex.spark as fs
        schema = fs.to_spark(build_orders(10, np.random.default_rng(0))).schema
        facts = Facts(args.data) if args.data.exists() else None
        tags = facts.tags if facts else tags_present(build_orders(10_000,
                                                                  np.random.default_rng(0)))
        source, verdict = spark_sql(args.show_sql, facts.schema if facts else schema, tags)
        print(f"SELECT count(*) FROM {source}\nWHERE {verdict}")
        return 0
    if args.prepare:
        start = time.perf_counter()
        prepare(args.source, args.data)
        print(f"wrote {args.data} ({args.data.stat().st_size / 1e6:,.0f} MB) from {args.source} "
              f"in {time.perf_counter() - start:.1f} s")
    spark = session(args.memory)
    print(versions(spark))
    try:
        if args.check or args.check_only:
            print("\n## The hand-written Spark SQL against filtex, row by row")
            args.work.mkdir(parents=True, exist_ok=True)
            bad = check(spark, args.check_rows, names=names, work=args.work)
            if bad:
                print("\n**MISMATCH: the Spark SQL disagrees with filtex; not benchmarking.**")
                return 1
            if args.check_only:
                return 0
        print()
        rows = pq.ParquetFile(args.data).metadata.num_rows
        native_is = filtex_paths()[2]

        def write_json(results: dict[str, Any]) -> None:
            if args.json:
                args.json.write_text(json.dumps(
                    {"rows": rows, "data": str(args.data), "native": native_is,
                     "versions": versions(spark), "results": results}, indent=2, default=list))

        results, ok = run(spark, args.data, names, args.repeat, args.udf_rows, args.full,
                          args.work, progress=write_json,
                          methods=tuple(args.methods.split(",")))
        report(results, rows, native_is)
        if not ok:
            print("\n**MISMATCH or FAILURE (see above): the methods do not agree.**")
            return 1
        return 0
    finally:
        spark.stop()


if __name__ == "__main__":
    raise SystemExit(main())
