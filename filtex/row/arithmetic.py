"""The row engine's code for arithmetic: ``+ - * / %`` and unary minus inline
for the operand classes whose results Python computes exactly as the dialect
does, the runtime's complete operation for the rest.

``amqp`` and ``rabbitmq`` compute on Python's exact integers and doubles, then
apply their rules to what lies outside (amqp: NaN past long and ulong;
rabbitmq: no infinities). ``jms`` is Java: Integer with Integer wraps at 32
bits and stays an Integer, with a Long at 64 bits, with a Double in double;
``/`` always divides in double. The inline paths test exact classes (``type``)
and fall back to the runtime on overflow, so wrapping is never computed here.
"""
from __future__ import annotations

import math

from proton import int32

from ..tree import ast


class ArithmeticNodes:
    """Mixed into the row generator: arithmetic nodes and their fast paths."""

    def operand(self, node: ast.Node) -> str:
        """An operand of arithmetic: its value, generated knowing that its class
        matters (a jms Integer result must stay an ``int32`` there)."""
        outer, self._in_arith = self._in_arith, True
        try:
            return self.value(node)
        finally:
            self._in_arith = outer

    def visit_Unary(self, node: ast.Unary) -> str:
        nested, self._in_arith = self._in_arith, False
        operand = self.operand(node.operand)
        var = self.temp()
        slow = f"{self.op('_negate' if node.op == '-' else '_plus')}({operand})"
        if node.op == "+" or self.compact:
            self.emit(f"{var} = {slow}")
            return var
        int_range = self.semantics.int_range
        if self.semantics.arithmetic == "java":
            paths = [(f"type({operand}) is int and {operand} != {_LONG[0]}", f"-{operand}"),
                     (f"type({operand}) is _int32 and {operand} != {_INT[0]}",
                      f"_int32(-{operand})" if nested else f"-{operand}"),
                     (f"type({operand}) is float", f"-{operand}")]
        elif int_range:
            low, high = int_range
            paths = [(f"type({operand}) in _INTS and {-high} <= {operand} <= {-low}",
                      f"-{operand}"),
                     (f"type({operand}) is float", f"-{operand}")]
        else:
            paths = [(f"type({operand}) in _INTS", f"-{operand}"),
                     (f"type({operand}) is float and {operand} - {operand} == 0", f"-{operand}")]
        self._typed_branch(var, operand, paths, slow, self.failing(operand, "arithmetic"))
        return var

    def visit_Binary(self, node: ast.Binary) -> str:
        nested, self._in_arith = self._in_arith, False
        left, right = self.operand(node.left), self.operand(node.right)
        var, op = self.temp(), node.op
        slow = f"{self.op('_arith')}({op!r}, {left}, {right})"
        concatenates = op == "+" and self.semantics.string_concatenation
        if self.semantics.arithmetic == "java":
            branched = self._java_arithmetic(var, op, node, left, right, slow, nested,
                                             concatenates)
            if concatenates and not branched:
                self.bound_string(var)
            return var
        ints = _guards(("int", node.left, left), ("int", node.right, right))
        nums = _guards(("num", node.left, left), ("num", node.right, right))
        paths: list[tuple[str, str]] = []
        if op in "+-*":
            if ints:
                paths.append((ints, f"{left} {op} {right}"))
            if nums:
                paths.append((nums, f"{left} {op} {right}"))
        elif op == "/":
            if ints:
                if self.semantics.int_division == "exact":
                    paths.append((ints, f"({left} // {right} if not {left} % {right} else "
                                        f"{left} / {right}) if {right} else _NAN"))
                else:
                    paths.append((ints, f"{left} / {right} if {right} else None"))
            if nums:
                zero = "_NAN" if self.semantics.failures else slow
                if self.semantics.finite_numbers:   # x / inf is 0.0, but inf is no number here
                    nums += "".join(f" and {v} - {v} == 0" for n, v in
                                    ((node.left, left), (node.right, right))
                                    if not isinstance(n, ast.Literal))
                paths.append((nums, f"{left} / {right} if {right} else {zero}"))
        elif op == "%" and ints:
            paths.append((f"{ints} and {left} >= 0 and {right} > 0", f"{left} % {right}"))
        if not paths or self.compact:
            self.emit(f"{var} = {slow}")
            if concatenates:
                self.bound_string(var)
            return var
        int_range = self.semantics.int_range
        # + - * of integers make an int, of numbers with a double a float: the
        # result's class is known on each path (the comparison after it calls no
        # type()), and each operand's class is read once for every guard
        typed = op in "+-*" and not concatenates
        cls = self.temp() if typed else ""
        operands = [expr for n, expr in ((node.left, left), (node.right, right))
                    if not isinstance(n, ast.Literal)]
        kinds = ["ints" if guard is ints else "nums" if guard is nums else ""
                 for guard, _ in paths]
        read: dict[str, str] = {}   # an operand's class, where a temp holds it
        for expr in dict.fromkeys(operands):
            if sum(guard.count(f"type({expr})") for guard, _ in paths) > 1:
                known = read[expr] = self.class_of(expr)
                paths = [(guard.replace(f"type({expr})", known), fast) for guard, fast in paths]
        keyword = "if"
        for (guard, fast), kind in zip(paths, kinds):
            self.emit(f"{keyword} {guard}:")
            self.emit(f"    {var} = {fast}")
            if kind == "ints" and op != "%" and int_range:
                # exact integers: only the range can go wrong; the runtime says
                # what lies past it (amqp: NaN past long and ulong)
                self.emit(f"    if {var}.__class__ is int and "
                          f"({var} < {int_range[0]} or {var} > {int_range[1]}): "
                          f"{var} = {slow}" + (f"; {cls} = type({var})" if typed else ""))
                if typed:
                    self.emit(f"    else: {cls} = int")
            elif kind == "nums":
                # infinities and NaN: let the runtime apply the overflow rules
                if typed:
                    self.emit(f"    if {var} - {var} != 0: {var} = {slow}; {cls} = type({var})")
                    self.emit(f"    else: {cls} = float")
                else:
                    self.emit(f"    if {var} - {var} != 0: {var} = {slow}")
            elif typed:
                self.emit(f"    {cls} = int")
            keyword = "elif"
        if self._null_operands(var, (node.left, left), (node.right, right)) and typed:
            self.emit(f"    {cls} = None")
        failing = self._failing_operands(op, node, left, right, read)
        if failing is not None:
            self.exit_failed(failing, "elif")
        self.emit("else:")
        self.emit(f"    {var} = {slow}")
        if typed:
            self.emit(f"    {cls} = type({var})")
            self.known_class[var] = cls
        if concatenates:
            with self.indented():
                self.bound_string(var)
        return var

    def _failing_operands(self, op: str, node: ast.Binary, left: str, right: str,
                          read: dict[str, str]) -> str | None:
        """A test under which ``left op right`` surely fails (amqp): an operand
        of a class that is no number (``NumberRules.failing``'s "arithmetic"),
        tested where neither is NULL (after ``_null_operands``), the other a
        field's value or a number constant; for ``+`` of two values, the other
        a number (two strings, a subclass's too, concatenate). None where
        nothing is sure to fail."""
        operands = ((node.left, left), (node.right, right))
        if any(isinstance(n, ast.Literal) and not _number_literal(n) for n, _ in operands):
            return None
        tests, numbers = [], []
        for operand_node, expr in operands:
            if isinstance(operand_node, ast.Literal):
                continue
            test = self.failing(expr, "arithmetic")
            if test is None:
                return None
            cls = read.get(expr) or self.known_class.get(expr) or f"type({expr})"
            tests.append(f"({test.replace(f'type({expr})', cls)})" if " or " in test
                         else test.replace(f"type({expr})", cls))
            numbers.append(f"{cls} in _NUMS_F")
        if op == "+" and len(tests) == 2:
            return f"({tests[0]} and {numbers[1]}) or ({numbers[0]} and {tests[1]})"
        return " or ".join(tests) or None

    def _null_operands(self, var: str, *operands: tuple[ast.Node, str]) -> bool:
        """``elif`` an operand is NULL: NULL, in every dialect, without the runtime."""
        nulls = [f"{expr} is None" for operand, expr in operands
                 if not isinstance(operand, ast.Literal)]
        if nulls:
            self.emit(f"elif {' or '.join(nulls)}:")
            self.emit(f"    {var} = None")
        return bool(nulls)

    def _java_arithmetic(self, var: str, op: str, node: ast.Binary, left: str, right: str,
                         slow: str, nested: bool, concatenates: bool = False) -> bool:
        """jms ``+ - * /`` inline where Java's answer is Python's: Long with Long
        (or Integer) inside the long range, Integer with Integer inside the int
        range, doubles; ``/`` always in double. Wrapping, ``%``, Float, strings
        and the rest take the runtime (the last ``else``). True when the
        runtime's call is the last branch of an ``if``."""
        paths: list[tuple[str, str, str | None]] = []   # (guard, value, out of range)
        if op in "+-*" and not self.compact:
            longs = _guards(("long", node.left, left), ("long", node.right, right))
            ints = _guards(("int32", node.left, left), ("int32", node.right, right))
            nums = _guards(("java", node.left, left), ("java", node.right, right))
            if ints:   # an Integer result; as a plain int unless more arithmetic reads it
                paths.append((ints, f"{left} {op} {right}", _INT + (("_int32",) if nested else ())))
            if longs:
                paths.append((longs, f"{left} {op} {right}", _LONG))
            if nums:
                paths.append((nums, f"{left} {op} {right}", None))
        elif op == "/" and not self.compact:
            nums = _guards(("java", node.left, left), ("java", node.right, right))
            if nums:
                paths.append((f"{nums} and {right}", f"float({left}) / {right}", None))
        if not paths:
            self.emit(f"{var} = {slow}")
            return False
        classes = {}   # each operand's class, read once (or known: a result's class temp)
        for operand_node, expr in ((node.left, left), (node.right, right)):
            if not isinstance(operand_node, ast.Literal) and expr not in classes:
                classes[expr] = self.class_of(expr)
        for expr, known in classes.items():
            paths = [(guard.replace(f"type({expr})", known), *rest) for guard, *rest in paths]
        # the result's class, set on every path (a comparison then tests it, no type())
        cls = self.temp()
        keyword = "if"
        for guard, fast, bounds in paths:
            self.emit(f"{keyword} {guard}:")
            self.emit(f"    {var} = {fast}")
            if bounds is None:
                self.emit(f"    {cls} = float")   # a Double was involved, or it divided
            else:
                self.emit(f"    if {var} < {bounds[0]} or {var} > {bounds[1]}: "
                          f"{var} = {slow}; {cls} = type({var})")
                if len(bounds) > 2:
                    self.emit(f"    else: {var} = _int32({var}); {cls} = _int32")
                else:
                    self.emit(f"    else: {cls} = int")
            keyword = "elif"
        if self._null_operands(var, (node.left, left), (node.right, right)):
            self.emit(f"    {cls} = None")
        strings = [f"{known} in _STRS" for known in classes.values()]
        if op in "-*/" and strings and \
                self.semantics.numbers.answer("string", "arithmetic") == "unknown":
            # Java arithmetic on a String: NULL (+ concatenates), unless the dialect reads it
            self.emit(f"elif {' or '.join(strings)}:")
            self.emit(f"    {var} = None")
            self.emit(f"    {cls} = None")
        self.emit("else:")
        with self.indented():
            self.emit(f"{var} = {slow}")
            if concatenates:   # String + anything: bounded before its class is taken
                self.bound_string(var)
            self.emit(f"{cls} = type({var})")
        self.known_class[var] = cls
        return True


