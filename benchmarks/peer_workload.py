"""The peer benchmark's workload: the ten filters in their jms and rabbitmq forms, and one
fixed, seeded set of 1,000 order messages.

Copied from the peer harness's ``workload.py`` (``/work/shared/prototypes/peer/workload.py``,
sha256 4709be58...8aa8, the workload of docs ``peer-performance.md``: filtex against
ActiveMQ 5.17's selector engine and RabbitMQ 4.2's evaluator), so that CI clones, which do
not have the prototypes, can build the same messages. The seed, the generator and
therefore the messages are identical to the prototype's; only type hints, ``FILTER_NAMES``
and ``workload_messages`` were added.

The same messages reach every engine:
  - messages.jsonl   the typed JSON of shared/conformance/FORMAT.md (filtex reads it with
                     filtex.message_from_json; the Java harness maps it onto ActiveMQ messages
                     with tools/oracles/activemq/Oracle.java's own mapping);
  - messages.amqp    each message encoded by python-qpid-proton (header, message annotations,
                     properties, 8-15 application properties, a 1 KiB data body), framed as
                     <<Len:32/big, Bytes>>; the Erlang harness feeds these bytes to
                     mc_amqp:init_from_stream/2 as a RabbitMQ stream reader does.
Timestamps are whole seconds so that proton's float-seconds creation_time round-trips.

    python -m benchmarks.peer_workload OUT_DIR [COUNT]
"""
from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from filtex.names import Dialect

T0 = 1750772279000  # ms; the mix filters ask creation_time >= T0

REGIONS_IN = ["EU-DE", "EU-FR", "EU-IT", "EU-ES", "EU-NL", "US-CA", "US-NY", "US-TX",
              "APAC-JP", "APAC-SG"]
IN10 = ", ".join(f"'{r}'" for r in REGIONS_IN)

# name -> (jms selector, rabbitmq SQL). Each pair selects the same messages on this workload
# (BETWEEN, which RabbitMQ 4.2 lacks, becomes >= AND <=; JMS header names become sections).
FILTERS = {
    "equality": ("color = 'blue'", "color = 'blue'"),
    "priority-and": ("JMSPriority > 4 AND color = 'blue'",
                     "header.priority > 4 AND color = 'blue'"),
    "in-10": (f"customer_region IN ({IN10})", f"customer_region IN ({IN10})"),
    "like-prefix": ("sku LIKE 'ABC-%'", "sku LIKE 'ABC-%'"),
    "like-2pct": ("customer LIKE '%test%'", "customer LIKE '%test%'"),
    "between": ("total_amount BETWEEN 100 AND 5000",
                "total_amount >= 100 AND total_amount <= 5000"),
    "arithmetic": ("price * quantity > 1000", "price * quantity > 1000"),
    "is-null": ("coupon IS NULL", "coupon IS NULL"),
    "headers": ("JMSType = 'order.created' AND JMSDeliveryMode = 'PERSISTENT'",
                "properties.subject = 'order.created' AND p.content_type = 'application/json'"),
    # the RabbitMQ PR/blog example shape: 6 terms, IN, range, LIKE/OR, timestamp, NOT
    "mix-6": ("order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
              "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
              f"JMSTimestamp >= {T0} AND NOT cancelled",
              "order_type IN ('premium', 'express') AND total_amount >= 100 AND "
              "total_amount <= 5000 AND (customer_region LIKE 'EU-%' OR "
              f"customer_region = 'US-CA') AND p.creation_time >= {T0} AND NOT cancelled"),
}

FILTER_NAMES = tuple(FILTERS)
DIALECTS: tuple[Dialect, ...] = ("jms", "rabbitmq")


def t(type_: str, value: Any) -> dict[str, Any]:
    return {"@type": type_, "value": value}


