"""Building the inputs, running every engine, and ``--check`` against filtex."""
from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from filtex.table.schema import rest_column  # noqa: E402
from .engines import (arrow_columns, ArrowEngine, DuckDBEngine, PolarsEngine)
from .semantics import (ENGINES, FILTERS, NotExact, ORDER, RECIPES, ROW, SECTIONS, Semantics)


# --- building and running --------------------------------------------------------------



def per_message(flt: Any, data: pa.Table) -> pa.BooleanArray:
    """The ground truth: filtex's per-message engine over the row views
    (``filtex.table.rows.evaluate_rows``; ``evaluate_batch`` before the
    columnar engine took that name)."""
    from filtex.table import rows
    evaluate = getattr(rows, "evaluate_rows", None) or rows.evaluate_batch
    return evaluate(flt, data)


def tags_present(table: pa.Table) -> dict[str, set[int]]:
    """The type tags each application property holds in this table."""
    if "application_properties" not in table.schema.names:
        return {}
    column = table.column("application_properties")
    out = {}
    for i, field in enumerate(column.type):
        tags = pc.unique(pc.struct_field(column, [i, 0]))
        out[field.name] = set(tags.to_pylist())
    return out


def check_table(table: pa.Table, name: str) -> None:
    """The engines read typed places only: refuse rows with residual entries in
    a section the filter reads (the per-message engine would read them)."""
    for section in SECTIONS[name]:
        rest = rest_column(section)
        if rest in table.schema.names and table.column(rest).null_count != table.num_rows:
            raise NotExact(f"{table.num_rows - table.column(rest).null_count} rows have "
                           f"{rest} entries (values with no typed place)")


class Runner:
    """One engine over one table: ``compile(name)`` (may raise NotExact), then
    ``run(compiled)`` -> a pyarrow boolean array (null = unknown)."""

    def __init__(self, engine: str, table: pa.Table, duckdb_threads: int | None = None) -> None:
        self.engine, self.table = engine, table
        self.tags = tags_present(table)
        needed = [c for c in ("header", "properties", "application_properties")
                  if c in table.schema.names]
        if engine == "polars":
            import polars as pl
            self.pl = pl
            self.df = pl.from_arrow(table.select(needed))
        elif engine == "duckdb":
            import duckdb
            self.con = duckdb.connect()
            if duckdb_threads:
                self.con.execute(f"SET threads = {int(duckdb_threads)}")
            # DuckDB 2.0 returned the rows of a projection over a registered Arrow table
            # out of order with 2 threads (a permutation of 122,880-row morsels, although
            # preserve_insertion_order is true): the SQL orders by this row number
            rows = pa.array(np.arange(table.num_rows, dtype=np.int64))
            self.con.register("messages", table.select(needed).append_column(ROW, rows))
        elif engine == "pyarrow":
            self.columns = arrow_columns(table)
        else:
            raise ValueError(engine)

    def expression(self, name: str) -> Any:
        """The Polars expression or the DuckDB SQL (pyarrow: None, it is eager)."""
        check_table(self.table, name)
        if self.engine == "polars":
            S = Semantics(PolarsEngine(), self.table.schema, self.tags)
            return S.result(RECIPES[name](S))
        if self.engine == "duckdb":
            E = DuckDBEngine()
            S = Semantics(E, self.table.schema, self.tags)
            verdict = S.result(RECIPES[name](S))
            return f"SELECT {verdict} AS verdict FROM {E.source('messages')} ORDER BY {ROW}"
        S = Semantics(ArrowEngine(self.table.slice(0, 0)), self.table.schema, self.tags)
        RECIPES[name](S)   # raises NotExact where it would
        return None

    def compile(self, name: str) -> Any:
        return (name, self.expression(name))

    def run(self, compiled: Any) -> pa.Array:
        name, expr = compiled
        if self.engine == "polars":
            out = self.df.lazy().select(expr.alias("verdict")).collect()
            return out.to_series().to_arrow()
        if self.engine == "duckdb":
            return self.con.sql(expr).to_arrow_table().column(0).combine_chunks()
        S = Semantics(ArrowEngine(self.table, self.columns), self.table.schema, self.tags)
        return S.result(RECIPES[name](S))


def counts(verdicts) -> tuple[int, int, int]:
    """(true, false, unknown)."""
    n = len(verdicts)
    true = pc.sum(pc.fill_null(verdicts, False)).as_py() or 0
    unknown = verdicts.null_count
    return true, n - true - unknown, unknown


def codes(verdicts) -> np.ndarray:
    """0 false, 1 true, 2 unknown, per row."""
    if isinstance(verdicts, pa.ChunkedArray):
        verdicts = verdicts.combine_chunks()
    values = pc.fill_null(verdicts, False).to_numpy(zero_copy_only=False).astype(np.int8)
    values[verdicts.is_null().to_numpy(zero_copy_only=False)] = 2
    return values


def disagreements(a, b) -> np.ndarray:
    return np.nonzero(codes(a) != codes(b))[0]


# --- --check -----------------------------------------------------------------------------

