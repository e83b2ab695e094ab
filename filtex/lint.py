"""Filters that compile but probably do not say what their author meant.

``lint(flt)`` reads the checked tree of every SQL text in a filter (the filter
itself, or the SQL members of a described filter or set) and returns
warnings, each with the position it is about:

* a name that looks like another system's qualifier (``sys.Label``,
  ``user.x``, ``amqp.annotation.[x-opt-offset]``, ``headers.x``) reads an
  entry of an *application property* ``sys``/``user``/...; the warning says
  what it reads and what the author probably meant (``p.subject``);
  a JMS header name outside the jms dialect is an application property too;
* a comparison the static types decide: ``x = NULL`` (always unknown), a
  well-known field compared with a constant of a type it can never be
  compared with (``h.priority = 'high'``), constants of types that never
  compare (``x IN ('a', 1)``);
* a LIKE without wildcards (it is ``=``) or with ``'%'`` alone (true for
  every string);
* a value where a condition belongs, the whole filter or an operand of AND,
  OR, NOT (``'abc'``, ``total + 1``, ``p.subject``): never true, so a filter
  of it matches no message; when the filter's text looks like a file name
  (``examples/orders.jsonl`` reads as a division), the hint that the filter
  was forgotten;
* a filter of constants only that folds to FALSE or NULL (``1 = 2``,
  ``1 / 0 = 1``): the same for every message, never true.

The types come from data: the checker's ``typ`` for constants and typed
expressions, ``FIELD_TYPES`` for the header and properties fields; whether two
types compare, and what the comparison gives, is the dialect's declared answer
(``dialects/rules.py``: ``NumberRules.answer``, the table the plan reads and
``tests/test_rules.py`` checks against the row engine), so the warnings follow
the rules evaluation follows.
"""
from __future__ import annotations

import re
from typing import Any, Iterator, NamedTuple


from .dialects import rules
from .errors import line_and_column
from .filter import Filter
from .runtime.patterns import PatternError, segments_of
from .runtime.values import BINARY, STRING, TIMESTAMP, UUID
from .tree import ast
from .tree.render import to_sql


class Warning(NamedTuple):  # noqa: A001 - the name the API promises; filtex.lint.Warning
    """One warning: ``message``, the ``offset`` of what it is about in
    ``text`` (the SQL text: the filter's, or one SQL member's), and the
    1-based ``line`` and ``column`` of that offset."""
    message: str
    offset: int
    line: int
    column: int
    text: str = ""


LintWarning = Warning   # for code that would rather not shadow the built-in


def lint(flt: Filter) -> list[Warning]:
    """The warnings for a compiled filter, in text order (member by member)."""
    found: list[Warning] = []
    for text, dialect, options in sql_texts(flt):
        tree = _unfolded(text, dialect, options)
        if tree is None:
            continue
        analysis = _Analysis(dialect)
        notes = analysis.run(tree)
        analysis.conditions(tree, text)
        if not notes:
            analysis.constant(tree, _checked(text, dialect, options, fold=True))
        notes = sorted(notes, key=lambda note: note[0])
        for offset, message in notes:
            line, column = line_and_column(text, offset)
            found.append(Warning(message, offset, line, column, text))
    return found


# --- the SQL texts of a filter ---------------------------------------------------------

def sql_texts(flt: Filter) -> Iterator[tuple[str, Any, dict]]:
    """(text, dialect record, compile options) of every SQL text in ``flt``."""
    from .dialects import get_dialect
    if flt.kind == "sql":
        yield flt.text, get_dialect(flt.dialect), flt.options
        return
    stack = [flt.text]
    while stack:
        item = stack.pop()
        if type(item) is not tuple or len(item) != 2:
            continue
        name, value = item
        if name == "filter-set" and isinstance(value, dict):
            stack.extend(reversed(list(value.values())))
            continue
        ftype = _filter_type(name)
        if ftype is None:
            continue
        if ftype.kind in ("sql", "selector") and isinstance(value, str):
            yield value, get_dialect(ftype.dialect or flt.dialect), flt.options
        elif isinstance(value, list):   # a group's members
            stack.extend(reversed(value))


