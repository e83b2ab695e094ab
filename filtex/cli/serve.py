"""``filtex serve``: the filtering AMQP 1.0 test peer (``filtex.endpoint.serve``)
on the command line."""
from __future__ import annotations

import argparse
import dataclasses
import logging
import sys

from ..amqp.encode import encode_message
from ..files import read_records
from ..message import Message
from ..endpoint.bounds import ServeLimits
from .common import CommandError


def streams(specs: list[str]) -> dict[str, list[bytes]]:
    """NAME=FILE pairs read into each stream's encoded messages."""
    found: dict[str, list[bytes]] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep or not name or not path:
            raise CommandError(f"--stream takes NAME=FILE, not {spec!r}")
        if name in found:
            raise CommandError(f"stream {name!r} is given twice")
        messages = []
        try:
            for record in read_records(path):
                if record.error is not None:
                    raise CommandError(f"{path}, {record.position}: {record.error}")
                if isinstance(record.message, Message):
                    messages.append(encode_message(record.message))
                else:
                    messages.append(bytes(record.raw))
        except OSError as error:
            raise CommandError(f"cannot read {path}: {error.strerror}") from None
        found[name] = messages
    return found


def bounds(args: argparse.Namespace) -> ServeLimits:
    """The peer's limits from their options (each one ``--max-links N`` and so on)."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(ServeLimits)}
    try:
        return ServeLimits(**values)
    except ValueError as error:
        option = str(error).split()[0].removeprefix("ServeLimits.").replace("_", "-")
        raise CommandError(f"--{option}: {str(error).split(' ', 1)[1]}") from None


def run(args: argparse.Namespace) -> int:
    from ..endpoint.negotiation import warm_up
    from ..endpoint.serve import Peer
    host, sep, port = args.listen.rpartition(":")
    if not sep or not port.isdigit():
        raise CommandError(f"--listen takes HOST:PORT, not {args.listen!r}")
    limits = bounds(args)
    served = streams(args.streams)
    logging.basicConfig(stream=sys.stderr, format="%(asctime)s %(name)s %(message)s",
                        level=logging.ERROR if args.quiet else logging.INFO)
    warm_up()   # the parser tables: the first attach should not pay for them

    def ready(bound_host: str, bound_port: int) -> None:
        print(f"listening on {bound_host}:{bound_port}", flush=True)

    if args.chunk_size is not None and args.chunk_size < 1:
        raise CommandError(f"--chunk-size is a positive number, not {args.chunk_size}")
    if not 16 <= args.bloom_size <= 255:
        raise CommandError(f"--bloom-size is 16 to 255 bytes, not {args.bloom_size}")
    peer = Peer(args.listen, streams=served, profile=args.profile, dialect=args.dialect,
                policy=args.policy, why=args.why, ready=ready, bounds=limits,
                chunk_size=args.chunk_size, bloom_size=args.bloom_size,
                apply_queue_filters=args.apply_queue_filters or None)
    peer.filtex_mask_limits = args.mask_limits
    peer.container().run()
    return 0
