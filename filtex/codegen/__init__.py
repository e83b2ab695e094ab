"""Generated Python: the source writer of the per-message engine (``writer``)
and the loader every engine that generates Python runs its source through
(``loader``: compiled once, the source shown in tracebacks). The numba kernels
(``arrow/kernel.py``, ``arrow/arith.py``) write their modules with small writers
of their own: their code is integer straight-line code, not Python control flow."""
