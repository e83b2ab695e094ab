"""Why a filter gave its result for one message: every sub-expression's value.

The explanation is not a second evaluator that could disagree with the
engine: it is the same generated code, made by the same generator, with one
line after each node's code that records the node's value (``_trace[i] =
_7``). Run on the message, the trace holds exactly the values the filter
computed; a node without a value was not reached (evaluation failed first, or
a long junction stopped early).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ..errors import EvaluationFailure, NotAMessage, describe_exception
from ..forms import view
from ..limits import DEFAULT_LIMITS
from ..tree import ast
from ..tree.render import constant, to_sql
from . import RowGenerator, load

_REFERENCES = (ast.Field, ast.Body, ast.MapRef, ast.Index, ast.Derived)


@dataclass(frozen=True)
class Explanation:
    """One sub-expression: its ``text``, its ``value`` (True, False or None
    for a condition; the operand's value otherwise), whether it was
    ``evaluated``, the failure ``reason`` where evaluation failed, and the
    explanations of its operands."""
    text: str
    value: Any
    evaluated: bool
    reason: str | None
    children: tuple["Explanation", ...]
    condition: bool = False        # a predicate: its value is a truth value
    kind_reference: bool = False   # a field or a reference into one

    @property
    def verdict(self) -> str:
        """``true``, ``false``, ``unknown``, ``failed`` or ``not evaluated``; a
        value's constant for an operand."""
        if self.reason is not None:
            return "failed"
        if not self.evaluated:
            return "not evaluated"
        if self.condition or self.value is None:
            return {True: "true", False: "false", None: "unknown"}.get(self.value, "unknown")
        return shown(self.value)

    def walk(self) -> Iterator["Explanation"]:
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def origins(self) -> list["Explanation"]:
        """Where the NULL of an unknown result came from (when no evaluation
        failed): the NULL sub-expressions whose operands are not NULL, found by
        following NULLs down from the root: absent fields, mostly."""
        found: list[Explanation] = []
        stack = [self]
        while stack:
            node = stack.pop()
            if not node.evaluated or node.value is not None:
                continue
            nulls = [child for child in node.children if child.evaluated and child.value is None]
            if (node.kind_reference or not nulls) and node.text not in [f.text for f in found]:
                found.append(node)
            else:
                stack.extend(reversed(nulls))
        return found

    def format(self, indent: str = "") -> str:
        """The tree as text, one sub-expression a line with its value."""
        lines = []
        stack = [(self, indent)]
        while stack:
            node, pad = stack.pop()
            line = f"{pad}{node.verdict:<8}  {node.text}"
            if node.reason is not None:
                line += f"\n{pad}          ^ {node.reason}"
            lines.append(line)
            stack.extend((child, pad + "  ") for child in reversed(node.children))
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()


SHOWN = 80
"""Characters of a string or binary value an explanation shows."""


def shown(value: Any) -> str:
    """A value as an explanation shows it: its constant, but at most ``SHOWN``
    characters of a long string or binary value and the size of a huge
    integer (an explanation shows a message's values at every reference: a
    megabyte each time otherwise), and never an exception (a value from a
    message built in Python may refuse to be written)."""
    try:
        if isinstance(value, str) and str.__len__(value) > SHOWN:
            return (f"{constant(str.__str__(value)[:SHOWN])}... "
                    f"({str.__len__(value):,} characters)")
        if isinstance(value, (bytes, bytearray)) and len(value) > SHOWN // 2:
            return f"{constant(bytes(value[:SHOWN // 2]))}... ({len(value):,} bytes)"
        if isinstance(value, int) and not -10**60 < value < 10**60:
            digits = int(abs(int.__int__(value)).bit_length() * 0.30103) + 1
            return f"{'-' if value < 0 else ''}an integer of about {digits:,} digits"
        return constant(value)
    except Exception:   # a hostile value's __repr__ or __str__
        return f"a {type(value).__name__[:40]} value that cannot be shown"


class _TracingGenerator(RowGenerator):
    """The row generator, recording each tree node's value as it is computed."""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.traced: list[ast.Node] = []
        self.fuse_calls = False   # every node's value is recorded, a function's result too
        self.returning_root = False   # the root's value is recorded too: no early return

    def visit(self, node: ast.Node) -> str:
        var = super().visit(node)
        if not isinstance(node, ast.Scope):
            self.record(node, var)
        return var

    def record(self, node: ast.Node, var: str) -> None:
        self.emit(f"_trace[{len(self.traced)}] = {var}")
        self.traced.append(node)

    def entries(self, items: tuple, joiner: str) -> str:
        """Property-filter entries, each recorded (the engine joins them in one
        expression)."""
        tests = []
        for item in items:
            test = self.temp()
            self.emit(f"{test} = {self.entry(item)}")
            self.record(item, test)
            tests.append(test)
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = {joiner.join(tests)}")
        return var


class Explainer:
    """A filter's tracing function, compiled once and kept with the filter."""

    def __init__(self, flt: Any) -> None:
        limits = flt.options.get("limits", DEFAULT_LIMITS)
        generator = _TracingGenerator(limits=limits)
        source = generator.generate(flt.tree)
        source = source.replace("_mode=None):", "_mode=None, _trace=None):", 1)
        self.evaluate, _ = load(source, generator.namespace, f"explain:{flt.kind}")
        self.tree = flt.tree
        self.traced = generator.traced
        self.index = {id(node): i for i, node in enumerate(generator.traced)}

    def explain(self, message: Any, receiving_connection: Any = None) -> Explanation:
        trace: dict[int, Any] = {}
        reason = result = None
        try:
            result = self.evaluate(view(message), receiving_connection, False, trace)
        except NotAMessage:
            raise
        except EvaluationFailure as failure:
            reason = failure.reason if failure.reason.__class__ is str else "evaluation failed"
        except Exception as exc:   # a malformed message: the same words as Filter.outcome
            reason = f"malformed message: {describe_exception(exc)}"
        failed_at = None
        if reason is not None:   # the first node, in evaluation order, without a value
            failed_at = next((i for i, node in enumerate(self.traced)
                              if i not in trace and not isinstance(node, ast.Literal)), None)
        root = self._build(self.tree, trace, reason, failed_at)
        if reason is None and (not root.condition or root.value is not result):
            # a value in a predicate position: what the filter made of it
            root = Explanation(f"{root.text} (as a condition)", result, True, None, (root,),
                               condition=True)
        return root

    def _build(self, tree: ast.Node, trace: dict, reason: str | None,
               failed_at: int | None) -> Explanation:
        # children first, iteratively: a deep filter cannot exhaust the stack
        built: dict[int, Explanation] = {}
        stack: list[tuple[ast.Node, bool]] = [(tree, False)]
        while stack:
            node, ready = stack.pop()
            if isinstance(node, ast.Scope):
                node = node.body
            if not ready:
                stack.append((node, True))
                stack.extend((child, False) for child in node.children())
                continue
            children = tuple(built[id(_unscoped(c))] for c in node.children())
            i = self.index.get(id(node))
            here = reason if (i is not None and i == failed_at) else None
            known = isinstance(node, ast.Literal)   # a constant: no code computes it
            built[id(node)] = Explanation(
                text=to_sql(node), value=node.value if known else trace.get(i),
                evaluated=known or i in trace, reason=here,
                children=children, condition=isinstance(node, ast.PREDICATE_NODES),
                kind_reference=isinstance(node, _REFERENCES))
        root = built[id(_unscoped(tree))]
        if reason is not None and root.reason is None:
            # the filter's result is unknown; the failure shows where it happened
            attributed = any(n.reason for n in root.walk())
            root = Explanation(root.text, None, True, None if attributed else reason,
                               root.children, root.condition, root.kind_reference)
        return root


def _unscoped(node: ast.Node) -> ast.Node:
    while isinstance(node, ast.Scope):
        node = node.body
    return node
