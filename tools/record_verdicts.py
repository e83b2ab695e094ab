"""Record filtex's verdict on every conformance case and on seeded random filters
and messages, in every engine and input form, so a refactoring can show that
nothing changed but the shape.

    python tools/record_verdicts.py --out before.jsonl
    ... refactor ...
    python tools/record_verdicts.py --out after.jsonl && cmp before.jsonl after.jsonl

Each line is a case or a random (filter, message) pair with the result (true,
false, unknown, or the refusal's condition) and whether a failure reason was
given, then the verdict of each engine and form: ``bytes`` (the AMQP encoding,
read in place), ``view`` (``filtex.view``), ``proton`` (``proton.Message``
decoded from the bytes), ``subscriptions`` (``Subscriptions.evaluate_all``),
``batch`` (a one-row message table, ``evaluate_batch``) and ``encoded`` (a
one-cell binary column, ``evaluate_encoded``); ``--engines`` chooses. With
``--sources`` a line per conformance filter gives the SHA-256 of its generated
row source; with ``--reasons`` each line also gives the failure reason's text
(``Filter.outcome``) and the explanation's (``Filter.explain``), so that a change
to how failures are raised can show the words are the same (the clock is then
frozen: an explanation shows ``UTC()``'s value). Random filters come from a small seeded grammar over fields of
mixed types in all three dialects, plus described filters and filter sets.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any, Callable

# the batch engines' own verdicts: kernels compiled when needed, never the per-message
# engine answering while they compile in the background
os.environ.setdefault("FILTEX_COMPILE", "wait")

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import filtex  # noqa: E402
from conformance_cases import load_cases  # noqa: E402
from proton import symbol, ubyte, timestamp  # noqa: E402

NAMES = ["a", "b", "s", "n", "x"]
VALUES = [0, 1, 2, -3, 2**63, 1.5, float("nan"), "a", "ab", "B", "", "a%", True, False, None,
          b"\x01", ubyte(7), timestamp(1000), symbol("a"), [1, "a"], {"k": 1}]


def expression(rng: random.Random, depth: int, dialect: str) -> str:
    if depth == 0 or rng.random() < 0.3:
        name = rng.choice(NAMES)
        choice = rng.randrange(7)
        if choice == 0:
            return f"{name} {rng.choice(['=', '<>', '<', '>=' ])} {rng.choice(['1', '2.5', chr(39) + 'a' + chr(39), 'b'])}"
        if choice == 1:
            return f"{name} {rng.choice(['LIKE', 'NOT LIKE'])} '{rng.choice(['a%', '%b', '_', '%a_%'])}'"
        if choice == 2:
            return f"{name} {rng.choice(['IN', 'NOT IN'])} ('a', 'ab')"
        if choice == 3:
            return f"{name} IS {rng.choice(['', 'NOT '])}NULL"
        if choice == 4 and dialect != "rabbitmq":
            return f"{name} BETWEEN 0 AND 2"
        if choice == 5:
            return f"{name} + {rng.choice(['1', 'b'])} > 1"
        return name
    op = rng.choice(["AND", "OR", "NOT"])
    if op == "NOT":
        return f"NOT ({expression(rng, depth - 1, dialect)})"
    return f"({expression(rng, depth - 1, dialect)} {op} {expression(rng, depth - 1, dialect)})"


def message(rng: random.Random) -> filtex.Message:
    props = {name: rng.choice(VALUES) for name in rng.sample(NAMES, rng.randrange(len(NAMES)))}
    return filtex.Message(header={"priority": ubyte(rng.randrange(10))},
                          properties={"subject": rng.choice(["a.b", "x", "a"])},
                          message_annotations={symbol("k"): rng.choice(VALUES)},
                          application_properties=props)


ENGINES = ("bytes", "view", "proton", "subscriptions", "batch", "encoded")


def _encoded(msg: Any) -> bytes | None:
    from filtex.amqp.encode import encode_message
    try:
        return encode_message(msg)
    except (TypeError, ValueError, OverflowError):
        return None


def _in(engine: str, flt: filtex.Filter, msg: Any, receiver: Any, data: bytes | None) -> Any:
    """The verdict of ``engine`` (None for unknown), or a string saying why the
    message cannot be put in that form."""
    if engine == "subscriptions":
        found = filtex.Subscriptions({"f": flt}).evaluate_all(msg, receiver)
        return found["f"] if "f" in found else False
    if engine == "batch":
        import filtex.arrow as fa
        try:
            table = fa.message_table([msg])
        except (TypeError, ValueError):
            return "no table"
        return flt.evaluate_batch(table, receiver).to_pylist()[0]
    if data is None:
        return "no encoding"
    if engine == "bytes":
        return flt.evaluate(data, receiver)
    if engine == "view":
        return flt.evaluate(filtex.view(data), receiver)
    if engine == "proton":
        import proton
        message = proton.Message()
        try:
            message.decode(data)
        except Exception:   # proton refuses what it cannot hold
            return "proton refuses"
        return flt.evaluate(message, receiver)
    import pyarrow as pa

    import filtex.arrow as fa
    column = pa.array([data], pa.binary())
    return fa.evaluate_encoded(flt, column, receiving_connection=receiver).verdicts[0].as_py()


def verdict(build: Callable[[], filtex.Filter], msg: Any, receiver: Any = None,
            engines: tuple[str, ...] = (), reasons: bool = False) -> dict:
    try:
        flt = build()
    except filtex.FilterError as error:
        return {"refused": error.condition}
    outcome = flt.outcome(msg, receiver)
    row: dict[str, Any] = {"result": outcome.result, "failed": outcome.reason is not None}
    if reasons and msg is not None:
        row["reason"] = outcome.reason
        row["explain"] = str(flt.explain(msg, receiver)) if flt.tree is not None else None
    data = _encoded(msg) if engines else None
    for engine in engines:
        row[engine] = _in(engine, flt, msg, receiver, data)
    return row


def main(argv: list[str] | None = None) -> int:
    from test_conformance import compile_case
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write here (default: standard output)")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help=f"comma-separated, of {', '.join(ENGINES)} ('' for the row "
                             "engine on filtex.Message alone)")
    parser.add_argument("--sources", action="store_true",
                        help="also the SHA-256 of each conformance filter's generated source")
    parser.add_argument("--reasons", action="store_true",
                        help="also the outcome's reason and the explanation's text")
    parser.add_argument("--random", type=int, default=3000, help="random filters")
    args = parser.parse_args(argv)
    engines = tuple(e for e in args.engines.split(",") if e)
    unknown = [e for e in engines if e not in ENGINES]
    if unknown:
        parser.error(f"unknown engines {unknown}")
    if args.reasons:   # explanations show UTC()'s value: one frozen clock for every run
        import types

        from filtex.runtime import ops
        ops.time = types.SimpleNamespace(time_ns=lambda: 1_800_000_000_000_000_000)  # type: ignore[assignment]
    out = args.out.open("w", encoding="utf-8") if args.out else sys.stdout
    for name, case in load_cases():
        msg = filtex.message_from_json(case["message"]) if "message" in case else None
        receiver = (case.get("message") or {}).get("receiving-connection")
        row = verdict(lambda: compile_case(case), msg, receiver,
                      engines if msg is not None else (), args.reasons)
        out.write(json.dumps({"case": name, **row}) + "\n")
        if args.sources and "refused" not in row:
            source = compile_case(case).source
            out.write(json.dumps({"case": name, "source": hashlib.sha256(
                source.encode()).hexdigest()}) + "\n")
    rng = random.Random(20261123)
    described = [("amqp:application-properties-filter", {"a": "&p:a", "b": 1}),
                 ("amqp:message-annotations-filter", {symbol("k"): [1, "a"]}),
                 ("apache.org:legacy-amqp-topic-binding:string", "a.#"),
                 ("apache.org:legacy-amqp-headers-binding:map", {"x-match": "any", "a": "a"}),
                 ("amqp:not-filter", [("amqp:sql-filter", "a = 1")]),
                 ("amqp:true-filter", None)]
    for i in range(args.random):
        dialect = rng.choice(["amqp", "jms", "rabbitmq"])
        text = expression(rng, 3, dialect)
        msg = message(rng)
        row = verdict(lambda: filtex.compile_sql(text, dialect), msg, None, engines,
                      args.reasons)
        out.write(json.dumps({"random": i, "dialect": dialect, "sql": text, **row}) + "\n")
        if i % 3 == 0:
            members = {f"f{j}": rng.choice(described + [("amqp:sql-filter", text)])
                       for j in range(rng.randrange(1, 4))}
            group = ("amqp:any-filter", list(members.values()))
            for kind, build in (("set", lambda: filtex.compile_filter_set(members, dialect)),
                                ("group", lambda: filtex.compile_filter(group, dialect))):
                out.write(json.dumps({"random": i, "kind": kind,
                                      **verdict(build, msg, None, engines,
                                                args.reasons)}) + "\n")
    if args.out:
        out.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
