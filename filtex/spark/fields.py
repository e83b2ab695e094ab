"""A message field of a Spark DataFrame as native Columns: its type tag and children.

The Spark translation's reading side, the counterpart of ``arrow/columns.py``.
Every field a filter reads becomes a ``SparkField``: a tag Column (the AMQP
type tag of ``docs/message-table.md``), the typed children Spark holds it in,
the tags the schema allows, and a Column that is true where the row holds
something the native expressions cannot read exactly (a residual entry in the
field's section, a present body), which the Arrow UDF then evaluates.

Two kinds of DataFrame are read: a message table in Spark's types
(``layout.to_spark``, or Parquet written from one) and a flat DataFrame whose
columns are fields (``mapping`` as in ``filtex.table.flat``). Field names are
taken from the schema by exact, case-sensitive match; Spark's resolution of a
struct member is case-insensitive unless ``spark.sql.caseSensitive`` is set,
so when a struct read by a filter holds two names that differ only in case,
the session option is required (``ensure_case_sensitive``).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .sql import ident, tag_in
from ..table.schema import (CHILD_OF_TAG, ABSENT, BINARY, BOOLEAN, BYTE, DOUBLE, FLOAT, HEADER_TYPES, INT,
                            KEYED, LONG, NULL, PROPERTIES_TYPES, SCALAR_TAGS, SHORT, STRING,
                            TIMESTAMP, VALUE_FIELDS, rest_column)

CHILD_TAGS = {"b": {2}, "i": {3, 4, 5, 7, 8, 9, 10, 17}, "u": {6}, "f": {11, 12},
              "s": {16, 20, 21}, "x": {13, 14, 15, 18, 19}, "e": {22, 23, 24, 25}}
"""Which tags a VALUE child holds (as ``arrow/columns.py``)."""

KNOWN_TAGS = frozenset(range(26))
"""Tags a row view can rebuild; any other tag makes the row unreadable (unknown)."""

_FLAT_TAGS = {"ByteType": BYTE, "ShortType": SHORT, "IntegerType": INT, "LongType": LONG,
              "FloatType": FLOAT, "DoubleType": DOUBLE, "StringType": STRING,
              "BooleanType": BOOLEAN, "BinaryType": BINARY, "TimestampType": TIMESTAMP}
"""Spark type -> the AMQP type a flat column's values have (``table/flat.py``'s
rules for the Arrow types Spark hands over)."""
_FLAT_CHILD = {BYTE: "i", SHORT: "i", INT: "i", LONG: "i", FLOAT: "f", DOUBLE: "f",
               STRING: "s", BOOLEAN: "b", BINARY: "x", TIMESTAMP: "i"}

MESSAGE_COLUMNS = frozenset({"header", "properties", "amqp_value", "amqp_sequence"})


@dataclass
class SparkField:
    """One field as Spark SQL text. ``tag`` is an int expression (never null);
    ``children`` maps a VALUE child name to its expression (``i`` a long, ``u``
    a decimal(20,0), ``f`` a double, ``s`` a string, ``b`` a boolean); ``tags``
    is what the schema allows; ``back`` (or None) is true on rows the Arrow UDF
    must evaluate; ``unreadable`` (or None) on rows whose value cannot be read
    at all (unknown in every engine); ``pushable`` holds children as plain
    column references, for the implied conditions Spark pushes into scans
    (``timestamp``: a Spark timestamp column holding the ``i`` child in ms)."""
    tag: str
    children: dict[str, str]
    tags: frozenset
    back: str | None = None
    unreadable: str | None = None
    pushable: dict[str, str] = field(default_factory=dict)
    tag_is_data: bool = False
    """True for VALUE structs, whose tag is a column of its own: a hostile table
    can hold a tag outside ``tags`` (the row is unreadable: unknown) or tag a
    row without its child (the UDF reads it). False where the tag is derived
    from the value itself."""
    raw_tag: str | None = None
    """A VALUE struct's tag column itself (null where the struct is null: absent)."""
    derived: tuple[str, int, int] | None = None
    """(column, its tag, the tag of a null) where the tag is derived from a column."""

    def tag_test(self, tags: Any) -> str:
        """The cheapest exact condition "the row's tag is one of ``tags``"."""
        tags = sorted(set(int(t) for t in tags))
        if self.raw_tag is not None and ABSENT not in tags:
            return tag_in(f"CAST({self.raw_tag} AS INT)", tags)
        if self.derived is not None:
            column, tag, missing = self.derived
            if tag in tags and missing in tags:
                return "TRUE"
            if tag in tags:
                return f"{column} IS NOT NULL"
            return f"{column} IS NULL" if missing in tags else "FALSE"
        return tag_in(self.tag, tags)


