"""``filtex serve`` with real proton clients over loopback.

Every conformance case's filter is sent as a filter set on attach to the peer
(in a child process, the command line as a user runs it) and must deliver
exactly the messages ``filtex match`` selects from the same file, and the case's
own message exactly when the case expects true; a case whose filter is invalid
must be refused (null source, then a detach with the compiler's condition,
line and column). The cases are batched: each batch's messages are one stream,
and each case's receiver reads the whole stream.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from proton import Described, Message, symbol
from proton.handlers import MessagingHandler
from proton.reactor import Filter, Selector

from filtex.cli import main as cli
from filtex.described.lower import to_described

from conformance_cases import load_cases
from endpoint_peer import Link, Peer, consume, run

BATCH = 40
DIALECTS = ("amqp", "jms", "rabbitmq")
REFUSALS = ("amqp:invalid-field", "amqp:not-implemented", "amqp:resource-limit-exceeded")


def _connected(case: dict) -> bool:
    message = case["message"]
    return "connection" in message or "receiving-connection" in message


def _option(case: dict) -> Any:
    """The case's filter as a client sends it: a JMS selector through proton's
    ``Selector``, anything else through proton's ``Filter``."""
    spec = case["filter"]
    if "sql" in spec and case["dialect"] == "jms":
        return Selector(spec["sql"])
    members = spec["set"] if "set" in spec else {"filter": spec}
    return Filter({symbol(name): to_described(member) for name, member in members.items()})


def _cases(dialect: str) -> list[tuple[str, dict]]:
    return [(name, case) for name, case in load_cases()
            if case["dialect"] == dialect and not _connected(case)]


@pytest.mark.slow
@pytest.mark.parametrize("dialect", DIALECTS)
def test_every_conformance_case_over_the_wire(dialect, tmp_path):
    cases = _cases(dialect)
    batches = [cases[i:i + BATCH] for i in range(0, len(cases), BATCH)]
    streams = []
    for number, batch in enumerate(batches):
        path = tmp_path / f"b{number}.jsonl"
        path.write_text("".join(json.dumps(case["message"]) + "\n" for _, case in batch))
        streams += ["--stream", f"b{number}={path}"]
    expected = {number: _selected(batch, tmp_path, number, dialect)
                for number, batch in enumerate(batches)}
    links = [Link(f"b{number}", _option(case), name=name)
             for number, batch in enumerate(batches) for name, case in batch]
    with Peer("--dialect", dialect, "--quiet", *streams) as peer:
        consume(peer.address, links)
        log = peer.stop()
    assert all(link.done for link in links), log[-3000:]
    by_name = {link.name: link for link in links}
    checked = 0
    for number, batch in enumerate(batches):
        lines = (tmp_path / f"b{number}.jsonl").read_text().splitlines()
        for position, (name, case) in enumerate(batch):
            link = by_name[name]
            assert link.done, name
            if case["expect"] == "invalid":
                _assert_refused(link, name)
            else:
                assert link.condition is None and not link.null_source, (name, link.condition)
                delivered = [lines[int(tag)] for tag in link.tags]
                assert delivered == expected[number][name], name
                assert (str(position) in link.tags) is (case["expect"] == "true"), name
                assert link.echoed, name   # the filters in place, echoed
            checked += 1
    assert checked == len(cases) > 0


def _assert_refused(link: Link, name: str) -> None:
    assert link.null_source, name
    condition = link.condition
    assert condition is not None and condition.name in REFUSALS, (name, condition)
    if condition.name == "amqp:not-implemented":   # a type: no position to show
        assert "is not implemented" in condition.description, name
    else:
        assert "line " in condition.description and ", column " in condition.description, name
    assert condition.info == {symbol("field"): symbol("filter")}, name
    assert not link.tags, name


def _selected(batch: list[tuple[str, dict]], tmp_path: Path, number: int,
              dialect: str) -> dict[str, list[str]]:
    """What ``filtex match`` selects from the batch's file for each valid case."""
    arguments = ["match", "--dialect", dialect, "--filter-json", "--engine", "messages",
                 "--reasons", "0"]
    names = []
    for position, (name, case) in enumerate(batch):
        if case["expect"] == "invalid":
            continue
        names.append((name, f"c{position}"))
        arguments += ["--filter", f"c{position}={json.dumps(case['filter'])}"]
    if not names:
        return {}
    out = tmp_path / f"out{number}"
    out.mkdir()
    arguments += ["-o", str(out / "{name}.jsonl"), str(tmp_path / f"b{number}.jsonl")]
    assert cli(arguments) in (0, 1)
    return {name: (out / f"{short}.jsonl").read_text().splitlines() for name, short in names}


@pytest.mark.slow
def test_the_connection_cases_are_run_over_real_connections(tmp_path):
    """The no-local cases name the connections a message arrived on and is read
    by: here those are real connections to the peer, one per name; a message
    that names none is a stream's, from a file. A case that names no *receiving*
    connection has no form on the wire (a link always has a connection): those
    are the API's cases (``test_conformance``), listed here so none is lost."""
    cases = [case for _, case in load_cases() if _connected(case)]
    api_only = [case["id"] for case in cases
                if case["message"].get("receiving-connection") is None]
    assert all(case["expect"] == "unknown" for case in cases if case["id"] in api_only)
    assert len(api_only) < len(cases)
    for case in cases:
        if case["id"] in api_only:
            continue
        message = case["message"]
        arrival, reader = message.get("connection"), message.get("receiving-connection")
        body = {k: v for k, v in message.items() if k not in ("connection",
                                                              "receiving-connection")}
        stream = tmp_path / f"{case['id']}.jsonl"
        stream.write_text(json.dumps(body) + "\n")
        served = [] if arrival is not None else ["--stream", f"nl={stream}"]
        with Peer("--dialect", case["dialect"], "--quiet", *served) as peer:
            got = _no_local_round(peer.address, body, case, same=arrival == reader,
                                  sent=arrival is not None)
        assert got is (case["expect"] == "true"), case["id"]


