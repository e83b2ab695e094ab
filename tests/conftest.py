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
