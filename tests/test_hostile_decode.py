"""The encoded-column decoder against the per-message engine on hostile bytes
(issue 23).

``filtex.arrow.evaluate_encoded`` decodes what it can with the numba decoder,
evaluates the filter's kernels over it, and leaves every row it cannot decode
exactly to the per-message engine. Whatever the bytes, its verdict for each
row must be the per-message engine's for the same bytes: here over seeded
random messages with faults put where the readers meet them (duplicate keys
in every encoding, keys of the wrong type, unknown constructors and wrong
sizes in header and properties lists, invalid UTF-8, non-ASCII symbols,
described values, counts and sizes that lie), a third of them mutated as
bytes, and many filters. The decoder runs in a child process: a crash there
is this test's failure, not the end of the test run.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyarrow")
pytest.importorskip("numba")

import filtex  # noqa: E402

from hostile_messages import OTHER, SQL, amqp_map, messages, section, string, sym  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, sys
import pyarrow as pa
import filtex, filtex.arrow as fa
from filtex.table.decode import decode_column

cases = json.load(sys.stdin)
cells = [bytes.fromhex(c) for c in cases["cells"]]
column = pa.array([b"not a message"] + cells, pa.binary()).slice(1)   # offsets not from 0
out = {"verdicts": [], "fallback": [], "decoded": [], "walked": []}
for text, dialect in cases["filters"]:
    flt = filtex.compile_sql(text, dialect)
    result = fa.evaluate_encoded(flt, column)   # walked where the filter can be
    out["verdicts"].append(result.verdicts.to_pylist())
    out["fallback"].append(result.fallback_rows)
    out["decoded"].append(fa.evaluate_encoded(flt, column, walk=False).verdicts.to_pylist())
    out["walked"].append(fa.can_walk(flt))
decoded = decode_column(column, None, body=True)   # every key of every map, the bodies
out["undecoded"] = decoded.undecoded.tolist()
json.dump(out, sys.stdout)
"""

# Maps the random messages rarely hold: a key twice far apart, among many keys,
# in every encoding of a key, and more keys than the decoder's predictions hold.
WIDE = [string(f"k{i}") for i in range(70)]
EXTRA = [
    section(0x74, amqp_map([(k, b"\x54\x01") for k in WIDE] + [(string("x"), b"\x54\x05")])),
    section(0x74, amqp_map([(k, b"\x54\x01") for k in WIDE] + [(string("k3"), b"\x54\x05")])),
    section(0x74, amqp_map([(string("k3"), b"\x54\x05")] + [(k, b"\x54\x01") for k in WIDE])),
    section(0x74, amqp_map([(string("x"), b"\x54\x05"), (string("a", True), b"\x41"),
                            (string("a"), b"\x41")], True)),
    section(0x72, amqp_map([(b"\x44", b"\x41"), (sym("x-opt-m"), string("m")),
                            (b"\x53\x00", b"\x41")])),
    section(0x72, amqp_map([(b"\x80" + bytes(7) + b"\x09", b"\x41"), (sym("x-opt-m"), string("m")),
                            (b"\x53\x09", b"\x41")])),
    section(0x72, amqp_map([(sym("x-opt-m"), string("m")), (sym("x-opt-m", True), string("m"))])),
]


def run_child(cells: list[bytes], filters: list[tuple[str, str]]) -> dict:
    cases = json.dumps({"cells": [c.hex() for c in cells], "filters": filters})
    env = dict(os.environ, PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", CHILD], input=cases, capture_output=True,
                          text=True, env=env, timeout=1800)
    assert done.returncode == 0, (f"the decoder's process ended with {done.returncode}:\n"
                                  f"{done.stderr[-3000:]}")
    return json.loads(done.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("seed,rate", [(41, 0.02), (42, 0.06)])
def test_evaluate_encoded_gives_the_per_message_verdict_on_hostile_bytes(seed, rate):
    cells = messages(500, seed, rate=rate, mutate=0.3) + EXTRA
    filters = [(text, "amqp") for text in SQL] + list(OTHER)
    got = run_child(cells, filters)
    decided = 0
    for (text, dialect), verdicts, fallback, decoded in zip(filters, got["verdicts"],
                                                             got["fallback"], got["decoded"]):
        f = filtex.compile_sql(text, dialect)
        for cell, verdict, other in zip(cells, verdicts, decoded):
            want = f.evaluate(cell)
            assert verdict == want, (text, cell.hex(), f.outcome(cell))
            assert other == want, ("decoded", text, cell.hex(), f.outcome(cell))
        decided += len(cells) - fallback
    # both encoded paths ran: the walking kernels on the filters they can walk
    assert 0 < sum(got["walked"]) < len(filters), got["walked"]
    # the comparison means something: most rows' verdicts came from the kernels
    assert decided > 0.25 * len(cells) * len(filters), decided
    assert any(got["undecoded"]) and not all(got["undecoded"])


@pytest.mark.slow
def test_a_duplicate_key_is_unknown_in_both_engines():
    """The issue's reproducer: {a: 1, a: 2, x: 5}; ``x = 5`` read a key that is
    there once, and the decoder said TRUE where the per-message engine says
    the map is malformed."""
    m = b"\x00\x53\x74\xc1\x0e\x06\xa1\x01a\x41\xa1\x01a\x42\xa1\x01x\x54\x05"
    texts = ["x = 5", "a = TRUE", "zz IS NULL", "p.subject IS NULL"]
    got = run_child([m, m[:-1] + b"\x06"], [(t, "amqp") for t in texts])
    for text, verdicts in zip(texts, got["verdicts"]):
        assert verdicts == [filtex.compile_sql(text).evaluate(m)] * 2, text
    assert got["verdicts"][:3] == [[None, None]] * 3
    assert got["verdicts"][3] == [True, True]   # the map is not read
