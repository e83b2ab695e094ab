"""The ``amqp`` dialect: filtex SQL as the specification reads it (CSD01 and the
working draft), plus BETWEEN and the 2018 draft's body references
(``amqp_value.order.total``, ``amqp_sequence[0]``). Evaluation failures make the whole filter
unknown; property filters follow filtex 4.1. The record's defaults are this
dialect; ``base.Semantics`` is its evaluation."""
from __future__ import annotations

from .base import AMQP_SEMANTICS, BODY_QUALIFIERS, Dialect

AMQP = Dialect("amqp", semantics=AMQP_SEMANTICS,
               body_qualifiers=tuple(BODY_QUALIFIERS.items()))
