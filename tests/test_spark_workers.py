"""A Spark job started with a virtual environment's python, not activated.

PySpark's workers run ``PYSPARK_PYTHON``, else ``python3`` from PATH: another
Python, without filtex, when the environment is not activated. filtex makes
local workers run the driver's own Python (``filtex.spark_io.workers``), so the
job works as the user expects; an explicit ``PYSPARK_PYTHON`` is respected.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import stopping

pytest.importorskip("pyspark")

pytestmark = pytest.mark.spark

REPO = Path(__file__).resolve().parents[1]

JOB = textwrap.dedent('''
    import sys
    from pyspark.sql import SparkSession
    import filtex, filtex.spark as fs
    spark = (SparkSession.builder.master("local[1]").appName("filtex-workers")
             .config("spark.ui.enabled", "false").getOrCreate())
    spark.sparkContext.setLogLevel("OFF")
    df = spark.createDataFrame([(1, 2.0), (2, 3.0), (3, None)], "a long, b double")
    rows = fs.where(df, filtex.compile_sql("a / b > 0.5")).collect()   # division: the Arrow UDF
    print(sorted(r["a"] for r in rows))
    spark.stop()
''')


def _outside_python() -> str | None:
    """A ``python3`` on PATH without this environment's bin directory, if it
    lacks filtex's dependencies (else the test would prove nothing)."""
    bin_dir = str(Path(sys.executable).parent)
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p).resolve() != Path(bin_dir).resolve())
    other = shutil.which("python3", path=path)
    if other is None:
        return None
    probe = subprocess.run([other, "-c", "import proton"], capture_output=True)
    return path if probe.returncode != 0 else None


def test_local_workers_run_the_drivers_python(spark, tmp_path):
    path = _outside_python()
    if path is None:
        pytest.skip("no python3 without proton on PATH to stand for an inactive environment")
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYSPARK_PYTHON", "VIRTUAL_ENV", "PYSPARK_DRIVER_PYTHON")}
    env.update(PATH=path, PYTHONPATH=str(REPO))
    done = stopping.run([sys.executable, "-c", JOB], env=env, cwd=tmp_path,   # it starts a JVM
                        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip().splitlines()[-1] == "[2]"


def test_an_explicit_pyspark_python_is_kept(spark):
    from filtex.spark_io.workers import use_this_python
    context = spark.sparkContext
    before = context.pythonExec
    try:
        context.pythonExec = "/somewhere/python"
        os.environ["PYSPARK_PYTHON"] = "/somewhere/python"
        use_this_python(spark)
        assert context.pythonExec == "/somewhere/python"
        del os.environ["PYSPARK_PYTHON"]
        use_this_python(spark)
        assert context.pythonExec == sys.executable
    finally:
        os.environ.pop("PYSPARK_PYTHON", None)
        context.pythonExec = before
