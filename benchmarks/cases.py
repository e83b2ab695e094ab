"""The benchmark suite: representative filters, each with a hand-written Python
function of the same semantics (three-valued, type-checked, failures as
unknown), and a fixed, seeded set of messages to evaluate them on.

The hand-written functions are what a careful Python programmer would write
for one filter: direct ``dict.get``, exact type tests, inline three-valued
logic. ``tests/test_benchmark_cases.py`` checks each agrees with the compiled
filter on every benchmark message, so the comparison measures equal work.
"""
from __future__ import annotations

import random
import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Callable

from proton import int32, symbol, timestamp, ubyte, uint

from filtex import Message

_INTS = (int, ubyte, uint, int32)
_T0 = 1750772279000
_JAN_2025 = 1735689600000


def _num(v):
    """Numeric kind for the hand-written functions: 'i', 'f', or None."""
    c = v.__class__
    if c is float:
        return "f"
    if c in _INTS or c is timestamp:
        return "i"
    return None


# --- hand-written equivalents ------------------------------------------------

def hand_equality(m):
    v = m.application_properties.get("color")
    if v is None:
        return None
    if isinstance(v, str):
        return v == "blue"
    return None  # comparing a non-string with a string fails


def hand_rabbitmq_complex(m):
    ap = m.application_properties
    order_type = ap.get("order_type")
    total = ap.get("total_amount")
    region = ap.get("customer_region")
    created = m.properties.get("creation-time")
    cancelled = ap.get("cancelled")
    if order_type is None:
        a = None
    elif isinstance(order_type, str):
        a = order_type in ("premium", "express")
    else:
        return None
    if total is None:
        b = None
    elif total.__class__ is float:
        b = (100 <= total <= 5000) if total == total else None
    elif total.__class__ in _INTS:
        b = 100 <= total <= 5000
    elif isinstance(total, Decimal):
        b = 100 <= total <= 5000
    else:
        return None
    if region is None:
        c = None
    elif isinstance(region, str):
        c = region.startswith("EU-") or region == "US-CA"
    else:
        return None
    if created is None:
        d = None
    elif created.__class__ is timestamp or created.__class__ in _INTS:
        d = created >= 1750772279000
    else:
        return None
    if cancelled is None:
        e = None
    elif cancelled is True or cancelled is False:
        e = not cancelled
    else:
        return None
    if a is False or b is False or c is False or d is False or e is False:
        return False
    if a is None or b is None or c is None or d is None or e is None:
        return None
    return True


_REGIONS = frozenset({"EU-DE", "EU-FR", "EU-IT", "EU-ES", "US-CA", "US-NY"})


def hand_like_in(m):
    ap = m.application_properties
    sku, region, name = ap.get("sku"), ap.get("customer_region"), ap.get("customer")
    if sku is None:
        a = None
    elif isinstance(sku, str):
        a = len(sku) >= 6 and sku.startswith("ABC-") and sku[-2] == "X"
    else:
        return None
    if region is None:
        b = None
    elif isinstance(region, str):
        b = region in _REGIONS
    else:
        return None
    if name is None:
        c = None
    elif isinstance(name, str):
        c = "test" not in name
    else:
        return None
    if a is False or b is False or c is False:
        return False
    if a is None or b is None or c is None:
        return None
    return True


def hand_arithmetic(m):
    ap = m.application_properties
    q, price, discount = ap.get("quantity"), ap.get("price"), ap.get("discount")
    if q is None or price is None or discount is None:
        a = None
    else:
        kq, kp, kd = _num(q), _num(price), _num(discount)
        if not (kq and kp and kd):
            return None
        if kq == "i" and kp == "i" and kd == "i":
            total = q * price - discount
        else:
            total = float(q) * float(price) - float(discount)
        a = (total > 1000) if total == total else None
    if q is None:
        b = None
    elif q.__class__ in _INTS:
        b = q % 2 == 0
    else:
        return None  # % needs integers
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


