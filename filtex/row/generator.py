"""Resolved tree to specialised Python source.

Every node becomes straight-line statements that leave its value in a local
(``_3``); there is no interpretation loop and no per-call lookup table. What
the static types settle is decided here, once: a comparison with a constant
gets an inline fast path for the constant's own type and falls back to the
runtime's complete comparison only for other types; LIKE patterns become
``==``/``startswith``/``endswith``/``in`` or a precompiled linear matcher; IN
lists of constants become frozensets. Fields are read once, at the top.

Constants that are not plain ``str``/``int``/``bool``/``None``/finite ``float``
(sets, matchers, decimals, bytes, NaN...) are hoisted into the function's
namespace under generated names: filter text never becomes code except as a
``repr`` literal of a validated value. Output is deterministic.
"""
from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

from proton import char, int32, symbol, timestamp

from ..runtime import patterns as like_module
from .. import runtime
from ..accessors import MESSAGE, MessageAccessor, key_literal
from ..codegen.writer import SourceWriter
from .arithmetic import ArithmeticNodes
from ..errors import EvaluationFailure
from ..forms import adapt, views
from ..limits import DEFAULT_LIMITS, Limits
from ..dialects import AMQP, UNDECIDED, Semantics, rules
from ..runtime.values import FLOAT_CLASSES, INT_CLASSES, double_value
from ..functions import REGISTRY
from ..tree import ast

_PY_OP = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}

BASE_NAMESPACE = {
    "_Failure": EvaluationFailure, "_INTS": INT_CLASSES, "_NAN": math.nan,
    "_INTS_TS": INT_CLASSES | {timestamp}, "_NUMS": INT_CLASSES | {float},
    "_INTS_TS_BOOL": INT_CLASSES | {timestamp, bool},
    "_FLOATS": FLOAT_CLASSES, "_NUMS_F": INT_CLASSES | FLOAT_CLASSES,
    "_Decimal": Decimal, "_double": double_value, "_ONCE": (None,),
    "_STRS": frozenset({str, symbol}), "_int32": int32,
    "_JLONGS": frozenset({int, int32}), "_JNUMS": frozenset({int, int32, float}),
    "_STRS_CHAR": frozenset({str, symbol, char}),
    "_map_get": runtime.map_get, "_map_has": runtime.map_has,
    "_not_boolean": runtime.not_boolean, "_too_long": runtime.too_long,
    "_over_budget": runtime.over_budget, "_pattern": runtime.bounded_pattern,
    "_junction": runtime.junction, "_bounded": runtime.bounded,
    "_bounded_null": runtime.bounded_null,
    "_adapt": adapt, "_item_get": runtime.item_get, "_item_has": runtime.item_has, "_negated": runtime.negated,
    "_VIEWS": views(),
    **AMQP.semantics.namespace(),
}



def _shared_failing() -> dict[frozenset[type], str]:
    """The classes that surely fail each test in amqp (``NumberRules.failing``),
    under names of the base namespace: a filter's early exits name these sets
    rather than hoist copies. (Against strings that read as no time, a
    timestamp fails too: a set of its own.)"""
    names: dict[frozenset[type], str] = {}
    for test in rules.OTHER_TESTS:
        for constant in (None, ("",) if test == "in strings" else ""):
            classes = AMQP.semantics.numbers.failing(test, constant)
            if classes and classes not in names:
                names[classes] = name = f"_FAILS{len(names) + 1}"
                BASE_NAMESPACE[name] = classes
    return names


_SHARED_FAILING = _shared_failing()


