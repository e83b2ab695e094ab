"""The fallback: filtex's columnar engine inside a Spark Arrow UDF.

Spark hands a scalar Arrow UDF its argument columns a batch at a time; the UDF
rebuilds the message table layout (``layout.from_spark``, or ``flat.py`` for a
flat DataFrame) and runs ``filtex.arrow.evaluate``: the numba kernels, and the
per-message engine for the rows they hand back. Exact by construction. The
driver's compiled kernels go with the UDF to executors whose kernel cache is
elsewhere (``kernels.py``): a fresh executor's first batch loads them.

Spark evaluates a Python UDF on every row that reaches it, even under a CASE
that does not need it, so a UDF beside native expressions takes a ``flag``
column: its inputs are nulled where the flag is false (less to transfer) and
only flagged rows are evaluated. ``where`` avoids even that by sending only
the flagged rows to the UDF (``__init__.py``).
"""
from __future__ import annotations

from typing import Any, Mapping

from ..spark_io import kernels

_ROWS = "\x00filtex-rows"
"""The one null column a flat filter that reads no column gets (an absent key)."""


def inputs(flt: Any, names: list[str], message_table: bool,
           mapping: Mapping | None) -> list[str]:
    """The DataFrame columns the filter reads (at least one: the row count)."""
    from ..plan.prepared import prepared
    read = prepared(flt).columns
    if message_table:
        if read is None:
            return list(names)
        return [n for n in names if n in read] or ["header"]
    if read is None:
        return [n for n in names if mapping is None or n in mapping]

    def is_read(target: Any) -> bool:
        section, key = ("application_properties", target) if isinstance(target, str) \
            else tuple(target)
        keys = read.get(section, set())
        return keys is None or key in keys

    targets = mapping if mapping is not None else {n: n for n in names}
    return [n for n in names if n in targets and is_read(targets[n])]


def _pruned(flt: Any, columns: list[str], schema: Any) -> tuple[list[str], list[Any]]:
    """The UDF's inputs with each keyed section narrowed to the keys the filter
    reads: Spark then reads (and hands over in Arrow) only those struct members.
    A section holding none of them is left out (a missing column has no keys)."""
    from pyspark.sql import functions as F
    from ..plan.prepared import prepared
    from ..table.schema import KEYED
    read = prepared(flt).columns or {}
    kept, args = [], []
    for name in columns:
        keys = read.get(name)
        if name in KEYED and keys is not None:
            for member in schema[name].dataType.fields:
                if member.name not in keys:
                    continue
                value = F.col(f"`{name}`").getField(member.name)
                leaves = member.dataType.fieldNames() \
                    if type(member.dataType).__name__ == "StructType" else []
                if "t" in leaves:   # a VALUE struct: its children, flat
                    kept.extend(_SEP.join((name, member.name, c)) for c in leaves)
                    args.extend(value.getField(c) for c in leaves)
                else:
                    kept.append(_SEP.join((name, member.name)))
                    args.append(value)
        else:
            kept.append(name)
            args.append(F.col(f"`{name}`"))
    if not kept:   # the row count: the header, a small struct every message table has
        kept, args = ["header"], [F.col("header")]
    return kept, args


_SEP = "\x00"
"""Joins section, key and child in the name of a flattened input."""


def _nested(arrays: tuple, columns: list[str]) -> tuple[tuple, list[str]]:
    """The flattened inputs (``_pruned``) as the sections' structs again: Spark
    hands over flat leaves far faster than nested structs. A null tag reads as
    absent, as a null VALUE struct does."""
    if not any(_SEP in c for c in columns):
        return arrays, columns
    out: dict[str, Any] = {}
    for array, column in zip(arrays, columns):
        if _SEP not in column:
            out[column] = array
            continue
        section, key, *child = column.split(_SEP)
        members = out.setdefault(section, {})
        if child:
            members.setdefault(key, {})[child[0]] = array
        else:
            members[key] = array
    arrays, names = [], []
    for section, value in out.items():
        if isinstance(value, dict):
            value = _struct({k: _struct(v) if isinstance(v, dict) else v
                             for k, v in value.items()})
        arrays.append(value)
        names.append(section)
    return tuple(arrays), names


def _struct(members: dict) -> Any:
    import pyarrow as pa
    return pa.StructArray.from_arrays(list(members.values()), names=list(members))


def udf_column(flt: Any, names: list[str], *, message_table: bool, mapping: Mapping | None,
               nulls: str, rc: Any, flag: Any = None, schema: Any = None) -> Any:
    """The filter's verdict per row as a Column computed by the Arrow UDF (only
    where ``flag`` is true, when given; null elsewhere)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType

    columns = inputs(flt, names, message_table, mapping)
    args = [F.col(f"`{name}`") for name in columns]
    if message_table and schema is not None:
        columns, args = _pruned(flt, columns, schema)
    if not columns:   # a filter that reads no column still needs the row count
        columns, args = [_ROWS], [F.lit(None).cast(BooleanType())]
    options = {} if message_table else {
        "mapping": {n: mapping.get(n, n) for n in columns} if mapping else
        {n: n for n in columns}, "nulls": nulls}
    flagged = flag is not None
    carried = kernels.shipped()   # the driver's compiled kernels, for a fresh executor

    def verdicts(*arrays):   # no annotations: the eval type is given below
        kernels.install(carried)
        return _verdicts(flt, arrays, columns, message_table, options, rc, flagged)

    import warnings
    with warnings.catch_warnings():   # "type hints preferred": none can describe *arrays
        warnings.simplefilter("ignore", UserWarning)
        udf = F.arrow_udf(verdicts, BooleanType(), F.ArrowUDFType.SCALAR)
    if flagged:
        args = [flag] + [F.when(flag, a) for a in args]
    return udf(*args)


def _verdicts(flt: Any, arrays: tuple, columns: list[str], message_table: bool,
              options: dict, rc: Any, flagged: bool) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc
    from filtex.arrow import evaluate

    from ..spark_io.layout import from_spark
    n = len(arrays[0])
    rows = None
    if flagged:
        flag, arrays = arrays[0], arrays[1:]
        rows = pc.indices_nonzero(flag.fill_null(False))
        if len(rows) == 0:
            return pa.nulls(n, pa.bool_())
        arrays = tuple(a.take(rows) for a in arrays)
    if message_table:
        batch = from_spark(*_nested(arrays, columns))
    else:
        batch = pa.RecordBatch.from_arrays(list(arrays), names=columns)
    try:
        out = evaluate(flt, batch, rc, **options).verdicts
    except ValueError:   # a flat value no AMQP type can hold: that row is unknown
        out = pa.array([_one(flt, batch.slice(i, 1), rc, options) for i in range(len(batch))],
                       pa.bool_())
    if rows is None:
        return out
    return pa.array(_scatter(out.to_pylist(), rows.to_pylist(), n), pa.bool_())


def _one(flt: Any, batch: Any, rc: Any, options: dict) -> Any:
    from filtex.arrow import evaluate
    try:
        return evaluate(flt, batch, rc, **options).verdicts[0].as_py()
    except ValueError:
        return None


def _scatter(values: list, rows: list, n: int) -> list:
    out: list = [None] * n
    for value, row in zip(values, rows):
        out[row] = value
    return out