def _filter_type(name: Any) -> Any:
    from .described import descriptors
    from .errors import FilterError
    try:
        return descriptors.lookup(name)
    except FilterError:
        return None


def _unfolded(text: str, dialect: Any, options: dict) -> ast.Node | None:
    """The checked tree with no constant folded: warnings are about what the
    author wrote (``'5' > 3``), which folding would have replaced."""
    return _checked(text, dialect, options, fold=False)


def _checked(text: str, dialect: Any, options: dict, fold: bool) -> ast.Node | None:
    from .errors import DefinitionProblem
    from .limits import DEFAULT_LIMITS
    from .sql.checker import Checker
    from .sql.parser import parse
    limits = options.get("limits", DEFAULT_LIMITS)
    try:
        raw = parse(text, dialect, limits, options.get("parameters"))
        return Checker(dialect, fold=fold, limits=limits).check(raw)
    except (DefinitionProblem, RecursionError):
        return None


# --- other systems' names ------------------------------------------------------------------

# A base name (lower case) read as an application property, whose entries a
# user probably meant as message fields: (who uses it, where its entries are).
# ``where``: "fields" (header/properties fields by name), "application",
# "annotations", "delivery", "footer", "body", or "sections" (``amqp.header.x``).
QUALIFIER_LOOKALIKES: dict[str, tuple[str, str]] = {
    "sys": ("Azure Service Bus's system properties", "fields"),
    "user": ("Azure Service Bus's user properties", "application"),
    "amqp": ("a section prefix of another broker", "sections"),
    "jms": ("a JMS header prefix", "fields"),
    "msg": ("a message prefix of another system", "fields"),
    "message": ("a message prefix of another system", "fields"),
    "headers": ("message headers of another system (RabbitMQ, STOMP, NATS)", "application"),
    "hdr": ("a header prefix", "fields"),
    "head": ("a header prefix", "fields"),
    "property": ("a misspelt properties qualifier", "fields"),
    "props": ("a misspelt properties qualifier", "fields"),
    "prop": ("a misspelt properties qualifier", "fields"),
    "app": ("a misspelt application-properties qualifier", "application"),
    "application": ("a misspelt application-properties qualifier", "application"),
    "app_properties": ("a misspelt application-properties qualifier", "application"),
    "application_property": ("a misspelt application-properties qualifier", "application"),
    "applicationproperties": ("a misspelt application-properties qualifier", "application"),
    "custom": ("custom properties of another system", "application"),
    "annotation": ("a misspelt message-annotations qualifier", "annotations"),
    "annotations": ("a misspelt message-annotations qualifier", "annotations"),
    "message_annotation": ("a misspelt message-annotations qualifier", "annotations"),
    "messageannotations": ("a misspelt message-annotations qualifier", "annotations"),
    "ma": ("a misspelt message-annotations qualifier", "annotations"),
    "delivery_annotation": ("a misspelt delivery-annotations qualifier", "delivery"),
    "da": ("a misspelt delivery-annotations qualifier", "delivery"),
    "footers": ("a misspelt footer qualifier", "footer"),
    "body": ("a body prefix", "body"),
    "payload": ("a body prefix", "body"),
}

# Sections a path under ``amqp.`` may name.
_SECTION_WORDS = {
    "header": "header", "headers": "header", "properties": "properties",
    "property": "properties", "annotation": "message_annotations",
    "annotations": "message_annotations", "message_annotations": "message_annotations",
    "message-annotations": "message_annotations",
    "delivery_annotations": "delivery_annotations",
    "delivery-annotations": "delivery_annotations",
    "application_properties": "application_properties",
    "application-properties": "application_properties", "footer": "footer",
}

