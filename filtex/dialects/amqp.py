"""The ``amqp`` dialect: filtex SQL as the specification reads it (CSD01 and the
working draft), plus BETWEEN. Evaluation failures make the whole filter
unknown; property filters follow filtex 4.1. The record's defaults are this
dialect; ``base.Semantics`` is its evaluation."""
from __future__ import annotations

from .base import AMQP_SEMANTICS, Dialect

AMQP = Dialect("amqp", semantics=AMQP_SEMANTICS)
