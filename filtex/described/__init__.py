"""Front end 2, described filters: every form a filter value comes in
(``proton.Described``, ``(descriptor, value)``, the conformance JSON object,
``proton.Data``), checked (``validation``; ``runtime/property.py``: filtex
4.1's rules) and lowered into the one checked tree (``lower``); ``descriptors``
is the table of every filter type by symbol and code. ``compiler.py`` (the
front door) makes the lowered tree a ``Filter``."""