# Other systems' names for AMQP fields and annotations (normalized: lower case,
# no ``-``/``_``), beside the fields' own names.
_FIELD_ALIASES = {
    "label": ("properties", "subject"), "type": ("properties", "subject"),
    "sessionid": ("properties", "group-id"),
    "replytosessionid": ("properties", "reply-to-group-id"),
    "timetolive": ("header", "ttl"), "expiresatutc": ("properties", "absolute-expiry-time"),
    "expiration": ("properties", "absolute-expiry-time"),
    "timestamp": ("properties", "creation-time"), "destination": ("properties", "to"),
    "deliverymode": ("header", "durable"), "redelivered": ("header", "delivery-count"),
    "enqueuedtimeutc": ("message_annotations", "x-opt-enqueued-time"),
    "sequencenumber": ("message_annotations", "x-opt-sequence-number"),
    "offset": ("message_annotations", "x-opt-offset"),
    "partitionkey": ("message_annotations", "x-opt-partition-key"),
    "scheduledenqueuetimeutc": ("message_annotations", "x-opt-scheduled-enqueue-time"),
}


def _normalized(name: str) -> str:
    return name.lower().replace("-", "").replace("_", "")


def _known_field(key: str) -> tuple[str, str] | None:
    """(section, AMQP field or annotation) another system's ``key`` names."""
    from .runtime.property import FIELD_TYPES
    wanted = _normalized(key)
    for section, names in FIELD_TYPES.items():
        for name in names:
            if _normalized(name) == wanted:
                return section, name
    if key.lower().startswith("x-opt-"):
        return "message_annotations", key
    return _FIELD_ALIASES.get(wanted)


def _written(section: str, key: str, rest: tuple = ()) -> str:
    node: ast.Node = ast.Field(section=section, key=key)
    for step in rest:
        node = ast.MapRef(base=node, key=step)
    return to_sql(node)


def _meant(where: str, path: tuple, dialect: Any) -> str | None:
    """What ``base.path...`` probably meant, written as filter text."""
    first, rest = path[0], path[1:]
    if where == "sections" and len(path) > 1 and first.lower() in _SECTION_WORDS:
        section = _SECTION_WORDS[first.lower()]
        key = rest[0]
        if section in ("header", "properties"):
            known = _known_field(key)
            return _written(*known, rest[1:]) if known and known[0] == section else None
        return _written(section, key, rest[1:])
    if where in ("fields", "sections"):
        known = _known_field(first)
        return _written(*known, rest) if known else None
    if where == "application":
        known = _known_field(first) if first.lower().startswith("x-opt-") else None
        return _written(*(known or ("application_properties", first)), rest)
    if where == "annotations":
        return _written("message_annotations", first, rest)
    if where == "delivery":
        return _written("delivery_annotations", first, rest)
    if where == "footer":
        return _written("footer", first, rest)
    if where == "body" and dict(dialect.body_qualifiers):
        return "amqp_value." + ".".join(path)
    return None


def _reference_path(node: ast.MapRef) -> tuple[ast.Field | None, tuple]:
    """(base field, keys) of a chain of map references."""
    keys: list[str] = []
    current: ast.Node = node
    while isinstance(current, ast.MapRef):
        keys.append(current.key)
        current = current.base
    keys.reverse()
    return (current if isinstance(current, ast.Field) else None), tuple(keys)


# --- static types -----------------------------------------------------------------------------

_KINDS = {"string": rules.STRING, "int": rules.INTEGER, "float": rules.DOUBLE,
          "decimal": rules.DECIMAL_VALUE, "bool": rules.BOOLEAN, "timestamp": rules.TIMESTAMP,
          "binary": rules.BINARY, "uuid": rules.UUID}
"""The table's kind of each static type (the checker's ``typ``)."""
_FIELD_KINDS = {"bool": rules.BOOLEAN, "ubyte": rules.INTEGER, "uint": rules.INTEGER,
                "ulong": rules.INTEGER, STRING: rules.STRING, TIMESTAMP: rules.TIMESTAMP,
                UUID: rules.UUID, BINARY: rules.BINARY}
"""... of each type a header or properties field can hold (``FIELD_TYPES``)."""
_TEST_TYPES = {rules.STRING: "string", rules.BOOLEAN: "boolean", rules.INTEGER: "number",
               rules.DOUBLE: "number", rules.DECIMAL_VALUE: "number"}
"""What a value of a kind is as the other side of a test (``OTHER_TESTS``)."""
_TYPE_WORDS = {"string": "a string", "int": "an integer", "float": "a float",
               "decimal": "a decimal", "bool": "a boolean", "timestamp": "a timestamp",
               "binary": "a binary", "uuid": "a uuid"}
