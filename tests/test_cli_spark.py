"""``filtex spark``: subscriptions over a Parquet archive on Spark.

In process on the test run's session (the command takes the running session
with ``getOrCreate`` and leaves it running): the rows each subscription
writes and the counts it prints are the per-message engine's; bad filters,
missing inputs and existing outputs exit 2 before Spark is asked anything.
Once through a real ``spark-submit`` of ``tools/spark_subscriptions.py``.
"""
from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

import filtex  # noqa: E402
import filtex.arrow as fa  # noqa: E402
import filtex.spark as fs  # noqa: E402
from filtex.cli import main  # noqa: E402
from proton import symbol, ubyte  # noqa: E402

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SUBSCRIPTIONS = {
    "eu-big": "region = 'EU' AND total > 100",
    "express": "express AND h.priority >= 8",
    "hot": "m.[x-opt-partition] < 4 AND item_count >= 3",
    "vibration": "p.subject LIKE 'telemetry.vib%' OR reading IS NULL",
}


def _mixed(count: int) -> list[filtex.Message]:
    """Messages whose keys are absent, null or of unlike types."""
    rng = random.Random(3)
    messages = []
    for n in range(count):
        app = {k: v for k, v in (("region", rng.choice([None, "EU", "US", 7, "absent"])),
                                 ("total", rng.choice([None, 150, 2.5, "12", "absent"])),
                                 ("express", rng.choice([True, False, "yes", "absent"])))
               if v != "absent"}
        header = {"priority": ubyte(rng.randrange(10))} if n % 3 else {}
        messages.append(filtex.Message(header=header, application_properties=app,
                                       properties={"message-id": f"x{n}",
                                                   "subject": symbol("telemetry.vibe")}))
    return messages


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    """A directory of two files (one as filtex.arrow writes it, one as to_spark
    does) and a third file given on its own; the messages of all three."""
    root = tmp_path_factory.mktemp("archive")
    (root / "messages").mkdir()
    orders = list(filtex.read_messages(EXAMPLES / "orders.amqp"))
    telemetry = list(filtex.read_messages(EXAMPLES / "telemetry.amqp"))
    mixed = _mixed(40)
    pq.write_table(fa.message_table(orders), root / "messages" / "orders.parquet")
    pq.write_table(fs.to_spark(fa.message_table(telemetry)),
                   root / "messages" / "telemetry.parquet")
    pq.write_table(fs.to_spark(fa.message_table(mixed)), root / "mixed.parquet")
    return [str(root / "messages"), str(root / "mixed.parquet")], orders + telemetry + mixed


def _message_id(message) -> str:
    value = filtex.view(message)._filtex_properties["message-id"]
    return value.hex if isinstance(value, uuid.UUID) else value


def _written_ids(spark, path: str) -> list[str]:
    """The message ids of the rows a subscription wrote (string or uuid ids)."""
    rows = spark.read.parquet(path).select("properties.`message-id`.*").collect()
    return sorted(r["s"] if r["s"] is not None else bytes(r["x"]).hex() for r in rows)


def _table(out: str) -> dict[str, tuple[int, int, int]]:
    """The printed counts: name -> (matched, not matched, unknown). (Under
    spark-submit the driver's stderr is in its stdout too.)"""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.split()[:2] == ["subscription",
                                                                          "matched"])
    table = {}
    for line in lines[start + 1:]:
        cells = line.split()
        if not cells or cells[0] == "filtex:":
            break
        table[cells[0]] = tuple(int(c.replace(",", "")) for c in cells[1:4])
    return table


def _engine(text: str, messages, dialect: str = "amqp") -> tuple[int, int, int]:
    results = [filtex.compile_sql(text, dialect).evaluate(m) for m in messages]
    return results.count(True), results.count(False), results.count(None)


def _filters(subscriptions: dict[str, str]) -> list[str]:
    return [a for name, text in subscriptions.items() for a in ("--filter", f"{name}={text}")]


