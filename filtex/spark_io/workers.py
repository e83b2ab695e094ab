"""Which Python the Spark workers that run filtex's functions start.

PySpark starts its Python workers with ``PYSPARK_PYTHON``, else ``python3``
from PATH, fixed when the SparkContext is made. A virtual environment's
python run without activating the environment (``.venv/bin/python job.py``)
is not that ``python3``: the workers then lack filtex and fail with "No module
named 'proton'". On a local master the workers run on this machine, so
filtex has them run this very Python, unless ``PYSPARK_PYTHON`` or
``spark.pyspark.python`` says otherwise. On a cluster the workers' Python is
the cluster's to choose (it needs filtex installed): nothing is changed.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Any


def use_this_python(session: Any) -> None:
    """Before making a Python UDF or ``mapInArrow`` function on ``session``'s
    context: local workers run ``sys.executable`` unless told otherwise."""
    try:
        context = session.sparkContext
        master = context.master
        chosen = setting(context, "spark.pyspark.python")
    except Exception:   # Spark Connect: no context on this side
        return
    if os.environ.get("PYSPARK_PYTHON") or chosen or not str(master).startswith("local"):
        return
    context.pythonExec = sys.executable


def setting(context: Any, key: str) -> Any:
    """One setting of a SparkContext's configuration, or None. ``getConf()``
    copies the whole configuration across py4j (hundreds of calls, about 10 ms);
    the context's own conf answers in one."""
    conf = getattr(context, "_conf", None)
    if conf is None:
        conf = context.getConf()
    return conf.get(key, None)


def start_session(builder: Any) -> Any:
    """``builder.getOrCreate()``, a Ctrl-C while the JVM starts (seconds) raised
    once the session is up, after stopping it. Interrupted while it waits for the
    JVM to say where it listens, pyspark's ``launch_gateway`` deletes the directory
    the JVM is to write that to and returns without stopping the JVM, whose py4j
    thread then keeps it running for good (it ignores SIGINT); so every Ctrl-C of
    those seconds is held."""
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is signal.SIG_IGN):   # nothing to hold
        return builder.getOrCreate()
    held: list[int] = []

    def hold(signum: int, frame: object) -> None:
        held.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        session = builder.getOrCreate()
    finally:   # pyspark's SparkContext has put its own handler in place of hold once up
        if signal.getsignal(signal.SIGINT) is hold:
            signal.signal(signal.SIGINT, previous)
    if held:
        session.stop()
        raise KeyboardInterrupt
    return session
