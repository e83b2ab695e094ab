import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402

import randomness  # noqa: E402,F401  (loads the hypothesis profile: derandomised unless asked)
from engines import ENGINES  # noqa: E402


@pytest.fixture(params=sorted(ENGINES))
def engine(request):
    """Every engine filtex has (tests/engines.py): a guarantee holds in each."""
    return ENGINES[request.param]()

# Compiled kernels are cached across runs in the checkout (ignored by git), not in ~/.cache.
import os  # noqa: E402

os.environ.setdefault("FILTEX_KERNEL_CACHE", str(Path(__file__).parent.parent / ".kernel-cache"))
# The kernels are what the batch engine's tests test: compiled when first needed, never
# answered by the per-message engine while they compile (tests/test_tiers.py tests that).
os.environ.setdefault("FILTEX_COMPILE", "wait")
# Every JVM of the run (the session's, and those `filtex spark` and spark-submit start in
# the command-line and docs tests) runs short jobs: with the client compiler only and the
# serial collector, the Spark tests take 15-25% less time (C2 warming up Spark's code costs
# more CPU than it saves). What the JVM computes does not depend on its JIT tier.
os.environ.setdefault("SPARK_SUBMIT_OPTS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")


def _spark_missing() -> str | None:
    """Why Spark cannot run here (pyspark or Java 17+ missing), or None."""
    import importlib.util
    import re
    import shutil
    import subprocess
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install -e '.[spark]')"
    home = os.environ.get("JAVA_HOME")
    java = os.path.join(home, "bin", "java") if home else shutil.which("java")
    if not java or not os.path.exists(java):
        return "Spark needs Java 17 or newer: no java on PATH or in JAVA_HOME"
    try:
        shown = subprocess.run([java, "-version"], capture_output=True, text=True,
                               timeout=60).stderr
    except (OSError, subprocess.SubprocessError) as problem:
        return f"Spark needs Java 17 or newer: {java} -version failed ({problem})"
    found = re.search(r'version "(\d+)', shown)
    if not found or int(found.group(1)) < 17:
        return f"Spark needs Java 17 or newer, {java} is {shown.splitlines()[:1]}"
    return None


@pytest.fixture(scope="session")
def spark():
    """The one local[2] SparkSession of a test run (UI and progress bars off, UTC,
    case-sensitive names: AMQP keys are). Without pyspark or Java the Spark tests
    skip, saying why; with FILTEX_CI=1 (CI) they fail instead."""
    missing = _spark_missing()
    if missing:
        if os.environ.get("FILTEX_CI") == "1":
            pytest.fail(f"FILTEX_CI=1 but {missing}")
        pytest.skip(missing)
    from pyspark.sql import SparkSession
    from stopping import start_session   # Ctrl-C while the JVM starts would leave it running
    session = start_session(SparkSession.builder.master("local[2]").appName("filtex-tests")
                            .config("spark.ui.enabled", "false")
                            .config("spark.ui.showConsoleProgress", "false")
                            .config("spark.sql.shuffle.partitions", "2")
                            .config("spark.sql.session.timeZone", "UTC")
                            .config("spark.sql.caseSensitive", "true")
                            .config("spark.driver.memory", "2g"))
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture
def interpreted(spark):
    """The session with expressions interpreted, not compiled: a select of
    dozens of filters makes Java code Janino refuses (past 64 KB) or takes
    longer to compile than to evaluate over a few hundred rows. Verdicts do not
    depend on it; the other Spark tests run compiled code."""
    settings = {"spark.sql.codegen.wholeStage": "false",
                "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
    before = {key: spark.conf.get(key, None) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    yield spark
    for key, value in before.items():
        if value is None:
            spark.conf.unset(key)
        else:
            spark.conf.set(key, value)


def pytest_collection_modifyitems(config, items):
    """The longest tests first (Spark's, then the slow ones), the rest in file
    order: pytest-xdist's work stealing then ends a run on short tests, not with
    one worker idle while the other finishes a Spark select. No test depends on
    the order."""
    def rank(item):
        return 0 if item.get_closest_marker("spark") else 1 if item.get_closest_marker("slow") \
            else 2
    items.sort(key=rank)


# --- CI: the Spark tests must have run --------------------------------------------------------

_skipped_spark: list[str] = []


def pytest_collectreport(report):
    """A Spark test module skipped whole (``importorskip("pyspark")``)."""
    if report.skipped and "spark" in Path(str(report.fspath)).name:
        _skipped_spark.append(str(report.nodeid))


def pytest_runtest_logreport(report):
    if report.skipped and "spark" in report.keywords:
        _skipped_spark.append(report.nodeid)


def pytest_sessionfinish(session, exitstatus):
    """With FILTEX_CI=1 (CI), a run fails if any Spark test it selected
    was skipped: skipping them for want of pyspark or Java is fine on a laptop,
    never in CI."""
    if os.environ.get("FILTEX_CI") != "1" or not _skipped_spark:
        return
    session.config.get_terminal_writer().line(
        f"FILTEX_CI=1: {len(_skipped_spark)} Spark tests or modules were skipped, "
        f"e.g. {_skipped_spark[0]}", red=True)
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
