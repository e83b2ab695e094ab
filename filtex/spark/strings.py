"""String predicates as Spark SQL, used for a tag only after the per-message
engine, run on probe strings, agreed with what the expression answers.

A predicate whose answer is plain text matching (``strings.text_form``:
``=``/``<>``/ordering by code point, ``IN``, ``LIKE`` under the dialect's escape
rule) becomes ``=``, ``IN``, ``startswith``/``endswith``/``contains``, a
linear ``locate`` chain or a LIKE with an explicit escape; probes around its
constants and the strings where engines differ (case, combining marks, astral
and halfwidth characters, newlines) must give the per-message engine's answers.
"""
from __future__ import annotations

from typing import Any, Callable

from ..plan import atoms as A
from ..plan import intervals
from ..plan.text import TextForm, like_pattern, text_form
from ..functions import REGISTRY
from ..tree import ast
from . import sql as S
from .cases import Cases


def probe_strings(form: TextForm, numbers: Any = None) -> list[str]:
    """Strings around a text form's constants, and the ones where engines differ
    (case, combining marks, astral and halfwidth characters, newlines)."""
    texts: list[str] = []
    if form.kind == "like":
        for fill, one in (("", "x"), ("zz", "\n"), ("%", "\U0001F600"), ("_", "_")):
            texts.append(fill.join("".join(one if c is None else c for c in seg)
                                   for seg in form.arg))
        texts.extend("".join(c for c in seg if c is not None) for seg in form.arg)
    elif form.kind == "cmp":
        texts.append(form.arg[1])
    else:
        texts.extend(form.arg[:32])
    for c in (intervals.constants(numbers) if numbers is not None else []):
        texts.extend({str(c), repr(c)})
    found = {"0", "1", "-1", "1.5", "1e3", "NaN", "true", "", " ", "a", "A", "z", "\n", "\uFF61", "\U0001F600", "\u00e9", "e\u0301", "%", "_",
             "\\"}
    for t in texts:
        found.update({t, t + "x", "x" + t, t[:-1], t[1:], t.upper(), t.lower(), t.swapcase(),
                      t + "\n", t + "\U0001F600", t + "\x00"})
    return sorted(found)


def _like(segments: list, s: str) -> bool:
    """A LIKE pattern's segments (between ``%``; None is ``_``, any one code point)
    match all of ``s``: the first at the start, the last at the end, the others
    leftmost in order (greedy is exact for such patterns; a backtracking regex
    is exponential in the number of ``%``)."""
    def at(seg: list, i: int) -> bool:
        return i + len(seg) <= len(s) and all(c is None or s[i + k] == c
                                              for k, c in enumerate(seg))
    first = segments[0]
    if len(segments) == 1:
        return len(s) == len(first) and at(first, 0)
    last = segments[-1]
    pos, end = len(first), len(s) - len(last)
    if end < pos or not at(first, 0) or not at(last, end):
        return False
    for seg in segments[1:-1]:
        while pos + len(seg) <= end and not at(seg, pos):
            pos += 1
        if pos + len(seg) > end:
            return False
        pos += len(seg)
    return True


def _model(form: TextForm) -> Callable[[str], bool]:
    """What the Spark expression answers for a string (binary, code-point order)."""
    if form.kind == "like":
        segments = form.arg
        test = lambda s: _like(segments, s)   # noqa: E731
    elif form.kind == "cmp":
        op, text = form.arg
        test = {"=": lambda s: s == text, "<>": lambda s: s != text,
                "<": lambda s: s < text, "<=": lambda s: s <= text,
                ">": lambda s: s > text, ">=": lambda s: s >= text}[op]
    else:
        members = set(form.arg)
        test = lambda s: s in members   # noqa: E731
    return (lambda s: not test(s)) if form.negate else test


def _spark_text(form: TextForm, child: str) -> str:
    if form.kind == "in":
        test = f"{child} IN ({', '.join(S.string(t) for t in form.arg)})"
    elif form.kind == "cmp":
        op, text = form.arg
        test = f"{child} {op} {S.string(text)}"
    else:
        test = _like_text(form.arg, child)
    return f"NOT ({test})" if form.negate else f"({test})"


