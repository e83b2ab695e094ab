"""The ``filtex`` command line: ``check``, ``match``, ``why`` and ``spark``.

``main(argv)`` returns the exit code (0 success, 1 no match, 2 a bad filter,
option or input) and is what the console script and ``python -m filtex``
run. The parser is the standard library's ``argparse``; each command's module
is imported only when that command runs, so ``filtex check`` loads the
compiler and nothing it does not use.
"""
from __future__ import annotations

import argparse
import os
import sys
from typing import Sequence

from .common import BAD, CommandError

DIALECTS = ("amqp", "jms", "rabbitmq")
FORMATS = ("jsonl", "amqp")

_EPILOG = "exit codes: 0 success (with --count: something matched), 1 no match, " \
          "2 bad filter, option or input"


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command (argparse's errors exit 2)."""
    from .._version import __version__
    parser = argparse.ArgumentParser(
        prog="filtex", description="AMQP 1.0 filter expressions: check a filter, run "
        "messages through subscriptions, explain one result.", epilog=_EPILOG)
    parser.add_argument("--version", action="version", version=f"filtex {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser(
        "check", help="compile a filter; show errors and warnings",
        description="Compile FILTER. An error is shown with its line and a caret (exit 2); "
        "warnings (stderr, exit 0) flag filters that compile but probably do not say what "
        "was meant.", epilog=_EPILOG)
    check.add_argument("filter", metavar="FILTER", help="SQL filter text (or JSON with "
                       "--filter-json)")
    _filter_options(check)
    check.add_argument("--explain", action="store_true",
                       help="print the checked tree and the generated Python")

    match = commands.add_parser(
        "match", help="write (or count) the messages that match",
        usage="filtex match [options] FILTER [INPUT ...]\n"
              "       filtex match [options] --filter NAME=TEXT [--filter ...] [INPUT ...]",
        description="Read messages (typed-JSON lines or size-prefixed AMQP frames) from "
        "INPUT files or stdin, and write those that match, byte for byte, in their own "
        "format. Parquet and Arrow IPC files of message tables (filtex.arrow) are read a "
        "record batch at a time by the batch engine, and matching rows written in the "
        "input's format. With several --filter, each subscription writes its own file (-o "
        "with {name}), or --count prints a table.", epilog=_EPILOG)
    match.add_argument("operands", nargs="*", metavar="FILTER [INPUT ...]",
                       help="the filter (unless --filter is given), then input files "
                       "('-' or none: stdin)")
    match.add_argument("--filter", dest="filters", action="append", metavar="NAME=TEXT",
                       help="a named subscription; repeat for several (then every operand "
                       "is an input)")
    _filter_options(match)
    _format_option(match)
    match.add_argument("-o", "--output", metavar="FILE",
                       help="write here instead of stdout; with several --filter a template "
                       "holding {name}")
    match.add_argument("--count", action="store_true",
                       help="print matched / not matched / unknown per subscription")
    match.add_argument("--invert", action="store_true",
                       help="select the messages a filter would not deliver (false or "
                       "unknown)")
    match.add_argument("--strict", action="store_true",
                       help="stop at the first unreadable record (exit 2)")
    match.add_argument("--reasons", type=int, default=100, metavar="N",
                       help="tally the reasons of the first N unknown results per "
                       "subscription (default 100; each costs a second evaluation)")

    why = commands.add_parser(
        "why", help="explain one message's result",
        description="Evaluate one message and print the result and the value of every "
        "sub-expression. Exit 0 when it matches, 1 when not (false or unknown).",
        epilog=_EPILOG)
    why.add_argument("filter", metavar="FILTER")
    why.add_argument("message", metavar="MESSAGE",
                     help="a typed-JSON message object, a file (its first message), or '-'")
    _filter_options(why)
    _format_option(why)

    spark = commands.add_parser(
        "spark", help="run named subscriptions over a Parquet archive on Spark",
        usage="filtex spark [options] --filter NAME=TEXT [--filter ...] "
              "(--output DIR | --count) INPUT [INPUT ...]",
        description="Apply each --filter to a Parquet archive of messages (filtex message "
        "tables, or flat columns of properties) on Spark, and write each subscription's "
        "matching rows to the Parquet directory DIR/NAME, or only count them (--count). "
        "Also the spark-submit entry point (tools/spark_subscriptions.py).", epilog=_EPILOG)
    spark.add_argument("inputs", nargs="+", metavar="INPUT",
                       help="Parquet files or directories (local, or any URI Spark reads)")
    spark.add_argument("--filter", dest="filters", action="append", required=True,
                       metavar="NAME=TEXT", help="a named subscription; repeat for several")
    _filter_options(spark)
    spark.add_argument("-o", "--output", metavar="DIR",
                       help="write each subscription's rows to DIR/NAME (Parquet)")
    spark.add_argument("--count", action="store_true",
                       help="only count matched / not matched / unknown; write nothing")
    spark.add_argument("--overwrite", action="store_true",
                       help="replace outputs that exist (else they are refused)")
    spark.add_argument("--mapping", action="append", metavar="COLUMN=FIELD",
                       help="flat Parquet: COLUMN is application property FIELD, or "
                       "SECTION:KEY (header:priority, properties:subject); repeat")
    spark.add_argument("--master", metavar="URL",
                       help="Spark master of a session filtex starts (default local[*]; "
                       "under spark-submit, its --master)")
    spark.add_argument("--conf", action="append", metavar="KEY=VALUE",
                       help="a Spark setting of a session filtex starts; repeat")
    return parser


def _filter_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dialect", choices=DIALECTS, default="amqp",
                        help="SQL dialect (default amqp)")
    parser.add_argument("--filter-json", action="store_true",
                        help='FILTER is JSON: {"sql": ...}, a described filter {"described": '
                        'NAME, "value": ...} or a set {"set": {...}}')


def _format_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=FORMATS,
                        help="input format (default: detected from the first bytes)")


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; the exit code."""
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["match"]:   # options may follow FILTER and come between the INPUTs
        commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        args = commands.choices["match"].parse_intermixed_args(argv[1:])
        args.command = "match"
    else:
        args = parser.parse_args(argv)
    try:
        if args.command == "check":
            from .check import run
        elif args.command == "match":
            from .match import run
        elif args.command == "spark":
            from .spark import run
        else:
            from .why import run
        return run(args)
    except CommandError as error:
        print(f"filtex: error: {error.message}", file=sys.stderr)
        return error.code
    except BrokenPipeError:   # `filtex match ... | head`: the reader has gone
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        print("filtex: interrupted", file=sys.stderr)
        return 130
    except OSError as error:   # a full disk, a device error: not "no match"
        print(f"filtex: error: {error.strerror or error}"
              + (f": {error.filename}" if error.filename else ""), file=sys.stderr)
        return BAD


__all__ = ["BAD", "build_parser", "main"]