def make_messages(count: int = 1000, seed: int = 20261122) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(count):
        ap: dict[str, Any] = {}
        # the fields the filters read: each may be absent (NULL paths) or of another type
        core = {
            "color": rng.choice(["blue", "blue", "red", "green", t("symbol", "blue"),
                                 t("int", 7)]),
            "order_type": rng.choice(["premium", "express", "standard", "economy"]),
            "total_amount": rng.choice([round(rng.uniform(10, 8000), 2),
                                        rng.randint(10, 8000),
                                        t("int", rng.randint(10, 8000))]),
            "customer_region": rng.choice(REGIONS_IN + ["APAC-AU", "LATAM-BR", "EU-PL"]),
            "cancelled": rng.random() < 0.2,
            "sku": rng.choice(["ABC-123-XY", "ABC-9-XZ", "DEF-1-XY", "ABC-77-YY", "XYZ-5",
                               t("int", 123)]),
            "customer": rng.choice(["ACME", "acme corp", "Initech", "test-corp",
                                    "my test shop", "Globex", "Umbrella"]),
            "quantity": t("int", rng.choice([1, 2, 3, 5, 8, 12, 20, 40])),
            "price": rng.choice([round(rng.uniform(1, 500), 2), rng.randint(1, 500)]),
        }
        for k, v in core.items():
            if rng.random() < 0.9:
                ap[k] = v
        if rng.random() < 0.5:
            ap["coupon"] = rng.choice(["SAVE10", "WELCOME"])
        extras = {
            "store_id": rng.randint(1, 400),
            "channel": rng.choice(["web", "mobile", "store", "partner"]),
            "weight": round(rng.uniform(0.1, 30), 3),
            "loyalty_tier": rng.choice(["gold", "silver", "bronze"]),
            "is_gift": rng.random() < 0.1,
            "currency": t("symbol", rng.choice(["EUR", "USD", "JPY"])),
            "discount": rng.choice([0.0, 0.05, 0.1, 0.25]),
            "batch_id": t("long", rng.randint(1, 10**12)),
            "source_system": rng.choice(["erp", "shop", "pos"]),
            "line_count": t("short", rng.randint(1, 30)),
        }
        want = rng.randint(8, 15)
        for k in rng.sample(sorted(extras), k=len(extras)):
            if len(ap) >= want:
                break
            ap[k] = extras[k]
        header: dict[str, Any] = {"durable": rng.random() < 0.7}
        if rng.random() < 0.85:
            header["priority"] = t("ubyte", rng.randint(0, 9))
        props: dict[str, Any] = {
            "message-id": f"order-{i:06d}",
            "subject": rng.choice(["order.created", "order.shipped", "order.cancelled"]),
            "to": rng.choice(["/orders/eu", "/orders/us"]),
            "content-type": t("symbol", rng.choice(["application/json", "text/plain"])),
            "creation-time": t("timestamp", T0 + 1000 * rng.randint(-3600, 3600)),
        }
        if rng.random() < 0.3:
            props["correlation-id"] = f"corr-{rng.randint(0, 999)}"
        if rng.random() < 0.2:
            props["group-id"] = rng.choice(["g1", "g2", "g3"])
        out.append({"header": header,
                    "message-annotations": {"x-opt-partition": t("int", i % 8)},
                    "properties": props,
                    "application-properties": ap})
    return out


def workload_messages(count: int = 1000) -> list[Any]:
    """The workload as ``filtex.Message``s (``filtex.message_from_json`` of each)."""
    import filtex
    return [filtex.message_from_json(m) for m in make_messages(count)]


BODY = bytes(range(256)) * 4   # 1 KiB


def to_proton(m: Any) -> Any:
    """A filtex.Message (from the typed JSON) as a proton.Message with a 1 KiB data body."""
    import proton
    pm = proton.Message()
    pm.inferred = True               # bytes body as a data section, not amqp-value
    pm.body = BODY
    h, p = m.header, m.properties
    if "durable" in h:
        pm.durable = bool(h["durable"])
    if h.get("priority") is not None:
        pm.priority = int(h["priority"])
    if p.get("message-id") is not None:
        pm.id = p["message-id"]
    if p.get("correlation-id") is not None:
        pm.correlation_id = p["correlation-id"]
    if p.get("subject") is not None:
        pm.subject = p["subject"]
    if p.get("to") is not None:
        pm.address = p["to"]
    if p.get("content-type") is not None:
        pm.content_type = p["content-type"]
    if p.get("group-id") is not None:
        pm.group_id = p["group-id"]
    if p.get("creation-time") is not None:
        ms = int(p["creation-time"])
        assert ms % 1000 == 0
        pm.creation_time = ms // 1000
    pm.annotations = dict(m.message_annotations)
    pm.properties = dict(m.application_properties)   # type: ignore[assignment]
    return pm


def main(argv: list[str]) -> None:
    out = Path(argv[1])
    count = int(argv[2]) if len(argv) > 2 else 1000
    out.mkdir(parents=True, exist_ok=True)
    import filtex
    msgs = make_messages(count)
    with open(out / "messages.jsonl", "w") as f:
        for m in msgs:
            f.write(json.dumps(m, separators=(",", ":")) + "\n")
    with open(out / "messages.amqp", "wb") as f:
        for m in msgs:
            b = to_proton(filtex.message_from_json(m)).encode()
            f.write(struct.pack(">I", len(b)) + b)
    with open(out / "filters_jms.tsv", "w") as f:
        for name, (jms, _) in FILTERS.items():
            f.write(f"{name}\t{jms}\n")
    with open(out / "filters_rabbitmq.tsv", "w") as f:
        for name, (_, rmq) in FILTERS.items():
            f.write(f"{name}\t{rmq}\n")
    print(f"workload: {len(msgs)} messages, {len(FILTERS)} filters -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv)
