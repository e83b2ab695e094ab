"""The engines every hardening test runs on.

Each engine compiles a filter (SQL text or a described filter) and evaluates a
batch of messages, returning one result (True, False or None) per message. A
new engine (columnar batches, Spark) is added here, and every guarantee test
that takes the ``engine`` fixture runs on it too, instead of getting a copy.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import filtex


class RowEngine:
    """The per-message engine: one generated Python function per filter."""

    name = "row"

    def compile_sql(self, text: str, dialect: str = "amqp", **options: Any) -> filtex.Filter:
        return filtex.compile_sql(text, dialect, **options)

    def compile_filter(self, spec: Any, dialect: str = "amqp", **options: Any) -> filtex.Filter:
        return filtex.compile_filter(spec, dialect, **options)

    def compile_filter_set(self, spec: Any, dialect: str = "amqp",
                           **options: Any) -> filtex.Filter:
        return filtex.compile_filter_set(spec, dialect, **options)

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        return [flt.evaluate(message) for message in messages]

    def outcomes(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        return [flt.outcome(message) for message in messages]

    def comparable(self, message: Any) -> bool:
        """Can this engine take ``message`` in as it is (else its answer, None,
        is no verdict to compare with the per-message engine's)?"""
        return True

    def reference(self, message: Any) -> Any:
        """What the per-message engine evaluates for the verdict this engine
        must give (the message itself, unless the engine reads another form of it)."""
        return message


ENGINES: dict[str, Callable[[], Any]] = {"row": RowEngine}

NOISE = ["p.subject = 'x'", "p.to = 'x'", "p.[message-id] = 1", "p.[reply-to] IS NULL",
         "h.ttl > 0", "h.durable", "h.[first-acquirer]", "h.priority > 4",
         "m.k = 1", "m.[x-opt-partition] < 4", "a = 1", "b LIKE 'x%'", "EXISTS(subject)",
         "amqp_value.k = 1", "p.[creation-time] > 0", "p.[user-id] IS NULL"]
"""Filters reading every section and many fields, run before the filter under
test on the same shared view, in an order that varies from message to message."""


def _noise_filters() -> list[filtex.Filter]:
    return [filtex.compile_sql(text) for text in NOISE]


class SharedViewEngine(RowEngine):
    """The per-message engine on one view a message shares with other filters
    (``filtex.view``): before the filter under test reads a message, other
    filters read its fields in an order that depends on the message, as in a
    broker that evaluates several subscriptions on one delivery. A view's
    answers must not depend on what was read before (issue 23)."""

    name = "view"

    def __init__(self) -> None:
        self.noise = _noise_filters()

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        results = []
        for index, message in enumerate(messages):
            try:
                view = filtex.view(message)
            except TypeError:   # no message form: the row engine refuses it too
                view = message
            order = self.noise[index % len(self.noise):] + self.noise[:index % len(self.noise)]
            for other in order[: 3 + index % 7]:
                try:
                    other.evaluate(view)
                except TypeError:
                    pass
            results.append(flt.evaluate(view))
        return results


class ProtonEngine(RowEngine):
    """The per-message engine on ``proton.Message``: each message encoded and
    decoded by proton, as a consumer receives it. A message proton cannot hold
    (a value of no AMQP type, bytes it cannot decode) is one a consumer never
    receives: it is left out of comparisons (``refused``)."""

    name = "proton"

    def __init__(self) -> None:
        self.refused: list[Any] = []

    def received(self, message: Any) -> Any:
        import proton

        from filtex.amqp.encode import encode_message
        try:
            raw = message if isinstance(message, (bytes, bytearray)) else \
                bytes(encode_message(message))
            received = proton.Message()
            received.decode(bytes(raw))
            received.encode()   # what proton cannot write again is no message it passes on
            return received
        except Exception:   # proton or the encoder refuses it: never delivered as such
            return None

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        results = []
        for message in messages:
            received = self.received(message)
            if received is None:
                self.refused.append(message)
                results.append(None)
                continue
            results.append(flt.evaluate(received))
        return results

    def comparable(self, message: Any) -> bool:
        return self.received(message) is not None

    def reference(self, message: Any) -> Any:
        """The bytes proton writes for what it read: proton keeps only what its
        classes can hold (it decodes b"\\x00" as an empty message, a list where
        the header's priority belongs as no priority), so the proton view must
        agree with the encoded view of the same proton message."""
        return bytes(self.received(message).encode())


class SubscriptionsEngine(RowEngine):
    """``filtex.Subscriptions``: the filter among others in one set, each
    message matched against all of them (``evaluate_all``: true, unknown, or
    absent for false)."""

    name = "subscriptions"

    def __init__(self) -> None:
        self.noise = _noise_filters()

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        subscriptions = filtex.Subscriptions(
            {f"noise{n}": other for n, other in enumerate(self.noise)})
        subscriptions.add("under-test", flt)
        results = []
        for message in messages:
            try:
                found = subscriptions.evaluate_all(message)
            except TypeError:   # no message form at all
                results.append(flt.evaluate(message))
                continue
            results.append(found["under-test"] if "under-test" in found else False)
        return results


ENGINES.update({"view": SharedViewEngine, "proton": ProtonEngine,
                "subscriptions": SubscriptionsEngine})


class BatchEngine(RowEngine):
    """The columnar engine: each message becomes a one-row message table
    (``filtex.arrow``), evaluated by the filter's kernel (the per-message engine
    for rows the kernel hands back); encoded bytes become a one-cell binary
    column, decoded by the numba decoder (``evaluate_encoded``). A message the table cannot hold (a value of
    no exact AMQP class, bytes that do not decode) is refused by the builder with
    a ValueError or TypeError naming it; here that message is unknown, as it would never reach
    a table. The refusals are kept in ``refused`` so a test can look at them."""

    name = "batch"

    def __init__(self) -> None:
        import filtex.arrow  # noqa: F401  (needs pyarrow and numba)
        self.refused: list[str] = []

    def evaluate(self, flt: filtex.Filter, messages: Iterable[Any]) -> list:
        import pyarrow as pa

        import filtex.arrow as fa
        results = []
        for message in messages:
            if type(message) is bytes:   # raw messages: a binary column, decoded by numba
                column = pa.array([message], pa.binary())
                results.extend(fa.evaluate_encoded(flt, column).verdicts.to_pylist())
                continue
            try:
                table = fa.message_table([message])
            except (TypeError, ValueError) as problem:
                assert str(problem), "a refusal names its problem"
                self.refused.append(str(problem))
                results.append(None)
                continue
            results.extend(flt.evaluate_batch(table).to_pylist())
        return results

    def comparable(self, message: Any) -> bool:
        if type(message) is bytes:
            return True
        import filtex.arrow as fa
        try:
            fa.message_table([message])
        except (TypeError, ValueError):
            return False
        return True


try:
    import numba  # noqa: F401
    import pyarrow  # noqa: F401
    ENGINES["batch"] = BatchEngine
except ImportError:   # the columnar extra is not installed: the row engine alone
    pass
