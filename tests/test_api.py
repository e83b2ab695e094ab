"""The public API's promises: caching, pickling, errors, threads, no files, cheap import."""
from __future__ import annotations

import linecache
import os
import pickle
import subprocess
import sys
import threading
import traceback
from decimal import Decimal
from pathlib import Path

import pytest
from proton import symbol, timestamp, ubyte

import filtex
from filtex import FilterError, Message

REPO = Path(__file__).resolve().parents[1]
BLUE = Message(header={"priority": ubyte(7)}, application_properties={"color": "blue"})


def test_evaluate_matches_outcome():
    f = filtex.compile_sql("color = 'blue' AND h.priority > 4")
    assert f.evaluate(BLUE) is True
    assert f.matches(BLUE) is True
    assert f.outcome(BLUE) == filtex.Outcome(True, None)
    red = Message(application_properties={"color": "red"})
    assert f.evaluate(red) is False and f.matches(red) is False


def test_failure_reason_names_the_problem():
    f = filtex.compile_sql("color > 5 OR TRUE")
    message = Message(application_properties={"color": "blue"})
    assert f.evaluate(message) is None
    assert f.matches(message) is False
    outcome = f.outcome(message)
    assert outcome.result is None
    assert "cannot compare string with integer" in outcome.reason


@pytest.mark.parametrize("text", ["color = 'blue'", "TRUE", "p.subject IS NULL"])
@pytest.mark.parametrize("thing", [object(), {"color": "blue"}, None, "color", 5])
def test_an_object_that_is_no_message_form_is_a_type_error(text, thing):
    f = filtex.compile_sql(text)
    for call in (f.evaluate, f.matches, f.outcome):
        with pytest.raises(TypeError, match="filtex.Message, AMQP-encoded bytes"):
            call(thing)


def test_malformed_encoded_message_is_unknown_with_reason_not_a_crash():
    f = filtex.compile_sql("color = 'blue'")
    broken = b"\x00\x53\x74\xc1\x09\x02\xa1\x05color\xa1"   # the value is cut short
    assert f.evaluate(broken) is None
    assert f.matches(broken) is False
    outcome = f.outcome(broken)
    assert outcome.result is None
    assert outcome.reason.startswith("malformed message") and "byte offset" in outcome.reason


def test_compile_is_cached_by_text_and_dialect():
    filtex.cache_clear()
    a = filtex.compile_sql("x = 1")
    assert filtex.compile_sql("x = 1") is a
    assert filtex.compile_sql("x = 1", "amqp") is a
    assert filtex.compile_sql("x = 2") is not a


def test_pickle_round_trip_is_text_and_dialect():
    f = filtex.compile_sql("color = 'blue'")
    data = pickle.dumps(f)
    assert b"def evaluate" not in data  # the code is not shipped, the text is
    g = pickle.loads(data)
    assert (g.text, g.dialect) == (f.text, f.dialect)
    assert g.evaluate(BLUE) is True


@pytest.mark.parametrize("text, line, column, words", [
    ("color = 'blue' AND", 1, 19, "unexpected end"),
    ("a = = 1", 1, 5, "syntax error"),
    ("x = 1 AND\n  p.colour = 'x'", 2, 5, "'colour' is not a field of the properties"),
    ("h.foo = 1", 1, 3, "not a field of the header"),
    ("x = 'abc", 1, 5, "unterminated string"),
    ("[abc = 1", 1, 1, "unterminated delimited identifier"),
    ("x = 18446744073709551616", 1, 5, "larger than 2^64-1"),
    ("x = 0xABC", 1, 5, "even number of hex digits"),
    ("FOO(x) = 1", 1, 1, "unknown function FOO"),
    ("LEFT(x) = 'a'", 1, 1, "LEFT takes 2 arguments, not 1"),
    ("x LIKE 'a' ESCAPE 'ab'", 1, 19, "one character"),
    ("x LIKE 'a!' ESCAPE '!'", 1, 8, "ends with its escape"),
    ("x = 1 # 2", 1, 7, "unexpected character '#'"),
    ("", 1, 1, "empty filter"),
    ("   \n  ", 1, 1, "empty filter"),
])
def test_filter_error_names_problem_line_and_column(text, line, column, words):
    with pytest.raises(FilterError) as raised:
        filtex.compile_sql(text)
    error = raised.value
    assert words in error.problem
    assert (error.line, error.column) == (line, column)
    assert error.condition == "amqp:invalid-field"
    assert isinstance(error, ValueError)
    assert pickle.loads(pickle.dumps(error)).problem == error.problem


