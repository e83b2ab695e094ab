import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402

from engines import ENGINES  # noqa: E402


@pytest.fixture(params=sorted(ENGINES))
def engine(request):
    """Every engine filtex has (tests/engines.py): a guarantee holds in each."""
    return ENGINES[request.param]()

# Compiled kernels are cached across runs in the checkout (ignored by git), not in ~/.cache.
import os  # noqa: E402

os.environ.setdefault("FILTEX_KERNEL_CACHE", str(Path(__file__).parent.parent / ".kernel-cache"))


@pytest.fixture(scope="session")
def spark():
    """The one local[2] SparkSession of a test run (UI and progress bars off, UTC,
    case-sensitive names: AMQP keys are)."""
    pytest.importorskip("pyspark")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    from pyspark.sql import SparkSession
    session = (SparkSession.builder.master("local[2]").appName("filtex-tests")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.caseSensitive", "true")
               .getOrCreate())
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