def is_message_table(names: list[str]) -> bool:
    return MESSAGE_COLUMNS <= set(names)


def _type_name(typ: Any) -> str:
    return type(typ).__name__


def _struct_member(typ: Any, name: str) -> Any:
    """The exactly named member's type in a Spark StructType (None if absent)."""
    if _type_name(typ) != "StructType":
        return None
    for f in typ.fields:
        if f.name == name:
            return f.dataType
    return None


def case_collisions(schema: Any, fields: list[tuple]) -> list[str]:
    """Struct columns the filter reads that hold names differing only in case."""
    found = []
    for section in sorted({f[0] for f in fields}):
        typ = _struct_member(schema, section)
        if typ is None or _type_name(typ) != "StructType":
            continue
        names = [f.name for f in typ.fields]
        if len({n.lower() for n in names}) < len(names):
            found.append(section)
    return found


def ensure_case_sensitive(session: Any, schema: Any, fields: list[tuple]) -> None:
    """Set ``spark.sql.caseSensitive`` when a read struct needs it: AMQP keys
    are case-sensitive, and Spark would otherwise resolve ``getField("Key")``
    ambiguously between ``Key`` and ``key``."""
    if case_collisions(schema, fields) and \
            session.conf.get("spark.sql.caseSensitive", "false").lower() != "true":
        session.conf.set("spark.sql.caseSensitive", "true")


def _absent(back: str | None = None) -> SparkField:
    return SparkField(str(ABSENT), {}, frozenset({ABSENT}), back=back)


def _present(column: str, tag: int, missing: int = ABSENT) -> str:
    return f"CASE WHEN {column} IS NULL THEN {missing} ELSE {tag} END"


def message_field(schema: Any, ref: tuple) -> SparkField:
    """A field of a message table in Spark's types."""
    section, key = ref
    names = schema.fieldNames()
    if section == "none":
        return _absent()
    if section == "connection":
        if "connection" not in names:
            return _absent()
        column = ident("connection")
        return SparkField(_present(column, STRING), {"s": column}, frozenset({ABSENT, STRING}),
                          pushable={"s": column}, derived=(column, STRING, ABSENT))
    if section == "body":
        return _absent(f"{ident(key)} IS NOT NULL" if key in names else None)
    back = None
    if rest_column(section) in names:
        back = f"{ident(rest_column(section))} IS NOT NULL"
    struct = _struct_member(schema, section) if section in names else None
    member = _struct_member(struct, key) if struct is not None and isinstance(key, str) else None
    if member is None:
        return _absent(back)
    column = ident(section, key)
    typed = {**HEADER_TYPES, **PROPERTIES_TYPES}
    if section in ("header", "properties") and key in typed and key not in VALUE_FIELDS:
        tag = SCALAR_TAGS[typed[key][0]]
        name = CHILD_OF_TAG[tag]
        pushable = {name: column} if tag != TIMESTAMP else {"timestamp": column}
        return SparkField(_present(column, tag), {name: _typed_child(column, tag)},
                          frozenset({ABSENT, tag}), back=back, pushable=pushable,
                          derived=(column, tag, ABSENT))
    if _type_name(member) != "StructType" or _struct_member(member, "t") is None:
        return _absent("TRUE")   # not a VALUE struct: the UDF reads it
    children, tags = {}, {ABSENT, NULL}
    for name in ("b", "i", "u", "f", "s", "x", "e"):
        if _struct_member(member, name) is not None:
            children[name] = ident(section, key, name)
    for name, child_tags in CHILD_TAGS.items():
        if _struct_member(member, name) is not None:
            tags |= child_tags
    raw = ident(section, key, "t")
    return SparkField(f"coalesce(CAST({raw} AS INT), 0)", children, frozenset(tags), back=back,
                      pushable=dict(children), tag_is_data=True, raw_tag=raw)


