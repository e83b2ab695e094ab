"""How generated code reads a message: the one seam between the code
generator and a message representation.

The generator never writes ``message.something`` itself; it asks an accessor
for the Python expression that reads a section, a field, or a field's
presence. Evaluating another representation (``proton.Message``, an Arrow row)
is a new accessor, not a new generator. Keys reach the source only through
``repr`` of a ``str``, a validated literal.
"""
from __future__ import annotations


def key_literal(key: str) -> str:
    """A map key as a Python string literal (never raw filter text)."""
    return repr(str(key))


class MessageAccessor:
    """Reads ``filtex.Message``: sections are mappings, absent ones empty."""

    name = "message"

    def section(self, section: str) -> str:
        """Expression for a section mapping, given the message as ``message``."""
        if not section.isidentifier():
            raise ValueError(f"bad section name {section!r}")
        return f"message.{section}"

    def field(self, section: str, section_var: str, key: str) -> str:
        """Expression for a field's value (None when absent)."""
        return f"{section_var}.get({key_literal(key)})"

    def present(self, section: str, section_var: str, key: str) -> str:
        """Expression that is True iff the field really is present.

        Header and properties are composites: a null field is an absent one.
        The other sections are maps: an entry with a null value is present.
        """
        if section in ("header", "properties"):
            return f"{section_var}.get({key_literal(key)}) is not None"
        return f"{key_literal(key)} in {section_var}"

    def connection(self) -> str:
        """Expression for the id of the connection the message arrived on."""
        return "message.connection"


MESSAGE = MessageAccessor()