class CodeGenerator(ArithmeticNodes, SourceWriter, ast.NodeVisitor):
    """Generates the source of one filter's functions: a visitor over the checked
    tree, writing through ``SourceWriter``."""

    def __init__(self, accessor: MessageAccessor = MESSAGE,
                 semantics: Semantics = AMQP.semantics,
                 limits: Limits = DEFAULT_LIMITS) -> None:
        super().__init__(semantics.namespace())
        self.accessor = accessor
        self.semantics = semantics
        self.limits = limits
        self._owned: dict[int, str] = {}   # id(node) -> temp holding a computed string
        self.booleans: set[str] = {"True", "False", "None"}   # temps that hold only those
        self.exact_strings: set[str] = set()   # temps that hold only an exact str
        self.prefix = ""   # of the dialect operations' names (a Scope of another dialect)
        self.prologue: list[str] = []
        self._sections: dict[str, str] = {}
        self._fields: dict[tuple, str] = {}
        self._loops = 0
        self._in_arith = False   # generating an operand of arithmetic (see ``operand``)
        self._root: Any = None   # the root below same-dialect Scopes (``generate``)
        self._read_first = False      # its first item reads the message
        self.fuse_calls = True        # LOWER(x) = 'c' as one test (see _compare_string_call)
        self.known_class: dict[str, str] = {}   # temp -> a temp holding its class
        self._last_branch: Any = None  # (var, its first fast line, that value, lines after)
        self._charges = False   # the function counts the strings it computes (``charge``)
        self.returning_root = True    # a root AND/OR returns as it decides (``_returning``)
        self.with_matches = False     # ``function`` also writes ``matches`` (``compiler``)
        self._returned = False        # the root junction wrote the function's return

    # --- plumbing ---------------------------------------------------------------

    @property
    def compact(self) -> bool:
        """Past ``INLINE_BUDGET`` characters of source, operations call the
        runtime instead of inlining typed fast paths: Python's compiler needs
        about 100 bytes of memory a source character, so a huge filter must not
        grow ten lines a comparison. Small filters never get here."""
        return self.size > INLINE_BUDGET

    def op(self, name: str) -> str:
        """The generated name of a dialect operation (``_compare``) for the
        dialect being generated: ``_jms_compare`` inside a jms ``Scope``."""
        return f"_{self.prefix}{name[1:]}" if self.prefix else name

    def visit_Scope(self, node: ast.Scope) -> str:
        """A subtree read by another dialect: its semantics and its operations
        (registered under the dialect's prefix) while it is generated."""
        semantics = node.dialect.semantics
        if semantics is self.semantics:
            return self.condition(node.body)
        outer = (self.semantics, self.prefix)
        self.semantics, self.prefix = semantics, f"{node.dialect.name}_"
        for name, fn in semantics.namespace().items():
            if not name.startswith("_fn_"):
                self.namespace[self.op(name)] = fn
        try:
            result = self.condition(node.body)
        finally:
            self.semantics, self.prefix = outer
        return result

    def key(self, key: Any) -> str:
        """A field or map key as an expression: a ``str`` literal, or a hoisted
        constant for other keys (an annotation keyed by ``ulong(5)``)."""
        if issubclass(type(key), str):
            return key_literal(key)
        return self.const(key, hoist=True)

    def section(self, section: str) -> str:
        var = self._sections.get(section)
        if var is None:
            var = f"_{section}"
            self._sections[section] = var
            self.prologue.append(f"{var} = {self.accessor.section(section)}")
        return var

    # --- entry point -----------------------------------------------------------------

    def generate(self, tree: ast.Node) -> str:
        """Source of the filter function for a checked SQL tree.

        Whatever a message holds, the function returns True, False or None:
        fast paths take values of exactly the class they expect (``type(x)``,
        which no object can forge as it can ``x.__class__`` or ``isinstance``;
        a subclass's own ``==`` never answers for the filter), the runtime
        reads any other value through its exact base class, and a junction or
        NOT tests its items by identity."""
        self.depth = 2
        root = tree
        while isinstance(root, ast.Scope) and root.dialect.semantics is self.semantics:
            root = root.body
        self._root = root   # an AND/OR: its loop reads each field where first needed
        result = self.condition(tree)
        if isinstance(root, _ROOT_PREDICATES):
            self.booleans.add(result)
        return self.function(result)

    def function(self, result: str) -> str:
        """Source of ``evaluate(message, receiving_connection=None, _mode=None)``
        returning ``result`` after the emitted statements, and (``with_matches``)
        of ``matches(message, receiving_connection=None)``.

        ``evaluate``'s private ``_mode`` is read only on its error path: ``False``
        lets the failure propagate (``Filter.outcome`` reads its reason).
        ``matches`` is the same body written for a plain bool: it returns False
        as soon as the result cannot be True, and never tests a mode.
        ``receiving_connection`` is the connection of the link the message goes
        to (no-local filters). Lines written in two forms (``emit_forms``) are
        chosen per function here.
        """
        last = self._last_branch
        if last is not None and last[0] == result and last[3] == len(self.lines) \
                and " else None" not in last[2] and isinstance(self._root, _ROOT_PREDICATES):
            # the filter is one comparison whose first fast path gives True or False:
            # it returns from there (a hand-written function's shape)
            self.lines[last[1]] = self.lines[last[1]].replace(f"{result} = ", "return ", 1)
        # A filter that reads nothing of the message still reads one protocol
        # attribute, so an object that is no message form is always refused.
        touch = [] if self.prologue or self._read_first else [self.accessor.connection()]
        budget = [f"{_SPENT} = 0"] if self._charges else []
        head = ["        " + line for line in budget + touch + self.prologue]
        source = "\n".join(
            ["def evaluate(message, receiving_connection=None, _mode=None):", "    try:"]
            + self._read_once(head + _form(self.lines, 0))
            + ([] if self._returned else [f"        return {self.checked(result)}"])
            + ["    except Exception:",
               # bytes, a proton.Message: read through a view (a view's own class
               # needs none: ``adapt`` would leave it as it is)
               "        if type(message) not in _VIEWS:",
               "            _adapted = _adapt(message)",
               "            if _adapted is not None:",
               "                return evaluate(_adapted, receiving_connection, _mode)",
               "        if _mode is False:",
               "            raise",
               "        return None"]) + "\n"
        if not self.with_matches:
            return source
        if self.compact:   # a huge filter: compiled once, its result tested
            return source + (
                "\ndef matches(message, receiving_connection=None):\n"
                "    return evaluate(message, receiving_connection) is True\n")
        return source + "\n".join(
            ["", "def matches(message, receiving_connection=None):", "    try:"]
            + self._read_once(head + _form(self.lines, 1))
            + ([] if self._returned else [f"        return {result} is True"])
            + ["    except Exception:",
               "        if type(message) not in _VIEWS:",
               "            _adapted = _adapt(message)",
               "            if _adapted is not None:",
               "                return matches(_adapted, receiving_connection)",
               "        return False"]) + "\n"

    def _read_once(self, lines: list[str]) -> list[str]:
        """A section read once, by the line right after it (``_application_properties
        = message...`` then ``_1 = _application_properties.get('color')``), is read
        in that line: a local stored and loaded for nothing is what separates the
        generated function from a hand-written one on a single predicate."""
        for var in self._sections.values():
            assign = f"{var} = "
            name = re.compile(rf"(?<!\w){var}(?!\w)")
            at = next((i for i, line in enumerate(lines) if line.lstrip().startswith(assign)),
                      None)
            if at is None or at + 1 >= len(lines):
                continue
            line, after = lines[at], lines[at + 1]
            indent = line[:len(line) - len(line.lstrip())]
            use = f"{var}.get("
            if not after.startswith(indent) or after[len(indent):len(indent) + 1] == " " \
                    or len(name.findall(after)) != 1 or use not in after \
                    or not re.fullmatch(r"_\d+ = ", after[len(indent):after.index(use)]) \
                    or sum(len(name.findall(text)) for text in lines) != 2:
                continue
            lines[at:at + 2] = [after.replace(use, line.lstrip()[len(assign):] + ".get(", 1)]
        return lines

    def checked(self, value: str) -> str:
        """``value`` as a result: whatever a hostile value's ``__eq__`` returned,
        only the documented values leave ``evaluate``."""
        if value in self.booleans:
            return value
        return (f"{value} if {value} is True or {value} is False or {value} is None "
                f"else _not_boolean(_mode)")

    def evaluate_lines(self) -> list[str]:
        """The lines emitted so far, as ``evaluate`` has them (of a line written
        in two forms, ``emit_forms``, evaluate's): for a caller that writes its
        own function around a value's code (the plan's constant folding)."""
        return _form(self.lines, 0)

    def emit_forms(self, evaluating: str, matching: str) -> None:
        """One line written one way in ``evaluate`` and another in ``matches``
        (an empty form writes nothing there)."""
        self.emit(f"{_FORMS}{evaluating}{_OR_FORM}{matching}")

    # --- predicates ---------------------------------------------------------------------

    def condition(self, node: ast.Node) -> str:
        """A node in a predicate position: its value, checked to be a boolean or NULL."""
        value = self.value(node)
        if node.typ in ("bool", "null"):
            return value
        if not self.semantics.failures:  # a non-boolean is NULL (jms: FALSE) here
            var = self.temp()
            other = self.semantics.non_boolean_condition
            cast = "None" if other is None else f"(None if {value} is None else {other!r})"
            self.emit(f"{var} = {value} if {value} is True or {value} is False else {cast}")
            return var
        self.emit(f"if {value} is not True and {value} is not False "
                  f"and {value} is not None:")
        with self.indented():   # no truth value: a failure (amqp), the reason written where wanted
            if not self.compact:
                self.exit_failed(None, "if")
            self.emit(f"{self.op('_predicate')}({value})")
        return value

    def value(self, node: ast.Node) -> str:
        outer, self.offset = self.offset, node.offset
        var = self.visit(node)
        self.offset = outer
        # A computed string is dropped as soon as its parent has used it, so
        # evaluation holds O(depth) of them, not one per node of the filter.
        owned = self._owned
        if owned:
            for child in node.children():
                temp = owned.pop(id(child), None)
                if temp is not None:
                    self.emit(f"{temp} = None")
        if isinstance(node, ast.Call) or (isinstance(node, ast.Binary) and node.op == "+"):
            if var.startswith("_") and var[1:].isdigit():
                owned[id(node)] = var
        return var

    def charge(self, var: str) -> None:
        """Count a computed string that is kept (a concatenation, a function's
        result) against the evaluation's budget, ``Limits.max_computed``: past
        it the evaluation fails, so a small filter cannot make one message hold
        or build strings without bound (a deep nest of functions keeps each
        computed argument while the next is computed). A filter that computes
        no string has no counter at all; a function compared at once with a
        constant (``LOWER(x) = 'c'``) keeps nothing and is not counted."""
        bound = self.limits.max_computed
        if bound is None:
            return
        self._charges = True
        self.emit(f"if {var}.__class__ is str and ({_SPENT} := {_SPENT} + len({var})) > {bound}: "
                  f"_over_budget({bound})")

    def bound_string(self, var: str) -> None:
        """A computed string longer than ``Limits.max_string`` is a failure (amqp)
        or NULL: no filter can build strings without bound from a message.
        It is charged to the evaluation's budget first (``charge``)."""
        self.charge(var)
        bound = self.limits.max_string
        if bound is None:
            return
        if self.compact:
            check = "_bounded" if self.semantics.failures else "_bounded_null"
            self.emit(f"{var} = {check}({var}, {bound})")
            return
        overflow = f"_too_long({bound})" if self.semantics.failures else "None"
        self.emit(f"if {var}.__class__ is str and len({var}) > {bound}: {var} = {overflow}")

    def visit_Literal(self, node: ast.Literal) -> str:
        # As an operand a constant is a name, so identity tests on it stay valid Python.
        value = node.value
        if value is None or value is True or value is False:
            return repr(value)
        return self.const(value, hoist=True)

    def visit_Field(self, node: ast.Field) -> str:
        key = ("field", node.section, node.key, node.default)
        var = self._fields.get(key)
        if var is None:
            var = self.temp()
            self._fields[key] = var
            section = self.section(node.section)
            read = self.accessor.field(node.section, section, self.key(node.key))
            self.prologue.append(f"{var} = {read}")
            if node.default is not None:
                self.prologue.append(f"if {var} is None: {var} = {self.const(node.default)}")
        return var

    def lazy_read(self, node: ast.Node) -> str:
        """An expression reading a field where it is used, once (the second
        field of ``JMSType``, read only when the first is absent); a field read
        elsewhere too, or a field with a default, is read at the top as usual."""
        if not isinstance(node, ast.Field) or node.default is not None or \
                ("field", node.section, node.key, node.default) in self._fields:
            return self.value(node)
        section = self._sections.get(node.section) or self.accessor.section(node.section)
        return f"({self.accessor.field(node.section, section, self.key(node.key))})"

    def visit_Body(self, node: ast.Body) -> str:
        return self.section(node.section)

    def visit_Derived(self, node: ast.Derived) -> str:
        template = None if self.compact else self.semantics.inline_derived(node.compute)
        args = [self.lazy_read(arg) if template is not None and i and
                template.count(f"{{{i}}}") == 1 else self.value(arg)
                for i, arg in enumerate(node.args)]
        var = self.temp()
        slow = f"{self.hoist('derived', node.compute)}({', '.join(args)})"
        if template is not None:
            slow = template.format(*args, slow=slow, tmp=self.temp())
        self.emit(f"{var} = {slow}")
        if template is not None and node.typ == "string":
            self.exact_strings.add(var)   # the dialect's template makes only str
        return var

    def visit_MapRef(self, node: ast.MapRef) -> str:
        base = self.value(node.base)
        var = self.temp()
        key = self.key(node.key)
        self.emit(f"{var} = {base}.get({key}) if type({base}) is dict "
                  f"else (None if {base} is None else _map_get({base}, {key}))")
        return var

    def visit_Index(self, node: ast.Index) -> str:
        base, index = self.value(node.base), self.value(node.index)
        var = self.temp()
        slow = f"_item_get({base}, {index})"
        position = node.index
        if isinstance(position, ast.Literal) and position.typ == "int" and position.value >= 0:
            i = position.value
            self.emit(f"{var} = {base}[{i}] if type({base}) is list and len({base}) > {i} "
                      f"else (None if {base} is None else {slow})")
        else:
            self.emit(f"{var} = {slow}")
        return var

    def visit_Exists(self, node: ast.Exists) -> str:
        ref = node.ref
        var = self.temp()
        self.booleans.add(var)
        if isinstance(ref, ast.Field):
            section = self.section(ref.section)
            self.emit(f"{var} = {self.accessor.present(ref.section, section, self.key(ref.key))}")
        elif isinstance(ref, ast.MapRef):
            self.emit(f"{var} = _map_has({self.value(ref.base)}, {self.key(ref.key)})")
        else:
            base, index = self.value(ref.base), self.value(ref.index)
            self.emit(f"{var} = _item_has({base}, {index})")
        return var

    def visit_Call(self, node: ast.Call) -> str:
        function = REGISTRY.get(node.name)
        if function is None or node.typ == "null":
            return "None"  # a function filtex does not know is NULL, arguments and all
        args = [self.value(arg) for arg in node.args]
        var = self.temp()
        slow = f"_fn_{function.ident}({', '.join(args)})"
        fast = _string_function(node, args)
        failing = self.failing_subject(node, args)
        if fast is None:
            self._typed_branch(var, args[0] if args else "", [], slow, failing)
        else:
            self._typed_branch(var, args[0], [(f"type({args[0]}) in _STRS_CHAR", fast)], slow,
                               failing)
        # no max_string here (case mapping at most triples a string, the others
        # slice it), but what is kept counts against the evaluation's budget
        if function.charged:
            self.charge(var)
        return var

    # --- logic ------------------------------------------------------------------------------

    def visit_And(self, node: ast.And) -> str:
        return self._junction(node.items, "False", "True", node is self._root)

    def visit_Or(self, node: ast.Or) -> str:
        return self._junction(node.items, "True", "False", node is self._root)

    def _junction(self, items: tuple, decisive: str, neutral: str, root: bool = False) -> str:
        if root and self.returning_root and not self.compact and len(items) <= _MAX_SHORT_CIRCUIT:
            return self._returning(items, decisive, neutral)
        if not self.semantics.failures and not self.compact and len(items) <= _MAX_NESTED \
                and self.depth + len(items) <= _MAX_DEPTH:
            return self._nested(items, decisive, neutral, root)
        if not self.semantics.failures and self._loops < _MAX_LOOPS and not self.compact \
                and len(items) <= _MAX_SHORT_CIRCUIT:
            return self._short_circuit(items, decisive, neutral, root)
        values = [self.condition(item) for item in items]
        var = self.temp()
        self.booleans.add(var)
        if self.compact or len(items) > _MAX_SHORT_CIRCUIT:   # one call: a few characters an item
            self.emit(f"{var} = _junction(({', '.join(values)},), {decisive})")
            return var
        if all(isinstance(item, _NEVER_NULL) for item in items):
            joiner = " or " if decisive == "True" else " and "
            self.emit(f"{var} = {joiner.join(values)}")
            return var
        any_decisive = " or ".join(f"{v} is {decisive}" for v in values)
        any_null = " or ".join(f"{v} is None" for v in values)
        self.emit(f"{var} = {decisive} if {any_decisive} else "
                  f"(None if {any_null} else {neutral})")
        return var

    def _returning(self, items: tuple, decisive: str, neutral: str) -> str:
        """The root AND/OR as a hand-written function is: each item returns as
        soon as it decides the result, and the last one gives the result.

        Where evaluation cannot fail (jms, rabbitmq) ``evaluate`` stops at the
        first decisive item; in amqp every item runs (a later failure makes the
        filter unknown), so only ``matches`` of an AND stops early, at the first
        item that is not TRUE: the result can then no longer be TRUE. An item's
        first reads are made just before it where nothing can fail."""
        failures = self.semantics.failures
        conjunction = decisive == "False"
        values: list[str] = []
        nullable: list[str] = []   # the items before the last that can be NULL
        for position, item in enumerate(items):
            mark, reads = len(self.lines), len(self.prologue)
            value = self.condition(item)
            if not failures and len(self.prologue) > reads:
                self._read_here(mark, reads, position)
            values.append(value)
            if position == len(items) - 1:
                break
            if not isinstance(item, _NEVER_NULL) and value != neutral:
                nullable.append(value)
            if conjunction:
                self.emit_forms("" if failures else f"if {value} is False: return False",
                                f"if {value} is not True: return False")
            elif not failures:
                self.emit("if {0} is True: return True".format(value))
        last = values[-1]
        self._returned = True
        if isinstance(items[-1], _ROOT_PREDICATES):   # True, False or None, never another
            self.booleans.add(last)
        if failures:
            any_decisive = " or ".join(f"{v} is {decisive}" for v in values)
            any_null = " or ".join(f"{v} is None" for v in values)
            result = f"{decisive} if {any_decisive} else (None if {any_null} else {neutral})"
            if all(isinstance(item, _NEVER_NULL) for item in items):
                result = (" and " if conjunction else " or ").join(values)
            self.emit_forms(f"return {result}",
                            f"return {last} is True" if conjunction else f"return {any_decisive}")
            return last
        if nullable:
            self.emit_forms(f"if {last} is {decisive}: return {decisive}", "")
            any_null = " or ".join(f"{v} is None" for v in nullable)
            self.emit_forms(f"return None if {any_null} else {self.checked(last)}",
                            f"return {last} is True")
        else:
            self.emit_forms(f"return {self.checked(last)}", f"return {last} is True")
        return last

    def _read_here(self, mark: int, reads: int, position: int) -> None:
        """Move the field reads an item added to the prologue to just before
        the item's lines (at the root, where an item never reached reads
        nothing)."""
        moved = ["    " * self.depth + line for line in self.prologue[reads:]]
        del self.prologue[reads:]
        self.lines[mark:mark] = moved
        self.offsets[mark:mark] = [None] * len(moved)
        self._read_first = self._read_first or position == 0

    def _nested(self, items: tuple, decisive: str, neutral: str, root: bool) -> str:
        """A short AND/OR inside a filter that stops at its first decisive item
        (where nothing can fail), as nested ``if``s: each item runs only while
        the result is still open, and folds its value into the result."""
        var = self.temp()
        self.booleans.add(var)
        opened = 0
        for position, item in enumerate(items):
            mark, reads = len(self.lines), len(self.prologue)
            value = self.condition(item)
            if root and len(self.prologue) > reads:
                self._read_here(mark, reads, position)
            if position == 0:
                self.emit(f"{var} = {value}")
            else:
                self.emit(f"{var} = {decisive} if {value} is {decisive} else "
                          f"(None if {var} is None or {value} is None else {neutral})")
            if position < len(items) - 1:
                self.emit(f"if {var} is not {decisive}:")
                self.depth += 1
                opened += 1
        self.depth -= opened
        return var

    def _short_circuit(self, items: tuple, decisive: str, neutral: str,
                       root: bool = False) -> str:
        """AND/OR that stops at the first decisive item. Only where evaluation
        cannot fail (jms, rabbitmq): in amqp a failure in a later item must still
        make the filter unknown. A one-pass loop gives ``break`` without nesting.

        At the root of the filter, the fields an item is first to read are read
        just before it, not at the top: an item never reached reads nothing
        (nothing after the root loop reads a field, and each item runs only if
        every item before it ran)."""
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = {neutral}")
        self.emit("for _ in _ONCE:")
        self._loops += 1
        with self.indented():
            for position, item in enumerate(items):
                mark, reads = len(self.lines), len(self.prologue)
                value = self.condition(item)
                if root and len(self.prologue) > reads:
                    self._read_here(mark, reads, position)
                self.emit(f"if {value} is {decisive}:")
                self.emit(f"    {var} = {decisive}")
                self.emit("    break")
                if not isinstance(item, _NEVER_NULL):
                    self.emit(f"if {value} is None: {var} = None")
        self._loops -= 1
        return var

    def visit_Not(self, node: ast.Not) -> str:
        operand = self.condition(node.operand)
        var = self.temp()
        self.booleans.add(var)
        self.emit(f"{var} = None if {operand} is None else not {operand}")
        return var

    def visit_IsNull(self, node: ast.IsNull) -> str:
        operand = self.value(node.operand)
        var = self.temp()
        self.booleans.add(var)
        if self.semantics.null_view:   # values the dialect drops read as absent
            kept = self.hoist("kept", self.semantics.never_dropped)
            test = (f"({operand} is None or (type({operand}) not in {kept} and "
                    f"{self.op('_view')}({operand}) is None))")
            self.emit(f"{var} = {'not ' if node.negated else ''}{test}")
            return var
        self.emit(f"{var} = {operand} is {'not ' if node.negated else ''}None")
        return var

    # --- comparison ----------------------------------------------------------------------------

    def visit_Compare(self, node: ast.Compare) -> str:
        left, right = node.left, node.right
        op = node.op
        if isinstance(left, ast.Literal) and not isinstance(right, ast.Literal):
            left, right, op = right, left, ast.MIRROR[op]
        if self.fuse_calls and isinstance(left, ast.Call) and isinstance(right, ast.Literal) \
                and right.typ == "string" and op in self.semantics.string_ops \
                and not self.compact and _fusable(left):
            fused = self._compare_string_call(left, op, right)
            if fused is not None:
                return fused
        subject = self.value(left)
        var = self.temp()
        if isinstance(right, ast.Literal):
            self._compare_constant(var, op, subject, right)
        else:
            self.emit(f"{var} = {self.op('_compare')}({op!r}, {subject}, {self.value(right)})")
        return var

    def _compare_string_call(self, call: ast.Call, op: str, constant: ast.Literal) -> str | None:
        """``LOWER(x) = 'acme'``: for a string x, one line (``x.lower() == 'acme'``)
        with no test of the function's result; the function and the comparison
        as usual for anything else."""
        outer, self.offset = self.offset, call.offset
        args = [self.value(arg) for arg in call.args]
        self.offset = outer
        fast = _string_function(call, args)
        if fast is None:
            return None if not args else self._compare_call_result(call, op, constant, args)
        var, subject = self.temp(), args[0]
        self.emit(f"if {self.is_string(subject)}:")
        self.emit(f"    {var} = {fast} {_PY_OP[op]} {self.const(constant.value)}")
        self.emit(f"elif {subject} is None:")
        self.emit(f"    {var} = None")
        failing = self.failing_subject(call, args)
        if failing is not None:
            self.exit_failed(failing, "elif")
        self.emit("else:")
        with self.indented():
            self._compare_call_result(call, op, constant, args, var)
        return var

    def failing_subject(self, call: ast.Call, args: list[str]) -> str | None:
        """A test under which the function surely fails: a subject of a class the
        function refuses (``Function.subject``: a string; the table's
        "function"), its other arguments constants, none NULL (a NULL argument
        makes the result NULL before the subject is looked at)."""
        function = REGISTRY.get(call.name)
        if function is None or function.subject != "string" or not args or not all(
                isinstance(a, ast.Literal) and a.value is not None for a in call.args[1:]):
            return None
        return self.failing(args[0], "function")

    def _compare_call_result(self, call: ast.Call, op: str, constant: ast.Literal,
                             args: list[str], var: str | None = None) -> str:
        result = self.temp()
        self.emit(f"{result} = _fn_{REGISTRY[call.name].ident}({', '.join(args)})")
        var = var or self.temp()
        self._compare_constant(var, op, result, constant)
        self.emit(f"{result} = None")   # a computed string, dropped once compared
        return var

    def _typed_branch(self, var: str, subject: str, fast_paths: list[tuple[str, str]],
                      fallback: str, failing: str | None = None) -> None:
        """``var = fast`` under the first ``guard`` that holds, NULL for NULL,
        the early exit of a failure under ``failing`` (``exit_failed``), else
        ``fallback`` (the runtime's complete operation)."""
        if self.compact:
            failing = None
        if not fast_paths:
            if failing is not None:
                self.exit_failed(failing, "if")
            self.emit(f"{var} = {fallback}")
            return
        if self.compact:
            self.emit(f"{var} = None if {subject} is None else {fallback}")
            return
        fast_paths, failing = self.class_once(subject, fast_paths, failing)
        keyword = "if"
        first = len(self.lines) + 1
        for guard, fast in fast_paths:
            self.emit(f"{keyword} {guard}:")
            self.emit(f"    {var} = {fast}")
            keyword = "elif"
        self.emit(f"elif {subject} is None:")
        self.emit(f"    {var} = None")
        if failing is not None:
            self.exit_failed(failing, "elif")
        self.emit("else:")
        self.emit(f"    {var} = {fallback}")
        self._last_branch = (var, first, fast_paths[0][1], len(self.lines))

    def failing(self, subject: str, test: str, constant: Any = None) -> str | None:
        """A test of ``subject``'s class under which the dialect's ``test`` (a
        test of ``NumberRules.other_types``, with its string constant or
        constants) surely fails: the classes its table declares to fail
        (``NumberRules.failing``), and a double that is no NaN where doubles
        fail (``failing_unless_nan``). None where the dialect has no failures,
        or nothing surely fails."""
        if not self.semantics.failures or self.compact:
            return None
        numbers = self.semantics.numbers
        tests = []
        classes = numbers.failing(test, constant)
        if classes:
            name = _SHARED_FAILING.get(classes) or self.hoist("fails", classes)
            tests.append(f"type({subject}) in {name}")
        floats = numbers.failing_unless_nan(test, constant)
        if floats:   # a double that is no NaN (a NaN compares as NULL first)
            name = "_FLOATS" if floats == FLOAT_CLASSES else self.hoist("fails", floats)
            tests.append(f"(type({subject}) in {name} and {subject} == {subject})")
        return " or ".join(tests) or None

    def exit_failed(self, guard: str | None, keyword: str) -> None:
        """``keyword guard``: the evaluation fails there (``failing``; no guard:
        wherever the line is reached), and a
        failure makes the filter unknown wherever it happens, so ``evaluate``
        returns None and ``matches`` False at once, as their error path would,
        for a message of filtex's own forms (which that path would not adapt).
        Where the reason is wanted (``_mode`` False: ``Filter.outcome``,
        ``Filter.explain``, the plan's oracle) or the message is of another
        class, the runtime's operation runs on, fails and writes the reason:
        every verdict and every reason as before, a failing message at the
        cost of a true one."""
        test = "" if guard is None else f"({guard}) and " if " or " in guard else f"{guard} and "
        self.emit_forms(f"{keyword} {test}_mode is not False and type(message) in _VIEWS: "
                        "return None",
                        f"{keyword} {test}type(message) in _VIEWS: return False")

    def class_once(self, subject: str, paths: list, also: str | None = None
                   ) -> tuple[list, str | None]:
        """Guards that test ``type(subject)`` more than once read it once, into a
        temp: a builtin call saved on every path after the first. ``also``, a
        guard tested after them only where they all fail (an early exit), reads
        that temp too, but does not count."""
        call = f"type({subject})"
        if subject not in self.known_class and \
                sum(guard.count(call) for guard, *_ in paths) < 2:
            return paths, also
        cls = self.class_of(subject)
        return ([(guard.replace(call, cls), *rest) for guard, *rest in paths],
                None if also is None else also.replace(call, cls))

    def class_of(self, subject: str) -> str:
        """A temp holding ``type(subject)``: the one an arithmetic result carries,
        else one read here."""
        cls = self.known_class.get(subject)
        if cls is None:
            cls = self.temp()
            self.emit(f"{cls} = type({subject})")
            if self.depth == 2 and not self._loops:
                # straight-line code of the function's body: every later test of
                # the same value (``x >= 1 AND x <= 9``) reads this class
                self.known_class[subject] = cls
        return cls

    def _compare_constant(self, var: str, op: str, subject: str, constant: ast.Literal) -> None:
        value, py = constant.value, _PY_OP[op]
        literal = self.const(value)
        fallback = f"{self.op('_compare')}({op!r}, {subject}, {literal})"
        if value.__class__ is not int and value.__class__ in INT_CLASSES:
            literal = self.const(int(value))   # a Java Integer constant compares by value
        paths: list[tuple[str, str]] = []
        is_float = self.is_float(subject)
        is_decimal = f"type({subject}) is _Decimal"
        not_nan = f"if {subject} == {subject} else None"
        float_nan = "" if self.semantics.float_order == "total" else self.number_or_null(subject)
        decimals = self.semantics.decimal_fast_paths
        if constant.typ == "string":
            if op in self.semantics.string_ops and subject in self.exact_strings:
                self.booleans.add(var)
                self.emit(f"{var} = {subject} {py} {literal}")
                return
            if op in self.semantics.string_ops:
                paths = [(self.is_string(subject), f"{subject} {py} {literal}")]
        elif constant.typ in ("int", "timestamp"):
            paths = [(f"type({subject}) in _INTS_TS", f"{subject} {py} {literal}")]
            operand = self.double_operand(value) if constant.typ == "int" else None
            if operand is not None:
                as_float = self.const(operand)
                paths.append((is_float, f"({subject} {py} {as_float}) {float_nan}"))
                if decimals:
                    paths.append((is_decimal, f"({subject} {py} {literal}) {not_nan}"))
        elif constant.typ == "float" and not math.isnan(value) and not (
                self.semantics.float_order == "total" and value == 0) and \
                self.double_operand(value) is not None:
            paths = [(is_float, f"({subject} {py} {literal}) {float_nan}")]
        elif constant.typ == "decimal" and decimals:
            as_float = self.const(double_value(value))
            paths = [(f"type({subject}) in _INTS", f"{subject} {py} {literal}"),
                     (is_float, f"({subject} {py} {as_float}) {self.number_or_null(subject)}"),
                     (is_decimal, f"({subject} {py} {literal}) {not_nan}")]
        elif constant.typ == "bool" and op in ("=", "<>"):
            paths = [(f"{subject} is True or {subject} is False",
                      f"{subject} {'is' if op == '=' else 'is not'} {literal}")]
        if constant.typ == "string" and paths:
            fallback = self.other_type(subject, fallback, "compare-string", op)
        test = _constant_test(constant, op)
        self._typed_branch(var, subject, paths, fallback,
                           None if test is None else self.failing(subject, *test))

    def double_operand(self, constant: Any) -> Any:
        """What a double (``is_float``: neither NaN nor, in total order, a zero) is
        compared with inline for a numeric ``constant``, by the dialect's declared
        rule (``dialects/rules.py``): the constant rounded to double, or the
        constant itself where the two numbers compare exactly (Erlang); None when
        the rule is another (the runtime decides)."""
        operand = self.semantics.numbers.double_operand(constant)
        as_float = double_value(constant)
        return as_float if operand is not None and operand == as_float else operand

    def number_or_null(self, subject: str) -> str:
        """The tail of a double's inline comparison: NULL for NaN, and for the
        infinities where the dialect drops them (rabbitmq: no Erlang number)."""
        if self.semantics.finite_numbers:
            return f"if {subject} - {subject} == 0 else None"
        return f"if {subject} == {subject} else None"

    def is_float(self, subject: str) -> str:
        """A test that ``subject`` is a double Python compares as the dialect does
        (jms: Java orders NaN and -0.0 its own way, so those take the slow path)."""
        if self.semantics.float_order == "total":
            return (f"type({subject}) is float and {subject} == {subject} "
                    f"and {subject} != 0")
        return f"type({subject}) is float"

    def visit_Between(self, node: ast.Between) -> str:
        subject = self.value(node.operand)
        low, high = node.low, node.high
        var = self.temp()
        not_ = "not " if node.negated else ""
        paths: list[tuple[str, str]] = []
        failing = None   # a string between two numbers, in amqp
        if _number_constant(low) and _number_constant(high):
            failing = self.failing(subject, "not between numbers" if node.negated
                                   else "between numbers")
        if all(isinstance(b, ast.Literal) and b.typ == "int" for b in (low, high)):
            lo, hi = self.const(low.value), self.const(high.value)
            dlo, dhi = self.double_operand(low.value), self.double_operand(high.value)
            paths = [(f"type({subject}) in _INTS_TS", f"{not_}({lo} <= {subject} <= {hi})")]
            if dlo is not None and dhi is not None:
                flo, fhi = self.const(dlo), self.const(dhi)
                paths.append((self.is_float(subject), f"{not_}({flo} <= {subject} <= {fhi}) "
                              f"{self.number_or_null(subject)}"))
            if self.semantics.decimal_fast_paths:
                paths.append((f"type({subject}) is _Decimal",
                              f"{not_}({lo} <= {subject} <= {hi}) if {subject} == {subject} "
                              "else None"))
            shortcut = self.semantics.other_type("between-numbers", negated=node.negated)
            if shortcut is not UNDECIDED:   # a string between two numbers
                paths.append((self.is_string(subject), repr(shortcut)))
        else:
            lo, hi = self.value(low), self.value(high)
        slow = f"{self.op('_between')}({subject}, {lo}, {hi}, {node.negated})"
        self._typed_branch(var, subject, paths, slow, failing)
        return var

    def visit_In(self, node: ast.In) -> str:
        subject = self.value(node.operand)
        var = self.temp()
        not_ = "not " if node.negated else ""
        literals = all(isinstance(i, ast.Literal) for i in node.items)
        kinds = {i.typ for i in node.items} if literals else set()
        items = [self.value(i) for i in node.items]
        slow = f"{self.op('_in')}({subject}, ({', '.join(items)},))"
        if node.negated:
            slow = f"_negated({slow})"
        paths: list[tuple[str, str]] = []
        if kinds in ({"string"}, {"int"}):
            members = self.hoist("set", frozenset(i.value for i in node.items))
            guard = (self.is_string(subject) if kinds == {"string"}
                     else f"type({subject}) in _INTS")
            paths = [(guard, f"{subject} {not_}in {members}")]
            if kinds == {"string"}:
                slow = self.other_type(subject, slow, "in-strings", negated=node.negated)
        failing = None
        if kinds == {"string"}:
            failing = self.failing(subject, "in strings", tuple(i.value for i in node.items))
        elif literals and all(_number_constant(i) for i in node.items):
            failing = self.failing(subject, "in numbers")
        self._typed_branch(var, subject, paths, slow, failing)
        return var

    def visit_Like(self, node: ast.Like) -> str:
        subject = self.value(node.operand)
        var = self.temp()
        pattern, escape = node.pattern, node.escape
        constant = isinstance(pattern, ast.Literal) and pattern.typ == "string" and (
            escape is None or (isinstance(escape, ast.Literal) and escape.typ == "string"))
        extra = ""
        if escape is not None:
            extra = f", {self.value(escape)}"
        pattern_var = self.value(pattern)
        if not constant:
            # a pattern from the message: bounded before it is compiled
            if self.limits.max_pattern is not None and not isinstance(pattern, ast.Literal):
                pattern_var = f"_pattern({pattern_var}, {self.limits.max_pattern})"
            self.emit(f"{var} = {self.op('_like')}({subject}, {pattern_var}, "
                      f"{node.negated}{extra})")
            return var
        slow = f"{self.op('_like')}({subject}, {pattern_var}, {node.negated}{extra})"
        fast = self._like_expression(subject, pattern.value,
                                     None if escape is None else escape.value, node.negated)
        if node.negated:
            fast = fast[4:] if fast.startswith("not ") else f"not ({fast})"
        slow = self.other_type(subject, slow, "like", negated=node.negated)
        self._typed_branch(var, subject, [(self.is_string(subject), fast)], slow,
                           self.failing(subject, "like"))
        return var

    def is_string(self, subject: str) -> str:
        """A test that ``subject`` is a string the dialect compares as Python does."""
        if not self.semantics.char_is_string:
            return f"type({subject}) in _STRS"
        return f"type({subject}) in _STRS_CHAR"

    def other_type(self, subject: str, slow: str, test: str, op: str = "=",
                   negated: bool = False) -> str:
        """The dialect's inline answer for a value that is not a string, where it
        has one; a ``str`` subclass is still a string (the runtime reads it)."""
        shortcut = self.semantics.other_type(test, op, negated)
        if shortcut is UNDECIDED:
            # integers and booleans may still have one answer (rabbitmq: FALSE),
            # where binaries or decimals need the runtime
            shortcut = self.semantics.other_type(test, op, negated, _PLAIN_KINDS)
            if shortcut is UNDECIDED:
                return slow
            return f"{shortcut!r} if type({subject}) in _INTS_TS_BOOL else {slow}"
        return f"{slow} if issubclass(type({subject}), str) else {shortcut!r}"

    def _like_expression(self, subject: str, pattern: str, escape: str | None,
                         negated: bool = False) -> str:
        """The cheapest expression matching ``subject`` against a constant pattern:
        plain string tests for patterns with at most one ``%`` (and ``%x%``), a
        precompiled linear matcher otherwise. ``negated``: a ``not`` in front
        when the test has its own negative form (``'x' not in s``)."""
        mode = self.semantics.like_escapes
        segments = like_module.segments_of(pattern, escape, mode)
        if not self.semantics.plain_like(segments):
            template = self.semantics.like_inline(segments)
            if template is not None:
                needle = "".join(c for segment in segments for c in segment if c is not None)
                return "(" + template.format(s=subject, needle=self.const(needle)) + ")"
            matcher = self.semantics.like_matcher(pattern, escape)
            return f"{self.hoist('like', matcher)}({subject})"
        if len(segments) == 3 and not segments[0] and not segments[2] \
                and segments[1] and None not in segments[1]:
            needle = self.const(''.join(segments[1]))  # type: ignore[arg-type]
            return f"not {needle} not in {subject}" if negated else f"{needle} in {subject}"
        if len(segments) > 2:
            matcher = like_module.compile_like(pattern, escape, mode)
            return f"{self.hoist('like', matcher)}({subject})"
        head, tail = segments[0], (segments[1] if len(segments) == 2 else None)
        checks = []
        if tail is None:
            if None in head:
                checks.append(f"len({subject}) == {len(head)}")
            else:
                return f"{subject} == {self.const(''.join(head))}"  # type: ignore[arg-type]
        elif (None in head or None in tail) or (head and tail):
            # the anchored runs must not overlap: 'a%a' does not match 'a'
            checks.append(f"len({subject}) >= {len(head) + len(tail)}")
        bounded = bool(checks)   # the length is checked first: indexing cannot fail
        checks += self._anchored_runs(subject, head, False, bounded)
        if tail:
            checks += self._anchored_runs(subject, tail, True, bounded)
        return " and ".join(checks) or "True"

    def _anchored_runs(self, subject: str, segment: list, from_end: bool,
                       bounded: bool = False) -> list[str]:
        """Tests for the literal runs of a segment anchored at the start or end
        (``None`` in a segment is ``_``: any one character, only counted); a
        one-character run is an index where the length was checked."""
        runs, run, start = [], [], 0
        for offset, item in enumerate(segment + [None]):
            if item is None:
                if run:
                    runs.append((start, "".join(run)))
                run, start = [], offset + 1
            else:
                run.append(item)
        tests = []
        for offset, text in runs:
            literal = self.const(text)
            if bounded and len(text) == 1:
                index = -(len(segment) - offset) if from_end else offset
                tests.append(f"{subject}[{index}] == {literal}")
                continue
            if not from_end:
                tests.append(f"{subject}.startswith({literal}, {offset})" if offset
                             else f"{subject}.startswith({literal})")
                continue
            after = len(segment) - offset - len(text)
            tests.append(f"{subject}.endswith({literal}, 0, len({subject}) - {after})" if after
                         else f"{subject}.endswith({literal})")
        return tests


