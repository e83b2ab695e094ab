"""The record of one SQL function (``functions/__init__.py`` says who reads what)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..tree import ast


@dataclass(frozen=True)
class SparkForm:
    """A string function as Spark computes it: ``sql(child, args)`` is Spark
    SQL over a string column, ``model(text, args)`` what it gives for ``text``
    in Python, ``accepts(args)`` whether the constant arguments are ones where
    the model is the runtime operation's result (on ASCII text only if
    ``ascii_only``): ``tests/test_rules.py`` checks that on edge strings and
    arguments, and Spark's SQL against the row engine runs in
    ``tests/test_spark_native.py``."""
    sql: Callable[[str, tuple[int, ...]], str]
    model: Callable[[str, tuple[int, ...]], str]
    accepts: Callable[[tuple[Any, ...]], bool]
    ascii_only: bool = False   # the model is Spark's only on ASCII text (Java's case mapping)


@dataclass(frozen=True)
class Function:
    name: str                      # as the checked tree names it: "LOWER", "filtex:LENGTH"
    arity: tuple[int, int]         # fewest and most arguments
    result: str                    # the checker's type of the result ("string", "int", ...)
    run: Callable[..., Any]        # the runtime operation
    volatile: bool = False         # reads the clock
    subject: str | None = None     # the type its first argument must be: "string" (a value
    #                                of another type fails in amqp: dialects/rules.py)
    inline: Callable[[str, Sequence[ast.Node]], str | None] | None = None
    """Python for the result when the first argument is an exact ``str`` (the
    subject's expression, the other argument nodes); None where only the
    runtime operation can answer (an argument that is not a safe constant)."""
    spark: SparkForm | None = None

    @property
    def charged(self) -> bool:
        """Its result is a string the evaluation's budget counts when kept."""
        return self.result == "string"

    @property
    def ident(self) -> str:
        """The name's form in generated code (``_fn_filtex_LENGTH``)."""
        return self.name.replace(":", "_")
