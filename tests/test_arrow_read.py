"""filtex.arrow.read: message tables from Parquet, Arrow IPC, JSON-lines and
framed AMQP files, a bounded batch at a time, with the verdicts of the messages."""
from __future__ import annotations

from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
import pyarrow.ipc as ipc  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
FILTERS = ["region = 'EU' AND total > 100", "express AND h.priority >= 8",
           "p.subject LIKE 'order.%ed' AND currency = 'USD'", "m.[x-opt-partition] < 4"]


def verdicts(flt, messages) -> list:
    return [flt.evaluate(m) for m in messages]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["orders.jsonl", "orders.amqp", "telemetry.amqp"])
@pytest.mark.parametrize("batch_size", [7, 1000])
def test_message_files_read_in_batches_give_the_messages_verdicts(name, batch_size):
    path = EXAMPLES / name
    batches = list(filtex.arrow.read_batches(path, batch_size=batch_size))
    assert all(b.num_rows <= batch_size for b in batches)
    assert len({b.schema for b in batches}) == 1   # one schema, the first batch's
    table = filtex.arrow.read(path, batch_size=batch_size)
    messages = list(filtex.read_messages(path))
    assert table.num_rows == len(messages) == 50
    for text in FILTERS:
        flt = filtex.compile_sql(text)
        assert filtex.arrow.evaluate_batch(flt, table).to_pylist() == verdicts(flt, messages)


@pytest.mark.parametrize("kind", ["parquet", "ipc-file", "ipc-stream"])
def test_tables_written_and_read_back(tmp_path, kind):
    table = filtex.arrow.read(EXAMPLES / "orders.amqp")
    path = tmp_path / f"orders.{kind}"
    if kind == "parquet":
        pq.write_table(table, path, row_group_size=16)
    elif kind == "ipc-file":
        with ipc.new_file(path, table.schema) as writer:
            writer.write_table(table, max_chunksize=16)
    else:
        with ipc.new_stream(path, table.schema) as writer:
            writer.write_table(table, max_chunksize=16)
    again = filtex.arrow.read(path, batch_size=10)
    assert again.schema.metadata == table.schema.metadata
    for text in FILTERS:
        flt = filtex.compile_sql(text)
        assert (filtex.arrow.evaluate_batch(flt, again).to_pylist()
                == filtex.arrow.evaluate_batch(flt, table).to_pylist())


def test_a_key_first_seen_in_a_later_batch_goes_to_the_residual(tmp_path):
    path = tmp_path / "late.jsonl"
    path.write_text('{"application-properties": {"a": 1}}\n'
                    '{"application-properties": {"a": 2, "late": "x"}}\n')
    table = filtex.arrow.read(path, batch_size=1)
    assert "late" not in table.schema.field("application_properties").type.names
    flt = filtex.compile_sql("late = 'x' AND a = 2")
    assert filtex.arrow.evaluate_batch(flt, table).to_pylist() == [False, True]


def test_files_of_other_tables_are_refused(tmp_path):
    path = tmp_path / "plain.parquet"
    pq.write_table(pa.table({"a": [1, 2]}), path)
    with pytest.raises(ValueError, match="message table"):
        filtex.arrow.read(path)


def test_several_files_read_as_one_table():
    table = filtex.arrow.read([EXAMPLES / "orders.jsonl", EXAMPLES / "orders.amqp"])
    assert table.num_rows == 100
    flt = filtex.compile_sql(FILTERS[0])
    result = filtex.arrow.evaluate_batch(flt, table).to_pylist()
    assert result[:50] == result[50:]