def _like_text(segments: list, child: str) -> str:
    """LIKE as Spark SQL that runs in linear time. Spark's LIKE is a backtracking
    regular expression (``'%a%a%a%b'`` over a long string of ``a`` never ends),
    so it is used only where at most one ``%`` can backtrack; plain segments are
    ``=``/``startswith``/``endswith``/``contains``, and the middle segments of a
    longer pattern are found leftmost, in order, by ``locate`` (greedy is exact).
    A middle ``_`` in such a pattern has no linear form (``NotWritable``)."""
    def plain(seg: list) -> bool:
        return all(c is not None for c in seg)

    def text(seg: list) -> str:
        return S.string("".join(seg))

    def like(pattern: list) -> str:   # an explicit escape: Spark's default is the backslash
        return f"{child} LIKE {S.string(like_pattern(pattern, '!'))} ESCAPE '!'"
    if len(segments) == 1:
        return f"{child} = {text(segments[0])}" if plain(segments[0]) else like(segments)
    first, last = segments[0], segments[-1]
    middle = [seg for seg in segments[1:-1] if seg]
    if not all(plain(seg) for seg in segments) and (
            len(segments) == 2 or (len(segments) == 3 and not last)):
        return like(segments)   # 'x%y', 'x%y%': only one % can backtrack
    tests = []
    if first:
        tests.append(f"startswith({child}, {text(first)})" if plain(first) else like([first, []]))
    if last:
        tests.append(f"endswith({child}, {text(last)})" if plain(last) else like([[], last]))
    if first and last:
        tests.append(f"char_length({child}) >= {len(first) + len(last)}")
    if len(middle) == 1 and not first and not last and plain(middle[0]):
        tests.append(f"contains({child}, {text(middle[0])})")
    elif middle:
        if not all(plain(seg) for seg in middle):
            raise S.NotWritable("a LIKE pattern with '_' between several '%' has no linear "
                                "Spark form")
        found = (f"aggregate(array({', '.join(text(seg) for seg in middle)}), "
                 f"{len(first) + 1}, (filtex_p, filtex_m) -> CASE WHEN filtex_p = 0 THEN 0 "
                 f"WHEN locate(filtex_m, {child}, filtex_p) = 0 THEN 0 "
                 f"ELSE locate(filtex_m, {child}, filtex_p) + char_length(filtex_m) END)")
        tests.append(f"{found} BETWEEN 1 AND char_length({child}) - {len(last) - 1}")
    return S.all_of(tests) if tests else "TRUE"


def _implied_text(form: TextForm, pushable: str | None) -> str | None:
    """A condition every string making the form TRUE satisfies, Parquet-pushable."""
    if form.negate or pushable is None:
        return None
    if form.kind == "in":
        return f"{pushable} IN ({', '.join(S.string(t) for t in form.arg)})"
    if form.kind == "cmp":
        op, text = form.arg
        return None if op == "<>" else f"{pushable} {op} {S.string(text)}"
    prefix = ""
    for c in form.arg[0]:
        if c is None:
            break
        prefix += c
    if len(form.arg) == 1 and len(prefix) == len(form.arg[0]):
        return f"{pushable} = {S.string(prefix)}"
    return f"startswith({pushable}, {S.string(prefix)})" if prefix else None


