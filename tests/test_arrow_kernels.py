"""The batch engine's kernels agree with the per-message engine, row by row.

Random filters of every dialect over random tables (absent, null and
wrong-typed values, NaN, -0.0, huge integers, unicode); the exact interval
arithmetic behind numeric comparisons; hostile tables whose tags and children
disagree; slices and chunks; the kernel cache (shape sharing, the disk cache
shared by processes). Conformance cases run through the kernels in
test_arrow_table.py.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
from decimal import Decimal

import pytest

pa = pytest.importorskip("pyarrow")
pytest.importorskip("numba")

from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from randomness import PROFILE, examples  # noqa: E402
from proton import float32, int32, timestamp, ubyte, ulong  # noqa: E402

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
from filtex.arrow import kernel  # noqa: E402
from filtex.codegen import modules  # noqa: E402
from filtex.plan import intervals  # noqa: E402
from filtex.plan.skeleton import plan  # noqa: E402
from filtex.dialects import AMQP  # noqa: E402
from filtex.runtime.values import encode_decimal  # noqa: E402

from exact import same_table  # noqa: E402

from test_differential import (lenient_expression, lenient_messages, messages,  # noqa: E402
                               predicate, typed_predicate)

RANDOM = settings(max_examples=examples(120), deadline=None, suppress_health_check=list(HealthCheck))


def agree(flt, table, source, rc=None):
    """The batch verdicts equal the per-message verdicts of the source messages,
    in the fused engine and in the pass-per-atom engine it replaced; the fused
    one hands no more rows to the per-message engine than the other."""
    result = fa.evaluate(flt, table, rc)
    want = [flt.evaluate(m, rc) for m in source]
    assert result.verdicts.to_pylist() == want, (flt.text, result.fallback_rows)
    passes = fa.evaluate(flt, table, rc, engine="passes")
    assert passes.verdicts.to_pylist() == want, (flt.text, "passes", passes.fallback_rows)
    assert result.fallback_rows <= passes.fallback_rows, flt.text
    return result


def table_or_skip(source):
    """A table of the messages; the differential generators also draw plain
    ``Decimal`` values, which have no AMQP type and no place in a table."""
    try:
        return fa.message_table(source)
    except (TypeError, ValueError):
        assume(False)


def compiled_or_skip(text, dialect):
    try:
        return filtex.compile_sql(text, dialect)
    except filtex.FilterError:
        assume(False)


# --- random filters over random tables ----------------------------------------------------

SHAPES = ["{0}", "NOT ({0})", "({0}) AND ({1})", "({0}) OR ({1})", "NOT (({0}) AND ({1}))",
          "({0}) AND NOT (({1}) OR ({2}))", "(({0}) OR ({1})) AND ({2})",
          "(({0}) AND ({1})) OR NOT ({2})"]
"""Boolean skeletons the random filters take: each new skeleton costs a numba
compile (about a second), so the suite draws them from this fixed set and
varies the predicates, constants and messages; FILTEX_HYPOTHESIS=explore draws
random trees instead."""


def shaped(leaf, tree):
    """A filter of fixed shape over random leaves (random trees when exploring)."""
    if PROFILE == "explore":
        return tree
    return st.tuples(st.sampled_from(SHAPES), st.lists(leaf, min_size=3, max_size=3)).map(
        lambda t: t[0].format(*t[1]))


@pytest.mark.slow
@RANDOM
@given(shaped(st.one_of(typed_predicate(0), predicate(0)),
              st.one_of(typed_predicate(2), predicate(1))),
       st.lists(messages(), min_size=2, max_size=12))
def test_random_amqp_filters_agree(text, source):
    flt = compiled_or_skip(text, "amqp")
    agree(flt, table_or_skip(source), source)


@pytest.mark.slow
@RANDOM
@given(st.sampled_from(["jms", "rabbitmq"]).flatmap(
    lambda d: st.tuples(st.just(d), shaped(lenient_expression(d, 0), lenient_expression(d, 2)))),
    st.lists(lenient_messages(), min_size=2, max_size=12))
def test_random_lenient_filters_agree(dialect_text, source):
    dialect, text = dialect_text
    flt = compiled_or_skip(text, dialect)
    agree(flt, table_or_skip(source), source)


EDGE_VALUES = [None, True, False, 0, -1, 1, 2**53, 2**53 + 1, -(2**63), 2**63 - 1,
               ulong(2**64 - 1), ulong(2**63), ubyte(255), 0.0, -0.0, 1.5, -1.5, math.nan,
               math.inf, -math.inf, 2.0**53, float32(0.1), 9007199254740993.0, "1", "é",
               "EU-été", "", "a%", timestamp(5), encode_decimal(Decimal("1.5"), 64)]
EDGE_FILTERS = ["x = 0", "x <> 0", "x < 1.5", "x <= 1.5", "x > -1", "x >= 9007199254740993",
                "x = 9007199254740993", "x BETWEEN -0.5 AND 2", "x NOT BETWEEN 0 AND 1",
                "x IN (0, 1, 2, 9007199254740992)", "x NOT IN (1.5, -1)", "x > 1E308",
                "x < -INF", "x <> NAN", "x = 18446744073709551615", "x > 0.1",
                "x IS NULL", "NOT x IS NULL", "EXISTS(x)", "x LIKE 'E%'", "x = 'é'",
                "NOT (x > 1)", "x % 2 = 1", "x * 2 > 3", "x = TRUE", "x"]


@pytest.mark.slow
@pytest.mark.parametrize("dialect", ["amqp", "jms", "rabbitmq"])
def test_edge_values_of_every_type(dialect):
    source = [filtex.Message()] + [filtex.Message(application_properties={"x": v})
                                   for v in EDGE_VALUES]
    table = fa.message_table(source)
    checked = 0
    for text in EDGE_FILTERS:
        try:
            flt = filtex.compile_sql(text, dialect)
        except filtex.FilterError:
            continue
        agree(flt, table, source)
        for row in range(len(source)):   # alone, so no other row's type is in the column
            agree(flt, table.slice(row, 1), source[row:row + 1])
        checked += 1
    assert checked >= 12


# --- exact intervals ------------------------------------------------------------------------

constants = st.one_of(st.integers(-2**65, 2**65), st.floats(allow_nan=True),
                      st.decimals(allow_nan=False, places=3, min_value=-10**20, max_value=10**20),
                      st.sampled_from([2**53 + 1, 2.0**53, Decimal("0.1"), 0.1, -0.0]))


@given(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]), constants,
       st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-5, 5)),
       st.floats(allow_nan=False, allow_infinity=True).filter(lambda f: f != 0 or
                                                              math.copysign(1, f) > 0))
@settings(max_examples=examples(400), deadline=None)
def test_intervals_are_pythons_exact_comparisons(op, c, i, f):
    py = {"=": lambda a, b: a == b, "<>": lambda a, b: a != b, "<": lambda a, b: a < b,
          "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}[op]
    assume(not (isinstance(c, Decimal) and c.is_nan()))
    assert intervals.contains(intervals.compare(intervals.INT64, op, c), i) == py(i, c)
    assert intervals.contains(intervals.compare(intervals.DOUBLE, op, c), f) == py(f, c)
    if i >= 0:
        assert intervals.contains(intervals.compare(intervals.UINT64, op, c), i) == py(i, c)


# --- hostile and unusual tables --------------------------------------------------------------

def _table_with_x(value_struct):
    base = fa.message_table([filtex.Message(application_properties={"x": 1})] * len(value_struct))
    ap = pa.StructArray.from_arrays([value_struct], names=["x"])
    return base.set_column(base.schema.get_field_index("application_properties"),
                           base.schema.field("application_properties").with_type(ap.type), [ap])


def test_tags_and_children_that_disagree_go_row_by_row():
    tags = pa.array([10, 10, 100, 20, 12, -3], pa.int8())
    ints = pa.array([5, None, 5, 5, 5, 5], pa.int64())
    floats = pa.array([None, None, None, None, None, 1.0], pa.float64())
    strings = pa.array(["a", "a", "a", None, "a", "a"]).dictionary_encode()
    struct = pa.StructArray.from_arrays([tags, ints, floats, strings], names=["t", "i", "f", "s"])
    table = _table_with_x(struct)
    flt = filtex.compile_sql("x = 5")
    with pytest.raises(ValueError, match="row 1 .*with a null 'i'"):
        list(fa.messages(table))   # the row views refuse a tag without its value
    with pytest.raises(ValueError, match="unknown AMQP type tag"):
        list(fa.messages(table.slice(2, 1)))   # and tags 100 and -3
    assert fa.evaluate_rows(flt, table).to_pylist() == [True, None, None, None, None, None]
    result = fa.evaluate(flt, table)
    # the good row is decided; each bad row (a child missing under its tag, an unknown
    # tag) takes the per-message path, where its view is refused: unknown
    assert result.verdicts.to_pylist() == [True, None, None, None, None, None]
    assert result.fallback_rows == 5


def test_dictionary_codes_out_of_range_never_read_out_of_bounds():
    dictionary = pa.array(["a", "b"])
    indices = pa.array([0, 1, 7, -1], pa.int32())
    strings = pa.DictionaryArray.from_arrays(indices, dictionary, safe=False)
    struct = pa.StructArray.from_arrays([pa.array([20] * 4, pa.int8()), strings],
                                        names=["t", "s"])
    table = _table_with_x(struct)
    result = fa.evaluate(filtex.compile_sql("x = 'b'"), table)
    assert result.verdicts.to_pylist()[:2] == [False, True]
    assert result.fallback_rows == 2


def test_residual_entries_go_row_by_row():
    schema = fa.message_table([filtex.Message(application_properties={"x": 1})]).schema
    source = [filtex.Message(application_properties={"x": v}) for v in (1, "one", 2.5, None)]
    table = fa.message_table(source, schema=schema)   # only an int child: the rest is residual
    result = agree(filtex.compile_sql("x > 0"), table, source)
    assert result.fallback_rows == 2   # "one" and 2.5 (None is the null tag)


@pytest.mark.slow
def test_slices_chunks_and_parquet_row_groups(tmp_path):
    import pyarrow.parquet as pq
    source = [filtex.Message(application_properties={"x": i % 7, "s": f"v{i % 5}"},
                             header={"priority": ubyte(i % 10)}) for i in range(3000)]
    table = fa.message_table(source)
    flt = filtex.compile_sql("x BETWEEN 2 AND 5 AND (s LIKE 'v1%' OR h.priority > 6)")
    agree(flt, table.slice(1001, 777), source[1001:1778])
    chunked = pa.concat_tables([table.slice(0, 1000), table.slice(1000)])
    assert chunked.column(0).num_chunks == 2
    agree(flt, chunked, source)
    pq.write_table(table, tmp_path / "m.parquet", row_group_size=256)
    for batch in fa.read_batches(tmp_path / "m.parquet"):
        assert fa.evaluate(flt, batch).fallback_rows == 0
    agree(flt, fa.read(tmp_path / "m.parquet"), source)


def test_filters_without_a_kernel_form_say_why_and_still_agree():
    source = [filtex.Message(application_properties={"a": i, "b": 3 - i}) for i in range(5)]
    flt = filtex.compile_sql("a / b > 1")   # division: no kernel form
    result = agree(flt, fa.message_table(source), source)
    assert not result.kernel and "several fields" in result.reason
    assert result.fallback_rows == 5


@pytest.mark.slow
def test_group_and_set_filters_run_as_kernels():
    source = [filtex.Message(application_properties={"a": i % 3, "s": "x" * (i % 2)},
                             properties={"subject": f"t.{i % 4}"}) for i in range(40)]
    table = fa.message_table(source)
    flt = filtex.compile_filter_set({
        "sql": ("amqp:sql-filter", "a > 0"),
        "topic": ("apache.org:legacy-amqp-topic-binding:string", "t.*"),
        "props": ("amqp:application-properties-filter", {"s": "x"})})
    result = agree(flt, table, source)
    assert result.kernel and result.fallback_rows == 0


def test_no_local_reads_the_connection_column():
    source = [filtex.Message(connection=c, application_properties={"a": 1})
              for c in ("c1", "c2", None)]
    flt = filtex.compile_filter(("apache.org:no-local-filter:list", []))
    table = fa.message_table(source)
    for rc in ("c1", "c2", None):
        agree(flt, table, source, rc)


# --- the kernel cache -------------------------------------------------------------------------

def test_constants_do_not_change_the_kernel():
    a = plan(filtex.compile_sql("customer_id = 17").tree, AMQP.semantics)
    b = plan(filtex.compile_sql("customer_id = 4711 ").tree, AMQP.semantics)
    c = plan(filtex.compile_sql("NOT (region LIKE 'EU%')").tree, AMQP.semantics)
    assert a.shape == b.shape == c.shape == ("atom",)
    assert kernel.compiled(a.shape) is kernel.compiled(b.shape)


def test_constants_and_tables_do_not_change_the_fused_kernel():
    """The fused kernel's signature holds no constant, string table or interval:
    filters that differ only in them share it (over the same schema)."""
    source = [filtex.Message(application_properties={"c": v, "s": w}) for v, w in
              [(17, "EU-DE"), (4711, "US-CA"), ("x", None), (2.5, "EU-FR")]]
    table = fa.message_table(source)
    modules._memory.clear()
    agree(filtex.compile_sql("c = 17 AND s LIKE 'EU-%'"), table, source)
    count = len(modules._memory)
    for text in ["c = 4711 AND s LIKE 'US-%'", "c = 99 AND s LIKE 'U_-CA'",
                 "c BETWEEN 1 AND 20 AND s = 'EU-FR'"]:
        agree(filtex.compile_sql(text), table, source)
    assert len(modules._memory) == count


@pytest.mark.parametrize("text", ["s = 'EU-DE'", "s LIKE 'EU-%' OR c > 3", "c > 3",
                                  "s IS NULL AND c = 'x'", "s IN ('EU-DE', 'US-CA')"])
def test_the_batches_values_do_not_change_the_fused_kernel(text):
    """A stream's batches (one schema) share one kernel whatever their
    dictionaries hold: one string, strings no entry of which matches, all of them."""
    values = [(17, "EU-DE"), (4711, "US-CA"), ("x", None), (2.5, "EU-FR"), (1, "EU-DE"),
              (None, "x"), ("EU-DE", 3)]
    source = [filtex.Message(application_properties={k: v for k, v in (("c", c), ("s", s))
                                                     if v is not None}) for c, s in values]
    table = fa.message_table(source)
    flt = filtex.compile_sql(text)
    modules._memory.clear()
    agree(flt, table, source)
    count = len(modules._memory)
    for start, size in [(0, 1), (1, 1), (2, 1), (2, 2), (5, 2), (3, 4)]:
        part = source[start:start + size]
        agree(flt, fa.message_table(part, schema=table.schema), part)
    assert len(modules._memory) == count


def test_a_null_dictionary_entry_is_malformed_for_every_string_predicate():
    """A string tag answered by one constant (IS NULL, EXISTS, a string against
    a number) gives it to codes inside the dictionary, never to a code of a
    null entry: that row is malformed, unknown as the per-message engine says."""
    codes = pa.array([0, 1, 0, 2], pa.int32())
    strings = pa.DictionaryArray.from_arrays(codes, pa.array(["EU-DE", None, "x"]))
    x = pa.StructArray.from_arrays([pa.array([20, 21, 21, 20], pa.int8()), strings],
                                   names=["t", "s"])
    base = fa.message_table([filtex.Message(application_properties={"x": "a"})] * 4)
    ap = pa.StructArray.from_arrays([x], names=["x"])
    table = base.set_column(base.schema.get_field_index("application_properties"),
                            pa.field("application_properties", ap.type), [ap])
    for dialect, text, want in [("amqp", "x IS NULL", [False, None, False, False]),
                                ("amqp", "EXISTS(x)", [True, None, True, True]),
                                ("amqp", "x = 'EU-DE'", [True, None, True, False]),
                                ("amqp", "x IS NULL OR x = 'x'", [False, None, False, True]),
                                ("jms", "x IS NOT NULL", [True, None, True, True]),
                                ("jms", "x IN ('x', 'y')", [False, None, False, True])]:
        flt = filtex.compile_sql(text, dialect)
        assert fa.evaluate(flt, table).verdicts.to_pylist() == want, text
        assert fa.evaluate_rows(flt, table).to_pylist() == want, text   # the row views'


@pytest.mark.slow
def test_the_disk_cache_is_shared_by_processes(tmp_path):
    """Two processes compile the same new shape at once into one directory; both
    agree with the per-message engine, and the directory holds one module: the
    filter signature's fused kernel."""
    script = (
        "import filtex, filtex.arrow as fa\n"
        "f = filtex.compile_sql('(a = 1 OR a = 2) AND NOT (b = 3 OR b = 4 OR b = 5)')\n"
        "ms = [filtex.Message(application_properties={'a': i % 3, 'b': i % 6}) for i in range(50)]\n"
        "assert fa.evaluate_batch(f, fa.message_table(ms)).to_pylist() == "
        "[f.evaluate(m) for m in ms]\n")
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env) for _ in range(2)]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    assert len(list(tmp_path.glob("filtex_kernel_*.py"))) == 1
    assert list((tmp_path / "__pycache__").glob("filtex_kernel_*.nbc"))