def test_unknown_dialect_and_non_string_text():
    # an unknown dialect name may come with a filter's definition: a FilterError
    with pytest.raises(FilterError) as raised:
        filtex.compile_sql("a = 1", "mysql")  # type: ignore[arg-type]
    assert "unknown SQL dialect 'mysql'" in str(raised.value)
    assert raised.value.condition == "amqp:not-implemented"
    # arguments of the wrong type are the program's error (tests/test_front_door.py)
    for text, dialect in ((b"a = 1", "amqp"), (["a = 1"], "amqp"), (None, "amqp"),
                          ("a = 1", ["amqp"]), ("a = 1", None)):
        with pytest.raises(TypeError) as wrong:
            filtex.compile_sql(text, dialect)  # type: ignore[arg-type]
        assert not isinstance(wrong.value, FilterError)


def test_limits_refuse_pathological_nesting():
    with pytest.raises(FilterError) as raised:
        filtex.compile_sql("NOT " * 500 + "a = 1")
    assert "nested more than 128 levels" in raised.value.problem
    with pytest.raises(FilterError):
        filtex.compile_sql("-" * 1000 + "1 = 1")
    # Parentheses add no nodes: deep ones are harmless and accepted.
    assert filtex.compile_sql("(" * 500 + "a = 1" + ")" * 500).evaluate(Message()) is None
    # A long flat conjunction is fine: AND chains are one node.
    long_and = " AND ".join(f"x{i} = {i}" for i in range(300))
    assert filtex.compile_sql(long_and).evaluate(Message()) is None


def test_generated_source_is_deterministic_and_found_lazily_by_linecache():
    text = "a LIKE '%x_y%' AND b IN (1, 2, 3) AND c = 1.5 AND d = 0x0aff"
    first = filtex.compile_sql(text).source
    filtex.cache_clear()
    second = filtex.compile_sql(text)
    assert second.source == first
    filename = second.evaluate.__code__.co_filename
    # nothing is registered while nothing fails; the function's globals find it
    assert filename not in linecache.cache
    assert linecache.getline(filename, 1, second.evaluate.__globals__).startswith("def evaluate")


def test_traceback_shows_generated_line():
    f = filtex.compile_sql("a + 1 > 2")
    try:
        f.evaluate(Message(application_properties={"a": "x"}), None, False)
    except filtex.EvaluationFailure:
        text = traceback.format_exc()
    assert "_arith(" in text  # the generated source line is shown


@pytest.mark.parametrize("text", [
    "a = '__import__(\"os\").system(\"echo pwned\")'",
    "a = 'x'' + __import__(\"os\").getcwd() + ''y'",
    "[a'); import os; ('] = 1",
    "m.[x\nimport os] = 1",
    "a LIKE '%\\'); import os; (%'",
    'a = "\\" + str(1) + \\""',
])
def test_filter_text_never_becomes_code(text):
    try:
        f = filtex.compile_sql(text)
    except FilterError:
        return
    assert "import" not in f.source.replace("__import__", "").split("'")[0]
    # Every string from the text appears only inside a repr literal or hoisted constant.
    compiled = compile(f.source, "<check>", "exec")
    names = set(compiled.co_names)
    for code in compiled.co_consts:
        if hasattr(code, "co_names"):
            names |= set(code.co_names)
    assert not {"os", "system", "getcwd", "__import__", "echo"} & names