_KIND_WORDS = {rules.STRING: "string", rules.INTEGER: "integer", rules.DOUBLE: "float",
               rules.DECIMAL_VALUE: "decimal", rules.BOOLEAN: "boolean",
               rules.TIMESTAMP: "timestamp", rules.BINARY: "binary", rules.UUID: "uuid"}


class _Operand(NamedTuple):
    """What the static types say about an operand: the kinds it can have (of
    ``dialects/rules.py``), its value if it is a constant, and how to name it
    in a warning."""
    kinds: tuple
    words: str
    constant: bool
    value: Any = None


def _operand(node: ast.Node) -> _Operand | None:
    """The kinds of an operand whose type is known statically; None when only
    evaluation knows it (an application property, arithmetic)."""
    if isinstance(node, ast.Literal):
        if node.value is None or node.typ not in _KINDS:
            return None
        return _Operand((_KINDS[node.typ],),
                        _TYPE_WORDS.get(node.typ, "a constant") + " constant", True, node.value)
    if isinstance(node, ast.Field) and node.section in ("header", "properties"):
        from .runtime.property import FIELD_TYPES
        kinds = FIELD_TYPES[node.section].get(node.key)
        if kinds is None:
            return None
        words = " or ".join((", ".join(kinds[:-1]), kinds[-1])) if len(kinds) > 1 else kinds[0]
        return _Operand(tuple(_FIELD_KINDS[k] for k in kinds), f"{to_sql(node)} ({words})",
                        False)
    if node.typ in _KINDS and not isinstance(node, ast.PREDICATE_NODES):
        return _Operand((_KINDS[node.typ],), f"{to_sql(node)} ({node.typ})", False)
    return None


def _test(op: str, kind: str) -> str | None:
    """The test a value compared by ``op`` with a value of ``kind`` is."""
    other = _TEST_TYPES.get(kind)
    return None if other is None else rules.comparison_test(other, op)


def _answer(numbers: Any, a: str, b: str, op: str, constant: Any) -> str | None:
    """The declared answer of ``a op b`` for values of kinds ``a`` and ``b``, read
    from either side (``constant``: ``b``'s value, if a constant)."""
    test = _test(op, b)
    found = numbers.answer(a, test, constant) if test is not None else None
    if found is None:
        mirrored = _test(ast.MIRROR[op], a)
        found = numbers.answer(b, mirrored) if mirrored is not None else None
    return found


_OUTCOMES = {"true": "always true", "false": "always false", "unknown": "always unknown",
             "fail": "always unknown (evaluation fails)"}


def _decided(left: _Operand, right: _Operand, op: str, semantics: Any,
             test: str | None = None) -> tuple[str, str] | None:
    """(why, outcome) when the types alone decide ``left op right`` in a dialect
    (``test``: that test of ``OTHER_TESTS`` instead of the comparison), else
    None: the declared answer for every pair of kinds the two can have, if
    they are all one answer."""
    numbers = semantics.numbers
    answers = set()
    for a in left.kinds:
        for b in right.kinds:
            found = numbers.answer(a, test, right.value) if test is not None else \
                _answer(numbers, a, b, op, right.value)
            if found is None:
                return None
            answers.add(found)
    if len(answers) != 1:
        return None
    answer = answers.pop()
    if answer == "fail":
        pairs = sorted({f"{_KIND_WORDS.get(a, a)} with {_KIND_WORDS.get(b, b)}"
                        for a in left.kinds for b in right.kinds})
        return f"cannot compare {', '.join(pairs)}", _OUTCOMES[answer]
    return (f"in the {semantics.name} dialect unlike types never compare as values",
            _OUTCOMES[answer])


def _null(node: ast.Node) -> bool:
    return isinstance(node, ast.Literal) and node.value is None and node.typ == "null"


# --- the analysis -------------------------------------------------------------------------

