"""AMQP-encoded messages in a binary column as a message table on Spark.

``from_amqp(df, column)`` lays the messages of a binary column (one encoded
message a cell: a broker's store, a RabbitMQ stream, an archive) out as a
message table in Spark's types by one ``mapInArrow``, so ``filtex.spark``'s
``column``, ``where`` and ``explain`` run on it unchanged and give the
per-message engine's verdicts on the original bytes (docs/spark-connectors.md).

Each Arrow batch is decoded by filtex's numba decoder (``filtex.table.decode``),
every key of every map section; the rows it leaves to Python are built by the
message table builder. The schema is fixed before any data is read: by
``keys``, or, for a batch DataFrame, by one Spark job that finds the keys,
the VALUE children their values need and the residuals some message fills
(only those are columns: filters then run natively where no residual can
hold anything). A key the schema does not list, or a value of a type its
VALUE struct has no child for, goes to the section's residual, AMQP-encoded,
as the layout prescribes for a given schema.

Nothing fails the job and nothing is dropped. What cannot be read is unknown
to the filters that read it, as on the bytes:

- A cell whose sections cannot be located (garbage, a truncated message,
  bytes after the last section), and a null cell: every residual holds the
  entry ``UNREADABLE_SECTION`` (an empty key and an empty value, no AMQP
  value), and ``amqp_value`` and ``amqp_sequence`` are empty bytes, so every
  filter reading any field or the body is unknown. Filters that read none
  (``TRUE``) keep their constant verdict, as on such bytes.
- A message whose sections are found but some reads fail (invalid UTF-8 in a
  value, a malformed map or list, an undecodable body): each read is tried
  alone, as the per-message engine reads it. A failed read of a key the
  schema lists, or of the message-id or correlation-id, is tagged
  ``UNREADABLE`` (-1); a failed read of an unlisted key is a residual entry
  of that key with an empty value; a failed typed header or properties
  field, or a map whose walk fails (which fails reads of absent keys), puts
  ``UNREADABLE_SECTION`` in the section's residual; a failed body is empty
  bytes. A key whose bytes are not UTF-8 is left out: no filter can name it.
  A filter reading what failed is unknown; the per-message engine may still
  answer where it stops before that read (a described filter's first
  unmatched entry decides) or reads a key placed before a map's fault.
  Wherever the table gives true or false, the per-message engine gives the same.
"""
from __future__ import annotations

from typing import Any, Iterator, Mapping, NamedTuple, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from proton import timestamp as _timestamp

from ..amqp.encoded import EncodedMessage
from ..table.build import Cell, Record, _table, cell, encode_exact, record
from ..table.rows import _values
from ..table.schema import (CHILD_OF_TAG, CHILD_ORDER, KEY_CLASS, KEYED, REST_TYPE,
                            SECTION_COLUMNS, VALUE_FIELDS, children_of,
                            message_schema, plan_of, rest_column, value_type)
from ..message import HEADER_FIELDS, PROPERTIES_FIELDS
from . import kernels
from .layout import (NOT_A_VALUE, SPARK_MAX_MS, UNREADABLE, arrow_for_spark, empty_column,
                     kept_columns, map_in_arrow)
from .workers import use_this_python

UNREADABLE_SECTION = (b"", b"")
"""The residual entry of a section that could not be read: every read of it fails."""


class Plan(NamedTuple):
    """A layout: the keys stored per keyed section with their VALUE children, the
    children of message-id and correlation-id, and the residual columns kept."""
    keys: dict[str, dict[str, frozenset]]
    ids: dict[str, frozenset]
    rests: frozenset | None = None
    """Sections whose residual column is kept (None: all of them)."""

    def building(self) -> pa.Schema:
        """The schema rows are built in: every residual column."""
        return message_schema({s: m for s, m in self.keys.items() if m}, self.ids, False)

    def schema(self) -> pa.Schema:
        """The output schema (the layout's types)."""
        full = self.building()
        if self.rests is None:
            return full
        return pa.schema([f for f in full if not f.name.endswith("_rest")
                          or f.name[:-len("_rest")] in self.rests], metadata=full.metadata)