def test_threads_compile_and_evaluate_concurrently():
    filtex.cache_clear()
    errors = []

    def work(n):
        try:
            for i in range(40):
                f = filtex.compile_sql(f"n = {n} AND i <= {i + n * 1000}")
                m = Message(application_properties={"n": n, "i": 0})
                assert f.evaluate(m) is True
        except Exception as exc:  # pragma: no cover - reported below
            errors.append(exc)
    threads = [threading.Thread(target=work, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_ply_writes_no_files_and_import_prints_nothing(tmp_path):
    code = ("import filtex, sys; f = filtex.compile_sql('a = 1 AND b LIKE \"x%\"');"
            "print(f.evaluate(filtex.Message(application_properties={'a': 1, 'b': 'xy'})));"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('numba', 'pyspark', 'numpy', 'pyarrow')))")
    env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-W", "always", "-c", code], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["True", "[]"]
    assert done.stderr == ""
    assert list(tmp_path.iterdir()) == []
    assert not list((REPO / "filtex").rglob("parsetab.py"))
    assert not list((REPO / "filtex").rglob("parser.out"))


def test_message_and_typed_json():
    m = filtex.message_from_json({
        "header": {"priority": {"@type": "ubyte", "value": 9}},
        "properties": {"creation-time": {"@type": "timestamp", "value": 5}},
        "message-annotations": {"x-opt-a": 1},
        "application-properties": {"d": {"@type": "decimal64", "value": "12.50"},
                                   "arr": {"@type": "array", "of": "int", "value": [1, 2]}},
        "connection": "c1"})
    assert m.header["priority"] == 9 and type(m.header["priority"]) is ubyte
    assert type(m.properties["creation-time"]) is timestamp
    assert type(next(iter(m.message_annotations))) is symbol
    assert m.connection == "c1"
    f = filtex.compile_sql("d = 12.5 AND arr[1] = 2 AND m.[x-opt-a] = 1 AND h.priority = 9")
    assert f.evaluate(m) is True
    assert filtex.value_from_json({"@type": "decimal128", "value": "1.1"}) is not None
    with pytest.raises(FilterError):
        filtex.value_from_json({"@type": "ubyte", "value": 256})
    with pytest.raises(FilterError):
        filtex.value_from_json({"@type": "nope", "value": 1})


def test_decimal_values_compare_exactly():
    from filtex.runtime.values import decimal_value, encode_decimal
    for width in (32, 64, 128):
        for text in ("0", "-1.5", "12.50", "1E+10", "-0.000001", "9999999"):
            assert decimal_value(encode_decimal(text, width)) == Decimal(text)
    m = Message(application_properties={"d": encode_decimal("0.1", 64), "f": 0.1})
    assert filtex.compile_sql("d = 0.1 AND d + 0.2 = 0.3 AND f = 0.1").evaluate(m) is True


def test_importing_filtex_loads_no_builder_and_filter_needs_none():
    import subprocess
    import sys
    code = ("import sys, filtex.filter; "
            "print(sorted(m for m in sys.modules if m.startswith('filtex')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True).stdout
    assert loaded.strip() == ("['filtex', 'filtex._version', 'filtex.errors', 'filtex.filter', "
                              "'filtex.names']")
    heavy = subprocess.run([sys.executable, "-c", "import sys, filtex; print('ply' in sys.modules,"
                            " 'proton' in sys.modules)"], capture_output=True, text=True,
                           check=True).stdout
    assert heavy.strip() == "False False"


def test_evaluate_and_matches_document_their_public_signature():
    import inspect
    f = filtex.compile_sql("a = 1")
    for fn in (f.evaluate, f.matches):
        assert str(inspect.signature(fn)) == "(message, receiving_connection=None)"
        assert fn.__doc__ and "_mode" not in fn.__doc__
    assert f.outcome.__doc__


@pytest.mark.parametrize("kwargs, error, words", [
    ({"header": {"delivery_count": 1}}, ValueError, "'delivery-count'"),
    ({"properties": {"Subject": "s"}}, ValueError, "the properties fields are"),
    ({"header": [("priority", 1)]}, TypeError, "must be a mapping"),
    ({"application_properties": "a=1"}, TypeError, "must be a mapping"),
    ({"body": filtex.Body("amqp-text", ("x",))}, ValueError, "body kind"),
    ({"body": filtex.Body("amqp-sequence", ("not a list",))}, TypeError, "lists"),
    ({"body": filtex.Body("data", ("text",))}, TypeError, "bytes"),
])
def test_a_message_refuses_what_filters_could_never_read(kwargs, error, words):
    with pytest.raises(error, match=words):
        Message(**kwargs)


def test_bodies_and_views():
    assert Message(body=5).body == filtex.Body.value(5)
    f = filtex.compile_sql("amqp_sequence[1] = 2")
    assert f.evaluate(Message(body=filtex.Body.sequence([1], [2]))) is True
    import proton
    received = proton.Message(properties={"a": 1})
    view = filtex.view(received, connection="c")
    assert view.connection == "c" and view.message is received
    no_local = filtex.compile_filter(("apache.org:no-local-filter:list", []))
    assert no_local.evaluate(view, receiving_connection="c") is False
    assert no_local.evaluate(view, receiving_connection="d") is True
    message = Message()
    assert filtex.view(message) is message