class _Analysis:
    """One pass over a checked tree, collecting (offset, message) notes."""

    def __init__(self, dialect: Any) -> None:
        self.dialect = dialect   # the dialect of the node at hand (a Scope changes it)
        self.notes: list[tuple[int, str]] = []

    def run(self, tree: ast.Node) -> list[tuple[int, str]]:
        inner: set[int] = set()   # map references that are the base of another
        stack: list[tuple[ast.Node, Any]] = [(tree, self.dialect)]
        while stack:
            node, dialect = stack.pop()
            self.dialect = dialect
            if isinstance(node, ast.Scope):
                dialect = node.dialect or dialect
            elif isinstance(node, ast.MapRef):
                if id(node) not in inner:
                    self.qualifier(node)
                inner.add(id(node.base))
            elif isinstance(node, ast.Field):
                self.jms_name(node)
            elif isinstance(node, ast.Compare):
                self.compare(node)
            elif isinstance(node, ast.In):
                self.in_list(node)
            elif isinstance(node, ast.Between):
                self.between(node)
            elif isinstance(node, ast.Like):
                self.like(node)
            stack.extend((child, dialect) for child in reversed(list(node.children())))
        return self.notes

    def note(self, offset: int, message: str) -> None:
        self.notes.append((offset, message))

    # --- names ---

    def qualifier(self, node: ast.MapRef) -> None:
        base, path = _reference_path(node)
        if base is None or base.section != "application_properties":
            return
        found = QUALIFIER_LOOKALIKES.get(base.key.lower())
        if found is None:
            return
        who, where = found
        written = to_sql(node)
        reads = (f"{written} reads entry {path[0]!r} of the application property "
                 f"{base.key!r} (NULL unless it holds a map)")
        meant = _meant(where, path, self.dialect)
        hint = f"; {base.key} looks like {who}"
        if meant is not None:
            hint += f": did you mean {meant}?"
        self.note(base.offset, reads + hint)

    def jms_name(self, node: ast.Field) -> None:
        """A JMS header name read as an application property (outside jms)."""
        if node.section != "application_properties" or not node.key.startswith("JMS"):
            return
        from .dialects.jms import JMS_HEADERS
        fields = JMS_HEADERS.get(node.key)
        if fields is None:   # (in jms, the checker made the name a header field)
            return
        meant = " or ".join(_written(section, key) for section, key in fields)
        self.note(node.offset, f"{node.key} is a JMS header, but in the {self.dialect.name} "
                               f"dialect it reads the application property {node.key!r}: "
                               f"did you mean {meant} (or --dialect jms)?")

    # --- comparisons ---

    def compare(self, node: ast.Compare) -> None:
        if _null(node.left) or _null(node.right):
            null = node.right if _null(node.right) else node.left
            other = node.left if null is node.right else node.right
            test = "IS NOT NULL" if node.op == "<>" else "IS NULL"
            hint = "" if isinstance(other, ast.Literal) else f"; write {to_sql(other)} {test}"
            self.note(null.offset, f"{to_sql(node)} is always unknown: a comparison with NULL "
                                   f"is never true or false{hint}")
            return
        left, right = _operand(node.left), _operand(node.right)
        if left is None or right is None:
            return
        decided = _decided(left, right, node.op, self.dialect.semantics)
        if decided is None or (decided[1] == "always true" and left.constant and right.constant):
            return
        reason, outcome = decided
        where = node.right if right.constant or not left.constant else node.left
        if set(left.kinds) == set(right.kinds):
            why = reason if self.dialect.semantics.failures else \
                f"the {self.dialect.name} dialect does not order these values"
            self.note(_start(where), f"{to_sql(node)} is {outcome}: {why}")
            return
        self.note(_start(where), f"{to_sql(node)} is {outcome}: {left.words} never compares "
                                 f"with {right.words} ({reason})")

    def in_list(self, node: ast.In) -> None:
        for item in node.items:
            if _null(item):
                effect = ("NOT IN is never true" if node.negated else
                          "IN is unknown, not false, for any other value")
                self.note(item.offset, f"NULL in an IN list never matches, and {effect}; to "
                                       f"match an absent {to_sql(node.operand)}, test "
                                       f"{to_sql(node.operand)} IS NULL")
                return
        semantics = self.dialect.semantics
        operand = _operand(node.operand)
        items = [(item, _operand(item)) for item in node.items]
        if operand is not None:
            for item, typed in items:
                decided = typed and _decided(operand, typed, "=", semantics)
                if decided and decided[1] != "always true":
                    effect = (f"; in the {self.dialect.name} dialect the whole IN is then "
                              "unknown" if semantics.failures else "")
                    self.note(item.offset, f"{to_sql(item)} in {to_sql(node)} never matches: "
                                           f"{operand.words} never compares with "
                                           f"{typed.words} ({decided[0]}){effect}")
                    return
        elif semantics.failures:   # lenient dialects just find no match among the others
            self.mixed([(item, typed) for item, typed in items if typed is not None], "IN")

    def between(self, node: ast.Between) -> None:
        if _null(node.low) or _null(node.high):
            bound = node.low if _null(node.low) else node.high
            self.note(bound.offset, f"{to_sql(node)} has a NULL bound: it is never true")
            return
        semantics = self.dialect.semantics
        operand = _operand(node.operand)
        bounds = [(b, _operand(b)) for b in (node.low, node.high)]
        if operand is not None:
            for bound, typed in bounds:
                decided = typed and _decided(operand, typed, ">=", semantics)
                if decided:
                    outcome = "always unknown (evaluation fails)" if semantics.failures \
                        else "never true"
                    self.note(_start(bound), f"{to_sql(node)} is {outcome}: {operand.words} "
                                             f"never compares with {typed.words} "
                                             f"({decided[0]})")
                    return
        else:
            self.mixed([(b, t) for b, t in bounds if t is not None], "BETWEEN")

    def mixed(self, typed: list, what: str) -> None:
        """Constants of an IN list or BETWEEN that no value compares with both."""
        semantics = self.dialect.semantics
        for i, (first, a) in enumerate(typed):
            for second, b in typed[i + 1:]:
                decided = _decided(a, b, "=", semantics)
                if decided is not None:
                    effect = (f"; in the {self.dialect.name} dialect the {what} is then "
                              "unknown" if semantics.failures else f"; the {what} is never true")
                    self.note(second.offset, f"{what} mixes {a.words} ({to_sql(first)}) and "
                                             f"{b.words} ({to_sql(second)}): no value compares "
                                             f"with both ({decided[0]}){effect}")
                    return

    def like(self, node: ast.Like) -> None:
        pattern = node.pattern
        if isinstance(pattern, ast.Literal) and isinstance(pattern.value, str) and \
                node.escape is None and not isinstance(node.operand, ast.Literal):
            self.pattern(node, pattern)
        operand = _operand(node.operand)
        if operand is None or operand.constant:
            return
        text = pattern.value if isinstance(pattern, ast.Literal) and \
            isinstance(pattern.value, str) else "x"
        semantics = self.dialect.semantics
        as_string = _Operand((rules.STRING,), "a string", True, text)
        if rules.STRING in operand.kinds:
            return
        decided = _decided(operand, as_string, "=", semantics, "like")
        if decided is None:
            return
        outcome = decided[1]
        if node.negated and outcome in ("always true", "always false"):
            outcome = "always false" if outcome == "always true" else "always true"
        self.note(_start(node.operand), f"{to_sql(node)} is {outcome}: LIKE reads strings, "
                                        f"and {operand.words} is never one")

    # --- the filter as a whole ---

    def conditions(self, tree: ast.Node, text: str) -> None:
        """Values where a condition belongs: the whole filter, and the operands
        of AND, OR and NOT."""
        file_name = looks_like_file_name(text)
        hint = f"did you forget the filter? {text.strip()!r} looks like a file name"
        stack = [(tree, True)]
        while stack:
            node, root = stack.pop()
            node = _body(node)
            if isinstance(node, (ast.And, ast.Or)):
                stack.extend((item, False) for item in reversed(node.items))
                continue
            if isinstance(node, ast.Not):
                stack.append((node.operand, False))
                continue
            what = _not_a_condition(node)
            if what is None:
                if root and file_name and isinstance(node, (ast.Field, ast.MapRef)):
                    self.note(_start(node), f"the filter {to_sql(node)} selects the messages "
                                            f"whose {to_sql(node)} is the boolean TRUE; {hint}")
                continue
            written = to_sql(node)
            if root:
                self.note(_start(node), f"{written} is {what}, not a condition: the filter is "
                                        "always unknown, so no message matches"
                                        + (f"; {hint}" if file_name else ""))
            else:
                self.note(_start(node), f"{written} is {what}, not a condition: it is never "
                                        "true (always unknown)")

    def constant(self, tree: ast.Node, folded: ast.Node | None) -> None:
        """A filter that reads no field and folds to FALSE or NULL."""
        written, value = _body(tree), _body(folded) if folded is not None else None
        if isinstance(written, ast.Literal) or not isinstance(value, ast.Literal) or \
                value.value is True:
            return
        outcome = "always false" if value.value is False else "always unknown"
        self.note(_start(written), f"{to_sql(written)} is {outcome}: it folds to the constant "
                                   f"{to_sql(value)}, the same for every message, so no message "
                                   "matches")

    def pattern(self, node: ast.Like, pattern: ast.Literal) -> None:
        """A pattern with no wildcard, or nothing but ``%`` (one written with an
        ESCAPE shows its author knows the wildcards: not flagged)."""
        try:
            segments = segments_of(pattern.value, None, self.dialect.semantics.like_escapes)
        except PatternError:
            return
        operand = to_sql(node.operand)
        if len(segments) == 1 and None not in segments[0]:
            equal = "<>" if node.negated else "="
            self.note(pattern.offset, f"LIKE {to_sql(pattern)} has no wildcard (% or _): it "
                                      f"means {operand} {equal} {to_sql(pattern)}")
        elif not any(segments):
            verdict = "false" if node.negated else "true"
            self.note(pattern.offset, f"{to_sql(node)} is {verdict} for every string: "
                                      f"to test that {operand} is present, write "
                                      f"{operand} IS NOT NULL")


