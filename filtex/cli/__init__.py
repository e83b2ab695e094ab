"""The ``filtex`` command line: ``check``, ``match``, ``why``, ``spark`` and ``serve``.

``main(argv)`` returns the exit code and is what the console script and
``python -m filtex`` run. Exit codes follow grep's:

* 0: something was selected (``match``: at least one message, for any
  subscription; ``spark``: at least one row; ``why``: the message matches;
  ``check``: the filter compiles, warnings or not);
* 1: nothing was selected (``why``: the result is false or unknown, or
  ``--first`` found no such message);
* 2: an error: a bad filter, option or input, an unreadable record met (the
  rest was still read), an output that could not be written, a missing
  optional dependency or Java, an unexpected failure. With ``match -q`` a
  message found still exits 0, as ``grep -q`` does;
* 130: interrupted (Ctrl-C).

Every error is one ``filtex: error: ...`` line (a filter's error adds its line
with a caret) and never a traceback, unless ``--debug`` or ``FILTEX_DEBUG=1``
asks for it. The parser is the standard library's ``argparse``; each
command's module is imported only when that command runs, so ``filtex
check`` loads the compiler and nothing it does not use.
"""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import Sequence

from ..endpoint.bounds import DEFAULT_SERVE_LIMITS, MEANINGS, ServeLimits
from ..endpoint.profiles import PROFILES
from ..names import DIALECT_NAMES
from .common import BAD, INTERRUPTED, CommandError, missing_module
FORMATS = ("jsonl", "amqp")
RESULTS = ("true", "false", "unknown")

