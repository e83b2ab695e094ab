"""Message tables a stranger wrote (issue 23): the batch engine never crashes,
raises or answers a malformed row.

A message table may come from an Arrow IPC file (pyarrow reads one without
validating it), a Parquet file or another program. This module generates such
tables from a fixed seed: tags outside 0..25 (negative int8 too), children null
or missing under their tag, dictionary codes outside the dictionary (negative,
huge, of every index width), dictionaries that are not valid UTF-8 or whose
offsets lie, ``x`` and ``e`` bytes of the wrong width or that do not decode,
children shorter than their struct (a patched IPC file), sections and fields of
the wrong type, residual entries that do not decode or repeat a key, nested
nulls, large and view string types, slices at every offset, several record
batches with different dictionaries, IPC round trips and flat tables. The
generator knows which rows it made malformed and which it left as the message
they were built from.

Every table is evaluated in a child process (a segfault is a test failure, not
the end of pytest), and for every filter: nothing escapes; the kernels' verdicts
equal the per-message engine's over the row views of the columns the filter
reads; a row malformed in a field the filter reads is unknown; a row left as
it was gives the verdict of the message it was built from; and the row views
refuse every malformed row.

    python tests/test_hostile_tables.py [--seed N] [--case NAME]   # the child
"""
from __future__ import annotations

import json
import math
import os
import random
import struct
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path
from typing import Any, Callable, NamedTuple

import pytest

if __name__ != "__main__":
    pytest.importorskip("pyarrow")
    pytest.importorskip("numba")

SEED = 23
ROWS = 40
HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


# --- running code in a child process ----------------------------------------------------

def _child(args: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), str(HERE), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          timeout=timeout, env=env, cwd=str(ROOT))


def _died(proc: subprocess.CompletedProcess) -> str:
    return (f"the child exited with {proc.returncode} (a negative code is a signal: "
            f"-11 is SIGSEGV)\nstdout tail:\n{proc.stdout[-1500:]}\n"
            f"stderr tail:\n{proc.stderr[-3000:]}")


def _run_snippet(code: str) -> subprocess.CompletedProcess:
    """``code`` (indented as in a test) after ``_WITH_X``, in a child process."""
    return _child(["-c", _WITH_X + textwrap.dedent(code)], timeout=600)


# --- the regression tests of the reproducers -------------------------------------

_WITH_X = """
import json
import numpy as np, pyarrow as pa, filtex, filtex.arrow as fa
def with_x(struct):
    base = fa.message_table([filtex.Message(application_properties={"x": 1})] * len(struct))
    ap = pa.StructArray.from_arrays([struct], names=["x"])
    i = base.schema.get_field_index("application_properties")
    return base.set_column(i, pa.field("application_properties", ap.type), [ap])
def verdicts(text, table):
    return fa.evaluate(filtex.compile_sql(text), table).verdicts.to_pylist()
"""


@pytest.mark.slow
def test_tag_only_predicates_on_a_malformed_row_are_unknown():
    """Issue 23.3: EXISTS and IS NULL read the field, so a long whose ``i`` is
    null, a list whose bytes do not decode and a section of the wrong type are
    unknown to them as to every other predicate."""
    proc = _run_snippet("""
    longs = pa.StructArray.from_arrays([pa.array([10, 10], pa.int8()),
                                        pa.array([5, None], pa.int64())], names=["t", "i"])
    print(json.dumps({f: verdicts(f, with_x(longs))
                      for f in ["EXISTS(x)", "x IS NULL", "x IS NOT NULL", "x = 5"]}))
    lists = pa.StructArray.from_arrays([pa.array([22, 22, 22, 22], pa.int8()), pa.array(
        [b"\\xc0\\x01\\x00", b"\\xc0", b"\\xff\\xff", b"\\xc0\\x04\\x01\\xa1\\x01\\xff"])],
        names=["t", "e"])
    print(json.dumps({f: verdicts(f, with_x(lists)) for f in ["EXISTS(x)", "x IS NULL"]}))
    table = with_x(longs)
    listed = pa.array([[1], [2]], pa.list_(pa.int64()))
    i = table.schema.get_field_index("application_properties")
    table = table.set_column(i, pa.field("application_properties", listed.type), [listed])
    print(json.dumps({f: verdicts(f, table) for f in ["EXISTS(x)", "x IS NULL", "x = 1"]}))
    """)
    assert proc.returncode == 0, _died(proc)
    longs, lists, listed = (json.loads(line) for line in proc.stdout.splitlines())
    assert longs == {"EXISTS(x)": [True, None], "x IS NULL": [False, None],
                     "x IS NOT NULL": [True, None], "x = 5": [True, None]}
    assert lists == {"EXISTS(x)": [True, None, None, None], "x IS NULL": [False, None, None, None]}
    assert listed == {"EXISTS(x)": [None, None], "x IS NULL": [None, None], "x = 1": [None, None]}


@pytest.mark.slow
@pytest.mark.parametrize("code", [-1, -2, -1_000_000, -2**31, 2, 2**31 - 1])
def test_dictionary_codes_outside_the_dictionary_are_unknown_and_never_read(code):
    """Issue 23.4: -1 and -2 read '' from before the buffer, -1,000,000 and
    -2**31 killed the process (pyarrow's to_pylist does not check indices)."""
    proc = _run_snippet(f"""
    codes = pa.array([0, {code}, 1], pa.int32())
    strings = pa.DictionaryArray.from_arrays(codes, pa.array(["a", "b"]), safe=False)
    table = with_x(pa.StructArray.from_arrays([pa.array([20] * 3, pa.int8()), strings],
                                              names=["t", "s"]))
    print(verdicts("x = 'b'", table), verdicts("x <> 'b'", table), verdicts("EXISTS(x)", table))
    print(fa.evaluate_rows(filtex.compile_sql("x = 'b'"), table).to_pylist())
    """)
    assert proc.returncode == 0, _died(proc)
    assert proc.stdout.splitlines() == [
        "[False, None, True] [True, None, False] [True, None, True]", "[False, None, True]"]


