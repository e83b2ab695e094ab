"""The string functions: LOWER, UPPER, LEFT, RIGHT, SUBSTRING (the
specification's), and ``filtex:length`` (filtex's own, with the vendor prefix
the specification requires of functions it does not define)."""
from __future__ import annotations

from typing import Any, Sequence

from ..runtime import ops
from ..tree import ast
from .record import Function, SparkForm


def _count(node: ast.Node, minimum: int) -> int | None:
    """A constant integer argument at least ``minimum``, else None."""
    if isinstance(node, ast.Literal) and node.typ == "int" and node.value >= minimum:
        return int(node.value)
    return None


def _ints(args: tuple[Any, ...]) -> bool:
    return bool(args) and all(type(a) is int for a in args)


def _counts(args: tuple[Any, ...]) -> bool:
    """LEFT's and RIGHT's count as the runtime takes it (a negative one fails)."""
    return _ints(args) and args[0] >= 0


def _substring_args(args: tuple[Any, ...]) -> bool:
    """SUBSTRING's start (from 1) and count (from 0) as the runtime takes them."""
    return _ints(args) and args[0] >= 1 and (len(args) == 1 or args[1] >= 0)


def _spark_call(name: str) -> Any:
    return lambda child, args: f"{name}({', '.join([child] + [str(a) for a in args])})"


# --- case mapping (no language tag: Python's and Spark's full Unicode mapping) ----------

def _cased(method: str) -> Any:
    def inline(subject: str, rest: Sequence[ast.Node]) -> str | None:
        return None if rest else f"{subject}.{method}()"
    return inline


LOWER = Function("LOWER", (1, 2), "string", ops.lower, subject="string", inline=_cased("lower"),
                 spark=SparkForm(_spark_call("lower"), lambda text, args: text.lower(),
                                 lambda args: not args, ascii_only=True))
UPPER = Function("UPPER", (1, 2), "string", ops.upper, subject="string", inline=_cased("upper"),
                 spark=SparkForm(_spark_call("upper"), lambda text, args: text.upper(),
                                 lambda args: not args, ascii_only=True))


# --- slicing ---------------------------------------------------------------------------

def _left(subject: str, rest: Sequence[ast.Node]) -> str | None:
    n = _count(rest[0], 0)
    return None if n is None else f"{subject}[:{n}]"


def _right(subject: str, rest: Sequence[ast.Node]) -> str | None:
    n = _count(rest[0], 0)
    if n is None:
        return None
    return f"{subject}[-{n}:]" if n else "''"


def _substring(subject: str, rest: Sequence[ast.Node]) -> str | None:
    start = _count(rest[0], 1)
    if start is None:
        return None
    if len(rest) == 1:
        return f"{subject}[{start - 1}:]"
    count = _count(rest[1], 0)
    return None if count is None else f"{subject}[{start - 1}:{start - 1 + count}]"


def _spark_left(text: str, args: tuple[int, ...]) -> str:
    return text[:args[0]] if args[0] > 0 else ""


def _spark_right(text: str, args: tuple[int, ...]) -> str:
    return text[-args[0]:] if args[0] > 0 else ""


def _spark_substring(text: str, args: tuple[int, ...]) -> str:
    start = args[0] - 1 if args[0] > 0 else 0
    return text[start:] if len(args) == 1 else text[start:start + max(args[1], 0)]


LEFT = Function("LEFT", (2, 2), "string", ops.left, subject="string", inline=_left,
                spark=SparkForm(_spark_call("left"), _spark_left, _counts))
RIGHT = Function("RIGHT", (2, 2), "string", ops.right, subject="string", inline=_right,
                 spark=SparkForm(_spark_call("right"), _spark_right, _counts))
SUBSTRING = Function("SUBSTRING", (2, 3), "string", ops.substring, subject="string",
                     inline=_substring,
                     spark=SparkForm(_spark_call("substring"), _spark_substring,
                                     _substring_args))


# --- filtex:length -----------------------------------------------------------------------

LENGTH = Function("filtex:LENGTH", (1, 1), "int", ops.length, subject="string",
                  inline=lambda subject, rest: f"len({subject})")
"""The number of characters (Unicode code points, as LEFT and SUBSTRING count
them) of a string or symbol; NULL for NULL; any other type fails."""

STRING_FUNCTIONS = (LOWER, UPPER, LEFT, RIGHT, SUBSTRING, LENGTH)