_EPILOG = ("exit codes: 0 something selected (why: the message matches; check: the filter "
           "compiles), 1 nothing selected (why: false or unknown), 2 an error (bad filter, "
           "option or input, unreadable records, a missing dependency), 130 interrupted. "
           "An error is one line; --debug or FILTEX_DEBUG=1 adds the traceback of an "
           "unexpected one.")


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (argparse's errors exit 2)."""
    from .._version import __version__
    parser = argparse.ArgumentParser(
        prog="filtex", description="AMQP 1.0 filter expressions: check a filter, run "
        "messages through subscriptions, explain one result.", epilog=_EPILOG)
    parser.add_argument("--version", action="version", version=f"filtex {__version__}")
    _debug_option(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser(
        "check", help="compile a filter; show errors and warnings",
        usage="filtex check [options] (FILTER | -f FILE)",
        description="Compile FILTER. An error is shown with its line and a caret (exit 2); "
        "warnings (stderr, exit 0) flag filters that compile but probably do not say what "
        "was meant.", epilog="exit codes: 0 the filter compiles (warnings or not), 2 it does "
        "not, or another error.")
    check.add_argument("filter", metavar="FILTER", nargs="?",
                       help="SQL filter text (or JSON with --filter-json)")
    _filter_options(check)
    check.add_argument("--explain", action="store_true",
                       help="print the checked tree and the generated Python")
    _debug_option(check)

    match = commands.add_parser(
        "match", help="write (or count) the messages that match",
        usage="filtex match [options] FILTER [INPUT ...]\n"
              "       filtex match [options] -f FILE [INPUT ...]\n"
              "       filtex match [options] --filter NAME=TEXT [--filter ...] [INPUT ...]",
        description="Read messages (typed-JSON lines or size-prefixed AMQP frames) from "
        "INPUT files or stdin, and write those that match, byte for byte, in their own "
        "format. Parquet and Arrow IPC files (filtex message tables, or flat tables whose "
        "columns are fields: --mapping) are read a record batch at a time by the batch "
        "engine, and matching rows written in the input's format. With several --filter, "
        "each subscription writes its own file (-o with {name}), or --count prints a table.",
        epilog="exit codes: 0 at least one message was selected (several --filter: by any "
        "subscription), 1 none was, 2 an error (an unreadable input or record, a bad "
        "filter or option, an output not written; with -q a message found still exits 0), "
        "130 interrupted.")
    match.add_argument("operands", nargs="*", metavar="FILTER [INPUT ...]",
                       help="the filter (unless -f or --filter is given), then input files "
                       "('-' or none: stdin)")
    match.add_argument("--filter", dest="filters", action="append", metavar="NAME=TEXT",
                       help="a named subscription; repeat for several (then every operand "
                       "is an input)")
    _filter_options(match)
    _format_option(match)
    match.add_argument("-o", "--output", metavar="FILE",
                       help="write here instead of stdout ('-': stdout); with several "
                       "--filter a template holding {name}")
    match.add_argument("--count", action="store_true",
                       help="print matched / not matched / unknown per subscription instead "
                       "of the messages (with -o: the messages to FILE too)")
    match.add_argument("--json", action="store_true",
                       help="with --count: the counts as one JSON object")
    match.add_argument("-q", "--quiet", action="store_true",
                       help="write nothing; exit 0 at the first message selected, 1 if none "
                       "is (as grep -q)")
    match.add_argument("--invert", action="store_true",
                       help="select the messages a filter would not deliver (false or "
                       "unknown)")
    match.add_argument("--strict", action="store_true",
                       help="stop at the first unreadable record (exit 2)")
    match.add_argument("--engine", choices=("auto", "batch", "messages"), default="auto",
                       help="how framed AMQP files are evaluated: batch (the numba "
                       "kernels over columns; until a machine has compiled them, in the "
                       "background, messages are evaluated one by one), messages (one by "
                       "one), or auto (default: batch for files of 1 MiB or more)")
    match.add_argument("--reasons", type=_count, default=100, metavar="N",
                       help="tally the reasons of the first N unknown results per "
                       "subscription (default 100; each costs a second evaluation)")
    _table_options(match)
    _debug_option(match)

    why = commands.add_parser(
        "why", help="explain one message's result",
        usage="filtex why [options] FILTER MESSAGE\n"
              "       filtex why [options] -f FILE MESSAGE",
        description="Evaluate one message and print the result and the value of every "
        "sub-expression. MESSAGE is a typed-JSON message object, '-' (stdin) or a file "
        "(message file, Parquet or Arrow IPC): its first message, the Nth (--index N) or "
        "the first whose result is true, false or unknown (--first).",
        epilog="exit codes: 0 the message matches, 1 it does not (false or unknown) or "
        "--first found no such message, 2 an error (bad filter, option or message), "
        "130 interrupted.")
    why.add_argument("operands", nargs="+", metavar="[FILTER] MESSAGE",
                     help="the filter (unless -f is given), then a typed-JSON message "
                     "object, a file or '-'")
    _filter_options(why)
    _format_option(why)
    pick = why.add_mutually_exclusive_group()
    pick.add_argument("--index", type=_positive, metavar="N",
                      help="explain the Nth message of the file (1 is the first)")
    pick.add_argument("--first", choices=RESULTS, metavar="RESULT",
                      help="explain the first message whose result is RESULT: true, false or "
                      "unknown")
    _table_options(why)
    _debug_option(why)

    spark = commands.add_parser(
        "spark", help="run named subscriptions over a Parquet archive on Spark",
        usage="filtex spark [options] --filter NAME=TEXT [--filter ...] "
              "(--output DIR | --count) INPUT [INPUT ...]",
        description="Apply each --filter to a Parquet archive of messages (filtex message "
        "tables, or flat columns of properties) on Spark, and write each subscription's "
        "matching rows to the Parquet directory DIR/NAME, or only count them (--count). "
        "Also the spark-submit entry point (tools/spark_subscriptions.py).",
        epilog="exit codes: 0 at least one row matched (any subscription), 1 none did, "
        "2 an error (bad filter, option or input, an existing output, no pyspark or Java, "
        "a failed Spark job), 130 interrupted.")
    spark.add_argument("inputs", nargs="+", metavar="INPUT",
                       help="Parquet files or directories (local, or any URI Spark reads)")
    spark.add_argument("--filter", dest="filters", action="append", required=True,
                       metavar="NAME=TEXT", help="a named subscription; repeat for several")
    _filter_options(spark, file=False)
    spark.add_argument("-o", "--output", metavar="DIR",
                       help="write each subscription's rows to DIR/NAME (Parquet)")
    spark.add_argument("--count", action="store_true",
                       help="only count matched / not matched / unknown; write nothing")
    spark.add_argument("--json", action="store_true",
                       help="print the counts as one JSON object instead of a table")
    spark.add_argument("--overwrite", action="store_true",
                       help="replace outputs that exist (else they are refused)")
    _table_options(spark)
    spark.add_argument("--master", metavar="URL",
                       help="Spark master of a session filtex starts (default local[*]; "
                       "under spark-submit, its --master)")
    spark.add_argument("--conf", action="append", metavar="KEY=VALUE",
                       help="a Spark setting of a session filtex starts; repeat")
    _debug_option(spark)

    serve = commands.add_parser(
        "serve", help="a filtering AMQP 1.0 peer for tests",
        usage="filtex serve [options] --listen HOST:PORT [--stream NAME=FILE ...]",
        description="Serve message files as streams over AMQP 1.0: every receiver of "
        "address NAME reads FILE (framed AMQP or JSON lines) from the start (or its "
        "RabbitMQ offset spec) through the filter set negotiated at its attach; sends to "
        "other addresses are kept as queues. A test peer, not a broker: in memory, no "
        "security beyond SASL ANONYMOUS. Prints 'listening on HOST:PORT' when ready "
        "(port 0 picks a free one) and runs until interrupted.",
        epilog="exit codes: 2 an error (bad option or file), 130 interrupted.")
    serve.add_argument("--listen", default="127.0.0.1:5672", metavar="HOST:PORT",
                       help="where to listen (default 127.0.0.1:5672)")
    serve.add_argument("--stream", dest="streams", action="append", default=[],
                       metavar="NAME=FILE", help="serve FILE's messages at address NAME; "
                       "repeat for several")
    serve.add_argument("--profile", default="spec",
                       choices=tuple(PROFILES),
                       help="whose attach behaviour to copy: echo, refusals, filter types "
                       "(default spec: refuse any filter that cannot be applied)")
    serve.add_argument("--dialect", choices=DIALECT_NAMES,
                       help="how SQL filters read (default: the profile's)")
    serve.add_argument("--policy", choices=("detach", "omit"),
                       help="a bad or unknown filter refuses the link (detach) or is left "
                       "out of the echo (omit); default: the profile's")
    serve.add_argument("--mask-limits", action="store_true",
                       help="report a filter over the limits as a generic internal error "
                       "(the detail is logged)")
    serve.add_argument("--why", action="store_true",
                       help="log why each message was not delivered to a receiver")
    serve.add_argument("--quiet", action="store_true",
                       help="log nothing but errors (default: each attach's negotiation)")
    serve.add_argument("--chunk-size", type=int, metavar="N",
                       help="rabbitmq profiles: messages per chunk of a file's stream, whose "
                       "Bloom filter rabbitmq:stream-filter values are matched against "
                       "(default: RabbitMQ's writer batches, 32 doubling to 8,192)")
    serve.add_argument("--bloom-size", type=int, default=16, metavar="BYTES",
                       help="rabbitmq profiles: bytes of each chunk's Bloom filter, 16 to 255 "
                       "(RabbitMQ's x-stream-filter-size-bytes; default 16)")
    serve.add_argument("--apply-queue-filters", action="store_true",
                       help="rabbitmq profiles: apply the filters of a queue's readers (RabbitMQ "
                       "echoes them and applies none: only streams filter)")
    for limit in dataclasses.fields(ServeLimits):
        default = getattr(DEFAULT_SERVE_LIMITS, limit.name)
        serve.add_argument("--" + limit.name.replace("_", "-"), dest=limit.name,
                           type=float if isinstance(default, float) else int, default=default,
                           metavar="N", help=f"{MEANINGS[limit.name]} (default {default:,})")
    _debug_option(serve)
    return parser


def _filter_options(parser: argparse.ArgumentParser, file: bool = True) -> None:
    parser.add_argument("--dialect", choices=DIALECT_NAMES, default="amqp",
                        help="SQL dialect (default amqp)")
    parser.add_argument("--filter-json", action="store_true",
                        help='the filter is JSON: {"sql": ...}, a described filter '
                        '{"described": NAME, "value": ...} or a set {"set": {...}}')
    if file:
        parser.add_argument("-f", "--filter-file", metavar="FILE",
                            help="read the filter from FILE ('-': stdin) instead of FILTER")
    parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                        help="bind @NAME in the filter to the string VALUE; repeat")
    parser.add_argument("--param-json", action="append", metavar="NAME=JSON",
                        help="bind @NAME to a typed-JSON value: 5 (an integer), 1.5, true, "
                        'null, "text", {"@type": "decimal64", "value": "1.5"}; repeat')


def _format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS,
                        help="read every input as this message file format (default: "
                        "detected from the first bytes, Parquet and Arrow IPC included)")