def test_importing_filtex_arrow_does_not_import_numba():
    code = ("import sys, filtex, filtex.arrow; assert 'numba' not in sys.modules; "
            "import filtex.arrow.engine; assert 'numba' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


# --- flat tables ------------------------------------------------------------------------------

@pytest.mark.slow
def test_flat_columns_read_as_the_amqp_types_their_arrow_types_stand_for():
    from proton import byte, float32, int32, short, ubyte, uint, ulong, ushort
    columns = {
        "b8": (pa.int8(), byte, [1, -5, None]), "s16": (pa.int16(), short, [2, None, -7]),
        "i32": (pa.int32(), int32, [3, 4, None]), "l64": (pa.int64(), int, [2**53 + 1, -1, 0]),
        "u8": (pa.uint8(), ubyte, [255, 0, None]), "u16": (pa.uint16(), ushort, [1, 2, 3]),
        "u32": (pa.uint32(), uint, [None, 7, 2**32 - 1]),
        "u64": (pa.uint64(), ulong, [2**64 - 1, 0, 5]),
        "f32": (pa.float32(), float32, [0.5, None, -1.5]),
        "f64": (pa.float64(), float, [math.nan, -0.0, 2.5]),
        "ok": (pa.bool_(), bool, [True, None, False]),
        "s": (pa.string(), str, ["EU-été", "", None]),
        "raw": (pa.binary(), bytes, [b"\x00", None, b"ab"]),
    }
    table = pa.table({name: pa.array(values, typ) for name, (typ, _, values) in columns.items()})
    source = [filtex.Message(application_properties={
        name: cls(values[row]) for name, (_, cls, values) in columns.items()
        if values[row] is not None}) for row in range(3)]
    texts = [f"{name} IS NULL OR {name} = {name}" for name in columns] + [
        "b8 < 0", "s16 > -10", "i32 BETWEEN 3 AND 4", "l64 = 9007199254740993", "u8 = 255",
        "u32 > 7", "u64 > 9223372036854775807", "f32 < 0", "f64 <> 0", "ok", "NOT ok",
        "s LIKE 'EU%'", "s = ''", "EXISTS(i32)", "raw IS NOT NULL"]
    for dialect in ("amqp", "jms", "rabbitmq"):
        for text in texts:
            try:
                flt = filtex.compile_sql(text, dialect)
            except filtex.FilterError:
                continue
            assert fa.evaluate_batch(flt, table).to_pylist() == [
                flt.evaluate(m) for m in source], (dialect, text)


def test_flat_mapping_to_header_and_properties_and_nulls():
    table = pa.table({"prio": pa.array([1, 9, None], pa.int64()), "subj": ["a", None, "c"],
                      "at": pa.array([5, None, 7], pa.timestamp("ms")), "k": [1, None, 2]})
    mapping = {"prio": ("header", "priority"), "subj": ("properties", "subject"),
               "at": ("properties", "creation-time"), "k": ("message_annotations", "x-k")}
    source = [filtex.Message(header={"priority": ubyte(1)}, properties={
        "subject": "a", "creation-time": timestamp(5)},
        message_annotations={filtex_symbol("x-k"): 1}),
        filtex.Message(header={"priority": ubyte(9)}),
        filtex.Message(properties={"subject": "c", "creation-time": timestamp(7)},
                       message_annotations={filtex_symbol("x-k"): 2})]
    for text in ["h.priority > 4", "p.subject = 'a' OR p.creation_time > 6", "m.[x-k] = 2",
                 "EXISTS(m.[x-k])"]:
        flt = filtex.compile_sql(text)
        assert fa.evaluate_batch(flt, table, mapping=mapping).to_pylist() == [
            flt.evaluate(m) for m in source], text
    # nulls="null": a null cell is a present null value (EXISTS sees it)
    flt = filtex.compile_sql("EXISTS(m.[x-k])")
    assert fa.evaluate_batch(flt, table, mapping=mapping, nulls="null").to_pylist() == [
        True, True, True]
    kept = fa.filter_table(filtex.compile_sql("h.priority > 4"), table, mapping=mapping)
    assert kept.column_names == table.column_names and kept.num_rows == 1
    with pytest.raises(ValueError, match="header field 'priority'"):
        fa.evaluate_batch(flt, pa.table({"p": [300]}), mapping={"p": ("header", "priority")})
    with pytest.raises(ValueError, match="no AMQP type"):
        fa.evaluate_batch(flt, pa.table({"d": pa.array([1, 2], pa.duration("s"))}))
    with pytest.raises(ValueError, match="does not have"):
        fa.evaluate_batch(flt, table, mapping={"nope": "x"})


def filtex_symbol(text):
    from proton import symbol
    return symbol(text)


# --- arithmetic over several fields -------------------------------------------------------------

arith_values = st.one_of(st.none(), st.integers(-50, 50), st.integers(-2**40, 2**40),
                         st.floats(allow_nan=True, allow_infinity=True, width=64),
                         st.sampled_from([2**31 - 1, -(2**31) + 1, 2**31, 0.5, -0.0, "7"]),
                         st.builds(int32, st.integers(-2**31, 2**31 - 1)),
                         st.builds(ubyte, st.integers(0, 255)), st.builds(float32, st.floats(-9, 9)))
ARITH_TEXTS = ["a * b - c > 10", "a + b BETWEEN -5 AND 5", "NOT (a - b < 0)", "-a * c <> 4",
               "a * b * c >= 0", "(a + 1) * (b - 1) = 6", "a - b + c < 2.5", "a * 3 > b"]


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["amqp", "jms", "rabbitmq"]), st.sampled_from(ARITH_TEXTS),
       st.lists(st.fixed_dictionaries({}, optional={k: arith_values for k in "abc"}),
                min_size=2, max_size=30))
