"""Generated Python source to functions: compiled once, with a loader that
shows the source in tracebacks. Every engine that runs Python it generated
(the row engine, the batch planner's atoms, the explainer) loads it here, so
none of them imports the front door."""
from __future__ import annotations

import hashlib
import inspect
import types
from typing import Any, Callable


class _GeneratedSource:
    """The ``__loader__`` of a generated function's globals: ``linecache`` asks it
    for the source only when a traceback needs it, so no source is registered
    anywhere while nothing fails, and it goes when its filter goes."""

    __slots__ = ("source",)

    def __init__(self, source: str) -> None:
        self.source = source

    def get_source(self, name: str) -> str:
        return self.source


def load(source: str, namespace: dict[str, Any], identity: str
         ) -> tuple[Callable[..., bool | None], Callable[..., bool]]:
    """Compile generated source once, over the globals ``namespace`` (copied);
    return ``evaluate`` and ``matches``: the source's own ``matches`` where it
    writes one (compiled when first called), else one testing ``evaluate``'s result.
    Tracebacks show the source through the globals' ``__loader__``."""
    digest = hashlib.sha1(f"{identity}\n{source}".encode("utf-8", "surrogatepass")).hexdigest()
    filename = f"filtex-generated-{digest[:16]}"
    scope: dict[str, Any] = dict(namespace)
    scope["__name__"] = filename
    scope["__loader__"] = _GeneratedSource(source)
    head, written, tail = source.partition("\ndef matches(")
    exec(compile(head, filename, "exec"), scope)
    evaluate = scope["evaluate"]
    exec(_MATCHES, scope)
    matches = scope["matches"]
    if written:   # compiled on its first call (the line numbers are the source's)
        scope["_load_matches"] = _Deferred(
            "\n" * (head.count("\n") + 1) + "def matches(" + tail, filename, scope, matches)
        matches.__code__ = _MATCHES_STUB
    evaluate.__doc__, matches.__doc__ = _EVALUATE_DOC, _MATCHES_DOC
    # the mode stays private
    evaluate.__signature__ = matches.__signature__ = _SIGNATURE
    return evaluate, matches


def compile_matches(function: Callable[..., Any]) -> None:
    """Compile a generated ``matches`` now if its compile was deferred (``load``:
    to its first call): a caller about to call it on a stream of messages (a
    ``Subscriptions`` set, as it takes the filter) pays the compile there, not
    inside its first messages. Any other function is left as it is."""
    if getattr(function, "__code__", None) is _MATCHES_STUB:
        function.__globals__["_load_matches"]()


class _Deferred:
    """A generated ``matches`` compiled on its first call, into the function object
    every caller already holds (its code is swapped in place): a filter only ever
    evaluated never pays for compiling it."""

    __slots__ = ("source", "filename", "scope", "function")

    def __init__(self, source: str, filename: str, scope: dict[str, Any],
                 function: Callable[..., bool]) -> None:
        self.source: str | None = source
        self.filename, self.scope, self.function = filename, scope, function

    def __call__(self) -> None:
        source = self.source
        if source is None:
            return
        compiled: dict[str, Any] = dict(self.scope)
        exec(compile(source, self.filename, "exec"), compiled)
        self.function.__code__ = compiled["matches"].__code__
        self.source = None


_MATCHES_STUB = compile("def matches(message, receiving_connection=None):\n"
                        "    _load_matches()\n"
                        "    return matches(message, receiving_connection)\n",
                        "filtex-generated-matches", "exec")
_MATCHES_STUB = next(c for c in _MATCHES_STUB.co_consts if isinstance(c, types.CodeType))
_MATCHES = compile("def matches(message, receiving_connection=None):\n"
                   "    return evaluate(message, receiving_connection) is True\n",
                   "filtex-generated-matches", "exec")
_EVALUATE_DOC = """True, False, or None (unknown: not delivered) for one message.

``receiving_connection`` is the connection of the link the message would go to
(the Apache no-local filter compares it with ``Message.connection``)."""
_MATCHES_DOC = """True only when the filter's result for the message is True."""
_SIGNATURE = inspect.Signature([
    inspect.Parameter("message", inspect.Parameter.POSITIONAL_OR_KEYWORD),
    inspect.Parameter("receiving_connection", inspect.Parameter.POSITIONAL_OR_KEYWORD,
                      default=None)])