# --- values where a condition belongs ----------------------------------------------------

_FILE_NAME = re.compile(r"(?:[\w~.-]+/)*[\w~-][\w.~-]*\.([A-Za-z][A-Za-z0-9]{0,7})")
_FILE_EXTENSIONS = frozenset({
    "jsonl", "json", "ndjson", "amqp", "parquet", "pq", "arrow", "ipc", "feather", "avro",
    "csv", "tsv", "txt", "sql", "bin", "dat", "log", "gz", "zst", "bz2", "xz"})


def looks_like_file_name(text: str) -> bool:
    """Is a filter's whole text a file name (``examples/orders.jsonl``,
    ``orders.amqp``): a path with a file extension, or a name with the
    extension of a message, table or text file?"""
    found = _FILE_NAME.fullmatch(text.strip())
    return found is not None and ("/" in text or found.group(1).lower() in _FILE_EXTENSIONS)


def _not_a_condition(node: ast.Node) -> str | None:
    """What ``node`` is when its value can never be a boolean (so, as a
    condition, never true), else None."""
    if isinstance(node, ast.Literal):
        if node.typ in ("bool", "null"):
            return None
        return _TYPE_WORDS.get(node.typ, "a constant") + " constant"
    if isinstance(node, ast.Binary) or (isinstance(node, ast.Unary) and node.op == "-"):
        return "an arithmetic expression"   # (a unary + in jms passes a boolean through)
    if isinstance(node, ast.Unary):
        return None
    if isinstance(node, ast.Field) and node.section in ("header", "properties"):
        from .runtime.property import FIELD_TYPES
        kinds = FIELD_TYPES[node.section].get(node.key)
        if not kinds or "bool" in kinds:
            return None
        return "a field of type " + " or ".join(kinds)
    if isinstance(node, ast.PREDICATE_NODES) or node.typ in ("bool", "any", "null"):
        return None
    return _TYPE_WORDS.get(node.typ, f"of type {node.typ}")


def _body(node: ast.Node) -> ast.Node:
    while isinstance(node, ast.Scope):
        node = node.body
    return node


def _start(node: ast.Node) -> int:
    """Where an operand begins in the text (a binary node's offset is its operator)."""
    while isinstance(node, (ast.Binary, ast.Compare)):
        node = node.left
    while isinstance(node, ast.MapRef):
        node = node.base
    return node.offset


__all__ = ["LintWarning", "Warning", "lint", "looks_like_file_name", "sql_texts"]