def test_arithmetic_over_several_fields_agrees(dialect, text, rows):
    flt = compiled_or_skip(text, dialect)
    source = [filtex.Message(application_properties=row) for row in rows]
    result = agree(flt, fa.message_table(source), source)
    assert result.kernel, result.reason


# --- columns of encoded messages ---------------------------------------------------------------

@pytest.mark.slow
def test_encoded_columns_filtered_and_tabled(tmp_path):
    from pathlib import Path
    from filtex.files import read_records
    examples = Path(__file__).parent.parent / "examples"
    raws = [r.raw for r in read_records(examples / "orders.amqp")]
    column = pa.array(raws + [b"\x00\x53\x74\xc1\x09", None, raws[0][:20]], pa.binary())
    for text in ["region = 'EU' AND total > 100", "h.priority > 2 OR p.subject LIKE 'order.%'",
                 "quantity * 2 > total"]:
        flt = filtex.compile_sql(text)
        result = fa.evaluate_encoded(flt, column)
        want = [None if raw is None else flt.evaluate(raw) for raw in column.to_pylist()]
        assert result.verdicts.to_pylist() == want, text
        assert result.fallback_rows >= 3   # the malformed, null and cut rows
    table = fa.from_amqp(pa.array(raws, pa.binary()))
    assert same_table(table, fa.message_table(raws))
    with pytest.raises(ValueError, match="not a readable message"):
        fa.from_amqp(column)