def edge_messages() -> list:
    """Messages with the values that trip engines: NaN, infinities, -0.0, integer
    overflow into and past ulong, timestamps and ulongs as numbers, chars and
    symbols, newlines and non-ASCII in strings, every wrong type per key."""
    import uuid
    from proton import char, float32, symbol, timestamp, ubyte, ulong
    from filtex import Message
    T0 = 1750772279000
    rows = [
        {"quantity": 2 ** 62, "price": 4, "discount": 0},                  # 2^64: NaN
        {"quantity": 2 ** 62, "price": 3, "discount": 0},                  # ulong range
        {"quantity": 2 ** 62, "price": 3, "discount": -(2 ** 62)},         # past 2^64-1
        {"quantity": -(2 ** 62), "price": 2, "discount": 1},               # below -2^63
        {"quantity": -(2 ** 62), "price": 2, "discount": 0},               # = -2^63
        {"quantity": 2, "price": 1e308, "discount": 0},                    # inf from finite
        {"quantity": 2, "price": math.inf, "discount": 0},                 # inf operand
        {"quantity": 2, "price": math.nan, "discount": "x"},               # NaN - string
        {"quantity": None, "price": "x", "discount": 1},                   # NULL first
        {"quantity": "x", "price": None, "discount": 1},
        {"quantity": 4, "price": 300, "discount": None},
        {"quantity": 4, "price": 300, "discount": True},                   # boolean: fails
        {"quantity": timestamp(1002), "price": 1, "discount": 0},          # timestamp = int
        {"quantity": ulong(2 ** 64 - 1), "price": 1, "discount": 0},
        {"quantity": ulong(2 ** 64 - 2), "price": 1, "discount": -1},
        {"quantity": 6.0, "price": 300, "discount": 0},                    # % of a double
        {"quantity": float32(2.5), "price": 1000, "discount": 1},
        {"quantity": -7, "price": -300, "discount": 0.5},
        {"quantity": 2 ** 53 + 1, "price": 1.0, "discount": 0},
        {"total_amount": -0.0, "color": "blue", "order_type": "premium"},
        {"total_amount": math.nan, "color": math.nan, "order_type": math.nan},
        {"total_amount": math.inf, "color": symbol("blue"), "order_type": symbol("express")},
        {"total_amount": ulong(4000), "color": char("b"), "order_type": char("p")},
        {"total_amount": timestamp(150), "color": timestamp(T0), "order_type": 5},
        {"total_amount": ubyte(200), "color": True, "order_type": b"premium"},
        {"total_amount": "150", "color": None, "order_type": None},
        {"total_amount": [150], "color": uuid.UUID(int=5), "order_type": {"a": 1}},
        {"customer_region": "EU-\n", "sku": "ABC-\nX\n", "customer": "ACME"},
        {"customer_region": "EU-", "sku": "ABC-X", "customer": "İacme"},
        {"customer_region": "eu-de", "sku": "ABC-éXé", "customer": "tEsT"},
        {"customer_region": "US-CA", "sku": "ABC-XX", "customer": "a\ntest"},
        {"customer_region": math.nan, "sku": math.nan, "customer": math.nan},
        {"customer_region": 7, "sku": 7, "customer": 7},
        {"customer_region": symbol("EU-DE"), "sku": symbol("ABC-1X2"), "customer": "ΑCME"},
        {"customer_region": "US-CA", "cancelled": "false", "order_type": "premium",
         "total_amount": 200},
        {"customer_region": "US-CA", "cancelled": False, "order_type": "premium",
         "total_amount": 200},
        {"customer_region": "US-CA", "cancelled": 0, "order_type": "premium",
         "total_amount": 200},
        {"cancelled": math.nan, "tags": None, "coupon": math.nan},
        {"tags": [], "coupon": None, "region": "EU", "total": math.nan},
        {"tags": "x", "region": symbol("EU"), "total": ulong(101)},
        {"region": char("E"), "total": timestamp(101)},
        {"region": "EU", "total": "101"},
        {"region": "EU", "total": float32(100.5)},
    ]
    out = []
    for i, ap in enumerate(rows):
        header = {"priority": ubyte(i % 10)} if i % 3 else {"durable": bool(i % 2)}
        props = {"subject": "order.created" if i % 2 else "order.paid",
                 "content-type": symbol("application/json"),
                 "creation-time": timestamp(T0 + (i - 20) * 86_400_000 * 30)}
        if i % 7 == 0:
            del props["creation-time"]
        out.append(Message(header=header, properties=props, application_properties=ap))
    return out


def decimal_messages() -> list:
    """A few decimals in total_amount and color: the engines must say they
    cannot be exact for the filters comparing them."""
    from filtex import Message
    from filtex.runtime.values import encode_decimal
    return [Message(application_properties={"total_amount": encode_decimal("150.5", 128),
                                            "color": encode_decimal("NaN", 64)}),
            Message(application_properties={"total_amount": 7, "color": "blue"})]