def test_each_subscription_writes_what_the_engine_matches(spark, archive, tmp_path, capsys):
    inputs, messages = archive
    out = tmp_path / "out"
    assert main(["spark", *_filters(SUBSCRIPTIONS), "--output", str(out), *inputs]) == 0
    table = _table(capsys.readouterr().out)
    for name, text in SUBSCRIPTIONS.items():
        flt = filtex.compile_sql(text)
        want = sorted(_message_id(m) for m in messages if flt.evaluate(m) is True)
        assert _written_ids(spark, str(out / name)) == want, name
        assert table[name] == _engine(text, messages), name
    assert all(table[name][0] for name in SUBSCRIPTIONS)   # every one selects something
    assert spark.range(3).count() == 3   # the test run's session still runs
    assert spark.conf.get("spark.sql.caseSensitive") == "true"
    # an output that exists is refused, before any job; --overwrite replaces it
    assert main(["spark", *_filters(SUBSCRIPTIONS), "-o", str(out), *inputs]) == 2
    assert "exists: use --overwrite" in capsys.readouterr().err
    few = {"eu-big": "region = 'EU'"}
    assert main(["spark", *_filters(few), "-o", str(out), "--overwrite", *inputs]) == 0
    flt = filtex.compile_sql("region = 'EU'")
    assert _written_ids(spark, str(out / "eu-big")) == sorted(
        _message_id(m) for m in messages if flt.evaluate(m) is True)


def test_count_only_in_another_dialect(spark, archive, tmp_path, capsys):
    inputs, messages = archive
    jms = {"prio": "JMSPriority > 6 AND region IN ('EU', 'US')",
           "never": "region = 'nowhere'"}
    before = set(os.listdir(tmp_path))
    assert main(["spark", "--count", "--dialect", "jms", *_filters(jms), *inputs]) == 0
    table = _table(capsys.readouterr().out)
    assert table == {name: _engine(text, messages, "jms") for name, text in jms.items()}
    assert set(os.listdir(tmp_path)) == before
    assert main(["spark", "--count", "--filter", "never=region = 'nowhere'", *inputs]) == 1
    capsys.readouterr()
    # --json: the same counts as one object; --param binds @names as filtex match does
    argv = ["spark", "--count", "--json", "--dialect", "jms", "--filter",
            "prio=JMSPriority > @p AND region IN ('EU', 'US')", "--param-json", "p=6",
            "--filter", "never=region = @r", "--param", "r=nowhere", *inputs]
    assert main(argv) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["messages"] == len(messages)
    assert {name: tuple(c[k] for k in ("matched", "not_matched", "unknown"))
            for name, c in counts["subscriptions"].items()} == table


def test_writing_nothing_exits_1_as_counting_nothing_does(spark, archive, tmp_path, capsys):
    inputs, _ = archive
    out = tmp_path / "out"
    assert main(["spark", "--filter", "never=region = 'nowhere'", "-o", str(out), *inputs]) == 1
    assert spark.read.parquet(str(out / "never")).count() == 0
    assert _table(capsys.readouterr().out) == {"never": _engine("region = 'nowhere'",
                                                                archive[1])}


def test_flat_parquet_with_a_mapping(spark, tmp_path, capsys):
    rng = random.Random(8)
    rows = [{"region": rng.choice(["EU", "US", None]), "total": rng.choice([5, 150, None]),
             "prio": rng.choice([1, 5, 9, None])} for _ in range(60)]
    schema = pa.schema([("region", pa.string()), ("total", pa.int64()), ("prio", pa.uint8())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), tmp_path / "flat.parquet")
    messages = [filtex.Message(
        header={"priority": ubyte(r["prio"])} if r["prio"] is not None else {},
        application_properties={k: v for k, v in (("region", r["region"]),
                                                  ("amount", r["total"])) if v is not None})
        for r in rows]   # a null cell: the field is absent
    subs = {"eu": "region = 'EU' AND amount > 100", "urgent": "h.priority > 4 OR amount IS NULL"}
    argv = ["spark", "--count", *_filters(subs), "--mapping", "region=region",
            "--mapping", "total=amount", "--mapping", "prio=header:priority",
            str(tmp_path / "flat.parquet")]
    assert main(argv) == 0
    assert _table(capsys.readouterr().out) == {n: _engine(t, messages) for n, t in subs.items()}
    assert main(argv[:-1] + ["--mapping", "nosuch=x", argv[-1]]) == 2
    assert "--mapping names column 'nosuch'" in capsys.readouterr().err
    # --nulls null: a null cell is a field present with a null value (EXISTS tells)
    exists = {"has-region": "EXISTS(region)"}
    with_nulls = [filtex.Message(application_properties={"region": r["region"]}) for r in rows]
    assert main(["spark", "--count", *_filters(exists), "--nulls", "null",
                 str(tmp_path / "flat.parquet")]) == 0
    assert _table(capsys.readouterr().out) == {
        "has-region": _engine("EXISTS(region)", with_nulls)} != {
        "has-region": _engine("EXISTS(region)", messages)}