def _typed_child(column: str, tag: int) -> str:
    if tag == TIMESTAMP:
        return f"unix_millis({column})"
    if CHILD_OF_TAG[tag] == "i":
        return f"CAST({column} AS BIGINT)"
    return column


def flat_field(schema: Any, ref: tuple, targets: Mapping[tuple, str], nulls: str) -> SparkField:
    """A field of a flat DataFrame: the column mapped to it, read as the AMQP
    type its Spark type stands for."""
    column_name = targets.get(tuple(ref))
    if column_name is None:
        return _absent()
    typ = schema[column_name].dataType
    tag = _FLAT_TAGS.get(_type_name(typ))
    if tag is None:
        raise ValueError(f"column {column_name!r} is {typ.simpleString()}: no AMQP type "
                         f"stands for it (supported: {', '.join(sorted(_FLAT_TAGS))})")
    column = ident(column_name)
    section, key = ref
    if section in ("header", "properties") and key not in VALUE_FIELDS:
        return _flat_typed(column, typ, tag, section, key)
    missing = NULL if nulls == "null" else ABSENT
    unreadable = None
    child = column
    if tag == TIMESTAMP:   # AMQP timestamps are milliseconds; finer ones are refused
        child = f"unix_millis({column})"
        unreadable = f"unix_micros({column}) % 1000 <> 0"
    elif tag in (BYTE, SHORT, INT):
        child = f"CAST({column} AS BIGINT)"
    elif tag == FLOAT:
        child = f"CAST({column} AS DOUBLE)"
    name = _FLAT_CHILD[tag]
    pushable = {name: column} if child == column else \
        {"timestamp": column} if tag == TIMESTAMP else {}
    return SparkField(_present(column, tag, missing), {name: child}, frozenset({missing, tag}),
                      unreadable=unreadable, pushable=pushable, derived=(column, tag, missing))


_RANGES = {"ubyte": (0, 255), "uint": (0, 2**32 - 1)}


def _flat_typed(column: str, typ: Any, tag: int, section: str, key: str) -> SparkField:
    """A flat column mapped to a typed header/properties field: exact casts only
    (``table/flat.py``); a value out of the field's range is unreadable."""
    cls = {**HEADER_TYPES, **PROPERTIES_TYPES}[key][0]
    want = SCALAR_TAGS[cls]
    name = CHILD_OF_TAG[want]
    if want == TIMESTAMP and tag == TIMESTAMP:
        child, bad = f"unix_millis({column})", f"unix_micros({column}) % 1000 <> 0"
    elif name == "i" and tag in (BYTE, SHORT, INT, LONG):
        lo, hi = _RANGES[cls.__name__]
        child = f"CAST({column} AS BIGINT)"
        bad = f"NOT ({child} BETWEEN {lo} AND {hi})"
    elif name == _FLAT_CHILD.get(tag) and name in ("s", "b", "x"):
        child, bad = column, None
    else:
        raise ValueError(f"a {typ.simpleString()} column cannot be {section} field {key!r}")
    return SparkField(_present(column, want), {name: child}, frozenset({ABSENT, want}),
                      unreadable=bad, derived=(column, want, ABSENT))


def flat_targets(names: list[str], mapping: Mapping | None) -> dict[tuple, str]:
    """(section, key) -> column name, by ``mapping`` or by column name."""
    if mapping is None:
        return {("application_properties", n): n for n in names}
    targets = {}
    for column, target in mapping.items():
        if column not in names:
            raise ValueError(f"mapping names column {column!r}, which the DataFrame does not "
                             f"have (it has {', '.join(map(repr, names[:10]))})")
        ref = ("application_properties", target) if isinstance(target, str) else tuple(target)
        if ref[0] not in ("header", "properties", "application_properties") + KEYED:
            raise ValueError(f"mapping of {column!r}: {ref[0]!r} is not a section")
        targets[ref] = column
    return targets
