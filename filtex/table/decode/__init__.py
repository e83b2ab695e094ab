"""Raw AMQP messages to a message table at columnar speed: a numba decoder.

``decode_column`` turns a pyarrow binary column whose cells are whole encoded
messages (what ``filtex.amqp.encode_message`` writes and ``EncodedMessage``
reads) into a message table of the documented layout (``docs/message-table.md``,
``schema.message_schema``), decoding only what is asked for: header and
properties always (short lists), and of the map sections (annotations,
application properties, footer) only the requested keys. Everything else,
data bodies included, is skipped by its encoded size and never decoded.

One compiled kernel walks the messages: it locates the sections, checks the
order and encodings the specification requires, walks each requested map
entry by entry (each key given its id in a dictionary of the keys walked,
predicted from the last map so that a column of alike maps costs one
comparison a key, which finds a key twice and the requested ones; values not
asked for skipped by size), and decodes every scalar AMQP type into the tag
and child the layout prescribes. Strings are validated as they are read
(strict UTF-8; ASCII for symbols) and interned into one dictionary per column
by a hash table in the kernel, so ``dictionary<int32, string>`` children come
out dictionary-encoded in first-seen order, as ``message_table`` makes them
(interning in the kernel rather than ``pc.dictionary_encode`` afterwards: the
latter costs hundreds of nanoseconds a value on a high-cardinality column
such as string message-ids).

Exactness over coverage: a row the kernel cannot decode exactly is marked in
``Decoded.undecoded`` and left all-absent (tags 0, typed fields null), for the
caller to evaluate from the original bytes with the per-message engine (which
also names what is wrong with a malformed message). That is every malformed
or truncated encoding, sizes past the cell, sections out of order or
repeated, invalid UTF-8 or non-ASCII symbols in a value read, a key twice in
a map walked (any key, asked for or not, in any of its encodings: AMQP 1.0
part 1.6.23 makes such a map malformed, and the per-message engine makes
every read of it unknown), a null cell, and what the kernel leaves to the
per-message engine: keys crafted so that their hashes collide (a probe past
``_PROBES``: a flood of them costs linear time), values with no typed place (a
wrong-typed header or properties field, which the builder keeps in the
residual), composite values (list, map, array, described: the ``e`` child),
symbol section descriptors, header or properties
lists longer than their fields, chains of more than 32 described values, and,
when every key is decoded (``keys=None``), annotation keys that are ulongs
(the builder's residual) or keys that are not valid UTF-8 (ASCII for
symbols). So the residual columns are always null. For the rows it decodes,
the table equals ``message_table`` of the same bytes projected to the
requested keys; a requested key no row holds is a ``struct<t>`` of absent tags.

numba is imported with this module; ``filtex`` and ``filtex.arrow`` never
import it (nothing imports this module but its callers). The kernels are
compiled on first use (about half a minute) and cached on disk with the other
kernels (``filtex.codegen.jit``: one file per signature, safe for processes
compiling at once).
"""
from __future__ import annotations

from .column import Decoded, decode_column

__all__ = ["Decoded", "decode_column"]
