"""The message forms filtex accepts, and the one place that chooses how each
is read.

Generated code reads a message through the reading protocol (``filtex.message``).
A ``filtex.Message`` has it; any other object reaching a filter fails the
first protocol read, and the filter's error path asks ``adapt`` for a view:
encoded bytes are read in place (``filtex.amqp.encoded``), a ``proton.Message``
through its API (``filtex.proton_message``). Anything else is a programming
error, a ``TypeError``, never a silent unknown. A ``filtex.Message`` costs
nothing here: it never takes the error path unless evaluation really fails.
"""
from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any, TypeVar, Union, overload

from .errors import NotAMessage
from .message import EMPTY, Message

if TYPE_CHECKING:
    from typing import TypeAlias

    import proton

    from .amqp.encoded import EncodedMessage
    from .proton_message import ProtonMessage

    _View = TypeVar("_View", Message, EncodedMessage, ProtonMessage, "RowMessage")

MessageForm: TypeAlias = Union[
    Message, bytes, bytearray, memoryview, "proton.Message", "EncodedMessage", "ProtonMessage",
    "RowMessage"]
"""What a filter evaluates: a ``Message``, AMQP-encoded bytes, a ``proton.Message``,
or a view of one (``filtex.view``, ``filtex.read_messages``, ``filtex.arrow.messages``).
Defined here, where the views are chosen, so that ``message.py`` knows none of them."""

class RowMessage:
    """One row of a message table, read as filters read a message (made by
    ``filtex.arrow.messages``; defined here, with the other views' choice, so
    that the table package and this module do not import each other)."""

    __slots__ = ("_filtex_header", "_filtex_delivery_annotations",
                 "_filtex_message_annotations", "_filtex_properties",
                 "_filtex_application_properties", "_filtex_footer", "_filtex_connection",
                 "_filtex_amqp_value", "_filtex_amqp_sequence")

    def __init__(self, sections: dict[str, dict[Any, Any]], value: Any, sequence: Any,
                 connection: str | None) -> None:
        self._filtex_header = sections["header"] or EMPTY
        self._filtex_delivery_annotations = sections["delivery_annotations"] or EMPTY
        self._filtex_message_annotations = sections["message_annotations"] or EMPTY
        self._filtex_properties = sections["properties"] or EMPTY
        self._filtex_application_properties = sections["application_properties"] or EMPTY
        self._filtex_footer = sections["footer"] or EMPTY
        self._filtex_connection = connection
        self._filtex_amqp_value = value
        self._filtex_amqp_sequence = sequence

    @property
    def connection(self) -> str | None:
        return self._filtex_connection

    def __repr__(self) -> str:
        return f"RowMessage(application_properties={self._filtex_application_properties!r})"



ACCEPTED = ("a filtex.Message, AMQP-encoded bytes (bytes, bytearray or memoryview) "
            "or a proton.Message")


def adapt(message: object) -> Any:
    """A view of ``message`` that implements the reading protocol; None when
    ``message`` implements it already; TypeError when it is no message form."""
    cls = type(message)
    if cls is bytes or cls is bytearray or cls is memoryview:
        return _encoded()(message)
    if hasattr(cls, "_filtex_header"):
        return None
    proton = sys.modules.get("proton")   # a proton.Message means proton is loaded
    if proton is not None and isinstance(message, proton.Message):
        from .proton_message import ProtonMessage
        return ProtonMessage(message)
    from . import proton_copies   # another copy of proton (a client's vendored one)
    if proton_copies.foreign_message(message):
        return _encoded()(proton_copies.encoded(message))
    raise NotAMessage(f"a filter evaluates {ACCEPTED}, not {cls.__name__}") from None


@functools.lru_cache(maxsize=None)
def views() -> frozenset[type]:
    """The classes of filtex's own message forms, whose objects ``adapt`` leaves
    as they are (they read the protocol themselves): a generated function's
    error path tests a message's exact class against them, and asks ``adapt``
    only for another (bytes, a proton.Message), so a failing evaluation of a
    view costs no adaptation that cannot change its verdict."""
    from .proton_message import ProtonMessage
    return frozenset(cls for cls in (Message, RowMessage, _encoded(), ProtonMessage)
                     if hasattr(cls, "_filtex_header"))


@functools.lru_cache(maxsize=None)
def _encoded() -> type[EncodedMessage]:
    """The encoded-bytes view, imported on first use (it needs proton's types)."""
    from .amqp.encoded import EncodedMessage
    return EncodedMessage


@overload
def view(message: _View, connection: object = None) -> _View: ...
@overload
def view(message: bytes | bytearray | memoryview, connection: object = None) -> EncodedMessage: ...
@overload
def view(message: proton.Message, connection: object = None) -> ProtonMessage: ...


def view(message: MessageForm, connection: object = None) -> MessageForm:
    """``message`` in a form filters read directly: for callers that evaluate
    one message many times (several subscriptions), so it is decoded once.
    ``connection`` sets the arrival connection of bytes and proton messages."""
    adapted = adapt(message)
    if adapted is None:
        return message
    if connection is not None:
        adapted._filtex_connection = connection
    return adapted