def hand_header_properties(m):
    h, p = m.header, m.properties
    priority = h.get("priority")
    if priority is None:
        priority = 4
    durable = h.get("durable")
    if durable is None:
        durable = False
    subject, ctype = p.get("subject"), p.get("content-type")
    if priority.__class__ in _INTS:
        a = priority > 4
    else:
        return None
    if durable is True or durable is False:
        b = durable is True
    else:
        return None
    if subject is None:
        c = None
    elif isinstance(subject, str):
        c = subject == "order.created"
    else:
        return None
    if ctype is None:
        d = None
    elif isinstance(ctype, str):
        d = ctype == "application/json"
    else:
        return None
    if a is False or b is False or c is False or d is False:
        return False
    if a is None or b is None or c is None or d is None:
        return None
    return True


def hand_functions(m):
    ap = m.application_properties
    customer, sku = ap.get("customer"), ap.get("sku")
    created = m.properties.get("creation-time")
    if customer is None:
        a = None
    elif isinstance(customer, str):
        a = customer.lower() == "acme"
    else:
        return None
    if sku is None:
        b = None
    elif isinstance(sku, str):
        b = sku[:3] == "ABC"
    else:
        return None
    if created is None:
        c = None
    elif created.__class__ is timestamp or created.__class__ in _INTS:
        c = created > _JAN_2025
    else:
        return None
    if a is False or b is False or c is False:
        return False
    if a is None or b is None or c is None:
        return None
    return True


def hand_null_exists(m):
    ap = m.application_properties
    a = "tags" in ap
    b = ap.get("coupon") is None
    return a and b


def hand_composite(m):
    order = m.message_annotations.get("x-opt-order")
    if not isinstance(order, dict):
        return None
    lines = order.get("lines")
    if not isinstance(lines, list) or not lines:
        return None
    line = lines[0]
    sku = line.get("sku") if isinstance(line, dict) else None
    if sku is None:
        return None
    if isinstance(sku, str):
        return sku == "SKU-1001"
    return None


def hand_numeric_range(m):
    ap = m.application_properties
    total, q = ap.get("total_amount"), ap.get("quantity")
    if total is None:
        a = None
    elif total.__class__ is float:
        a = (100.0 <= total <= 5000.0) if total == total else None
    elif total.__class__ in _INTS or isinstance(total, Decimal):
        a = 100 <= total <= 5000
    else:
        return None
    if q is None:
        b = None
    elif q.__class__ in _INTS:
        b = q >= 3
    elif q.__class__ is float:
        b = (q >= 3.0) if q == q else None
    else:
        return None
    if a is False or b is False:
        return False
    if a is None or b is None:
        return None
    return True


@dataclass(frozen=True)
class Case:
    name: str
    sql: str
    hand: Callable[[Message], bool | None]


CASES = [
    Case("equality", "color = 'blue'", hand_equality),
    Case("rabbitmq-complex",
         "order_type IN ('premium', 'express') AND total_amount BETWEEN 100 AND 5000 AND "
         "(customer_region LIKE 'EU-%' OR customer_region = 'US-CA') AND "
         "p.creation_time >= 1750772279000 AND NOT cancelled", hand_rabbitmq_complex),
    Case("like-in",
         "sku LIKE 'ABC-%X_' AND customer_region IN ('EU-DE', 'EU-FR', 'EU-IT', 'EU-ES', "
         "'US-CA', 'US-NY') AND customer NOT LIKE '%test%'", hand_like_in),
    Case("arithmetic", "quantity * price - discount > 1000 AND quantity % 2 = 0",
         hand_arithmetic),
    Case("header-properties",
         "h.priority > 4 AND h.durable = TRUE AND p.subject = 'order.created' AND "
         "p.content_type = 'application/json'", hand_header_properties),
    Case("functions",
         "LOWER(customer) = 'acme' AND LEFT(sku, 3) = 'ABC' AND "
         "p.creation_time > DATE('2025-01-01')", hand_functions),
    Case("null-exists", "EXISTS(tags) AND coupon IS NULL", hand_null_exists),
    Case("composite", "m.[x-opt-order].lines[0].sku = 'SKU-1001'", hand_composite),
    Case("numeric-range", "total_amount BETWEEN 100 AND 5000 AND quantity >= 3",
         hand_numeric_range),
]


