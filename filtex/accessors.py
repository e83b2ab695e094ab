"""How generated code reads a message: the one seam between the code
generator and a message representation.

The generator never writes ``message.something`` itself; it asks an accessor
for the Python expression that reads a section, a field, or a field's
presence. Evaluating another representation (``proton.Message``, an Arrow row)
is a new accessor, not a new generator. A key reaches an accessor as a Python
expression the generator made: ``repr`` of an exact ``str`` (``key_literal``),
or the hoisted name of a constant.
"""
from __future__ import annotations


def key_literal(key: str) -> str:
    """A string key as a Python literal: ``repr`` of an exact ``str`` copy, so a
    ``str`` subclass's own ``__repr__``/``__str__`` never reach generated code."""
    if not issubclass(type(key), str):
        raise TypeError(f"a key literal is made from a str, not {type(key).__name__}")
    return repr(str.__str__(key))


class MessageAccessor:
    """Reads any message through the reading protocol of ``filtex.message``:
    sections are mappings, absent ones empty. ``filtex.Message`` has the
    protocol's attributes as slots; the encoded-bytes and proton views
    (``filtex.forms``) compute them on first use."""

    name = "message"

    def section(self, section: str) -> str:
        """Expression for a section mapping, given the message as ``message``."""
        if not section.isidentifier():
            raise ValueError(f"bad section name {section!r}")
        return f"message._filtex_{section}"

    def field(self, section: str, section_var: str, key: str) -> str:
        """Expression for a field's value (None when absent); ``key`` is an
        expression for the key."""
        return f"{section_var}.get({key})"

    def present(self, section: str, section_var: str, key: str) -> str:
        """Expression that is True iff the field really is present.

        Header and properties are composites: a null field is an absent one.
        The other sections are maps: an entry with a null value is present.
        """
        if section in ("header", "properties"):
            return f"{section_var}.get({key}) is not None"
        return f"{key} in {section_var}"

    def connection(self) -> str:
        """Expression for the id of the connection the message arrived on."""
        return "message._filtex_connection"


MESSAGE = MessageAccessor()