def _table_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--mapping", action="append", metavar="COLUMN=FIELD",
                        help="flat tables: COLUMN is application property FIELD, or "
                        "SECTION:KEY (header:priority, properties:subject); repeat")
    parser.add_argument("--nulls", choices=("absent", "null"),
                        help="flat tables: a null cell is an absent field (absent, the "
                        "default) or a field holding null")


def _debug_option(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's default must not undo `filtex --debug COMMAND`
    parser.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show the traceback of an unexpected error (also "
                        "FILTEX_DEBUG=1)")


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"a count is 0 or more, not {value}")
    return value


def _positive(text: str) -> int:
    value = _count(text)
    if value < 1:
        raise argparse.ArgumentTypeError("the first message is 1")
    return value


def _debugging(args: argparse.Namespace) -> bool:
    return bool(getattr(args, "debug", False)) or \
        os.environ.get("FILTEX_DEBUG", "") not in ("", "0")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    lead = 0   # `filtex --debug match ...`: the options before the command
    while argv[lead:lead + 1] == ["--debug"]:
        lead += 1
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    command = argv[lead] if lead < len(argv) else None
    if command in commands.choices:   # options may sit anywhere among the operands, as in grep
        args = commands.choices[command].parse_intermixed_args(argv[lead + 1:])
        args.command = command
        if lead:
            args.debug = True
    else:
        args = parser.parse_args(argv)
    debug = _debugging(args)
    try:
        if args.command == "check":
            from .check import run
        elif args.command == "match":
            from .match import run
        elif args.command == "spark":
            from .spark import run
        elif args.command == "serve":
            from .serve import run
        else:
            from .why import run
        return run(args)
    except CommandError as error:
        if debug and error.__cause__ is not None:
            _traceback(error.__cause__)
        print(f"filtex: error: {error.message}", file=sys.stderr)
        return error.code
    except BrokenPipeError:   # `filtex match ... | head`: the reader has gone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("filtex: interrupted", file=sys.stderr)
        return INTERRUPTED
    except OSError as error:   # a full disk, a device error: not "no match"
        if debug:
            _traceback(error)
        print(f"filtex: error: {error.strerror or error}"
              + (f": {error.filename}" if error.filename else ""), file=sys.stderr)
        return BAD
    except ImportError as error:   # an optional dependency met deep inside a run
        found = missing_module(error, "spark" if args.command == "spark" else None)
        if debug:
            _traceback(error)
        print(f"filtex: error: {found.message if found else _one_line(error)}",
              file=sys.stderr)
        return BAD
    except Exception as error:   # a bug or an environment filtex did not foresee
        if debug:
            _traceback(error)
        print(f"filtex: error: unexpected {_one_line(error)}"
              + ("" if debug else " (--debug or FILTEX_DEBUG=1 shows the traceback)"),
              file=sys.stderr)
        return BAD


def _one_line(error: BaseException) -> str:
    text = next((line.strip() for line in str(error).splitlines() if line.strip()), "")
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def _traceback(error: BaseException) -> None:
    import traceback
    traceback.print_exception(error, file=sys.stderr)


__all__ = ["BAD", "build_parser", "main"]