@pytest.mark.slow
def test_an_ipc_file_with_a_negative_code_is_unknown_in_evaluate_and_filtex_match(tmp_path):
    """Issue 23.4 through a file: IPC files are written and read without validation."""
    path = tmp_path / "hostile.arrow"
    proc = _run_snippet(f"""
    import pyarrow.ipc as ipc
    codes = pa.array([0, -2**31, 1, -1_000_000], pa.int32())
    strings = pa.DictionaryArray.from_arrays(codes, pa.array(["a", "b"]), safe=False)
    table = with_x(pa.StructArray.from_arrays([pa.array([20] * 4, pa.int8()), strings],
                                              names=["t", "s"]))
    with ipc.new_file({str(path)!r}, table.schema) as writer:
        writer.write_table(table)
    read = fa.read({str(path)!r})
    print(verdicts("x = 'b'", read))
    """)
    assert proc.returncode == 0, _died(proc)
    assert proc.stdout.split() == ["[False,", "None,", "True,", "None]"]
    match = _child(["-m", "filtex", "match", "--count", "x = 'b'", str(path)], timeout=600)
    assert match.returncode == 0, _died(match)   # grep's codes: 0, something matched
    counts = next(line.split() for line in match.stdout.splitlines()
                  if line.startswith("filter "))
    assert counts[1:4] == ["1", "1", "2"], match.stdout   # matched, not matched, unknown


def test_invalid_utf8_in_a_dictionary_makes_only_its_rows_unknown():
    """Issue 23.5: one entry that is not UTF-8 made the whole batch raise
    UnicodeDecodeError; now its rows are unknown and the others are answered."""
    proc = _run_snippet("""
    offsets = pa.py_buffer(np.array([0, 1, 3, 4], "int32").tobytes())
    entries = pa.Array.from_buffers(pa.string(), 3, [None, offsets,
                                                     pa.py_buffer(b"a\\xff\\xfeb")])
    strings = pa.DictionaryArray.from_arrays(pa.array([0, 1, 2, 1, 0], pa.int32()), entries)
    table = with_x(pa.StructArray.from_arrays([pa.array([20] * 5, pa.int8()), strings],
                                              names=["t", "s"]))
    for text in ["x = 'a'", "x LIKE 'a%'", "x IN ('b', 'c')", "EXISTS(x)"]:
        print(verdicts(text, table))
    """)
    assert proc.returncode == 0, _died(proc)
    assert proc.stdout.splitlines() == ["[True, None, False, None, True]",
                                        "[True, None, False, None, True]",
                                        "[False, None, True, None, False]",
                                        "[True, None, True, None, True]"]


def test_filter_table_never_copies_a_row_whose_offsets_lie():
    """A matching row whose column the filter does not read lies about its
    offsets: Arrow's filter would copy bytes from past the buffer."""
    proc = _run_snippet("""
    lying = pa.Array.from_buffers(pa.binary(), 3, [None, pa.py_buffer(
        np.array([0, 1, 2**30, 3], "int32").tobytes()), pa.py_buffer(b"abc")])
    value = pa.StructArray.from_arrays([pa.array([19] * 3, pa.int8()), lying], names=["t", "x"])
    base = fa.message_table([filtex.Message(application_properties={"n": i}) for i in range(3)])
    ap = pa.StructArray.from_arrays([base.column("application_properties").chunk(0).field(0),
                                     value], names=["n", "x"])
    i = base.schema.get_field_index("application_properties")
    table = base.set_column(i, pa.field("application_properties", ap.type), [ap])
    print(fa.filter_table(filtex.compile_sql("n = 0"), table).num_rows)
    for text in ("n = 1", "n = 2"):
        try:
            fa.filter_table(filtex.compile_sql(text), table)
        except ValueError as exc:
            print(exc)
    """)
    assert proc.returncode == 0, _died(proc)
    assert proc.stdout.splitlines() == [
        "1",
        "a matching row cannot be copied: column 'application_properties': row 1: offsets "
        "that lie",
        "a matching row cannot be copied: column 'application_properties': row 2: offsets "
        "that lie"]


# --- the generated tables ------------------------------------------------------------------

@pytest.mark.slow
def test_every_hostile_table_in_a_child_process():
    proc = _child([__file__, "--seed", str(SEED)])
    results = []
    for line in proc.stdout.splitlines():
        if line.startswith("{"):
            results.append(json.loads(line))
    assert proc.returncode == 0, _died(proc)
    assert len(results) >= 60, f"only {len(results)} cases ran"
    failed = [r for r in results if r["problems"]]
    assert not failed, "\n".join(f"{r['case']}: {p}" for r in failed for p in r["problems"][:4])
    checked = sum(r["checked"] for r in results)
    malformed = sum(r["malformed"] for r in results)
    assert checked > 20_000 and malformed > 500, (checked, malformed)


# ======================================================================================
# The child: generation and checks (run as a script)
# ======================================================================================

AP, HEADER, PROPS, MA = "application_properties", "header", "properties", "message_annotations"
ALL = "all"


class Case(NamedTuple):
    """A table, the message each row still is (None: changed in a way the
    generator does not model), and the rows made malformed, by field
    ``(section, key)``, by section ``(section, None)``, or ``ALL`` rows."""
    name: str
    table: Any
    expected: list
    malformed: dict


FILTERS: list[tuple[str, Any, Any]] = [
    ("amqp", "EXISTS(n)", None), ("amqp", "n IS NULL", None), ("amqp", "n = 5", None),
    ("amqp", "n > 1 OR s = 'a'", None), ("amqp", "NOT (n < 0)", None),
    ("amqp", "s = 'a'", None), ("amqp", "s LIKE 'a%'", None), ("amqp", "s IN ('a', 'é', '')", None),
    ("amqp", "s IS NULL", None), ("amqp", "EXISTS(s)", None),
    ("amqp", "f > 1.5", None), ("amqp", "f = 0", None), ("amqp", "f IS NOT NULL", None),
    ("amqp", "b", None), ("amqp", "b = FALSE", None), ("amqp", "EXISTS(b)", None),
    ("amqp", "mix = 5", None), ("amqp", "mix = 'mix'", None), ("amqp", "EXISTS(mix)", None),
    ("amqp", "mix IS NULL", None), ("amqp", "mix > 0.25", None),
    ("amqp", "EXISTS(l)", None), ("amqp", "l IS NULL", None),
    ("amqp", "EXISTS(d)", None), ("amqp", "d IS NULL", None),
    ("amqp", "r = 1", None), ("amqp", "r = 'one'", None), ("amqp", "EXISTS(r)", None),
    ("amqp", "h.priority > 3", None), ("amqp", "h.durable = TRUE", None),
    ("amqp", "p.subject = 'x'", None), ("amqp", "p.subject LIKE 'order.%'", None),
    ("amqp", "EXISTS(p.message_id)", None), ("amqp", "p.message_id = 'id3'", None),
    ("amqp", "p.creation_time > 5000", None), ("amqp", "p.user_id IS NULL", None),
    ("amqp", "p.content_type = 'application/json'", None), ("amqp", "m.[x-opt-k] = 2", None),
    ("amqp", "n + f > 2", None), ("amqp", "n / 2 > 1", None), ("amqp", "amqp_value.k = 1", None),
    ("jms", "n = 5 AND s LIKE 'a%'", None), ("jms", "JMSPriority > 3", None),
    ("rabbitmq", "n = 5 OR s = 'a'", None),
    ("described", ("amqp:application-properties-filter", {"s": "a"}), None),
    ("described", ("apache.org:no-local-filter:list", []), "c1"),
]


