"""A predicate of a value that is its first field where present, else a function of
others (RabbitMQ's ``h.priority``: the header's, else the ``x-basic-priority``
annotation, else 4), split by the batch plan into its two cases
(``plan/skeleton.first_present_cases``): every engine gives the per-message verdict on
headers with and without a priority and annotations of every type, and the kernel
answers such filters without the per-message engine."""
from __future__ import annotations

import itertools
import math

import pytest
from proton import byte, char, float32, int32, symbol, timestamp, ubyte, ulong

import filtex

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numba")
import filtex.arrow as fa  # noqa: E402
from filtex.amqp.encode import encode_message  # noqa: E402

FILTERS = ["h.priority > 4", "h.priority = 4", "h.priority < 4 OR color = 'red'",
           "h.priority > 4 AND color = 'blue'", "NOT (h.priority >= 9)",
           "h.priority IN (0, 2, 9)", "h.priority >= 2 AND h.priority <= 7", "h.priority IS NULL",
           "h.priority IS NOT NULL AND n > 1", "h.priority * 2 > 9", "h.priority = 2.5",
           "h.priority = '7'", "h.priority + n > 7", "NOT (h.priority <> 9) OR n = 3",
           "(h.priority > 1 AND n < 3) OR (h.priority < 8 AND color = 'red')"]

HEADERS = [None, ubyte(0), ubyte(4), ubyte(9), ubyte(255)]
ANNOTATIONS = ["absent", ubyte(9), ubyte(2), 2, -1, int32(7), byte(-3), ulong(2**64 - 1), True,
               False, None, "7", symbol("9"), 2.5, float32(1.5), math.nan, -0.0, math.inf,
               timestamp(5), char("x"), b"\x09", [9], {"k": 9}]


def _messages() -> list[filtex.Message]:
    out = []
    for i, (header, annotation) in enumerate(itertools.product(HEADERS, ANNOTATIONS)):
        annotations = {} if annotation == "absent" else {symbol("x-basic-priority"): annotation}
        out.append(filtex.Message(
            header={} if header is None else {"priority": header},
            message_annotations=annotations,
            application_properties={"color": ["blue", "red"][i % 2], "n": i % 5}))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("text", FILTERS)
def test_every_engine_gives_the_per_message_verdict(text):
    messages = _messages()
    flt = filtex.compile_sql(text, "rabbitmq")
    want = [flt.evaluate(m) for m in messages]
    assert None in want or text in ("h.priority IS NULL", "h.priority IS NOT NULL AND n > 1"), \
        "some messages make the filter unknown"
    table = fa.message_table(messages)
    assert fa.evaluate(flt, table).verdicts.to_pylist() == want
    assert fa.evaluate(flt, table, engine="passes").verdicts.to_pylist() == want
    column = pa.array([bytes(encode_message(m)) for m in messages], pa.binary())
    assert fa.evaluate_encoded(flt, column).verdicts.to_pylist() == want
    subscriptions = filtex.Subscriptions({"s": text}, dialect="rabbitmq")
    assert [subscriptions.match(m) == ["s"] for m in messages] == [w is True for w in want]


@pytest.mark.slow
@pytest.mark.parametrize("text", [t for t in FILTERS if "+ n" not in t])
def test_the_kernel_answers_without_the_per_message_engine(text):
    """Numbers and absent values in both fields: no row for the per-message engine
    (before the split, every row of such a filter was answered by it)."""
    messages = [m for m in _messages()
                if type(m.message_annotations.get(symbol("x-basic-priority"), 0))
                in (int, ubyte, int32, byte, ulong)]
    flt = filtex.compile_sql(text, "rabbitmq")
    got = fa.evaluate(flt, fa.message_table(messages))
    assert got.verdicts.to_pylist() == [flt.evaluate(m) for m in messages]
    assert got.fallback_rows == 0