# Characters of generated source written with inline fast paths (see ``compact``).
INLINE_BUDGET = 60_000

# Longer AND/OR chains are one call over a tuple, not a loop of four lines an item.
_MAX_SHORT_CIRCUIT = 256

# AND/OR of at most this many items nest their items' ``if``s (``_nested``), while
# the source stays under this indentation (Python allows 100 levels).
_MAX_NESTED = 8
_MAX_DEPTH = 60

# Short-circuit loops nest at most this deep (CPython allows 20 nested blocks).
_MAX_LOOPS = 12

_ROOT_PREDICATES = (ast.Compare, ast.Like, ast.In, ast.Between)

# The local counting the characters of the strings an evaluation computed and
# kept (``charge``): a temporary's name that ``temp()`` never gives.
_SPENT = "_0"


# Marks a line written in two forms (``emit_forms``): evaluate's, then matches'.
_FORMS, _OR_FORM = "\x00", "\x01"


def _form(lines: list[str], which: int) -> list[str]:
    """The body's lines for one of the two functions (0: evaluate, 1: matches)."""
    out = []
    for line in lines:
        if _FORMS in line:
            indent, forms = line.split(_FORMS)
            line = forms.split(_OR_FORM)[which]
            if not line:
                continue
            line = indent + line
        out.append(line)
    return out