def _compiled() -> list[tuple[Any, Any, set]]:
    import filtex
    from filtex.plan.skeleton import fields_read
    out = []
    for dialect, text, rc in FILTERS:
        flt = (filtex.compile_filter(text) if dialect == "described"
               else filtex.compile_sql(text, dialect))
        out.append((flt, rc, fields_read(flt.tree)))
    return out


# --- the messages ----------------------------------------------------------------------

def _messages(rng: random.Random, n: int, offset: int = 0) -> list:
    from proton import (Array, Data, Described, char, decimal32, decimal64,
                        decimal128, float32, int32, symbol, timestamp, ubyte, ulong)
    import filtex
    out = []
    for row in range(offset, offset + n):
        ap: dict = {}

        def maybe(key: str, p: float, values: list, ap: dict = ap) -> None:
            if rng.random() < p:
                ap[key] = rng.choice(values)
        maybe("n", 0.85, [0, 1, 5, -3, 2**40, 7, None])
        maybe("s", 0.85, ["a", "b", "é", "", "a%", "abc", None, f"s{row % 7}"])
        maybe("f", 0.7, [1.5, -0.0, 0.0, math.nan, math.inf, 2.0, None])
        maybe("b", 0.6, [True, False, None])
        maybe("mix", 0.85, [ubyte(3), int32(-5), ulong(2**64 - 1), float32(0.5), "mix",
                            symbol("sym"), char("c"), timestamp(5), True, None, 5,
                            decimal64(7), uuid.UUID(int=row), b"\x00b", [1, "x"], {"k": 2}])
        maybe("l", 0.8, [[], [1], ["x", 2], [[1, [2]]], {"k": 1}, {}, ["é", b"\x01"],
                         Described(symbol("d"), [1]), Array(None, Data.INT, int32(1), int32(2)),
                         [None, True, char("z")]])
        maybe("d", 0.7, [decimal32(1), decimal64(5), decimal128(bytes(range(16))),
                         uuid.UUID(int=row * 7), b"", b"\x00\xff"])
        maybe("r", 0.7, [1, 2, "one", "two", 1.5])
        header: dict = {}
        if rng.random() < 0.7:
            header["priority"] = ubyte(rng.randrange(10))
        if rng.random() < 0.5:
            header["durable"] = rng.random() < 0.5
        props: dict = {}
        if rng.random() < 0.7:
            props["subject"] = rng.choice(["order.created", "x", "é", "order.paid"])
        if rng.random() < 0.6:
            props["message-id"] = rng.choice([ulong(row), f"id{row % 5}",
                                              uuid.UUID(int=row), b"m%d" % row])
        if rng.random() < 0.5:
            props["creation-time"] = timestamp(1000 * row)
        if rng.random() < 0.3:
            props["user-id"] = b"u%d" % row
        if rng.random() < 0.4:
            props["content-type"] = symbol(rng.choice(["application/json", "text/plain"]))
        annotations = {symbol("x-opt-k"): rng.randrange(4)} if rng.random() < 0.6 else {}
        body = rng.choice([None, 7, "text", {"k": 1}, {"k": 2}])
        out.append(filtex.Message(header=header, properties=props, application_properties=ap,
                                  message_annotations=annotations, body=body,
                                  connection=rng.choice(["c1", "c2", None])))
    return out


def _table(messages: list) -> Any:
    """The messages' table, with ``r`` typed as a long only: its other values
    are residual entries."""
    import filtex
    import filtex.arrow as fa
    shaped = [filtex.Message(header=m.header, properties=m.properties, connection=m.connection,
                             message_annotations=m.message_annotations, body=m.body,
                             application_properties={**m.application_properties, "r": 1})
              for m in messages]
    schema = fa.message_table(shaped).schema
    return fa.message_table(messages, schema=schema).combine_chunks()


# --- taking tables apart and putting them back -------------------------------------------

def _column(table: Any, name: str) -> Any:
    return table.column(name).combine_chunks() if table.column(name).num_chunks != 1 \
        else table.column(name).chunk(0)


def _set_column(table: Any, name: str, array: Any) -> Any:
    import pyarrow as pa
    index = table.schema.get_field_index(name)
    return table.set_column(index, pa.field(name, array.type), [array])


def _member(table: Any, section: str, key: str) -> Any:
    column = _column(table, section)
    return column.field(column.type.get_field_index(key))


def _with_member(table: Any, section: str, key: str, array: Any) -> Any:
    import pyarrow as pa
    column = _column(table, section)
    typ = column.type
    children, fields = [], []
    for i in range(typ.num_fields):
        field = typ.field(i)
        if field.name == key:
            children.append(array)
            fields.append(pa.field(key, array.type))
        else:
            children.append(column.field(i))
            fields.append(field)
    struct = pa.StructArray.from_arrays(children, fields=fields,
                                        mask=column.is_null() if column.null_count else None)
    return _set_column(table, section, struct)


def _value(member: Any, **replace: Any) -> Any:
    """A VALUE struct like ``member`` with some children replaced (None drops one)."""
    import pyarrow as pa
    names = [member.type.field(i).name for i in range(member.type.num_fields)]
    children = {name: member.field(i) for i, name in enumerate(names)}
    for name, array in replace.items():
        if array is None:
            children.pop(name, None)
        else:
            children[name] = array
    order = [name for name in "tbiufsxe" if name in children] + \
        [name for name in children if name not in "tbiufsxe"]
    return pa.StructArray.from_arrays([children[n] for n in order], names=order,
                                      mask=member.is_null() if member.null_count else None)


