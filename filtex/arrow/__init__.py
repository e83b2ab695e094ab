"""Columnar batches: AMQP messages as an Arrow table, and filters over it.

The table layout is documented and versioned (``docs/message-table.md``,
``SCHEMA_VERSION``): typed header and properties structs, one tagged VALUE
struct per application property and annotation key, residual maps for what
has no typed place, bodies AMQP-encoded. Nothing is coerced, so every filter
evaluates a table exactly as it evaluates the messages themselves.

>>> import filtex, filtex.arrow
>>> table = filtex.arrow.message_table([{"application-properties": {"color": "blue"}}])
>>> filtex.arrow.evaluate_batch(filtex.compile_sql("color = 'blue'"), table).to_pylist()
[True]

This package needs pyarrow (``pip install filtex[arrow]``); ``import filtex``
never imports it.
"""
from __future__ import annotations

from ..table.build import message_table
from ..table.read import read, read_batches
from .binary import can_walk, evaluate_encoded, from_amqp
from .engine import BatchResult, evaluate, evaluate_batch, filter_table
from ..table.flat import message_table_of
from ..codegen.jit import cache_directory, set_cache_directory
from ..table.rows import RowMessage, batch_rows, evaluate_rows, messages
from ..table.schema import METADATA_KEY, SCHEMA_VERSION, TAG_NAMES, message_schema

__all__ = ["BatchResult", "METADATA_KEY", "RowMessage", "SCHEMA_VERSION", "TAG_NAMES",
           "batch_rows", "cache_directory", "can_walk", "evaluate", "evaluate_batch",
           "evaluate_encoded", "evaluate_rows", "from_amqp",
           "filter_table", "message_schema", "message_table", "message_table_of", "messages",
           "read", "read_batches", "set_cache_directory"]