_UNREADABLE_CELL = Cell(None, UNREADABLE, None, None)
_FAILED = object()
_MISSING = object()
_FIELDS = {"header": HEADER_FIELDS, "properties": PROPERTIES_FIELDS}
_TYPED_TIMES = ("absolute-expiry-time", "creation-time")


# --- arguments -----------------------------------------------------------------------------

def _listed(keys: Any) -> dict[str, list[str]]:
    """``keys`` checked: keyed section -> its keys, each once."""
    if not isinstance(keys, Mapping):
        raise TypeError("keys maps keyed section names to lists of keys, not "
                        f"{type(keys).__name__}")
    out: dict[str, list[str]] = {}
    for section, names in keys.items():
        if section not in KEYED:
            raise ValueError(f"keys: {section!r} is not one of {', '.join(KEYED)}")
        if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
            raise TypeError(f"keys[{section!r}] is a list of keys, not {names!r}")
        for name in names:
            if type(name) is not str:
                raise TypeError(f"keys[{section!r}]: keys are strings, not {name!r}")
            try:
                name.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError(f"keys[{section!r}]: {name!r} is not valid Unicode") from None
        if len(set(names)) != len(names):
            raise ValueError(f"keys[{section!r}]: a key is given twice")
        out[section] = list(names)
    return out


# --- reading one message that the builder refuses --------------------------------------------

def _attempt(read: Any) -> Any:
    try:
        return read()
    except Exception:   # noqa: BLE001 (a read the per-message engine fails: unknown)
        return _FAILED


def _fresh(raw: bytes, section: str) -> Any:
    """A section of a new view: each read is tried as if it were the only one."""
    return getattr(EncodedMessage(raw), f"_filtex_{section}")


def _stored(value: Any) -> Cell:
    cells = _attempt(lambda: cell(value))
    return _UNREADABLE_CELL if cells is _FAILED else cells


def _fields_read(raw: bytes, section: str) -> list[tuple[Any, Cell]]:
    """Header or properties fields, each read alone; a failed read is UNREADABLE."""
    out = []
    for name in _FIELDS[section]:
        value = _attempt(lambda: _fresh(raw, section).get(name))
        if value is not None:
            out.append((name, _UNREADABLE_CELL if value is _FAILED else _stored(value)))
    return out


def _map_read(raw: bytes, section: str) -> list[tuple[Any, Cell]] | None:
    """A map section's keys, each read alone; None when walking the map fails
    (then reading any absent key fails too)."""
    found = _attempt(lambda: list(dict.fromkeys(_fresh(raw, section))))
    if found is _FAILED:
        return None
    out = []
    for key in found:
        value = _attempt(lambda: _fresh(raw, section).get(key, _MISSING))
        if value is not _MISSING:   # missing: a key whose bytes are not UTF-8
            out.append((key, _UNREADABLE_CELL if value is _FAILED else _stored(value)))
    return out


def _body(raw: bytes, name: str) -> bytes | None:
    value = _attempt(lambda: _fresh(raw, name))
    if value is None:
        return None
    encoded = _FAILED if value is _FAILED else _attempt(
        lambda: encode_exact(list(value) if name == "amqp_sequence" else value))
    return NOT_A_VALUE if encoded is _FAILED else encoded


def _unreadable() -> tuple[Record, dict[str, list]]:
    return (Record({s: [] for s in SECTION_COLUMNS}, NOT_A_VALUE, NOT_A_VALUE, None),
            {s: [UNREADABLE_SECTION] for s in SECTION_COLUMNS})


