"""Ctrl-C stops a test run, Spark's JVM included (``tests/stopping.py``).

Each test runs pytest over a generated test file that uses the suite's own ``spark``
fixture (the tests here take it too, to skip, or fail in CI, as the Spark tests do
without Java), in a process group of its own, sends SIGINT to the whole group as a terminal
does, and waits for every process of the group to be gone. The bound is generous: what
is tested is that the run stops at all (queued Spark selects waited for would keep it
running for hours here, and a JVM whose start is interrupted runs on for good).
"""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.spark

TESTS = Path(__file__).resolve().parent
BOUND = 120   # seconds for the whole group to be gone after SIGINT
START = 600   # seconds for the generated run to reach the moment it is interrupted


def _group(pgid: int) -> list[str]:
    """The live (not zombie) processes of process group ``pgid``: ``pid name``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:   # gone meanwhile
            continue
        name_end = stat.rindex(")")
        state, _, group = stat[name_end + 2:].split()[:3]
        if int(group) == pgid and state != "Z":
            found.append(f"{entry.name} {stat[stat.index('(') + 1:name_end]}")
    return found


def _is_spark_jvm(pid: int) -> bool:
    """The JVM pyspark starts (the launcher's short-lived java is not it)."""
    try:
        return b"org.apache.spark.deploy.SparkSubmit" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _start(tmp_path: Path, source: str, *options: str) -> subprocess.Popen[bytes]:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_generated.py").write_text(source)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(TESTS.parent)])}
    env.pop("FILTEX_CI", None)
    with open(tmp_path / "output.txt", "w") as output:   # a file: no pipe to fill or hold
        return subprocess.Popen(   # -p conftest: the suite's conftest.py, its spark fixture
            [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q",
             *options, "test_generated.py"],
            cwd=tmp_path, env=env, stdout=output, stderr=subprocess.STDOUT,
            start_new_session=True, preexec_fn=_default_sigint)


def _default_sigint() -> None:
    """SIGINT as a terminal's foreground job has it, even if this run ignores it (a
    background job of a script does)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_and_wait(run: subprocess.Popen[bytes], tmp_path: Path) -> str:
    """SIGINT to the run's process group, then its output once all of it is gone.
    Whatever is left after BOUND seconds is killed, and fails."""
    os.killpg(run.pid, signal.SIGINT)
    start = time.monotonic()
    while time.monotonic() - start < BOUND:
        run.poll()
        if not _group(run.pid):
            break
        time.sleep(0.2)
    left = _group(run.pid)
    if left:
        for line in left:
            os.kill(int(line.split()[0]), signal.SIGKILL)
    run.wait()
    output = (tmp_path / "output.txt").read_text(errors="replace")
    assert not left, f"still running {BOUND} s after SIGINT: {left}\n{output[-3000:]}"
    return output


def _wait_for(what, run: subprocess.Popen[bytes], tmp_path: Path) -> None:
    start = time.monotonic()
    while not what():
        if run.poll() is not None:
            output = (tmp_path / "output.txt").read_text(errors="replace")
            pytest.fail(f"the generated run ended first: {output[-3000:]}")
        if time.monotonic() - start > START:
            os.killpg(run.pid, signal.SIGKILL)
            pytest.fail(f"the generated run did not get there in {START} s")
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
def test_ctrl_c_stops_a_test_waiting_for_its_spark_selects(spark, tmp_path):
    """Selects that would run for hours, two at a time, more queued: the run stops,
    the selects not started are not run and the running ones are cancelled."""
    source = '''
from pathlib import Path
from stopping import two_at_a_time

def test_selects(spark):
    rows = spark.range(0, 10 ** 13, numPartitions=2)
    def select():
        rows.selectExpr("sum(hash(id))").collect()
    Path("selecting").touch()
    two_at_a_time(spark, [select] * 8)
'''
    run = _start(tmp_path, source, "-n", "0")
    _wait_for((tmp_path / "selecting").exists, run, tmp_path)
    time.sleep(2)   # both selects running
    output = _interrupt_and_wait(run, tmp_path)
    assert run.returncode == 2 and "KeyboardInterrupt" in output, output[-3000:]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)")
@pytest.mark.parametrize("workers", ["0", "1"])
def test_ctrl_c_while_the_jvm_starts_stops_the_jvm_too(spark, tmp_path, workers):
    """SIGINT as soon as the session's JVM is a process: without the fixture holding
    it, pyspark's launch is interrupted and the JVM runs on after pytest has exited.
    With pytest-xdist (one worker) the worker is interrupted too, and again by
    pytest-xdist itself 5 s later."""
    source = '''
def test_session(spark):
    spark.range(1).collect()
'''
    run = _start(tmp_path, source, "-n", workers)
    _wait_for(lambda: any(_is_spark_jvm(int(line.split()[0])) for line in _group(run.pid)),
              run, tmp_path)
    output = _interrupt_and_wait(run, tmp_path)
    assert run.returncode == 2, output[-3000:]