# The kinds of the classes of ``_INTS_TS_BOOL`` (``other_type``).
_PLAIN_KINDS = (rules.INTEGER, rules.TIMESTAMP, rules.BOOLEAN)

# Predicates whose value is always True or False, never NULL.
_NEVER_NULL = (ast.Exists, ast.IsNull)

def _constant_test(constant: ast.Literal, op: str) -> tuple[str, Any] | None:
    """The test of ``NumberRules.other_types`` that a comparison by ``op`` with
    ``constant`` is, and its string constant; None for a constant whose
    comparisons no value's class alone makes fail (a timestamp: a string reads
    as a time; NULL; NaN: unknown)."""
    if constant.typ == "string":
        return rules.comparison_test("string", op), constant.value
    if constant.typ == "bool":
        return rules.comparison_test("boolean", op), None
    if _number_constant(constant):
        return rules.comparison_test("number", op), None
    return None


def _number_constant(node: ast.Node) -> bool:
    """Is ``node`` a numeric constant, neither NaN nor a timestamp?"""
    return isinstance(node, ast.Literal) and node.typ in ("int", "decimal", "float") and \
        rules.constant_kind(node.value) in (rules.INTEGER, rules.DECIMAL, rules.DOUBLE,
                                            rules.INFINITY)


def _fusable(call: ast.Call) -> bool:
    """Can ``call op 'text'`` be generated as one test (``_compare_string_call``)?
    For a function filtex knows whose inline form, if it has one, is a string:
    the inline result is compared with the constant by Python's own operator (a
    function of another result type, ``filtex:length``, is compared by the
    runtime, which refuses to compare it with a string)."""
    function = REGISTRY.get(call.name)
    return function is not None and call.typ != "null" and (
        function.inline is None or function.result == "string")


def _string_function(node: ast.Call, args: list[str]) -> str | None:
    """Inline Python for a function of an exact string (``functions/``: its
    ``inline`` form); None when the runtime function must do it."""
    if not args or isinstance(node.args[0], ast.Literal):
        return None  # constant subjects were folded unless they fail: leave that to the runtime
    function = REGISTRY.get(node.name)
    if function is None or function.inline is None:
        return None
    return function.inline(args[0], node.args[1:])
