"""The source writer of the per-message engine (``row/``). The numba kernels
(``arrow/kernel.py``, ``arrow/arith.py``) write their modules with small writers
of their own: their code is integer straight-line code, not Python control flow."""