def _tags(member: Any) -> list:
    return member.field(0).to_pylist()


def _nulled(array: Any, rows: set) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc
    mask = pa.array([i in rows for i in range(len(array))])
    return pc.if_else(mask, pa.nulls(len(array), array.type), array)


def _binary(offsets: list, data: bytes, valid: list | None = None, large: bool = False,
            typ: Any = None) -> Any:
    import numpy as np
    import pyarrow as pa
    typ = typ or (pa.large_binary() if large else pa.binary())
    width = "int64" if large else "int32"
    bitmap = None
    if valid is not None:
        bitmap = pa.array(valid, pa.bool_()).buffers()[1]
    return pa.Array.from_buffers(typ, len(offsets) - 1, [
        bitmap, pa.py_buffer(np.array(offsets, width).tobytes()), pa.py_buffer(data)],
        null_count=-1 if valid is None else valid.count(False))


def _spans_ok(offsets: list, size: int) -> list:
    return [0 <= offsets[i] <= offsets[i + 1] <= size for i in range(len(offsets) - 1)]


def _decodes_as(raw: bytes, tag: int) -> bool:
    from proton import Array, Described
    from filtex.amqp.codec import DecodeError, decode_value
    try:
        value, end = decode_value(raw)
    except DecodeError:
        return False
    return end == len(raw) and type(value) is {22: list, 23: dict, 24: Array,
                                               25: Described}[tag]


# --- the hostile variants ---------------------------------------------------------------

Variant = Callable[[random.Random, Any, list], "list[Case]"]
VARIANTS: list[tuple[str, Variant]] = []


def variant(fn: Variant) -> Variant:
    VARIANTS.append((fn.__name__, fn))
    return fn


@variant
def pristine(rng, table, messages):
    return [Case("pristine", table, list(messages), {})]


@variant
def tags_outside_the_table(rng, table, messages):
    import pyarrow as pa
    out = []
    for key in ("n", "s", "mix", "l", "d", "f", "b"):
        member = _member(table, AP, key)
        tags = _tags(member)
        rows = set(rng.sample(range(len(tags)), 6))
        bad = [rng.choice([26, 99, 127, -1, -128, -26, 100]) if i in rows else t
               for i, t in enumerate(tags)]
        hostile = _with_member(table, AP, key, _value(member, t=pa.array(bad, pa.int8())))
        out.append(Case(f"tags outside 0..25 ({key})", hostile, list(messages),
                        {(AP, key): rows}))
    return out


_CHILD = {2: "b", 3: "i", 4: "i", 5: "i", 6: "u", 7: "i", 8: "i", 9: "i", 10: "i", 11: "f",
          12: "f", 13: "x", 14: "x", 15: "x", 16: "s", 17: "i", 18: "x", 19: "x", 20: "s",
          21: "s", 22: "e", 23: "e", 24: "e", 25: "e"}


@variant
def null_children_under_their_tag(rng, table, messages):
    out = []
    for key in ("n", "s", "f", "b", "mix", "l", "d"):
        member = _member(table, AP, key)
        tags = _tags(member)
        for child in sorted({_CHILD[t] for t in tags if t in _CHILD}):
            using = [i for i, t in enumerate(tags) if _CHILD.get(t) == child]
            rows = set(rng.sample(using, min(3, len(using))))
            array = member.field(member.type.get_field_index(child))
            hostile = _with_member(table, AP, key, _value(member, **{child: _nulled(array, rows)}))
            out.append(Case(f"null {child} under its tag ({key})", hostile, list(messages),
                            {(AP, key): rows}))
    return out


@variant
def tags_naming_a_child_the_struct_lacks(rng, table, messages):
    import pyarrow as pa
    out = []
    for key, tag in (("s", 10), ("n", 20), ("f", 22), ("b", 12), ("l", 2), ("d", 6)):
        member = _member(table, AP, key)
        tags = _tags(member)
        rows = set(rng.sample(range(len(tags)), 5))
        bad = [tag if i in rows else t for i, t in enumerate(tags)]
        hostile = _with_member(table, AP, key, _value(member, t=pa.array(bad, pa.int8())))
        out.append(Case(f"tag {tag} without its child ({key})", hostile, list(messages),
                        {(AP, key): rows}))
    return out


def _recoded(member: Any, codes: list, index_type: Any, dictionary: Any = None) -> Any:
    import pyarrow as pa
    strings = member.field(member.type.get_field_index("s"))
    dictionary = strings.dictionary if dictionary is None else dictionary
    valid = strings.is_valid().to_pylist()
    indices = pa.array([c if v else None for c, v in zip(codes, valid)], index_type)
    return pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)


@variant
def dictionary_codes_outside_the_dictionary(rng, table, messages):
    import pyarrow as pa
    out = []
    for key in ("s", "mix"):
        member = _member(table, AP, key)
        tags = _tags(member)
        strings = member.field(member.type.get_field_index("s"))
        size = len(strings.dictionary)
        codes = strings.indices.fill_null(0).to_pylist()
        using = [i for i, t in enumerate(tags) if t in (16, 20, 21)]
        for index_type, lows, highs in (
                (pa.int32(), [-1, -2, -10**6, -2**31], [size, size + 5, 2**31 - 1]),
                (pa.int8(), [-1, -128], [size, 127]), (pa.int16(), [-1, -2**15], [2**15 - 1]),
                (pa.int64(), [-1, -2**63, -2**31 - 1], [2**31, 2**63 - 1]),
                (pa.uint8(), [], [size, 255]), (pa.uint16(), [], [65535]),
                (pa.uint32(), [], [2**31, 2**32 - 1]), (pa.uint64(), [], [2**63, 2**64 - 1])):
            rows = set(rng.sample(using, min(4, len(using))))
            bad = list(codes)
            for row in rows:
                bad[row] = rng.choice(lows + highs)
            array = _recoded(member, bad, index_type)
            hostile = _with_member(table, AP, key, _value(member, s=array))
            out.append(Case(f"codes outside the dictionary ({key}, {index_type})", hostile,
                            list(messages), {(AP, key): rows}))
            good = _with_member(table, AP, key, _value(member, s=_recoded(member, codes,
                                                                           index_type)))
            out.append(Case(f"indices of type {index_type} ({key})", good, list(messages), {}))
    return out


