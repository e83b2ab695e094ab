"""What defines a run's filters on the command line: FILTER itself or a file
(``-f FILE``, as grep's and jq's), and the values bound to the filter's
``@name`` parameters (``--param NAME=VALUE`` a string, as jq's ``--arg``;
``--param-json NAME=JSON`` a typed-JSON value, as jq's ``--argjson``).

A value is bound as a typed constant of the filter (``compile_sql``'s
``parameters``), never pasted into its text, so no value changes the
filter's shape."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .common import CommandError, load_filter

MAX_FILTER_FILE = 1 << 20
"""Bytes of a filter file read at most: far beyond any filter's length limit,
and a message file given by mistake is refused at once, not read whole."""


def read_filter_file(path: str) -> str:
    """The text of ``-f FILE`` (``-``: stdin), UTF-8 (a BOM skipped)."""
    shown = "<stdin>" if path == "-" else path
    try:
        if path == "-":
            if sys.stdin is None:
                raise CommandError("-f -: cannot read: stdin is closed")
            data = sys.stdin.buffer.read(MAX_FILTER_FILE + 1)
        else:
            with open(path, "rb") as stream:
                data = stream.read(MAX_FILTER_FILE + 1)
    except OSError as error:
        raise CommandError(f"-f {shown}: cannot read: {error.strerror or error}") from None
    if len(data) > MAX_FILTER_FILE:
        raise CommandError(f"-f {shown}: larger than {MAX_FILTER_FILE:,} bytes: not a filter "
                           "(is it a message file?)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise CommandError(f"-f {shown}: not UTF-8 text (byte {error.start}): not a filter "
                           "(is it a message file?)") from None


def parameters(args: argparse.Namespace) -> dict[str, Any] | None:
    """``--param`` and ``--param-json`` as ``compile_sql``'s ``parameters``
    (None when there are none), each value checked here so a bad one is named
    by its option."""
    found: dict[str, Any] = {}
    items = [("--param", item) for item in getattr(args, "param", None) or []]
    items += [("--param-json", item) for item in getattr(args, "param_json", None) or []]
    for option, item in items:
        name, sep, raw = item.partition("=")
        if not sep or not name:
            raise CommandError(f"{option} takes NAME=VALUE, not {item[:60]!r}")
        name = name[1:] if name.startswith("@") else name
        if name in found:
            raise CommandError(f"{option}: the parameter {name!r} is given twice")
        value = raw if option == "--param" else _typed(name, raw)
        _check(option, name, value)
        found[name] = value
    return found or None


def _typed(name: str, raw: str) -> Any:
    """A ``--param-json`` value: typed JSON (``filtex.typed_json``: an integer is
    an int, ``{"@type": "decimal64", "value": "1.5"}`` a decimal...), as a value
    a parameter can hold."""
    from proton import decimal32, decimal64, decimal128, float32, timestamp

    from ..errors import FilterError
    from ..runtime.values import decimal_value
    from ..typed_json import value_from_json
    try:
        value = value_from_json(json.loads(raw))
    except (ValueError, RecursionError) as error:   # JSONDecodeError, FilterError
        why = error.problem if isinstance(error, FilterError) else \
            "nested too deeply" if isinstance(error, RecursionError) else f"invalid JSON: {error}"
        raise CommandError(f"--param-json {name}: {why}") from None
    if isinstance(value, (decimal32, decimal64, decimal128)):
        return decimal_value(value)
    if isinstance(value, float32):
        return float(value)
    if isinstance(value, int) and type(value) not in (int, bool) and \
            not isinstance(value, timestamp):   # ubyte, uint, ulong, short...: an integer
        return int(value)
    return value


def _check(option: str, name: str, value: Any) -> None:
    from ..errors import FilterError
    from ..sql.parameters import normalize_parameters
    try:
        normalize_parameters({name: value})
    except FilterError as error:
        raise CommandError(f"{option}: {error.problem}") from None


def used_parameters(text: str, dialect: str, json_form: bool) -> set[str] | None:
    """The ``@names`` a filter's SQL text holds (None: it cannot be read, and
    compiling it will say why). A filter in JSON form other than ``{"sql": ...}``
    holds none."""
    from ..dialects import get_dialect
    from ..errors import DefinitionProblem, FilterError
    from ..sql.lexer import SqlLexer
    if json_form:
        try:
            spec = json.loads(text)
        except (ValueError, RecursionError):
            return None
        if not (type(spec) is dict and type(spec.get("sql")) is str):
            return set()
        text = spec["sql"]
    try:
        lexer = SqlLexer(get_dialect(dialect), parameters={})
        lexer.input(text)
        return {token.value for token in lexer if token.type == "PARAM"}
    except (DefinitionProblem, FilterError, RecursionError):
        return None


def compile_named(named: list[tuple[str, str]], args: argparse.Namespace) -> list[tuple[str, Any]]:
    """Several named filters (``--filter NAME=TEXT``) compiled; each is given the
    parameters its own text uses, and a parameter none of them uses is an error."""
    values = parameters(args)
    compiled = []
    unused = set(values or ())
    for name, text in named:
        given = None
        if values is not None:
            used = used_parameters(text, args.dialect, args.filter_json)
            given = values if used is None else {k: v for k, v in values.items() if k in used}
            unused -= set(given)
        try:
            compiled.append((name, load_filter(text, args.dialect, args.filter_json,
                                               given or None)))
        except CommandError as error:
            raise CommandError(f"{name}: {error.message}") from None
    if unused:
        raise CommandError(f"--param {sorted(unused)[0]}: no filter uses @{sorted(unused)[0]}")
    return compiled


def single_filter(text: str | None, args: argparse.Namespace) -> Any:
    """The one filter of ``check``, ``why`` or ``match FILTER``: ``text`` (the
    FILTER operand), or ``-f FILE``'s, whose name then heads its errors."""
    values = parameters(args)
    source = getattr(args, "filter_file", None)
    if source is not None:
        text = read_filter_file(source)
    assert text is not None
    try:
        return load_filter(text, args.dialect, args.filter_json, values)
    except CommandError as error:
        if source is not None:
            raise CommandError(f"{'<stdin>' if source == '-' else source}: {error.message}"
                               ) from None
        if names_a_file(text):
            raise CommandError(error.message + "\n" + file_name_hint(text)) from None
        raise


def names_a_file(text: str) -> bool:
    """Is FILTER the name of an existing file (the filter forgotten, perhaps)?"""
    try:
        return "\n" not in text and bool(text.strip()) and os.path.exists(text)
    except (OSError, ValueError):   # a NUL, a name too long
        return False


def file_name_hint(text: str) -> str:
    """What to say when FILTER is the name of an existing file."""
    return (f"did you forget the filter? {text!r} is a file (a filter kept in a file: "
            "-f FILE)")
