"""Errors: definitional (``FilterError``) and evaluation (``EvaluationFailure``)."""
from __future__ import annotations

import logging
from typing import Any, Callable

LOG = logging.getLogger("filtex")
INTERNAL_ERROR = "amqp:internal-error"


class FilterError(ValueError):
    """A filter that cannot be defined: bad syntax, unknown field, bad type.

    ``condition`` is the AMQP error condition an endpoint detaches the link
    with (``amqp:invalid-field``; ``amqp:not-implemented`` for filter types
    filtex does not know). ``line`` and ``column`` are 1-based.
    """

    def __init__(self, problem: str, line: int = 1, column: int = 1,
                 condition: str = "amqp:invalid-field") -> None:
        self.problem = problem
        self.line = line
        self.column = column
        self.condition = condition
        super().__init__(f"{problem} (line {line}, column {column})")

    def __reduce__(self) -> tuple[type[FilterError], tuple[str, int, int, str]]:
        return (self.__class__, (self.problem, self.line, self.column, self.condition))


class NotAMessage(TypeError):
    """A filter was given an object that is no message form filtex reads (a
    programming error, not a hostile message: it is raised, never unknown)."""


class EvaluationFailure(Exception):
    """Raised inside generated code when a message makes evaluation fail;
    the filter's result is then unknown, with this ``reason``.

    ``deferred`` makes one whose reason is written when it is first read
    (``Filter.outcome``, ``Filter.explain``): ``evaluate`` and ``matches`` only
    need to know that evaluation failed, so a failing message costs them no
    formatting of types and values."""

    __slots__ = ("_reason", "_write", "_pieces")

    def __init__(self, reason: str) -> None:
        self._reason: str | None = reason
        self._write: Callable[..., str] | None = None
        self._pieces: tuple[Any, ...] = ()
        super().__init__(reason)

    @classmethod
    def deferred(cls, write: Callable[..., str], *pieces: Any) -> EvaluationFailure:
        """A failure whose reason is ``write(*pieces)``, written when it is read
        (the pieces are the operation's own immutable values or types)."""
        failure = cls.__new__(cls)
        failure._reason, failure._write, failure._pieces = None, write, pieces
        return failure

    @property
    def reason(self) -> str:
        reason = self._reason
        if reason is None:
            write = self._write
            reason = self._reason = write(*self._pieces) if write is not None else ""
            self._write, self._pieces = None, ()
        return reason

    @reason.setter
    def reason(self, reason: str) -> None:
        self._reason, self._write, self._pieces = reason, None, ()

    @property
    def args(self) -> tuple[Any, ...]:
        return (self.reason,)

    @args.setter
    def args(self, args: tuple[Any, ...]) -> None:
        self.reason = args[0] if args else ""

    def __str__(self) -> str:
        reason = self.reason
        return reason if reason.__class__ is str else "evaluation failed"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!r})"

    def __reduce__(self) -> tuple[type[EvaluationFailure], tuple[str]]:
        return (type(self), (self.reason,))


class DefinitionProblem(Exception):
    """Internal: a definitional problem at a text offset, turned into a
    ``FilterError`` with line and column by the compiler."""

    def __init__(self, problem: str, offset: int,
                 condition: str = "amqp:invalid-field") -> None:
        self.problem = problem
        self.offset = offset
        self.condition = condition
        super().__init__(problem)


def internal_error(exc: BaseException, what: str) -> FilterError:
    """A bug or an unexpected input object met while ``what``: the details go to
    the operator's log (logger ``filtex``), the client gets a generic error with
    no Python text and no path (filtex 7.1)."""
    LOG.error("internal error while %s", what, exc_info=exc)
    return FilterError(f"internal error while {what}", condition=INTERNAL_ERROR)


def excerpt(text: str, size: int = 40) -> str:
    """``repr`` of at most ``size`` characters of ``text`` (error messages stay short)."""
    return repr(text[:size]) + ("..." if len(text) > size else "")


def line_and_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of ``offset`` in ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def describe_exception(exc: BaseException) -> str:
    """``TypeError: text`` of an exception, even one that cannot be printed; short."""
    try:
        text = str(exc)
        if text.__class__ is not str:
            raise TypeError
    except Exception:
        text = "(unprintable)"
    name = type(exc).__name__
    return f"{name if name.__class__ is str else 'error'}: {text[:200]}"
