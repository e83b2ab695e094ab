"""What every command shares: exit codes, errors, turning FILTER into a
``Filter``, showing a position in a filter's text with a caret, and naming
the extra to install when an optional dependency is missing."""
from __future__ import annotations

import json
import sys
from typing import Any, Iterable, Mapping, TextIO

OK, NO_MATCH, BAD, INTERRUPTED = 0, 1, 2, 130
"""Exit codes, as grep's: something was selected (``why``: the message
matches), nothing was (``why``: false or unknown), an error (a bad filter,
option or input, an unreadable record, an output not written, a missing
dependency, an internal error); and interrupted (Ctrl-C)."""

EXTRAS = {"pyarrow": "arrow", "numpy": "arrow", "numba": "arrow",
          "pyspark": "spark", "py4j": "spark", "pandas": "spark"}
"""The extra of setup.cfg that installs each optional top-level module."""

_WINDOW = 100   # characters of a long line shown around a caret


class CommandError(Exception):
    """A command cannot go on: ``main`` prints ``message`` (already formatted,
    perhaps several lines) and exits with ``code``."""

    def __init__(self, message: str, code: int = BAD) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


def install_hint(extra: str) -> str:
    """How to install an extra: filtex is not on a package index yet, so from a
    clone too."""
    return f"pip install 'filtex[{extra}]' (from a clone of filtex: pip install -e '.[{extra}]')"


def missing_module(error: ImportError, extra: str | None = None,
                   what: str | None = None) -> CommandError | None:
    """The one-line error for an optional dependency that cannot be imported
    (``extra``: the extra to name instead of the module's own), or None when
    the module is not one of an extra's."""
    name = (error.name or "").partition(".")[0]
    if name not in EXTRAS:
        return None
    extra = extra or EXTRAS[name]
    head = f"{what} needs {name}" if what else f"this needs {name}"
    state = "which is not installed" if isinstance(error, ModuleNotFoundError) else \
        f"which cannot be imported ({str(error).splitlines()[0][:200] if str(error) else error})"
    return CommandError(f"{head}, {state}: {install_hint(extra)}")


def require(modules: Iterable[str], extra: str, what: str) -> None:
    """Import optional ``modules`` now, so a missing one is one clear line naming
    the extra to install, not a traceback from deep inside a run."""
    import importlib
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError as error:
            found = missing_module(error, extra, what)
            if found is None:
                raise
            raise found from error


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


def load_filter(text: str, dialect: str, json_form: bool,
                parameters: Mapping[str, Any] | None = None) -> Any:
    """Compile FILTER: SQL text, or (``json_form``) a filter in the conformance
    JSON form: ``{"sql": ...}``, ``{"described": NAME | "code": CODE, "value":
    TYPED}`` or ``{"set": {NAME: FILTER, ...}}``; ``parameters`` bind the SQL
    text's ``@name``s. ``CommandError`` when it cannot be compiled, showing
    where."""
    import filtex
    if not json_form:
        try:
            return filtex.compile_sql(text, dialect, parameters=parameters)
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
                return filtex.compile_sql(sql, dialect, parameters=parameters)
            except filtex.FilterError as error:
                raise CommandError(filter_error(error, sql)) from None
        if parameters and type(spec) is dict and ("set" in spec or "described" in spec
                                                  or "code" in spec):
            raise CommandError("--param binds the @names of an SQL filter; a described filter "
                               "or a filter set has none")
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


class CompileNotice:
    """Times numba compiling kernels here (``seconds``, which the run's summary
    reports apart from the throughput) and says so once a run on a terminal,
    where a silent compile would look hung. Kernels compile here only when the
    run waits for them (``FILTEX_COMPILE=wait``); otherwise the background
    compiler does it while the per-message engine answers. Loading compiled
    code from the cache is not compiling."""

    def __init__(self, stream: TextIO, progress: Any = None) -> None:
        self.stream = stream
        self.progress = progress
        self.said = False
        self.seconds = 0.0
        self._stack: Any = None

    def __enter__(self) -> "CompileNotice":
        from contextlib import ExitStack
        from time import perf_counter

        from numba.core import event
        notice = self
        isatty = getattr(self.stream, "isatty", None)
        tell = isatty is not None and isatty()
        depth = [0, 0.0]   # nested compiles (a kernel's callees) count once

        class Listener(event.Listener):
            def on_start(self, data: Any) -> None:
                if depth[0] == 0:
                    depth[1] = perf_counter()
                    if tell:
                        notice.say()
                depth[0] += 1

            def on_end(self, data: Any) -> None:
                depth[0] -= 1
                if depth[0] == 0:
                    notice.seconds += perf_counter() - depth[1]

        self._stack = ExitStack()
        self._stack.enter_context(event.install_listener("numba:compile", Listener()))
        return self

    def say(self) -> None:
        if self.said:
            return
        self.said = True
        if self.progress is not None:
            self.progress.clear()
        print("filtex: compiling the batch kernels for this machine (once: later runs "
              "load them from the cache)...", file=self.stream, flush=True)

    def __exit__(self, *exc: object) -> None:
        if self._stack is not None:
            self._stack.close()
            self._stack = None