def hand_property_app(m):
    ap = m.application_properties
    v = ap.get("order_type")
    if not (isinstance(v, str) and v == "premium"):
        return False
    v = ap.get("customer_region")
    if not (isinstance(v, str) and v.startswith("EU-")):
        return False
    v = ap.get("quantity")
    if v.__class__ in _INTS:
        return v == 5
    return v.__class__ is float and v == 5.0


def hand_property_props(m):
    p = m.properties
    v = p.get("subject")
    if not (isinstance(v, str) and v.startswith("order.")):
        return False
    v = p.get("content-type")
    if not (isinstance(v, str) and v == "application/json"):
        return False
    v = p.get("to")
    return isinstance(v, str) and v.endswith("/eu")


@dataclass(frozen=True)
class PropertyCase:
    """A property filter, the SQL filter that selects the same messages when
    the fields are present and well-typed, and a hand-written function."""
    name: str
    filter: tuple
    sql: str
    hand: Callable[[Message], bool | None]


PROPERTY_CASES = [
    PropertyCase("app-properties-3",
                 ("amqp:application-properties-filter",
                  {"order_type": "premium", "customer_region": "&p:EU-", "quantity": uint(5)}),
                 "order_type = 'premium' AND customer_region LIKE 'EU-%' AND quantity = 5",
                 hand_property_app),
    PropertyCase("properties-3",
                 ("amqp:properties-filter",
                  {"subject": "&p:order.", "content-type": symbol("application/json"),
                   "to": "&s:/eu"}),
                 "p.subject LIKE 'order.%' AND p.content_type = 'application/json' AND "
                 "p.[to] LIKE '%/eu'", hand_property_props),
]


def make_messages(count: int = 256, seed: int = 7) -> list[Message]:
    """A fixed mix of order messages: matching, not matching, fields missing."""
    rng = random.Random(seed)
    messages = []
    for i in range(count):
        ap = {
            "color": rng.choice(["blue", "red", "green", symbol("blue")]),
            "order_type": rng.choice(["premium", "express", "standard", "economy"]),
            "total_amount": rng.choice([rng.uniform(10, 8000), Decimal("250.50"),
                                        rng.randint(10, 8000)]),
            "customer_region": rng.choice(["EU-DE", "EU-FR", "US-CA", "US-NY", "APAC-JP"]),
            "cancelled": rng.random() < 0.2,
            "sku": rng.choice(["ABC-123-XY", "ABC-9-XZ", "DEF-1-XY", "ABC-77-YY"]),
            "customer": rng.choice(["ACME", "acme", "Initech", "test-corp", "Globex"]),
            "quantity": uint(rng.choice([5, 5, rng.randint(1, 40)])),
            "price": rng.choice([rng.uniform(1, 500), rng.randint(1, 500)]),
            "discount": rng.choice([0, 5, 12.5]),
        }
        if rng.random() < 0.3:
            ap["tags"] = ["a", "b"]
        if rng.random() < 0.5:
            ap["coupon"] = "SAVE10"
        for key in rng.sample(sorted(ap), k=rng.choice([0, 0, 0, 1])):
            del ap[key]
        header = {"priority": ubyte(rng.randint(0, 9)), "durable": rng.random() < 0.7}
        if rng.random() < 0.2:
            del header["priority"]
        properties = {
            "message-id": uuid.UUID(int=rng.getrandbits(128)),
            "subject": rng.choice(["order.created", "order.shipped", "order.cancelled"]),
            "to": rng.choice(["/orders/eu", "/orders/us"]),
            "content-type": symbol(rng.choice(["application/json", "text/plain"])),
            "creation-time": timestamp(_T0 + rng.randint(-3_600_000, 3_600_000)),
        }
        annotations = {symbol("x-opt-partition"): int32(i % 8)}
        if rng.random() < 0.9:
            annotations[symbol("x-opt-order")] = {
                "lines": [{"sku": rng.choice(["SKU-1001", "SKU-2002"]), "qty": 1}]}
        messages.append(Message(header=header, properties=properties,
                                message_annotations=annotations,
                                application_properties=ap))
    return messages