def _no_local_round(address: str, body: dict, case: dict, same: bool, sent: bool) -> bool:
    """Send the case's message on one connection (unless it names none), then
    read the queue with the case's filter on the same or another connection;
    whether it was delivered."""
    import filtex
    from filtex.amqp.encode import encode_message

    encoded = encode_message(filtex.message_from_json(body))
    outcome: dict[str, Any] = {"delivered": False}

    class Round(MessagingHandler):  # type: ignore[misc]
        """Send (and wait for the peer's acceptance), then read with a drain."""

        def __init__(self) -> None:
            super().__init__(prefetch=0)
            self.handlers = [h for h in self.handlers
                             if type(h).__name__ != "IncomingMessageHandler"]
            self.first: Any = None
            self.queued = False

        def on_start(self, event: Any) -> None:
            self.first = event.container.connect(address)
            if sent:
                event.container.create_sender(self.first, "nl")
            else:
                self._read(event.container)

        def on_sendable(self, event: Any) -> None:
            if not self.queued:
                self.queued = True
                delivery = event.sender.delivery(b"1")
                event.sender.send(encoded)
                event.sender.advance()
                del delivery

        def on_accepted(self, event: Any) -> None:   # the message is in the queue
            self._read(event.container)

        def _read(self, container: Any) -> None:
            reading = self.first if same else container.connect(address)
            container.create_receiver(reading, "nl", options=_option(case))

        def on_link_opened(self, event: Any) -> None:
            if event.link.is_receiver:
                event.receiver.drain(10)

        def on_delivery(self, event: Any) -> None:   # raw: an empty message is a payload
            if event.link.is_receiver:                # proton's decoder refuses
                event.link.recv(event.delivery.pending)
                event.link.advance()
                event.delivery.settle()
                outcome["delivered"] = True

        def on_link_flow(self, event: Any) -> None:
            if event.link.is_receiver and not event.link.draining():
                event.container.stop()

    run(Round())
    return bool(outcome["delivered"])


# --- proton's own selected_recv.py scenario ------------------------------------------------

def test_protons_selected_recv_example():
    """proton's colour_send.py (100 messages, green and red by turn, to the queue
    ``examples``), selected_recv.py -m 50 (``Selector("colour = 'green'")``) and
    simple_recv.py -m 50, as proton's test_examples.py runs them against a broker
    with selectors: the greens in order, then the reds that stayed queued."""
    with Peer("--quiet") as peer:
        url = peer.url("examples")
        sent = _ColourSend(url, 100)
        run(sent)
        assert sent.confirmed == 100
        green = _Recv(url, 50, Selector("colour = 'green'"))
        run(green)
        red = _Recv(url, 50, None)
        run(red)
    assert green.bodies == [f"green {i + 1}" for i in range(100) if i % 2 == 0]
    assert red.bodies == [f"red {i + 1}" for i in range(100) if i % 2 == 1]


class _ColourSend(MessagingHandler):  # type: ignore[misc]
    def __init__(self, url: str, total: int) -> None:
        super().__init__()
        self.url, self.total, self.sent, self.confirmed = url, total, 0, 0

    def on_start(self, event: Any) -> None:
        event.container.create_sender(self.url)

    def on_sendable(self, event: Any) -> None:
        while event.sender.credit and self.sent < self.total:
            colour = "red" if self.sent % 2 else "green"
            event.sender.send(Message(id=self.sent + 1, properties={"colour": colour},
                                      body=f"{colour} {self.sent + 1}"))
            self.sent += 1

    def on_accepted(self, event: Any) -> None:
        self.confirmed += 1
        if self.confirmed == self.total:
            event.connection.close()


class _Recv(MessagingHandler):  # type: ignore[misc]
    def __init__(self, url: str, expected: int, option: Any) -> None:
        super().__init__()
        self.url, self.expected, self.option, self.bodies = url, expected, option, []

    def on_start(self, event: Any) -> None:
        event.container.create_receiver(self.url, options=self.option)

    def on_message(self, event: Any) -> None:
        self.bodies.append(event.message.body)
        if len(self.bodies) == self.expected:
            event.receiver.close()
            event.connection.close()


def test_a_described_filter_reaches_the_peer_by_numeric_code_under_any_key(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps({"application-properties": {"n": i}}) + "\n"
                            for i in range(20)))
    from proton import ulong
    option = Filter({symbol("anything"): Described(ulong(0x120), "n % 5 = 0"),
                     symbol("gone"): None})
    with Peer("--stream", f"s={path}", "--quiet") as peer:
        [link] = consume(peer.address, [Link("s", option)])
    assert link.tags == ["0", "5", "10", "15"]
    assert list(link.echoed) == [symbol("anything")]   # the null entry acts as if absent


def test_serve_refuses_bad_options_before_listening(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"application-properties": {"n": 1}}\nnot json\n')
    good = tmp_path / "good.jsonl"
    good.write_text('{"application-properties": {"n": 1}}\n')
    for arguments, said in (
            (["--stream", "x"], "--stream takes NAME=FILE, not 'x'"),
            (["--stream", f"a={good}", "--stream", f"a={good}"], "stream 'a' is given twice"),
            (["--stream", f"a={tmp_path / 'missing'}"], "cannot read"),
            (["--stream", f"a={bad}"], "line 2"),
            (["--listen", "nowhere"], "--listen takes HOST:PORT")):
        assert cli(["serve", *arguments]) == 2
        err = capsys.readouterr().err
        assert err.startswith("filtex: error: ") and said in err, err
