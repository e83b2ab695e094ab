"""A compiled filter: generated functions plus what they were made from."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from .errors import EvaluationFailure


class Outcome(NamedTuple):
    """A filter's result for one message: ``result`` is True, False or None
    (unknown); ``reason`` says why evaluation failed, when it did."""
    result: bool | None
    reason: str | None = None


class Filter:
    """A filter compiled to Python functions.

    ``evaluate(message)`` returns True, False or None (unknown; the message is
    not delivered). ``matches(message)`` returns a plain bool. ``outcome``
    also tells why evaluation failed. ``source`` is the generated Python.
    ``evaluate`` and ``matches`` are the generated functions themselves: a
    call is one call, no wrapper.
    """

    __slots__ = ("text", "dialect", "kind", "source", "evaluate", "matches", "tree",
                 "options", "__weakref__")

    def __init__(self, text: Any, dialect: str, kind: str, source: str,
                 evaluate: Callable[..., bool | None], matches: Callable[[Any], bool],
                 tree: Any = None, options: dict | None = None) -> None:
        self.text = text
        self.dialect = dialect
        self.kind = kind
        self.source = source
        self.evaluate = evaluate
        self.matches = matches
        self.tree = tree
        self.options = options or {}   # keyword arguments it was compiled with (limits...)

    def outcome(self, message: Any, receiving_connection: Any = None) -> Outcome:
        """The result for ``message``, with the failure reason if evaluation failed."""
        try:
            return Outcome(self.evaluate(message, False, receiving_connection))
        except EvaluationFailure as failure:
            return Outcome(None, _printable(failure.reason))
        except Exception as exc:  # a malformed message: unknown, never a crash
            return Outcome(None, f"malformed message: {_describe(exc)}")

    def __reduce__(self):
        return (_rebuild, (self.kind, self.text, self.dialect, self.options))

    def __repr__(self) -> str:
        try:
            shown = str(self.text)[:60]
        except ValueError:   # a value too large to print (an int of 4,300 digits)
            shown = "..."
        return f"<Filter {self.kind} {self.dialect} {shown!r}>"


def _rebuild(kind: str, text: Any, dialect: str, options: dict) -> Filter:
    """Unpickling: compile the filter again from its definition."""
    if kind == "sql":
        from .compiler import compile_sql
        return compile_sql(text, dialect, **options)
    from .described import compile_filter, compile_filter_set
    if kind == "filter-set":
        return compile_filter_set(dict(text[1]), dialect, **options)
    return compile_filter(text, dialect, **options)


def _printable(reason: Any) -> str:
    return reason if reason.__class__ is str else "evaluation failed"


def _describe(exc: BaseException) -> str:
    """``TypeError: text`` of an exception, even one that cannot be printed; short."""
    try:
        text = str(exc)
        if text.__class__ is not str:
            raise TypeError
    except Exception:
        text = "(unprintable)"
    name = type(exc).__name__
    return f"{name if name.__class__ is str else 'error'}: {text[:200]}"
