"""``python -m benchmarks.spark_first_batch``: a Spark job's first batch on a
fresh executor, against the same job on a warm one.

Each measurement is its own process (one Spark session each, ``local[1]``):
the driver's kernel cache is warm (a first process ran the job with one
cache for driver and executors), and the executors' Python workers are given
an empty cache of their own (``spark.executorEnv.FILTEX_KERNEL_CACHE``), as
on a new cluster. The job: a binary column of AMQP-encoded orders laid out
by ``filtex.spark.from_amqp`` (the message decoder in the workers), then
``where(..., method="udf")`` (the filter's kernel in the workers), counted.
The first job's wall time includes the workers' start; the second job, on
the same now warm workers, is the warm figure. With ``--before PATH`` (a
checkout of an earlier filtex) that version's figures come first.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FILTER = "region = 'EU' AND total > 100 AND h.priority >= 4"

CHILD = r'''
import json, sys, time, struct
import pyarrow as pa
from pyspark.sql import SparkSession
import filtex, filtex.spark as fs
data, executor_cache, rows = sys.argv[1], sys.argv[2], int(sys.argv[3])
raw = open(data, "rb").read()
cells, pos = [], 0
while pos < len(raw) and len(cells) < rows:
    size = struct.unpack_from(">I", raw, pos)[0]
    cells.append(raw[pos + 4:pos + 4 + size])
    pos += 4 + size
spark = (SparkSession.builder.master("local[1]")
         .config("spark.executorEnv.FILTEX_KERNEL_CACHE", executor_cache)
         .config("spark.sql.shuffle.partitions", "1")
         .config("spark.ui.enabled", "false").getOrCreate())
df = spark.createDataFrame(pa.table({"payload": pa.array(cells, pa.binary())})).coalesce(1)
df.cache().count()
laid = fs.from_amqp(df, "payload", keys={"application_properties": ["region", "total"]})
flt = filtex.compile_sql(sys.argv[4])
times = []
for _ in range(2):
    started = time.perf_counter()
    count = fs.where(laid, flt, method="udf").count()
    times.append(time.perf_counter() - started)
print(json.dumps({"first": times[0], "warm": times[1], "count": count}))
spark.stop()
'''


def job(before: Path | None, driver: Path, executor: Path, data: Path, rows: int,
        wait: bool = False) -> dict:
    """One process's two jobs; ``wait``: kernels compiled before they answer
    (filling the driver's cache), else the default."""
    env = dict(os.environ, FILTEX_KERNEL_CACHE=str(driver))
    env.pop("FILTEX_COMPILE", None)
    if wait:
        env["FILTEX_COMPILE"] = "wait"
    if before is not None:
        env["PYTHONPATH"] = str(before)
    done = subprocess.run([sys.executable, "-c", CHILD, str(data), str(executor), str(rows),
                           FILTER], env=env, capture_output=True, text=True,
                          cwd=before or REPO)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, default=None)
    parser.add_argument("--data", type=Path, default=REPO / "data" / "orders.amqp")
    parser.add_argument("--rows", type=int, default=50_000)
    args = parser.parse_args()
    versions = [("before", args.before)] if args.before else []
    versions.append(("this", None))
    for name, path in versions:
        with tempfile.TemporaryDirectory(prefix="filtex-spark-") as scratch:
            driver = Path(scratch) / "driver"
            warmed = job(path, driver, driver, args.data, args.rows, wait=True)
            started = time.perf_counter()
            fresh = job(path, driver, Path(scratch) / "executor", args.data, args.rows)
            whole = time.perf_counter() - started
            assert fresh["count"] == warmed["count"]
            print(f"{name:<7} fresh executor: first job {fresh['first']:6.2f} s, warm job "
                  f"{fresh['warm']:6.2f} s ({fresh['first'] / fresh['warm']:.1f}x); one cache: "
                  f"first {warmed['first']:6.2f} s, warm {warmed['warm']:6.2f} s; "
                  f"process {whole:.0f} s; {fresh['count']:,} of {args.rows:,} rows")


if __name__ == "__main__":
    main()
