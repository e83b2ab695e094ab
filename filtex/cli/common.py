"""What every command shares: exit codes, turning FILTER into a ``Filter``,
and showing a position in a filter's text with a caret."""
from __future__ import annotations

import json
import sys
from typing import Any, TextIO

OK, NO_MATCH, BAD = 0, 1, 2
"""Exit codes: success (with ``--count``: something matched), no match, and a
bad filter, option or input."""

_WINDOW = 100   # characters of a long line shown around a caret


class CommandError(Exception):
    """A command cannot go on: ``main`` prints ``message`` (already formatted,
    perhaps several lines) and exits with ``code``."""

    def __init__(self, message: str, code: int = BAD) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def caret(text: str, line: int, column: int, indent: str = "    ") -> str:
    """Line ``line`` of ``text`` and a caret under ``column`` (both 1-based);
    a long line is cut to a window around the column, tabs kept so the caret
    lines up."""
    lines = text.split("\n")
    shown = lines[line - 1] if 1 <= line <= len(lines) else ""
    shown = shown.rstrip("\r")
    # control characters and undecodable bytes shown as one printable character each,
    # so the terminal neither acts on them nor moves the caret
    shown = "".join(c if c == "\t" or (c.isprintable() and not "\ud800" <= c <= "\udfff")
                    else "\ufffd" for c in shown)
    at = max(0, min(column - 1, len(shown)))
    start = max(0, at - _WINDOW // 2)
    end = min(len(shown), start + _WINDOW)
    prefix, suffix = ("..." if start else ""), ("..." if end < len(shown) else "")
    piece = shown[start:end]
    pad = "".join(c if c == "\t" else " " for c in shown[start:at])
    return f"{indent}{prefix}{piece}{suffix}\n{indent}{' ' * len(prefix)}{pad}^"


def filter_error(error: Any, text: str | None) -> str:
    """A ``FilterError`` as lines for the terminal: the problem with its
    position, and the line with a caret when the position is in ``text``."""
    condition = "" if error.condition == "amqp:invalid-field" else f" ({error.condition})"
    if text is None:
        return f"{error}{condition}"
    head = f"line {error.line}, column {error.column}: {error.problem}{condition}"
    return head + "\n" + caret(text, error.line, error.column)


def load_filter(text: str, dialect: str, json_form: bool) -> Any:
    """Compile FILTER: SQL text, or (``json_form``) a filter in the conformance
    JSON form: ``{"sql": ...}``, ``{"described": NAME | "code": CODE, "value":
    TYPED}`` or ``{"set": {NAME: FILTER, ...}}``. ``CommandError`` when it
    cannot be compiled, showing where."""
    import filtex
    if not json_form:
        try:
            return filtex.compile_sql(text, dialect)
        except filtex.FilterError as error:
            raise CommandError(filter_error(error, text)) from None
    try:
        spec = json.loads(text)
    except json.JSONDecodeError as error:
        raise CommandError(f"--filter-json: invalid JSON, line {error.lineno}, column "
                           f"{error.colno}: {error.msg}\n"
                           + caret(text, error.lineno, error.colno)) from None
    except (RecursionError, ValueError) as error:   # nested too deep, a number too long
        raise CommandError(f"--filter-json: cannot read the JSON: "
                           f"{'nested too deeply' if isinstance(error, RecursionError) else error}"
                           ) from None
    try:
        if type(spec) is dict and type(spec.get("sql")) is str:
            sql = spec["sql"]
            try:
                return filtex.compile_sql(sql, dialect)
            except filtex.FilterError as error:
                raise CommandError(filter_error(error, sql)) from None
        if type(spec) is dict and "set" in spec:
            return filtex.compile_filter_set(spec["set"], dialect)
        if type(spec) is dict and ("described" in spec or "code" in spec):
            value = spec.get("value")
            try:
                return filtex.compile_filter(spec, dialect)
            except filtex.FilterError as error:   # an SQL-like value: show where
                raise CommandError(filter_error(error, value if type(value) is str
                                                else None)) from None
    except filtex.FilterError as error:
        raise CommandError(filter_error(error, None)) from None
    raise CommandError('--filter-json: a filter is {"sql": TEXT}, {"described": NAME, '
                       '"value": VALUE}, {"code": CODE, "value": VALUE} or {"set": {NAME: '
                       'FILTER, ...}}')


def say(stream: TextIO | None, text: str) -> None:
    """One line (or several) on a text stream: stderr when None."""
    print(text, file=stream if stream is not None else sys.stderr)
