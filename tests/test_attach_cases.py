"""Attach cases: how a broker profile answers a filter set (``tests/attach/*.jsonl``).

One case a line: ``profile``; ``set``, a list of ``[key, ENTRY]`` in wire
order, ENTRY ``{"described": SYMBOL, "value": TYPED}`` (or ``"code"``:
``"0x..."`` for a numeric descriptor), ``{"plain": TYPED}`` for a value that
is not described, or null (the conformance format's typed values); ``expect``:
``{"echo": [the keys echoed, in order], "refused": CONDITION or null}``; and
optionally ``messages`` (a stream, conformance-format messages) with
``delivered`` (the indices of those a reader with the set gets). RabbitMQ's own
attach cases and one for each of its session's rules; each case runs through
``negotiate`` and over the wire through ``filtex serve``.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from proton import Described, symbol
from proton.reactor import Filter

from filtex.described import descriptors
from filtex.endpoint.negotiation import negotiate
from filtex.typed_json import value_from_json

from endpoint_peer import Link, Peer, consume

CASES = sorted((Path(__file__).parent / "attach").glob("*.jsonl"))


def _load() -> list[dict]:
    cases = []
    for path in CASES:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                cases.append(json.loads(line))
    return cases


ALL = _load()


def _entry(spec: Any) -> Any:
    if spec is None:
        return None
    if "plain" in spec:
        return value_from_json(spec["plain"])
    descriptor = (symbol(spec["described"]) if "described" in spec
                  else descriptors.parse_code(spec["code"]))
    return Described(descriptor, value_from_json(spec["value"]))


def _set(case: dict) -> dict[Any, Any]:
    return {symbol(key): _entry(spec) for key, spec in case["set"]}


@pytest.mark.parametrize("case", ALL, ids=[c["id"] for c in ALL])
def test_negotiate(case: dict) -> None:
    result = negotiate(_set(case), profile=case["profile"])
    refused = case["expect"]["refused"]
    if refused is not None:
        assert result.refusal is not None and result.refusal.condition == refused, \
            result.summary()
        return
    assert result.refusal is None, result.summary()
    assert list(result.in_place) == case["expect"]["echo"], result.summary()


@pytest.mark.parametrize("profile", sorted({c["profile"] for c in ALL}))
def test_over_the_wire(profile: str, tmp_path: Path) -> None:
    """Every case of the profile, one stream each, read by one client over one
    connection to one ``filtex serve``: the echo, the refusal, the deliveries."""
    cases = [c for c in ALL if c["profile"] == profile]
    streams = []
    for i, case in enumerate(cases):
        path = tmp_path / f"c{i}.jsonl"
        messages = case.get("messages", [{"application-properties": {"n": 0}}])
        path.write_text("".join(json.dumps(m) + "\n" for m in messages))
        streams += ["--stream", f"c{i}={path}"]
    links = [Link(f"c{i}", Filter(_set(case))) for i, case in enumerate(cases)]
    with Peer(*streams, "--profile", profile, "--quiet") as peer:
        consume(peer.address, links)
    for case, link in zip(cases, links):
        refused = case["expect"]["refused"]
        if refused is not None:
            assert link.null_source and link.condition.name == refused, case["id"]
            continue
        assert link.condition is None and not link.null_source, (case["id"], link.condition)
        assert [str(k) for k in link.echoed] == case["expect"]["echo"], case["id"]
        if "delivered" in case:
            assert [int(t) for t in link.tags] == case["delivered"], case["id"]


def test_a_plain_option_is_echoed_described_by_4_2() -> None:
    """RabbitMQ 4.1 and 4.2 rewrite a plain stream option under its own name
    into the described form, and echo that."""
    result = negotiate({symbol("rabbitmq:stream-offset-spec"): "last"}, profile="rabbitmq-4.2")
    echoed = result.in_place["rabbitmq:stream-offset-spec"]
    assert echoed == Described(symbol("rabbitmq:stream-offset-spec"), "last")
    assert result.delegated == result.in_place


def test_every_profile_has_cases() -> None:
    from filtex.endpoint.profiles import PROFILES
    rabbit = {name for name in PROFILES if name.startswith("rabbitmq")}
    assert rabbit <= {c["profile"] for c in ALL}
