"""Filters on the wire: filter sets negotiated at attach (``negotiation``), the
brokers' behaviours as profiles (``profiles``), and proton integration for
senders (``sender``), receivers (``receiver``) and a filtering test peer
(``serve``). ``negotiation`` and ``profiles`` need no container; the others
use proton's reactor."""
