"""The checked tree: the contract between the front ends and the engines.

``ast``: every node (SQL's and those described filters lower to, ``Scope``
included), ``NodeVisitor`` and ``walk``; ``render``: a tree back to SQL text
(errors, explanations, lint). Both front ends (``sql/``, ``described/``) build
it, every engine reads it; it imports nothing of filtex."""
