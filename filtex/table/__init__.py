"""Input: the message table, AMQP messages as an Arrow table (the layout of
``docs/message-table.md``, versioned by ``schema.SCHEMA_VERSION``).

``schema`` is the layout and its type tags; ``build`` makes a table from
messages in any form, ``flat`` from flat tables users already have, ``read``
from Parquet and Arrow IPC files, ``decode`` from AMQP-encoded bytes (a numba
decoder); ``rows`` reads a table back as messages; ``guard`` checks arrays from
outside before anything reads them. The engines (``arrow/``, ``spark/``) read
tables of this layout; nothing here evaluates a filter but ``rows``'s
convenience, which calls the filter itself. Needs pyarrow (and numba for
``decode``); the public names are re-exported by ``filtex.arrow``."""