@pytest.mark.slow
def test_kernel_modules_in_sys_modules_are_bounded(monkeypatch):
    """Past MAX_MODULES the oldest kernel modules leave sys.modules; their
    kernels, asked for again, are imported again and still agree."""
    monkeypatch.setattr(modules, "MAX_MODULES", 2)
    source = [filtex.Message(application_properties={"a": i % 3, "b": i % 5}) for i in range(30)]
    table = fa.message_table(source)
    texts = ["a = 1 OR b = 2", "a = 1 AND b = 2", "NOT (a = 1 OR b = 2 OR a = 2)"]
    for _ in range(2):
        for text in texts:
            modules._memory.clear()
            agree(filtex.compile_sql(text), table, source)
    assert len([m for m in sys.modules if m.startswith("filtex_kernel_")]) <= 2


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["fused", "passes"])
@pytest.mark.parametrize("threads", [2, 3])
def test_threads_split_a_batch_and_agree(monkeypatch, threads, engine):
    from filtex.arrow import parallel
    monkeypatch.setattr(parallel, "PARALLEL_ROWS", 64)
    source = [filtex.Message(application_properties={
        "a": [1, 2.5, "x", None][i % 4], "b": i % 7, "s": f"v{i % 11}"}) for i in range(1000)]
    table = fa.message_table(source)
    for text in ["a > 1 AND (s LIKE 'v1%' OR b = 3)", "NOT (b * 2 > 5)", "a IS NULL OR b IN (1, 2)"]:
        flt = filtex.compile_sql(text)
        result = fa.evaluate(flt, table, threads=threads, engine=engine)
        assert result.verdicts.to_pylist() == [flt.evaluate(m) for m in source], text
        assert result.fallback_rows == fa.evaluate(flt, table, engine=engine).fallback_rows


def test_zero_keeps_its_own_answer_beside_negative_zero_in_a_value_table():
    """np.unique merges 0.0 into -0.0; the value table must still hold 0.0 (found
    by the Spark differential test: 0.0 took 1.0's answer)."""
    for values in ([-0.0, 0.0, 1.0], [0.0, -0.0, 1.0], [1.0, -0.0, 0.0, math.nan]):
        source = [filtex.Message(application_properties={"x": v}) for v in values]
        agree(filtex.compile_sql("x IN (1, 2.5, NAN)"), fa.message_table(source), source)