def _salvaged(raw: bytes) -> tuple[Record, dict[str, list]]:
    """What the per-message engine can read of a message the builder refuses."""
    if EncodedMessage(raw).problem is not None:
        return _unreadable()
    sections, broken = {}, {}
    for section in SECTION_COLUMNS:
        pairs = _fields_read(raw, section) if section in _FIELDS else _map_read(raw, section)
        if pairs is None:
            pairs, broken[section] = [], [UNREADABLE_SECTION]
        sections[section] = pairs
    return Record(sections, _body(raw, "amqp_value"), _body(raw, "amqp_sequence"), None), broken


def _read(raw: bytes | None) -> tuple[Record, dict[str, list]]:
    """One message for the builder, and the residual entries that mark what failed."""
    if raw is None:
        return _unreadable()
    try:
        return record(raw), {}
    except Exception:   # noqa: BLE001 (malformed, or a value with no exact place)
        return _salvaged(raw)


def _placed(rec: Record, broken: dict[str, list], keys: dict) -> tuple[Record, dict]:
    """UNREADABLE values where the schema has a tag for them (listed keys, the
    ids); the others become residual entries with no value."""
    sections, entries = {}, {s: list(e) for s, e in broken.items()}
    for section, pairs in rec.sections.items():
        kept = []
        for key, c in pairs:
            tagged = (key in VALUE_FIELDS if section == "properties" else
                      section in KEYED and type(key) is KEY_CLASS[section]
                      and str(key) in keys.get(section, {}))
            if c.tag != UNREADABLE or tagged:
                kept.append((key, c))
                continue
            raw_key = _attempt(lambda: encode_exact(key))
            entries.setdefault(section, []).append(
                UNREADABLE_SECTION if raw_key is _FAILED else (raw_key, NOT_A_VALUE))
        sections[section] = kept
    return rec._replace(sections=sections), entries


def _built(reads: list, schema: pa.Schema) -> pa.Table:
    """The rows the decoder leaves to Python (each ``_read``), by the builder."""
    keys = plan_of(schema)[0]
    read = [_placed(rec, broken, keys) for rec, broken in reads]
    records = [rec for rec, _ in read]
    try:
        table = _table(records, schema)
    except (TypeError, ValueError):   # a value with no exact encoding: that message only
        for row, rec in enumerate(records):
            if _attempt(lambda: _table([rec], schema)) is _FAILED:
                records[row] = _unreadable()[0]
                read[row] = (records[row], _unreadable()[1])
        table = _table(records, schema)
    additions = {s: {row: e[s] for row, (_, e) in enumerate(read) if e.get(s)}
                 for s in SECTION_COLUMNS}
    return _with_entries(table, additions)


# --- the rows the decoder decoded -------------------------------------------------------------

def _array(table: pa.Table, name: str) -> pa.Array:
    return table.column(name).combine_chunks()


def _with_entries(table: pa.Table, additions: dict[str, dict[int, list]]) -> pa.Table:
    """Residual entries added to rows: section -> row -> [(key, value)]."""
    for section, rows in additions.items():
        if not rows:
            continue
        name = rest_column(section)
        values = _array(table, name).to_pylist()
        for row, entries in rows.items():
            values[row] = (values[row] or []) + entries
        table = table.set_column(table.schema.get_field_index(name), name,
                                 pa.array(values, REST_TYPE))
    return table


def _fit(array: pa.StructArray, children: frozenset) -> tuple[pa.StructArray, np.ndarray]:
    """A decoded VALUE column with the schema's children, and the rows whose
    value needs a child the schema lacks (absent here: they go to the residual)."""
    typ = value_type(children)
    have = children_of(array.type)
    tags = array.field("t").to_numpy(zero_copy_only=False)
    lacks = np.array([CHILD_OF_TAG[t] is not None and CHILD_OF_TAG[t] not in children
                      for t in range(26)])
    misfit = np.flatnonzero(lacks[tags])
    if len(misfit):
        tags = tags.copy()
        tags[misfit] = 0
    arrays = [pa.array(tags, pa.int8())] + [
        array.field(f.name) if f.name in have else pa.nulls(len(array), f.type)
        for f in list(typ)[1:]]
    return pa.StructArray.from_arrays(arrays, fields=list(typ)), misfit


