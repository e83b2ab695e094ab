"""The predicate plan: what every batch engine lowers, engine-neutral.

``skeleton`` splits a checked tree into a boolean skeleton (AND, OR, NOT)
over *atoms*, each reading one field (or an arithmetic expression over
several: ``arith``). ``atoms`` decides, per atom and per AMQP type tag a
column can hold, how the atom is answered: one constant, a two-entry boolean
table, exact intervals over a numeric domain (``intervals``), a plain-text
form (``text``), per distinct value present, or by the per-message engine.
``oracle`` is the one module that runs the per-message engine on values for
those decisions; ``prepared`` makes a filter's plan once and keeps it.

The batch engine (``arrow/``) lowers the decisions to kernel arrays, Spark
(``spark/``) to Column expressions. Needs numpy.
"""
