"""String predicates as Spark SQL.

A predicate whose answer for a string or symbol is plain text matching
(``plan/text.py``: ``=``/``<>``/ordering by code point, ``IN``, ``LIKE`` under
the dialect's escape rule, built from the dialect's declared string rules)
becomes ``=``, ``IN``, ``startswith``/``endswith``/``contains``, a linear
``locate`` chain or a LIKE with an explicit escape; string functions of the
field become Spark's (``Function.spark``), the case mappings on ASCII only
(the other rows take the UDF). Nothing is probed when a filter is translated:
``tests/test_spark_native.py`` runs every form against the row engine on
strings where engines differ (case, combining marks, astral and halfwidth
characters, newlines, the pattern characters).
"""
from __future__ import annotations

from typing import Any

from ..plan import atoms as A
from ..plan.text import TextForm, like_pattern, text_form
from ..functions import REGISTRY
from ..tree import ast
from . import sql as S
from .cases import Cases


def _spark_text(form: TextForm, child: str) -> str:
    if form.kind == "in":
        test = f"{child} IN ({', '.join(S.string(t) for t in form.arg)})"
    elif form.kind == "cmp":
        op, text = form.arg
        test = f"{child} {op} {S.string(text)}"
    elif form.single_line is not None:   # one line: a final line feed left out, no other
        line = (f"CASE WHEN endswith({child}, {S.string(chr(10))}) "
                f"THEN substring({child}, 1, char_length({child}) - 1) ELSE {child} END")
        test = S.all_of([f"instr({line}, {S.string(chr(10))}) = 0",
                         f"char_length({line}) <= {form.single_line}",
                         _like_text(form.arg, line)])
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
    if len(form.arg) == 1 and len(prefix) == len(form.arg[0]) and form.single_line is None:
        return f"{pushable} = {S.string(prefix)}"
    return f"startswith({pushable}, {S.string(prefix)})" if prefix else None


def string_answers(cases: Cases, compiled: Any, tag: int, child: Any, pushable: Any) -> bool:
    """The tag's string answers natively, if the atom has a text form (of the field
    or of string functions of it). A char is a one-character string only where
    the dialect says so (``Semantics.char_is_string``); elsewhere the plan's
    declared answers hold, or its rows take the UDF."""
    if tag == A.CHAR and not compiled.atom.semantics.char_is_string:
        return False
    node = compiled.atom.node
    form, chain = text_form(node, compiled.atom.semantics), ()
    if form is None and tag != A.CHAR:   # a property entry reads a char by the dialect the
        form = property_form(node)       # filter was compiled in (RabbitMQ: a number)
    if form is None and (found := function_form(node, compiled.atom.semantics)) is not None:
        form, chain = found
    if form is None:
        return False
    cased = any(REGISTRY[name].spark.ascii_only for name, _ in chain)  # type: ignore[union-attr]
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
    equality, ``&p:`` a prefix, ``&s:`` a suffix (for a string, the same in every
    dialect: RabbitMQ's byte-string prefix of a string is its text's prefix)."""
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


def _spark_chain(chain: tuple, child: str) -> str:
    for name, args in chain:
        if any(not -2**31 <= a < 2**31 for a in args):
            raise S.NotWritable(f"{name} argument out of Spark's int range")
        child = REGISTRY[name].spark.sql(child, args)  # type: ignore[union-attr]
    return child