@variant
def string_types_from_other_programs(rng, table, messages):
    import pyarrow as pa
    out = []
    member = _member(table, AP, "s")
    strings = member.field(member.type.get_field_index("s"))
    plain = strings.cast(pa.string())
    kinds = {"string": plain, "large_string": plain.cast(pa.large_string()),
             "dictionary<int16, large_string>": pa.DictionaryArray.from_arrays(
                 strings.indices.cast(pa.int16()), strings.dictionary.cast(pa.large_string()))}
    if hasattr(pa, "string_view"):
        kinds["string_view"] = plain.cast(pa.string_view())
    for name, array in kinds.items():
        hostile = _with_member(table, AP, "s", _value(member, s=array))
        out.append(Case(f"s as {name}", hostile, list(messages), {}))
    subject = _member(table, PROPS, "subject")
    for name, array in (("string", subject.cast(pa.string())),
                        ("large_string", subject.cast(pa.large_string()))):
        out.append(Case(f"subject as {name}", _with_member(table, PROPS, "subject", array),
                        list(messages), {}))
    return out


def _invalid_dictionary(dictionary: Any, chosen: set, lying: bool) -> tuple[Any, set, set]:
    """The dictionary with entries ``chosen`` not valid UTF-8 (or, ``lying``,
    with offsets that lie around them): (it, its unreadable entries, its
    entries readable but changed)."""
    import pyarrow as pa
    values = [v.encode() for v in dictionary.to_pylist()]
    data, offsets = b"", [0]
    for i, value in enumerate(values):
        data += b"\xff\xfe" if (i in chosen and not lying) else value
        offsets.append(len(data))
    if lying:
        for i in chosen:   # an end past the data, or before its start
            if i + 1 < len(offsets) - 1:
                offsets[i + 1] = len(data) + 50 if i % 2 else offsets[i] - 1
    ok = _spans_ok(offsets, len(data))
    unreadable = {i for i in range(len(values)) if not ok[i] or (i in chosen and not lying)}
    changed = {i for i in range(len(values)) if i not in unreadable
               and data[offsets[i]:offsets[i + 1]] != values[i]}
    return _binary(offsets, data, typ=pa.string()), unreadable, changed


@variant
def dictionaries_that_are_not_utf8(rng, table, messages):
    import pyarrow as pa
    out = []
    for lying in (False, True):
        what = "offsets that lie" if lying else "not UTF-8"
        for key in ("s", "mix"):
            member = _member(table, AP, key)
            strings = member.field(member.type.get_field_index("s"))
            size = len(strings.dictionary)
            chosen = set(rng.sample(range(size), min(2, size)))
            dictionary, unreadable, changed = _invalid_dictionary(strings.dictionary, chosen,
                                                                  lying)
            codes = strings.indices.fill_null(0).to_pylist()
            tags, valid = _tags(member), strings.is_valid().to_pylist()
            using = [t in (16, 20, 21) and v for t, v in zip(tags, valid)]
            rows = {i for i, c in enumerate(codes) if using[i] and c in unreadable}
            expected = [None if using[i] and codes[i] in changed else m
                        for i, m in enumerate(messages)]
            array = pa.DictionaryArray.from_arrays(strings.indices, dictionary)
            hostile = _with_member(table, AP, key, _value(member, s=array))
            out.append(Case(f"dictionary {what} ({key})", hostile, expected, {(AP, key): rows}))
        subject = _member(table, PROPS, "subject")
        dictionary, unreadable, changed = _invalid_dictionary(subject.dictionary, {0}, lying)
        codes = subject.indices.to_pylist()
        rows = {i for i, c in enumerate(codes) if c in unreadable}
        expected = [None if c in changed else m for c, m in zip(codes, messages)]
        hostile = _with_member(table, PROPS, "subject",
                               pa.DictionaryArray.from_arrays(subject.indices, dictionary))
        out.append(Case(f"subject dictionary {what}", hostile, expected,
                        {(PROPS, "subject"): rows}))
    return out


def _bytes_variant(member: Any, child: str, tags: list, rng: random.Random,
                   corrupt: Callable[[int, bytes], bytes]) -> tuple[Any, set, set]:
    """The child with some values of its tags corrupted: (array, malformed
    rows, rows changed but still readable)."""
    values = member.field(member.type.get_field_index(child)).to_pylist()
    using = [i for i, t in enumerate(tags) if _CHILD.get(t) == child and values[i] is not None]
    rows = set(rng.sample(using, min(5, len(using))))
    data, offsets, valid, bad, changed = b"", [0], [], set(), set()
    for i, value in enumerate(values):
        if i in rows:
            value = corrupt(tags[i], value)
            width = {13: 4, 14: 8, 15: 16, 18: 16}.get(tags[i])
            if (width is not None and len(value) != width) or (
                    tags[i] >= 22 and not _decodes_as(value, tags[i])):
                bad.add(i)
            else:
                changed.add(i)
        data += value or b""
        offsets.append(len(data))
        valid.append(value is not None)
    return _binary(offsets, data, valid), bad, changed


@variant
def bytes_that_are_not_their_tags(rng, table, messages):
    out = []

    def widths(tag: int, value: bytes) -> bytes:
        return value + b"\x00" if rng.random() < 0.5 else value[:-1]

    def encodings(tag: int, value: bytes) -> bytes:
        choice = rng.randrange(7)
        if choice == 0:
            return value[:-1]                              # truncated
        if choice == 1:
            return value + b"\x40"                         # a value after the value
        if choice == 2:
            return b"\xff" + value[1:]                     # an unknown constructor
        if choice == 3:
            return b"\xa1\x02\xff\xfe"                     # a string, not a composite
        if choice == 4:
            return b"\xc0\x04\x01\xa1\x01\xff"             # a list holding invalid UTF-8
        if choice == 5:
            return b"\xc1\x05\x02\xa1\x01a\x40" + b"\x00" * (len(value) % 2)  # a map
        return b""
    for key, child, corrupt in (("d", "x", widths), ("mix", "x", widths), ("l", "e", encodings),
                                ("mix", "e", encodings)):
        member = _member(table, AP, key)
        tags = _tags(member)
        array, bad, changed = _bytes_variant(member, child, tags, rng, corrupt)
        expected = [None if i in changed else m for i, m in enumerate(messages)]
        hostile = _with_member(table, AP, key, _value(member, **{child: array}))
        out.append(Case(f"{child} bytes not their tag's ({key})", hostile, expected,
                        {(AP, key): bad}))
    return out