def string_answers(cases: Cases, compiled: Any, tag: int, child: Any, rc: Any,
                   pushable: Any) -> bool:
    """The tag's string answers natively, if the engine agrees with the text form
    (or gives one answer for every probe: ``IS NULL``, a type refusal, a
    function with arguments it refuses)."""
    cls = A.STRING_TAGS[tag]
    node = compiled.atom.node
    form, chain = text_form(node, compiled.atom.semantics) or property_form(node), ()
    if form is None and (found := function_form(node, compiled.atom.semantics)) is not None:
        form, chain = found
    probes = probe_strings(form or TextForm("in", [], False), compiled.numeric)
    cased = any(REGISTRY[name].spark.ascii_only for name, _ in chain)  # type: ignore[union-attr]
    if cased:   # Java's and Python's case mappings differ beyond ASCII: those rows go back
        probes = [p for p in probes if p.isascii()]
    if tag == A.CHAR:
        probes = [p for p in probes if len(p) == 1]
    answers = [compiled.value_outcome(p if cls is str else cls(p), rc) for p in probes]
    if len(set(answers)) == 1 and (A._type_only(node) or compiled.numeric is not None
                                   or (chain and answers[0] in (A.FAIL, A.UNKNOWN))):
        cases.const(tag, answers[0])
        return True
    if form is None:
        return False
    model = _model(form)
    if any(answer != (A.TRUE if model(_apply(chain, p)) else A.FALSE)
           for p, answer in zip(probes, answers)):
        if len(set(answers)) == 1 and answers[0] in (A.FAIL, A.UNKNOWN):
            cases.const(tag, answers[0])   # the type refused (jms: a char is no string)
            return True
        return False
    try:
        text = _spark_text(form, _spark_chain(chain, child))
        implied = None if chain else _implied_text(form, pushable)
    except S.NotWritable:
        return False
    cases.answer(tag, text)
    back = (f"({cases.field.tag_test(A.STRING_TAGS)} AND octet_length({child}) <> "
            f"char_length({child}))")
    if cased and back not in cases.backs:
        cases.backs.append(back)
    if implied is None:
        cases.implied_exact = False
    else:
        cases.implied.append(implied)
    return True


def property_form(node: ast.Node) -> TextForm | None:
    """A property-filter entry with a string reference as plain text matching:
    equality, ``&p:`` a prefix, ``&s:`` a suffix (the probes check the dialect's
    own rule, RabbitMQ's byte strings included)."""
    if not isinstance(node, ast.PropertyMatch) or type(node.ref) is not str:
        return None
    from ..runtime.property import string_rule
    from ..errors import FilterError
    try:
        rule, text = string_rule(node.ref)
    except FilterError:
        return None
    if rule == "eq":
        return TextForm("cmp", ("=", text), False)
    if rule == "prefix":
        return TextForm("like", [list(text), []], False)
    if rule == "suffix":
        return TextForm("like", [[], list(text)], False)
    return None


# --- functions of the field ---------------------------------------------------------------

def function_form(node: ast.Node, semantics: Any) -> tuple[TextForm, tuple] | None:
    """The text form of a predicate on string functions of the field
    (``LOWER(x) = 'a'``, ``LEFT(sku, 3) IN (...)``), and the functions, innermost
    first, each (name, constant arguments); None for anything else (a language
    tag, arguments that are not integer constants)."""
    negate = 0
    while isinstance(node, ast.Not):
        node, negate = node.operand, negate + 1
    if isinstance(node, ast.Compare):
        operand = node.right if isinstance(node.left, ast.Literal) else node.left
    elif isinstance(node, (ast.Like, ast.In)):
        operand = node.operand
    else:
        return None
    chain: list = []
    inner = operand
    while isinstance(inner, ast.Call):
        function = REGISTRY.get(inner.name)
        args = inner.args[1:]
        if function is None or function.spark is None or inner.typ != "string" \
                or not all(isinstance(a, ast.Literal) for a in args):
            return None
        constants = tuple(a.value for a in args)
        if not function.spark.accepts(constants):
            return None
        chain.append((inner.name, constants))
        inner = inner.args[0]
    if not chain or not isinstance(inner, ast.Field):
        return None
    if isinstance(node, ast.Compare):
        plain = node.with_(**{"right" if node.right is operand else "left": inner})
    else:
        plain = node.with_(operand=inner)
    for _ in range(negate):
        plain = ast.Not(operand=plain)
    form = text_form(plain, semantics)
    return None if form is None else (form, tuple(reversed(chain)))


def _apply(chain: tuple, text: str) -> str:
    """What Spark's functions give for ``text`` (the Python model the probes check)."""
    for name, args in chain:
        text = REGISTRY[name].spark.model(text, args)  # type: ignore[union-attr]
    return text


def _spark_chain(chain: tuple, child: str) -> str:
    for name, args in chain:
        if any(not -2**31 <= a < 2**31 for a in args):
            raise S.NotWritable(f"{name} argument out of Spark's int range")
        child = REGISTRY[name].spark.sql(child, args)  # type: ignore[union-attr]
    return child
