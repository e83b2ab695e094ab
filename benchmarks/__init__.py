"""filtex's benchmarks (``python -m benchmarks.<name>``).

They time the engines themselves: the batch engine's kernels are compiled where they are
needed (``FILTEX_COMPILE=wait``), never answered by the per-message engine while they
compile in the background, unless a benchmark measures that tier (``first_use``,
``spark_first_batch`` start their runs without it)."""
import os

os.environ.setdefault("FILTEX_COMPILE", "wait")