@variant
def offsets_that_lie(rng, table, messages):
    out = []
    for key, child in (("l", "e"), ("d", "x"), ("mix", "e"), ("mix", "x")):
        member = _member(table, AP, key)
        tags = _tags(member)
        values = member.field(member.type.get_field_index(child)).to_pylist()
        data, offsets = b"", [0]
        for value in values:
            data += value or b""
            offsets.append(len(data))
        for i in rng.sample(range(1, len(offsets) - 1), 4):
            offsets[i] = rng.choice([len(data) + 1000, -7, 2**31 - 1, offsets[i] + 3])
        ok = _spans_ok(offsets, len(data))
        bad, changed = set(), set()
        for i, t in enumerate(tags):
            if _CHILD.get(t) != child or values[i] is None:
                continue
            now = data[offsets[i]:offsets[i + 1]] if ok[i] else None
            if now is None or not _still_readable(t, now):
                bad.add(i)
            elif now != values[i]:
                changed.add(i)
        array = _binary(offsets, data, [v is not None for v in values])
        expected = [None if i in changed else m for i, m in enumerate(messages)]
        hostile = _with_member(table, AP, key, _value(member, **{child: array}))
        out.append(Case(f"{child} offsets that lie ({key})", hostile, expected,
                        {(AP, key): bad}))
    return out


def _still_readable(tag: int, value: bytes) -> bool:
    width = {13: 4, 14: 8, 15: 16, 18: 16}.get(tag)
    if width is not None:
        return len(value) == width
    if tag >= 22:
        return _decodes_as(value, tag)
    return True


@variant
def nested_nulls(rng, table, messages):
    import filtex
    import pyarrow as pa
    out = []
    for key in ("n", "s", "l", "mix"):
        member = _member(table, AP, key)
        rows = set(rng.sample(range(len(member)), 6))
        mask = pa.array([i in rows for i in range(len(member))])
        names = [member.type.field(i).name for i in range(member.type.num_fields)]
        null_value = pa.StructArray.from_arrays([member.field(i) for i in range(len(names))],
                                                names=names, mask=mask)
        expected = []
        for i, m in enumerate(messages):
            if i in rows and key in m.application_properties:
                props = dict(m.application_properties)
                del props[key]
                m = filtex.Message(header=m.header, properties=m.properties,
                                   application_properties=props, body=m.body,
                                   message_annotations=m.message_annotations,
                                   connection=m.connection)
            expected.append(m)
        out.append(Case(f"null VALUE structs ({key})",
                        _with_member(table, AP, key, null_value), expected, {}))
        null_tags = _value(member, t=_nulled(member.field(0), rows))
        out.append(Case(f"null tags ({key})", _with_member(table, AP, key, null_tags),
                        expected, {}))
    column = _column(table, AP)
    rows = set(rng.sample(range(len(column)), 6))
    mask = pa.array([i in rows for i in range(len(column))])
    names = [column.type.field(i).name for i in range(column.type.num_fields)]
    section = pa.StructArray.from_arrays([column.field(i) for i in range(len(names))],
                                         fields=list(column.type), mask=mask)
    expected = [None if i in rows else m for i, m in enumerate(messages)]
    out.append(Case("null application_properties rows", _set_column(table, AP, section),
                    expected, {}))
    return out


@variant
def columns_of_the_wrong_type(rng, table, messages):
    import pyarrow as pa
    n = table.num_rows
    out = []
    listed = pa.array([[i] for i in range(n)], pa.list_(pa.int64()))
    out.append(Case("application_properties as list<int64>", _set_column(table, AP, listed),
                    list(messages), {(AP, None): ALL}))
    out.append(Case("header as int64", _set_column(table, HEADER, pa.array(range(n), pa.int64())),
                    list(messages), {(HEADER, None): ALL}))
    out.append(Case("n as int64", _with_member(table, AP, "n", pa.array(range(n), pa.int64())),
                    list(messages), {(AP, "n"): set(range(n))}))
    member = _member(table, AP, "n")
    out.append(Case("n's i as string", _with_member(table, AP, "n", _value(
        member, i=pa.array([str(i) for i in range(n)]))), list(messages),
        {(AP, "n"): {i for i, t in enumerate(_tags(member)) if _CHILD.get(t) == "i"}}))
    out.append(Case("n's t as string", _with_member(table, AP, "n", _value(
        member, t=pa.array(["10"] * n))), list(messages), {(AP, "n"): set(range(n))}))
    priority = _member(table, HEADER, "priority")
    values = priority.to_pylist()
    wide = [None if v is None else (rng.choice([300, -1, 2**40]) if i % 5 == 0 else v)
            for i, v in enumerate(values)]
    bad = {i for i, v in enumerate(wide) if v is not None and not 0 <= v <= 255}
    out.append(Case("priority as int64 out of range",
                    _with_member(table, HEADER, "priority", pa.array(wide, pa.int64())),
                    list(messages), {(HEADER, "priority"): bad}))
    created = _member(table, PROPS, "creation-time")
    seconds = created.cast(pa.int64()).cast(pa.timestamp("s", tz="UTC"))
    out.append(Case("creation-time in seconds", _with_member(table, PROPS, "creation-time",
                                                               seconds), list(messages),
                    {(PROPS, "creation-time"): {i for i, v in enumerate(created.to_pylist())
                                                if v is not None}}))
    return out


@variant
def residuals_that_lie(rng, table, messages):
    import pyarrow as pa
    from filtex.table.build import encode_exact
    rest = _column(table, "application_properties_rest")
    entries = rest.to_pylist()
    holding = [i for i, e in enumerate(entries) if e]
    rows = set(rng.sample(holding, min(4, len(holding))))
    tags = _tags(_member(table, AP, "n"))
    present = [i for i, t in enumerate(tags) if t != 0 and i not in rows]
    twice = set(rng.sample(present, min(3, len(present))))
    changed = []
    for i, e in enumerate(entries):
        if i in rows:
            e = [(k, b"\xff") for k, _ in e]
        elif i in twice:
            e = list(e or []) + [(encode_exact("n"), encode_exact(5))]
        changed.append(e)
    array = pa.array(changed, rest.type)
    # an entry that does not decode spoils the section (its residual is read
    # whole); a key twice spoils that key only (the row views of a filter that
    # does not read it never see its struct member)
    return [Case("residual entries that do not decode or repeat a key",
                 _set_column(table, "application_properties_rest", array), list(messages),
                 {(AP, None): rows, (AP, "n"): twice})]


