"""Record filtex's verdict on every conformance case and on seeded random filters
and messages, so a refactoring can show that nothing changed but the shape.

    python tools/record_verdicts.py > before.jsonl
    ... refactor ...
    python tools/record_verdicts.py > after.jsonl && cmp before.jsonl after.jsonl

Each line is a case or a random (filter, message) pair with the result (true,
false, unknown, or the refusal's condition) and whether a failure reason was
given. Random filters come from a small seeded grammar over fields of mixed
types in all three dialects, plus described filters and filter sets.
"""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

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


def verdict(build, msg, receiver=None) -> dict:
    try:
        flt = build()
    except filtex.FilterError as error:
        return {"refused": error.condition}
    outcome = flt.outcome(msg, receiver)
    return {"result": outcome.result, "failed": outcome.reason is not None}


def main() -> int:
    from test_conformance import compile_case
    out = sys.stdout
    for name, case in load_cases():
        msg = filtex.message_from_json(case["message"]) if "message" in case else None
        receiver = (case.get("message") or {}).get("receiving-connection")
        row = verdict(lambda: compile_case(case), msg, receiver)
        out.write(json.dumps({"case": name, **row}) + "\n")
    rng = random.Random(20261123)
    described = [("amqp:application-properties-filter", {"a": "&p:a", "b": 1}),
                 ("amqp:message-annotations-filter", {symbol("k"): [1, "a"]}),
                 ("apache.org:legacy-amqp-topic-binding:string", "a.#"),
                 ("apache.org:legacy-amqp-headers-binding:map", {"x-match": "any", "a": "a"}),
                 ("amqp:not-filter", [("amqp:sql-filter", "a = 1")]),
                 ("amqp:true-filter", None)]
    for i in range(3000):
        dialect = rng.choice(["amqp", "jms", "rabbitmq"])
        text = expression(rng, 3, dialect)
        msg = message(rng)
        row = verdict(lambda: filtex.compile_sql(text, dialect), msg)
        out.write(json.dumps({"random": i, "dialect": dialect, "sql": text, **row}) + "\n")
        if i % 3 == 0:
            members = {f"f{j}": rng.choice(described + [("amqp:sql-filter", text)])
                       for j in range(rng.randrange(1, 4))}
            group = ("amqp:any-filter", list(members.values()))
            for kind, build in (("set", lambda: filtex.compile_filter_set(members, dialect)),
                                ("group", lambda: filtex.compile_filter(group, dialect))):
                out.write(json.dumps({"random": i, "kind": kind, **verdict(build, msg)}) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