def _number_literal(node: ast.Node) -> bool:
    """A number constant (not NULL, no string): an operand that cannot make
    arithmetic fail or be NULL."""
    return isinstance(node, ast.Literal) and node.typ in ("int", "float", "decimal")


_CLASS_TESTS = {"int": ("type({}) in _INTS", ("int",)),
                "num": ("type({}) in _NUMS", ("int", "float")),
                # jms: Long (a Python int), Integer (int32), Long/Integer/Double
                "long": ("type({}) in _JLONGS", ("int",)),
                "int32": ("type({}) is _int32", ("int",)),
                "java": ("type({}) in _JNUMS", ("int", "float"))}

_INT = (-(1 << 31), (1 << 31) - 1)
_LONG = (-(1 << 63), (1 << 63) - 1)


def _guards(*tests: tuple[str, ast.Node, str]) -> str:
    """A Python test that every operand is of its class group ('int': an integer
    type, 'num': an integer type or float); '' if a constant operand rules it out."""
    parts = []
    for group, node, expr in tests:
        template, literal_types = _CLASS_TESTS[group]
        if isinstance(node, ast.Literal):
            if node.typ not in literal_types or (node.typ == "float"
                                                 and not math.isfinite(node.value)):
                return ""
            if group == "int32" and type(node.value) is not int32:
                return ""   # a jms Long constant: not Integer arithmetic
            continue
        parts.append(template.format(expr))
    return " and ".join(parts) or "True"