def lower_audit(constant: str) -> dict[str, str]:
    """Per engine: how many code points its LOWER maps differently from
    Python's, and whether any of those could make ``LOWER(x) = constant``
    differ (a differing code point whose lower-casing in either mapping
    consists only of characters of the constant)."""
    import duckdb
    import polars as pl
    points = [chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000]
    python = [p.lower() for p in points]
    array = pa.array(points)
    mapped = {"polars": pl.Series(points).str.to_lowercase().to_list(),
              "pyarrow": pc.utf8_lower(array).to_pylist()}
    con = duckdb.connect()
    con.register("cps", pa.table({"s": array}))
    mapped["duckdb"] = [r[0] for r in con.execute("SELECT lower(s) FROM cps").fetchall()]
    contexts = ["ΑΣ", "ΟΔΟΣ ΑΣ", "İ"]   # final sigma; a one-to-two mapping
    con.register("ctx", pa.table({"s": contexts}))
    in_context = {"polars": pl.Series(contexts).str.to_lowercase().to_list(),
                  "pyarrow": pc.utf8_lower(pa.array(contexts)).to_pylist(),
                  "duckdb": [r[0] for r in con.execute("SELECT lower(s) FROM ctx").fetchall()]}
    letters = set(constant)
    out = {}
    for engine, lows in mapped.items():
        differ = [(p, py, lo) for p, py, lo in zip(points, python, lows) if py != lo]
        risky = [p for p, py, lo in differ if (py and set(py) <= letters) or
                 (lo and set(lo) <= letters)]
        sample = ", ".join(f"U+{ord(p):04X} {py!r}/{lo!r}" for p, py, lo in differ[:3])
        verdict = ("exact for this constant" if not risky else
                   f"NOT exact: {len(risky)} code points could match {constant!r}")
        wrong = [f"{c!r} -> {lo!r} (Python {c.lower()!r})"
                 for c, lo in zip(contexts, in_context[engine]) if lo != c.lower()]
        out[engine] = (f"{len(differ)} code points lower-case differently from Python "
                       f"({sample}{', ...' if len(differ) > 3 else ''}); in context: "
                       f"{'; '.join(wrong) if wrong else 'same as Python'}; {verdict}")
    return out


def check(sample_rows: int = 200_000, seed: int = 11, verbose: bool = True) -> int:
    """Every engine against filtex's per-message engine, row by row, on a
    generated sample and on the edge-case table; returns the number of
    disagreeing (engine, filter, table) combinations."""
    import filtex
    import filtex.arrow
    from benchmarks.columnar_data import build_orders
    tables = {
        f"sample ({sample_rows:,} rows)": build_orders(sample_rows, np.random.default_rng(seed)),
        "edge cases": filtex.arrow.message_table(edge_messages()),
        "decimals": filtex.arrow.message_table(decimal_messages()),
    }
    say = print if verbose else (lambda *a, **k: None)
    bad = 0
    for label, table in tables.items():
        say(f"\n{label}:")
        runners = {engine: Runner(engine, table) for engine in ENGINES}
        for name in ORDER:
            flt = filtex.compile_sql(FILTERS[name])
            start = time.perf_counter()
            truth = per_message(flt, table)
            seconds = time.perf_counter() - start
            t, f, u = counts(truth)
            parts, reasons = [], {}
            for engine, runner in runners.items():
                try:
                    got = runner.run(runner.compile(name))
                except NotExact as exc:
                    reasons[engine] = str(exc)
                    parts.append(f"{engine}: not exact ({exc})")
                    continue
                rows = disagreements(truth, got)
                if len(rows):
                    bad += 1
                    first = int(rows[0])
                    parts.append(f"{engine}: **{len(rows)} DISAGREE** (first row {first}: "
                                 f"filtex {truth[first].as_py()}, {engine} {got[first].as_py()})")
                else:
                    parts.append(f"{engine}: agrees")
            if len(reasons) == len(runners) and len(set(reasons.values())) == 1:
                parts = [f"all engines: not exact ({reasons[ENGINES[0]]})"]
            say(f"  {name:<18} filtex T/F/U {t}/{f}/{u} ({seconds:.1f} s): " + "; ".join(parts))
    say("\nLOWER(customer) = 'acme', per engine, against Python's str.lower on every code point:")
    for engine, line in lower_audit("acme").items():
        say(f"  {engine}: {line}")
    say("\n" + ("all engines agree row by row" if not bad else
                f"{bad} disagreeing engine/filter/table combinations"))
    return bad


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="compare every engine with filtex, row by row")
    parser.add_argument("--rows", type=int, default=200_000, help="sample rows for --check")
    parser.add_argument("--show-sql", metavar="FILTER",
                        help="print the DuckDB SQL and the Polars expression of a filter")
    args = parser.parse_args(argv)
    if args.show_sql:
        from benchmarks.columnar_data import build_orders
        table = build_orders(10, np.random.default_rng(0))
        for engine in ("duckdb", "polars"):
            print(f"-- {engine}:\n{Runner(engine, table).expression(args.show_sql)}\n")
        return 0
    if args.check:
        return 1 if check(args.rows) else 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

