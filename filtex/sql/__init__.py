"""Front end 1: SQL text to the checked tree (``tree/``): ``lexer``, ``parser``,
``parameters`` (bound values), ``checker`` (names, types, folding)."""
