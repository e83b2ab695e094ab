"""The runtime: the complete operations every engine falls back to and the
constant folder uses (``ops``: comparison, arithmetic, functions), AMQP value
kinds and decimals (``values``), LIKE and topic matchers in linear time
(``patterns``, ``topic``), case mapping with language tags (``casing``), the
matching rules of property filters, section 4.1 (``property``: read by the
described front end, the dialects, the row engine, the index and Spark)."""
from __future__ import annotations

from .ops import *  # noqa: F401,F403  (the operations, as ``runtime.compare``...)
