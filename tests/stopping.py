"""What keeps Ctrl-C stopping the test run within seconds, Spark included.

- ``start_session`` (``filtex.spark_io.workers``'s, which ``filtex spark`` uses too):
  ``builder.getOrCreate()`` with Ctrl-C held while pyspark starts its JVM. Interrupted
  while it waits for the JVM to say where it listens, pyspark's ``launch_gateway``
  deletes the directory the JVM is to write that to and returns without stopping the
  JVM: the JVM's main thread fails, its py4j server thread (not a daemon) keeps it
  running for good, and it ignores SIGINT (pyspark starts it so). It holds 2 GB and the
  run's output pipes: ``pytest | tee`` never ends.
- ``two_at_a_time``: Spark selects run two at a time, on daemon threads; an interrupt is
  raised at once, and no select starts after it. A ``with ThreadPoolExecutor`` block
  waits for every submitted select instead (after Ctrl-C, the rest of the test: minutes),
  and the interpreter's exit for the running ones.
- ``run``: a child process that may start a JVM, in a process group of its own so that
  Ctrl-C at the terminal does not interrupt it (pyspark's launch, as above); the test's
  interrupt ends the whole group.

``tests/test_interrupt.py`` sends SIGINT to pytest runs and checks that they stop.
"""
from __future__ import annotations

import os
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable
from typing import Any

from filtex.spark_io.workers import start_session

__all__ = ["run", "start_session", "two_at_a_time"]


def two_at_a_time(spark: Any, calls: Iterable[Callable[[], object]]) -> None:
    """Each call (a Spark select and its checks) on one of two threads: one select is
    planned while the other runs. The first failure is raised once the other thread's
    select has stopped (its job cancelled) and none has started after it. An interrupt
    is raised at once: the threads are daemons, and a select being planned in the JVM
    (seconds to tens of seconds, and not cancellable) is left to end with the JVM."""
    pending = list(calls)[::-1]
    lock = threading.Lock()
    failures: list[BaseException] = []

    def work() -> None:
        while not failures:
            with lock:
                if not pending:
                    return
                call = pending.pop()
            try:
                call()
            except BaseException as failure:
                failures.append(failure)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        while any(thread.is_alive() for thread in threads):
            if failures:   # the other select: its job cancelled (again if it starts one)
                _cancel_jobs(spark)
            for thread in threads:
                thread.join(0.5)
    except BaseException:
        failures.append(KeyboardInterrupt())   # nothing more starts
        _cancel_jobs(spark)
        raise
    if failures:
        raise failures[0]


def _cancel_jobs(spark: Any) -> None:
    try:
        spark.sparkContext.cancelAllJobs()
    except Exception:   # a stopped session: nothing runs
        pass


def run(command: list[str], *, timeout: float | None = None,
        **options: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run(command, ...)`` in a process group of its own; if the test is
    interrupted or the time is up, the group is ended (SIGTERM, then SIGKILL)."""
    if options.pop("capture_output", False):
        options.update(stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    with subprocess.Popen(command, start_new_session=True, **options) as process:
        try:
            out, err = process.communicate(timeout=timeout)
        except BaseException:
            _end_group(process)
            raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def _end_group(process: subprocess.Popen[Any]) -> None:
    for sent in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sent)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            continue
