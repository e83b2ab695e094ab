"""A compiled filter: generated functions plus what they were made from."""
from __future__ import annotations

from typing import (TYPE_CHECKING, Any, Callable, NamedTuple, Protocol)

from .errors import EvaluationFailure, NotAMessage, describe_exception
from .names import Dialect

if TYPE_CHECKING:
    from typing import Unpack

    import pyarrow as pa

    from .arrow.engine import BatchOptions
    from .table.sources import ArrowData
    from .forms import MessageForm
    from .row.explain import Explainer, Explanation
    from .tree.ast import Node

class Evaluate(Protocol):
    """``Filter.evaluate``: a generated function."""

    def __call__(self, message: MessageForm, receiving_connection: object = None) -> bool | None:
        ...


class Matches(Protocol):
    """``Filter.matches``: the same generated code, True only where ``evaluate`` is."""

    def __call__(self, message: MessageForm, receiving_connection: object = None) -> bool:
        ...


class Outcome(NamedTuple):
    """A filter's result for one message: ``result`` is True, False or None
    (unknown); for unknown, ``reason`` says why: why evaluation failed, or
    (starting ``no value``) which fields were absent."""
    result: bool | None
    reason: str | None = None


class Filter:
    """A filter compiled to Python functions.

    ``evaluate(message)`` returns True, False or None (unknown; the message is
    not delivered) for a ``filtex.Message``, AMQP-encoded bytes or a
    ``proton.Message`` (``filtex.forms``; anything else is a TypeError).
    ``matches(message)`` returns a plain bool. ``outcome`` also tells why a
    result is unknown; ``explain`` shows every sub-expression's value.
    ``source`` is the generated Python.
    ``evaluate`` and ``matches`` are the generated functions themselves: a
    call is one call, no wrapper.
    """

    __slots__ = ("text", "dialect", "kind", "source", "evaluate", "matches", "tree",
                 "recipe", "_explainer", "__weakref__")

    text: Any                 # SQL text, or a described filter's canonical value
    dialect: Dialect
    kind: str                 # "sql", "filter-set", or a described filter's descriptor
    source: str
    evaluate: Evaluate
    matches: Matches
    tree: Node | None
    recipe: tuple[Callable[..., Filter], tuple[Any, ...], dict[str, Any]] | None

    def __init__(self, text: Any, dialect: Dialect, kind: str, source: str,
                 evaluate: Callable[..., bool | None], matches: Callable[..., bool],
                 tree: Node | None = None,
                 recipe: tuple[Callable[..., Filter], tuple[Any, ...], dict[str, Any]]
                 | None = None) -> None:
        self.text = text
        self.dialect = dialect
        self.kind = kind
        self.source = source
        self.evaluate = evaluate
        self.matches = matches
        self.tree = tree
        # (builder, args, keyword args) that compile this filter again: its builder
        # hands it over, so this module needs to know no builder
        self.recipe = recipe
        self._explainer: Explainer | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The keyword arguments the filter was compiled with (limits, parameters)."""
        return dict(self.recipe[2]) if self.recipe else {}

    def outcome(self, message: MessageForm, receiving_connection: object = None) -> Outcome:
        """The result for ``message``; when it is unknown, why: the failure
        reason if evaluation failed, else the fields that were absent (NULL)."""
        try:
            # the generated function's private third argument: the mode (no fast exit)
            result = self.evaluate(message, receiving_connection, False)  # type: ignore[call-arg]
            if result is None:
                return Outcome(None, self._why_unknown(message, receiving_connection))
            return Outcome(result)
        except EvaluationFailure as failure:
            return Outcome(None, _printable(failure.reason))
        except NotAMessage:
            raise
        except Exception as exc:  # a malformed message: unknown, never a crash
            return Outcome(None, f"malformed message: {describe_exception(exc)}")

    def explain(self, message: MessageForm, receiving_connection: object = None) -> Explanation:
        """Why the filter gives its result for ``message``: an ``Explanation``
        tree of every sub-expression with its value (``str()`` prints it)."""
        if self._explainer is None:
            from .row.explain import Explainer
            self._explainer = Explainer(self)
        return self._explainer.explain(message, receiving_connection)

    def evaluate_batch(self, data: ArrowData, receiving_connection: object = None,
                       **options: Unpack[BatchOptions]) -> pa.BooleanArray:
        """The verdict for every row of a message table (``filtex.arrow``), or of a
        flat table whose columns are properties (``mapping=``, ``nulls=``), as a
        pyarrow Table or RecordBatch or any Arrow C stream (pandas, Polars,
        DuckDB, a ``RecordBatchReader``): a
        ``pyarrow.BooleanArray``, null where unknown. Compiled numba kernels where
        the filter has a kernel form, the per-message engine for the rest
        (``filtex.arrow.evaluate`` also says how many rows took it)."""
        from .arrow.engine import evaluate_batch
        return evaluate_batch(self, data, receiving_connection, **options)

    def filter_table(self, table: ArrowData, receiving_connection: object = None,
                     **options: Unpack[BatchOptions]) -> pa.Table:
        """The rows of a message table (or flat table) the filter matches (true)."""
        from .arrow.engine import filter_table
        return filter_table(self, table, receiving_connection, **options)

    def _why_unknown(self, message: MessageForm, receiving_connection: object) -> str:
        """Why a result is unknown when no evaluation failed: the fields that were
        absent, or the expression that had no value."""
        if self.tree is None:
            return "no value"
        explanation = self.explain(message, receiving_connection)
        origins = explanation.origins()
        absent = [o.text for o in origins if o.kind_reference]
        others = [o.text for o in origins if not o.kind_reference]
        parts = []
        if absent:
            parts.append("no value for " + ", ".join(absent[:5])
                         + (f" and {len(absent) - 5} more" if len(absent) > 5 else ""))
        if others:
            parts.append(("" if absent else "no value: ") + f"{others[0][:80]} is NULL")
        if not parts:   # a value in a predicate position that is no truth value
            inner = explanation.children[0].text if explanation.children else explanation.text
            parts.append(f"no value: {inner[:80]} is not TRUE or FALSE")
        return "; ".join(parts)

    def __reduce__(self) -> tuple[Callable[..., Filter], tuple[Any, ...]]:
        if self.recipe is None:
            raise TypeError(f"{self!r} was built without a recipe and cannot be pickled")
        builder, args, kwargs = self.recipe
        return (_rebuild, (builder, args, kwargs))

    def __repr__(self) -> str:
        try:
            shown = str(self.text)[:60]
        except ValueError:   # a value too large to print (an int of 4,300 digits)
            shown = "..."
        return f"<Filter {self.kind} {self.dialect} {shown!r}>"


def _rebuild(builder: Callable[..., Filter], args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Filter:
    """Unpickling: compile the filter again from its definition."""
    return builder(*args, **kwargs)


def _printable(reason: Any) -> str:
    return reason if reason.__class__ is str else "evaluation failed"