def _to_residual(into: dict[int, list], array: pa.StructArray, rows: np.ndarray,
                 key: Any) -> None:
    """The values of ``rows`` of a VALUE column as residual entries under ``key``."""
    if not len(rows):
        return
    raw_key = encode_exact(key)
    for row, value in zip(rows.tolist(), _values(array.take(pa.array(rows)))):
        encoded = _attempt(lambda: encode_exact(value))
        into.setdefault(row, []).append((raw_key, NOT_A_VALUE if encoded is _FAILED
                                         else encoded))


def _reshaped(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """The decoder's table (every key, the children its values need) in ``schema``:
    unlisted keys and values of children the schema lacks to the residuals."""
    keys, ids, _ = plan_of(schema)
    n, names = table.num_rows, table.schema.names
    out: dict[str, pa.Array] = {"header": _array(table, "header")}
    additions: dict[str, dict[int, list]] = {s: {} for s in SECTION_COLUMNS}
    for section in KEYED:
        listed, key_class = keys.get(section, {}), KEY_CLASS[section]
        found = _array(table, section) if section in names else None
        members = {} if found is None else {
            found.type.field(i).name: found.field(i) for i in range(found.type.num_fields)}
        arrays = []
        for key, children in listed.items():
            if key in members:
                fitted, misfit = _fit(members[key], children)
                _to_residual(additions[section], members[key], misfit, key_class(key))
            else:
                fitted = empty_column(value_type(children), n)
            arrays.append(fitted)
        for key, member in members.items():
            if key not in listed:
                tags = member.field("t").to_numpy(zero_copy_only=False)
                _to_residual(additions[section], member, np.flatnonzero(tags), key_class(key))
        if listed:
            out[section] = pa.StructArray.from_arrays(arrays,
                                                      fields=list(schema.field(section).type))
    props = _array(table, "properties")
    arrays = []
    for field in schema.field("properties").type:
        if field.name in VALUE_FIELDS:
            fitted, misfit = _fit(props.field(field.name), ids[field.name])
            _to_residual(additions["properties"], props.field(field.name), misfit, field.name)
            arrays.append(fitted)
        else:
            arrays.append(props.field(field.name))
    out["properties"] = pa.StructArray.from_arrays(arrays,
                                                   fields=list(schema.field("properties").type))
    for section in SECTION_COLUMNS:
        out[rest_column(section)] = pa.nulls(n, REST_TYPE)
    out["amqp_value"], out["amqp_sequence"] = (_array(table, "amqp_value"),
                                               _array(table, "amqp_sequence"))
    reshaped = pa.Table.from_arrays([out[name] for name in schema.names], schema=schema)
    return _with_entries(reshaped, additions)


# --- a batch of cells ---------------------------------------------------------------------------

def _in_spark_range(table: pa.Table) -> pa.Table:
    """Typed timestamps Spark cannot hold (past +-2^63 microseconds) moved to
    ``properties_rest``, exactly."""
    props = _array(table, "properties")
    additions: dict[int, list] = {}
    arrays = []
    for index, field in enumerate(props.type):
        array = props.field(index)
        if field.name in _TYPED_TIMES:
            millis = array.cast(pa.int64())
            far = pc.or_(pc.greater(millis, SPARK_MAX_MS),
                         pc.less(millis, -SPARK_MAX_MS)).fill_null(False)
            rows = np.flatnonzero(far.to_numpy(zero_copy_only=False))
            if len(rows):
                raw_key = encode_exact(field.name)
                for row in rows.tolist():
                    additions.setdefault(row, []).append(
                        (raw_key, encode_exact(_timestamp(millis[row].as_py()))))
                array = pc.if_else(far, pa.nulls(len(array), array.type), array)
        arrays.append(array)
    if not additions:
        return table
    props = pa.StructArray.from_arrays(arrays, fields=list(props.type))
    table = table.set_column(table.schema.get_field_index("properties"), "properties", props)
    return _with_entries(table, {"properties": additions})


class _Batch:
    """A batch of cells decoded once: the decoder's table, and each row it left
    to Python read for the builder (``_read``)."""

    def __init__(self, cells: pa.Array) -> None:
        from ..table.decode import decode_column
        self.decoded = decode_column(cells, None, body=True)
        self.slow = np.flatnonzero(self.decoded.undecoded)
        self.fast = np.flatnonzero(~self.decoded.undecoded)
        self.reads = [_read(cells[int(r)].as_py()) for r in self.slow]

    def table(self, schema: pa.Schema) -> pa.Table:
        """Every row in ``schema`` (all its residual columns), in order."""
        if not len(self.slow):
            return _in_spark_range(_reshaped(self.decoded.table, schema))
        built = _built(self.reads, schema)
        if not len(self.fast):
            return _in_spark_range(built)
        fast = _reshaped(self.decoded.table.take(pa.array(self.fast)), schema)
        order = np.argsort(np.concatenate([self.fast, self.slow]), kind="stable")
        return _in_spark_range(pa.concat_tables([fast, built]).take(pa.array(order)))

    def found(self) -> Plan:
        """The keys and children this batch needs, and the residuals it fills."""
        keys, ids, _ = plan_of(self.decoded.table.schema)
        keys = {s: dict(members) for s, members in keys.items()}
        for rec, _ in self.reads:
            for section, pairs in rec.sections.items():
                for key, c in pairs:
                    child = frozenset(c.child or "")
                    if section in KEYED and type(key) is KEY_CLASS[section]:
                        members = keys.setdefault(section, {})
                        members[str(key)] = members.get(str(key), frozenset()) | child
                    elif section == "properties" and key in VALUE_FIELDS:
                        ids[key] = ids[key] | child
        table = self.table(Plan(keys, ids).building())
        rests = frozenset(s for s in SECTION_COLUMNS if table.column(rest_column(s)).null_count
                          < table.num_rows)
        return Plan(keys, ids, rests)


def message_rows(cells: pa.Array, plan: Plan) -> pa.Table:
    """The message table (the layout's types, ``plan.schema()``) of a binary column
    of encoded messages, one row a cell, in order. What cannot be read is marked
    as the module docstring says, never an error; only a residual the plan
    leaves out and a row needs is (the data is not the data the plan was found in)."""
    table = _Batch(cells).table(plan.building())
    schema = plan.schema()
    for name in table.schema.names:
        if name not in schema.names and table.column(name).null_count < table.num_rows:
            raise ValueError(f"a message needs a {name} entry, and the keys found in this "
                             "DataFrame needed none: it changed after they were found (pass "
                             "keys= for data that is not the same when read twice)")
    return table.select(schema.names).replace_schema_metadata(schema.metadata)


def spark_schema(schema: pa.Schema) -> pa.Schema:
    """A layout schema in the types Spark's mapInArrow takes (``arrow_for_spark``)."""
    return pa.schema([f.with_type(arrow_for_spark(f.type)) for f in schema])


def spark_rows(cells: pa.Array, plan: Plan) -> dict[str, pa.Array]:
    """``message_rows`` in Spark's types, column by column."""
    table = message_rows(cells, plan).cast(spark_schema(plan.schema()))
    return {name: table.column(name).combine_chunks() for name in table.schema.names}


# --- finding the keys -------------------------------------------------------------------------

def keys_found(cells: pa.Array) -> set[tuple[str, str, str]]:
    """(section, key, children) of every key and id in one batch, and (``rest``,
    section, "") of every residual it fills: what a plan needs so that every value
    has a place."""
    plan = _Batch(cells).found()
    found = {(section, key, "".join(sorted(children)))
             for section, members in plan.keys.items() for key, children in members.items()}
    found |= {("properties", name, "".join(sorted(children)))
              for name, children in plan.ids.items()}
    return found | {("rest", section, "") for section in plan.rests}


def plan_of_found(rows: list) -> Plan:
    """The plan of all batches' ``keys_found``: keys sorted, children united."""
    keys: dict[str, dict[str, set]] = {}
    ids: dict[str, set] = {name: set() for name in VALUE_FIELDS}
    rests = set()
    for section, key, children in rows:
        if section == "rest":
            rests.add(key)
        elif section == "properties":
            ids[key].update(children)
        else:
            keys.setdefault(section, {}).setdefault(key, set()).update(children)
    return Plan({s: {k: frozenset(members[k]) for k in sorted(members)}
                 for s, members in keys.items()},
                {name: frozenset(c) for name, c in ids.items()}, frozenset(rests))


def discover(df: Any, column: str) -> Plan:
    """The plan of a batch DataFrame's messages (one Spark job): every key, the
    children their values need, the residuals they fill."""
    carried = kernels.shipped()   # the driver's compiled kernels, for a fresh executor

    def found(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        kernels.install(carried)
        for batch in batches:
            rows = sorted(keys_found(batch.column(0)))
            yield pa.RecordBatch.from_arrays(
                [pa.array([r[i] for r in rows], pa.string()) for i in range(3)],
                names=["section", "key", "children"])
    selected = df.select("`" + column.replace("`", "``") + "`")
    use_this_python(df.sparkSession)
    rows = selected.mapInArrow(found, "section string, key string, children string")
    return plan_of_found([tuple(r) for r in rows.distinct().collect()])


# --- the DataFrame ---------------------------------------------------------------------------

def from_amqp(df: Any, column: str = "payload", *, keys: Mapping[str, Sequence[str]] | None = None,
              keep: Sequence[str] | None = None) -> Any:
    """A DataFrame whose ``column`` holds AMQP-encoded messages as a message table
    in Spark's types (one row a cell), for ``filtex.spark.column``/``where``.

    ``keys`` maps keyed sections (``application_properties``,
    ``message_annotations``, ``delivery_annotations``, ``footer``) to the keys
    stored as VALUE structs (every child); other keys, and sections not named,
    go to the residuals (all six are columns). ``None`` (batch DataFrames
    only) finds them first, with the children their values need, in one Spark
    job; then only the residuals some message fills are columns, and the
    DataFrame must give the same rows when read again. ``keep``: input
    columns passed through, last. Cells that cannot be read are marked, never
    an error (docs/spark-connectors.md)."""
    if column not in df.columns:
        raise ValueError(f"the DataFrame has no column {column!r}")
    typ = df.schema[column].dataType
    if type(typ).__name__ != "BinaryType":
        raise TypeError(f"column {column!r} holds {typ.simpleString()}, not binary "
                        "(AMQP-encoded messages)")
    keep = kept_columns(df, keep)
    if keys is None:
        if df.isStreaming:
            raise ValueError("keys are needed for a streaming DataFrame: its schema is fixed "
                             "before any message is read (keys={'application_properties': "
                             "[...], ...})")
        plan = discover(df, column)
    else:
        plan = Plan({s: {k: frozenset(CHILD_ORDER) for k in names}
                     for s, names in _listed(keys).items()},
                    {name: frozenset(CHILD_ORDER) for name in VALUE_FIELDS})
    layout = list(spark_schema(plan.schema()))

    def convert(batch: pa.RecordBatch) -> dict[str, pa.Array]:
        return spark_rows(batch.column(column), plan)
    return map_in_arrow(df, [column], layout, keep, convert)


__all__ = ["Plan", "UNREADABLE", "UNREADABLE_SECTION", "discover", "from_amqp", "keys_found",
           "message_rows", "plan_of_found", "spark_rows", "spark_schema"]
