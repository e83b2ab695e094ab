"""Message tables from files: Parquet and Arrow IPC files of the layout, and
JSON-lines or framed-AMQP message files turned into it, a batch at a time.

Memory is bounded by the batch size, not the file: Parquet is read a row
group at a time and IPC batch by batch, and message files are built ``batch_size`` messages at a
time, every batch in the schema of the first (inferred from it, or given), so
a key first seen later goes to the residual columns instead of changing the
schema half-way.

Nothing here validates the batches of a file (a stranger's IPC file may hold
offsets that lie or codes outside a dictionary): the engines validate what
they read (``guard.py``) and read a malformed row as unknown.
"""
from __future__ import annotations

import os
from itertools import islice
from typing import Any, Iterable, Iterator

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq

from ..files import read_messages
from .build import message_table
from .schema import check_version, message_schema, plan_of

BATCH_SIZE = 65_536
_PARQUET, _IPC_FILE, _IPC_STREAM = b"PAR1", b"ARROW1", b"\xff\xff\xff\xff"


def read_batches(source: Any, *, batch_size: int = BATCH_SIZE,
                 schema: pa.Schema | None = None) -> Iterator[pa.RecordBatch]:
    """The record batches of one file: a Parquet or Arrow IPC file of message
    tables (checked to be of this layout version), or a JSON-lines or framed
    AMQP message file (built into that layout)."""
    if batch_size < 1:
        raise ValueError("batch_size is at least 1")
    with open(source, "rb") as stream:
        head = stream.read(8)
    if head[:4] == _PARQUET:
        parquet = pq.ParquetFile(source)
        check_version(parquet.schema_arrow)
        canonical = _canonical(parquet.schema_arrow)
        # a row group at a time (pyarrow's iter_batches cannot convert these nested
        # columns): memory is bounded by the writer's row group size
        for group in range(parquet.num_row_groups):
            part = parquet.read_row_group(group)
            if canonical is not None and not part.schema.equals(canonical,
                                                                 check_metadata=True):
                try:
                    part = part.cast(canonical)
                except (pa.ArrowException, ValueError):
                    pass   # as written: the engines read what does not fit as malformed
            yield from part.to_batches(max_chunksize=batch_size)
        return
    if head[:6] == _IPC_FILE:
        with ipc.open_file(source) as reader:
            check_version(reader.schema)
            for i in range(reader.num_record_batches):
                yield reader.get_batch(i)
        return
    if head[:4] == _IPC_STREAM:
        with open(source, "rb") as stream, ipc.open_stream(stream) as reader:
            check_version(reader.schema)
            yield from reader
        return
    messages = read_messages(source)
    while True:
        chunk = list(islice(messages, batch_size))
        if not chunk:
            return
        table = message_table(chunk, schema=schema)
        schema = table.schema   # later batches in the first batch's schema
        yield from table.to_batches()


def _canonical(schema: pa.Schema) -> pa.Schema | None:
    """The layout's own schema for ``schema``: Parquet names a map's entries
    after its column, and casting back makes a round trip give the schema it
    was written with. None for a schema that is not the layout's (a stranger's
    file: a section that is not a struct, a VALUE without its tag), which is
    read as it is; the engines read what does not fit it as malformed."""
    try:
        return message_schema(*plan_of(schema))
    except (ValueError, TypeError, AttributeError, KeyError, pa.ArrowException):
        return None


def read(paths: str | os.PathLike | Iterable[str | os.PathLike], *,
         batch_size: int = BATCH_SIZE, schema: pa.Schema | None = None) -> pa.Table:
    """A message table from one file or several (see ``read_batches``), all in
    one schema (the first file's, unless given)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    batches: list[pa.RecordBatch] = []
    for path in paths:
        for batch in read_batches(path, batch_size=batch_size, schema=schema):
            if schema is None:
                schema = batch.schema
            elif batch.schema != schema:
                raise ValueError(f"{os.fspath(path)}: its schema differs from the first "
                                 "file's; give schema= to read them as one table")
            batches.append(batch)
    if schema is None:
        raise ValueError("no messages in the input")
    return pa.Table.from_batches(batches, schema=schema)