@variant
def children_shorter_than_their_struct(rng, table, messages):
    """An IPC file whose field nodes say a child is shorter than its struct."""
    out = []
    for path, key in ((("application_properties", "n", "i"), (AP, "n")),
                      (("application_properties", "s", "s"), (AP, "s")),
                      (("header", "priority"), (HEADER, "priority")),
                      (("application_properties", "l"), (AP, "l"))):
        for length in (3, 0):
            patched = _ipc_patched(table, path, length)
            if patched is not None:
                out.append(Case(f"IPC: {'.'.join(path)} of length {length}", patched,
                                list(messages), {key: ALL}))
    return out


def _nodes(typ: Any, array: Any, path: tuple, found: list, target: tuple) -> None:
    """Field nodes of ``array`` in IPC order: (length, null count, is it ``target``)."""
    import pyarrow as pa
    found.append((len(array), array.null_count, path == target))
    if pa.types.is_struct(typ):
        for i in range(typ.num_fields):
            _nodes(typ.field(i).type, array.field(i), path + (typ.field(i).name,), found, target)
    elif pa.types.is_map(typ):
        entries = array.values
        found.append((len(entries), entries.null_count, False))
        found.append((len(entries.field(0)), entries.field(0).null_count, False))
        found.append((len(entries.field(1)), entries.field(1).null_count, False))


def _ipc_patched(table: Any, target: tuple, length: int) -> Any:
    """``table`` through an IPC file whose node for the array at ``target``
    says it has ``length`` rows; None if the node is not found once."""
    import pyarrow as pa
    import pyarrow.ipc as ipc
    batch = table.combine_chunks().to_batches()[0]
    nodes: list = []
    for i, field in enumerate(batch.schema):
        _nodes(field.type, batch.column(i), (field.name,), nodes, target)
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    raw = bytearray(sink.getvalue().to_pybytes())
    vector = b"".join(struct.pack("<qq", n, nulls) for n, nulls, _ in nodes)
    at = raw.find(vector)
    if at < 0 or raw.find(vector, at + 1) >= 0:
        return None
    index = next(i for i, node in enumerate(nodes) if node[2])
    raw[at + 16 * index: at + 16 * index + 8] = struct.pack("<q", length)
    with ipc.open_file(pa.py_buffer(bytes(raw))) as reader:
        return pa.Table.from_batches([reader.get_batch(0)])


@variant
def ipc_round_trips(rng, table, messages):
    import pyarrow as pa
    import pyarrow.ipc as ipc
    out = []
    for case in (dictionary_codes_outside_the_dictionary(rng, table, messages)[:3]
                 + offsets_that_lie(rng, table, messages)[:2]
                 + dictionaries_that_are_not_utf8(rng, table, messages)[:2]):
        sink = pa.BufferOutputStream()
        with ipc.new_file(sink, case.table.schema) as writer:
            writer.write_table(case.table)
        with ipc.open_file(pa.py_buffer(sink.getvalue())) as reader:
            read = pa.Table.from_batches([reader.get_batch(i)
                                          for i in range(reader.num_record_batches)])
        out.append(case._replace(name=f"IPC: {case.name}", table=read))
    return out


@variant
def parquet_round_trips(rng, table, messages):
    """Through a Parquet file and ``filtex.arrow.read``: the variants whose
    arrays a Parquet writer can copy (no offsets or codes that lie) and whose
    types the layout's cast does not repair."""
    import tempfile

    import filtex.arrow as fa
    import pyarrow.parquet as pq
    chosen = (tags_outside_the_table(rng, table, messages)[:2]
              + null_children_under_their_tag(rng, table, messages)[:2]
              + tags_naming_a_child_the_struct_lacks(rng, table, messages)[:2]
              + [c for c in columns_of_the_wrong_type(rng, table, messages)
                 if c.name in ("application_properties as list<int64>", "n as int64",
                               "priority as int64 out of range")]
              + nested_nulls(rng, table, messages)[:2]
              + string_types_from_other_programs(rng, table, messages)[:2])
    out = []
    with tempfile.TemporaryDirectory() as directory:
        for number, case in enumerate(chosen):
            path = Path(directory) / f"{number}.parquet"
            pq.write_table(case.table, path, row_group_size=16)
            out.append(case._replace(name=f"Parquet: {case.name}", table=fa.read(path)))
    return out


@variant
def batches_with_their_own_dictionaries(rng, table, messages):
    import filtex.arrow as fa
    import pyarrow as pa
    half = len(messages) // 2
    first = _table(messages[:half])
    second = fa.message_table(messages[half:], schema=first.schema).combine_chunks()
    out = [Case("two batches, two dictionaries", pa.concat_tables([first, second]),
                list(messages), {})]
    for bad in [c for c in dictionary_codes_outside_the_dictionary(rng, second, messages[half:])
                if "outside" in c.name and c.name.endswith(", int32)")]:
        both = pa.concat_tables([first, bad.table])
        out.append(Case(f"two batches, the second: {bad.name}", both, list(messages),
                        {k: (ALL if v == ALL else {half + r for r in v})
                         for k, v in bad.malformed.items()}))
    return out


@variant
def flat_tables(rng, table, messages):
    """Flat tables (plain columns) whose string and binary columns lie."""
    import filtex
    import pyarrow as pa
    n = 30
    words = [rng.choice(["a", "b", "é", "abc", "x"]) for _ in range(n)]
    ints = [rng.choice([1, 5, None]) for _ in range(n)]
    data, offsets = b"", [0]
    for word in words:
        data += word.encode()
        offsets.append(len(data))
    invalid = set(rng.sample(range(n), 4))
    raw = bytearray(data)
    for i in invalid:
        raw[offsets[i]] = 0xff
    lying = list(offsets)
    for i in rng.sample(range(1, n), 3):
        lying[i] = len(data) + 99
    lied = {i for i, ok in enumerate(_spans_ok(lying, len(data))) if not ok}
    mapping = {"n": "n", "s": "s", "subject": ("properties", "subject")}
    cases = []
    for name, array, bad, as_text in (
            ("invalid UTF-8", _binary(offsets, bytes(raw), typ=pa.string()), invalid, True),
            ("offsets that lie", _binary(lying, data, typ=pa.string()), lied, True),
            ("binary offsets that lie", _binary(lying, data), lied, False)):
        flat = pa.table({"n": pa.array(ints, pa.int64()), "s": array,
                         "subject": array if as_text else pa.array(words)})
        expected = []
        for i in range(n):
            props = {"s": words[i] if as_text else words[i].encode()}
            if ints[i] is not None:
                props["n"] = ints[i]
            expected.append(None if i in bad else filtex.Message(
                application_properties=props, properties={"subject": words[i]}))
        malformed = {(AP, "s"): set(bad)}
        if as_text:
            malformed[(PROPS, None)] = set(bad)
        cases.append(Case(f"flat: {name}", ("flat", flat, mapping), expected, malformed))
    return cases


