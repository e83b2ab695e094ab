import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402

from engines import ENGINES  # noqa: E402


@pytest.fixture(params=sorted(ENGINES))
def engine(request):
    """Every engine filtex has (tests/engines.py): a guarantee holds in each."""
    return ENGINES[request.param]()
