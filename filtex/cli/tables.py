"""Parquet and Arrow IPC inputs of ``filtex match`` and ``filtex why``: filtex
message tables, or flat tables whose columns are fields (``--mapping``, as
``filtex spark`` takes it), read a record batch at a time.

A flat batch is laid out as a message table batch for the filters
(``filtex.table.flat``, no values copied but strings); the rows written are
the input's own, so the output has the input's columns. How far the reading
has got (rows of a Parquet file's metadata, batches of an IPC file) feeds the
progress line.
"""
from __future__ import annotations

import os
import stat
from typing import Any, Iterator

from ..message import HEADER_FIELDS, PROPERTIES_FIELDS
from .common import CommandError, require

SECTIONS = ("header", "delivery_annotations", "message_annotations", "properties",
            "application_properties", "footer")
BATCH_ROWS = 65_536
_PARQUET, _IPC_FILE, _IPC_STREAM = b"PAR1", b"ARROW1", b"\xff\xff\xff\xff"


def table_format(source: str) -> str | None:
    """``parquet`` or ``ipc`` for a regular file holding a table, else None. Only
    regular files are looked at: a pipe's first bytes, once read, are gone."""
    if source == "-":
        return None
    try:
        if not stat.S_ISREG(os.stat(source).st_mode):
            return None
        with open(source, "rb") as stream:
            head = stream.read(8)
    except (OSError, ValueError):
        return None   # the message file reader reports it
    if head[:4] == _PARQUET:
        return "parquet"
    if head[:6] == _IPC_FILE or head[:4] == _IPC_STREAM:
        return "ipc"
    return None


def parse_mapping(items: list[str] | None) -> dict[str, Any] | None:
    """``--mapping COLUMN=KEY`` (an application property) or
    ``COLUMN=SECTION:KEY``, as ``filtex.arrow``'s and ``filtex.spark``'s
    ``mapping``; None when there is none."""
    if not items:
        return None
    mapping: dict[str, Any] = {}
    for item in items:
        column, sep, field = item.partition("=")
        if not sep or not column or not field:
            raise CommandError(f"--mapping takes COLUMN=KEY or COLUMN=SECTION:KEY, not {item!r}")
        if column in mapping:
            raise CommandError(f"--mapping: the column {column!r} is mapped twice")
        section, colon, key = field.partition(":")
        if not colon or section not in SECTIONS:
            mapping[column] = field
            continue
        fields = {"header": HEADER_FIELDS, "properties": PROPERTIES_FIELDS}.get(section)
        if fields is not None and key not in fields:
            raise CommandError(f"--mapping {item}: {section} has no field {key!r} (it has "
                               f"{', '.join(fields)})")
        mapping[column] = (section, key) if section != "application_properties" else key
    return mapping


class TableInput:
    """One Parquet or Arrow IPC file: its batches as (message table batch, the
    input's own batch), and the fraction read so far. A message table refuses
    ``mapping`` and ``nulls`` (they are for flat tables); a flat table without a
    mapping has every column as the application property of its name."""

    def __init__(self, path: str, fmt: str, mapping: dict[str, Any] | None,
                 nulls: str | None) -> None:
        require(("pyarrow",), "arrow", "reading Parquet and Arrow IPC files")
        self.path, self.format = path, fmt
        self.mapping, self.nulls = mapping, nulls
        self.total: int | None = None   # rows (Parquet) or batches (IPC file)
        self.done = 0
        self.schema = self._schema()
        from ..table.schema import METADATA_KEY
        self.flat = METADATA_KEY not in (self.schema.metadata or {})
        if not self.flat and (mapping is not None or nulls is not None):
            option = "--mapping" if mapping is not None else "--nulls"
            raise ValueError(f"{option} is for flat tables, and this is a filtex message "
                             "table")

    def _schema(self) -> Any:
        import pyarrow.ipc as ipc
        import pyarrow.parquet as pq
        if self.format == "parquet":
            metadata = pq.read_metadata(self.path)
            self.total = metadata.num_rows
            return metadata.schema.to_arrow_schema()
        with open(self.path, "rb") as stream:
            if stream.read(6) == _IPC_FILE:
                reader = ipc.open_file(self.path)
                self.total = reader.num_record_batches
                return reader.schema
        with open(self.path, "rb") as stream:
            return ipc.open_stream(stream).schema

    def batches(self) -> Iterator[tuple[Any, Any]]:
        """(message table batch, the input's batch) pairs, in order."""
        if not self.flat:
            from ..arrow import read_batches
            for batch in read_batches(self.path):
                self._advance(batch.num_rows)
                yield batch, batch
            return
        from ..table.flat import message_batch_of
        for batch in self._flat_batches():
            self._advance(batch.num_rows)
            yield message_batch_of(batch, self.mapping, nulls=self.nulls or "absent"), batch

    def _flat_batches(self) -> Iterator[Any]:
        import pyarrow.ipc as ipc
        import pyarrow.parquet as pq
        if self.format == "parquet":
            yield from pq.ParquetFile(self.path).iter_batches(batch_size=BATCH_ROWS)
            return
        with open(self.path, "rb") as stream:
            is_file = stream.read(6) == _IPC_FILE
        if is_file:
            with ipc.open_file(self.path) as reader:
                for i in range(reader.num_record_batches):
                    yield reader.get_batch(i)
            return
        with open(self.path, "rb") as stream, ipc.open_stream(stream) as reader:
            yield from reader

    def _advance(self, rows: int) -> None:
        self.done += rows if self.format == "parquet" else 1

    def fraction(self) -> float | None:
        """How much of the file has been read (None: not known, an IPC stream)."""
        if not self.total:
            return None
        return min(1.0, self.done / self.total)