def test_bad_filters_and_inputs_exit_2_before_spark_runs(archive, tmp_path, capsys):
    inputs, _ = archive
    bad = "region = 'EU' AND\n  total >"
    with pytest.raises(filtex.FilterError) as error:
        filtex.compile_sql(bad)
    assert main(["spark", "--count", "--filter", "eu=" + bad, *inputs]) == 2
    err = capsys.readouterr().err
    assert f"eu: line {error.value.line}, column {error.value.column}: " \
           f"{error.value.problem}" in err
    # the same message filtex match gives
    assert main(["match", "--count", "--filter", "eu=" + bad, str(EXAMPLES / "orders.amqp")]) == 2
    assert capsys.readouterr().err == err
    missing = str(tmp_path / "no-such-archive")
    assert main(["spark", "--count", "--filter", "a=x = 1", missing]) == 2
    assert f"{missing}: no such file or directory" in capsys.readouterr().err
    assert main(["spark", "--filter", "a=x = 1", *inputs]) == 2   # neither --output nor --count
    assert "--output DIR" in capsys.readouterr().err
    assert main(["spark", "--count", "--filter", "../up=x = 1", *inputs]) == 2
    assert "NAME=TEXT" in capsys.readouterr().err
    assert main(["spark", "--count", "--overwrite", "--filter", "a=x = 1", *inputs]) == 2
    assert "--overwrite is for --output DIR" in capsys.readouterr().err
    assert main(["spark", "--count", "--filter", "a=x = @v", *inputs]) == 2
    assert "a: line 1, column 5: unexpected character '@'" in capsys.readouterr().err


def test_nulls_is_for_flat_tables(spark, archive, capsys):
    inputs, _ = archive
    assert main(["spark", "--count", "--nulls", "null", "--filter", "a=x = 1", *inputs]) == 2
    assert "--nulls is for flat Parquet; the input is a message table" in \
        capsys.readouterr().err


def _spark_submit() -> Path:
    import pyspark
    return Path(pyspark.__file__).parent / "bin" / "spark-submit"


@pytest.mark.slow
def test_spark_submit_runs_the_job(spark, archive, tmp_path):
    """The entry point under spark-submit (a second JVM), filtex shipped as a zip."""
    _, messages = archive
    mixed = [m for m in messages if isinstance(m, filtex.Message)]
    source = tmp_path / "in"
    source.mkdir()
    pq.write_table(fs.to_spark(fa.message_table(mixed)), source / "part-0.parquet")
    package = tmp_path / "filtex.zip"
    with zipfile.ZipFile(package, "w") as zf:
        for path in (ROOT / "filtex").rglob("*.py"):
            zf.write(path, path.relative_to(ROOT))
    out = tmp_path / "out"
    subs = {"eu": "region = 'EU'", "urgent": "h.priority > 4 AND express"}
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable,
           "PYSPARK_DRIVER_PYTHON": sys.executable}
    done = subprocess.run(
        [str(_spark_submit()), "--master", "local[1]", "--conf", "spark.ui.enabled=false",
         "--conf", "spark.ui.showConsoleProgress=false", "--py-files", str(package),
         str(ROOT / "tools" / "spark_subscriptions.py"), *_filters(subs),
         "--output", str(out), str(source)],
        capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    table = _table(done.stdout)
    for name, text in subs.items():
        flt = filtex.compile_sql(text)
        assert table[name] == _engine(text, mixed)
        assert _written_ids(spark, str(out / name)) == sorted(
            _message_id(m) for m in mixed if flt.evaluate(m) is True)