# --- the checks -----------------------------------------------------------------------------

def _bad_rows(malformed: dict, fields: set, n: int) -> set:
    sections = {s for s, _ in fields}
    bad: set = set()
    for (section, key), rows in malformed.items():
        if (section, key) in fields or (key is None and section in sections):
            bad |= set(range(n)) if rows == ALL else rows
    return bad


def _reference(flt: Any, table: Any, rc: Any) -> list:
    """The per-message engine over the row views of what the filter reads."""
    from filtex.arrow.engine import _narrow, prepared
    from filtex.table.rows import Malformed, read_rows
    out: list = []
    for batch in table.to_batches():
        narrowed, broken = _narrow(batch, prepared(flt).columns)
        if broken is not None:
            out += [None] * batch.num_rows
            continue
        out += [None if isinstance(v, Malformed) else flt.evaluate(v, rc)
                for v in read_rows(narrowed)]
    return out


def check(case: Case, filters: list) -> tuple[list, int, int]:
    """(problems, verdicts checked, malformed verdicts checked)."""
    import filtex.arrow as fa
    from filtex.table.rows import Malformed, read_rows
    problems: list[str] = []
    checked = malformed_checked = 0
    table, options = case.table, {}
    if isinstance(table, tuple):   # a flat table and its mapping
        _, table, mapping = table
        options = {"mapping": mapping}
        from filtex.table.flat import message_table_of
        laid_out = message_table_of(table, mapping)
    else:
        laid_out = table
    n = table.num_rows
    try:
        views = [v for b in laid_out.to_batches() for v in read_rows(b)]
    except Exception as exc:   # noqa: BLE001 - reported
        return [f"read_rows raised {type(exc).__name__}: {exc}"], 0, 0
    try:
        fa.evaluate_rows(filters[0][0], laid_out)
    except Exception as exc:   # noqa: BLE001 - reported
        problems.append(f"evaluate_rows raised {type(exc).__name__}: {exc}")
    for flt, rc, _ in filters[:3]:   # the matching rows, or a ValueError saying why not
        try:
            kept = fa.filter_table(flt, table, rc, **options)
            if kept.num_rows != fa.evaluate(flt, table, rc, **options).verdicts.true_count:
                problems.append(f"{flt.text}: filter_table kept {kept.num_rows} rows")
        except ValueError as exc:
            if "cannot be copied" not in str(exc):
                problems.append(f"{flt.text}: filter_table raised {exc}")
        except Exception as exc:   # noqa: BLE001 - reported
            problems.append(f"{flt.text}: filter_table raised {type(exc).__name__}: {exc}")
    everything = _bad_rows(case.malformed, {(s, k) for s, k in case.malformed}, n)
    refused = {i for i, v in enumerate(views) if isinstance(v, Malformed)}
    if everything - refused:
        problems.append(f"row views read malformed rows {sorted(everything - refused)[:8]}")
    for flt, rc, fields in filters:
        try:
            got = fa.evaluate(flt, table, rc, **options).verdicts.to_pylist()
        except Exception as exc:   # noqa: BLE001 - reported
            problems.append(f"{flt.text}: evaluate raised {type(exc).__name__}: {exc}")
            continue
        try:
            want = _reference(flt, laid_out, rc)
        except Exception as exc:   # noqa: BLE001 - reported
            problems.append(f"{flt.text}: the row views raised {type(exc).__name__}: {exc}")
            continue
        if got != want:
            rows = [i for i in range(n) if got[i] != want[i]]
            problems.append(f"{flt.text}: kernels {[got[i] for i in rows[:5]]} but row views "
                            f"{[want[i] for i in rows[:5]]} on rows {rows[:5]}")
        bad = _bad_rows(case.malformed, fields, n)
        for row in sorted(bad):
            malformed_checked += 1
            if got[row] is not None:
                problems.append(f"{flt.text}: malformed row {row} is {got[row]}")
                break
        for row, message in enumerate(case.expected):
            if message is None or row in bad:
                continue
            checked += 1
            expected = flt.evaluate(message, rc)
            if got[row] is not expected:
                problems.append(f"{flt.text}: row {row} is {got[row]}, its message {expected}")
                break
    return problems, checked, malformed_checked


def _slices(case: Case, filters: list) -> list[str]:
    """Every offset (and a length) of the table gives the whole table's verdicts."""
    import filtex.arrow as fa
    problems = []
    table = case.table
    for flt, rc, _ in filters:
        whole = fa.evaluate(flt, table, rc).verdicts.to_pylist()
        for start in range(table.num_rows):
            for length in {table.num_rows - start, min(3, table.num_rows - start)}:
                part = fa.evaluate(flt, table.slice(start, length), rc).verdicts.to_pylist()
                if part != whole[start:start + length]:
                    problems.append(f"{flt.text}: slice ({start}, {length}) disagrees")
                    break
    return problems


def main(argv: list[str]) -> int:
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else SEED
    only = argv[argv.index("--case") + 1] if "--case" in argv else None
    rng = random.Random(seed)
    messages = _messages(rng, ROWS)
    table = _table(messages)
    filters = _compiled()
    sliced = [f for f in filters if f[0].text in ("n > 1 OR s = 'a'", "EXISTS(l)", "mix = 5",
                                                  "p.subject = 'x'")]
    for name, make in VARIANTS:
        if only is not None and only not in name:
            continue
        for number, case in enumerate(make(random.Random(f"{seed}:{name}"), table, messages)):
            problems, checked, bad = check(case, filters)
            if number == 0 and not isinstance(case.table, tuple):   # one case a variant
                problems += _slices(case, sliced)
            print(json.dumps({"case": case.name, "problems": problems[:8],
                              "checked": checked, "malformed": bad}), flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    raise SystemExit(main(sys.argv[1:]))
