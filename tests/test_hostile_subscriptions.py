"""Issue 23, hostile inputs to ``filtex.Subscriptions``: whatever object a
caller hands the set, none of its methods decides anything, and every failure
leaves the set as it was.

- A filter, or a filter set's mapping, is a filter's definition (perhaps a
  remote client's): only ``FilterError`` leaves ``add``, whatever the object's
  ``__contains__``, ``__iter__``, ``__len__``, ``__getitem__``, ``keys``,
  ``__bool__``, ``__eq__``, ``__hash__``, ``__str__`` or ``__class__`` do.
- A name or a dialect that is not a str is the calling program's error: a
  ``TypeError`` raised before any of the object's methods runs; a str subclass
  is read as its characters (its own methods never run).
- The constructor's container is the program's too: a ``TypeError`` naming
  what is accepted when it cannot be read.
- ``match`` and ``evaluate_all`` give the one-by-one answer for message values
  whose class cannot even be hashed, and for a hostile receiving connection.
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Mapping

import pytest

import filtex
from filtex import FilterError, Message, Subscriptions

ACCEPTED_DIALECTS = "dialect is one of 'amqp', 'jms', 'rabbitmq'"
DUNDERS = ("__contains__", "__iter__", "__len__", "__getitem__", "keys", "items", "values",
           "get", "__bool__", "__eq__", "__ne__", "__hash__", "__str__", "__repr__", "__format__")

ran: list[str] = []   # the hostile methods that ran (none may, where it says so)


class Trap(Exception):
    """What a hostile method raises."""


def _raising(name: str):
    def method(self, *args, **kwargs):
        ran.append(name)
        raise Trap(name)
    return method


def _lying(name: str):
    answers = {"__contains__": True, "__iter__": iter(["described", "code", "x"]),
               "__len__": 0, "__getitem__": "a = 1", "keys": ["x"], "items": [("x", "a = 1")],
               "values": ["a = 1"], "get": "a = 1", "__bool__": False, "__eq__": True,
               "__ne__": False, "__hash__": hash("described"), "__str__": "amqp",
               "__repr__": "'amqp'", "__format__": "amqp"}

    def method(self, *args, **kwargs):
        ran.append(name)
        answer = answers[name]
        return iter(["described", "code", "x"]) if name == "__iter__" else answer
    return method


def _claims(cls: type):
    def get(self):
        ran.append("__class__")
        return cls
    return property(get)


class ValidSet:
    """A one-member filter set's mapping methods."""

    def __getitem__(self, key):
        if key != "f":
            raise KeyError(key)
        return ("amqp:sql-filter", "a = 1")

    def __iter__(self):
        return iter(["f"])

    def __len__(self):
        return 1


def hostile_class(base: type, only: str | None = None, lie: bool = False,
                  claims: type | None = None) -> type:
    """A subclass of ``base`` whose methods (all, or ``only`` one) raise ``Trap``
    or, with ``lie``, answer falsely; with ``claims``, its ``__class__`` says so.
    A ``Mapping`` holds a valid one-member filter set but for those methods."""
    make = _lying if lie else _raising
    names = DUNDERS if only is None else (only,)
    namespace = {name: make(name) for name in names if not (base is str and name == "__iter__"
                                                            and lie)}
    if claims is not None:
        namespace["__class__"] = _claims(claims)
    bases = (ValidSet, Mapping) if base is Mapping else (base,)
    return type(f"Hostile{base.__name__.title()}", bases, namespace)


def hostile_objects() -> list:
    """Non-str objects, raising and lying, some claiming to be something else."""
    found = []
    for lie in (False, True):
        for claims in (None, dict, str, filtex.Filter, tuple):
            found.append(hostile_class(object, lie=lie, claims=claims)())
        found.append(hostile_class(tuple, lie=lie)(("amqp:sql-filter", "a = 1")))
        found.append(hostile_class(list, lie=lie)(["amqp:sql-filter", "a = 1"]))
    return found


MESSAGES = [Message(application_properties={"a": 1, "region": "EU", "total": 150}),
            Message(application_properties={"a": "x", "region": "US", "total": 5.5}),
            Message(properties={"subject": "stock.ibm"}, application_properties={"total": 7})]


def a_set() -> Subscriptions:
    return Subscriptions({"eu": "region = 'EU'", "big": "total > 100", "any": "a IS NOT NULL",
                          "stock": ("apache.org:legacy-amqp-topic-binding:string", "stock.#")})


def state(subs: Subscriptions) -> tuple:
    """Everything a change could alter, as a caller and the indexes see it."""
    return (list(subs), {name: subs[name] for name in subs}, subs.stats(),
            [subs.match(m) for m in MESSAGES], [subs.evaluate_all(m) for m in MESSAGES],
            dict(subs._offered), dict(subs._distinct), dict(subs._plain), dict(subs._always))


# --- names -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", hostile_objects(), ids=lambda o: type(o).__name__)
def test_a_name_that_is_no_str_is_refused_before_its_methods_run(name):
    subs = a_set()
    before = state(subs)
    ran.clear()
    for call in (lambda: subs.add(name, "a = 1"), lambda: subs.remove(name),
                 lambda: subs[name]):
        with pytest.raises(TypeError, match="a subscription is named by a str, not"):
            call()
    assert (name in subs) is False
    assert ran == []
    assert state(subs) == before


def test_a_str_subclass_name_is_its_characters():
    """Its own __hash__, __eq__, __str__... never run: the set keeps an exact str."""
    cls = hostile_class(str)
    subs = a_set()
    ran.clear()
    subs.add(cls("mine"), "a = 1")
    assert cls("mine") in subs and type(list(subs)[-1]) is str
    assert subs[cls("mine")] is subs["mine"]
    assert subs.match(MESSAGES[0]) == ["eu", "big", "any", "mine"]
    subs.remove(cls("mine"))
    assert "mine" not in subs
    assert ran == []


# --- dialects --------------------------------------------------------------------------------

@pytest.mark.parametrize("dialect", hostile_objects(), ids=lambda o: type(o).__name__)
def test_a_dialect_that_is_no_str_is_refused_before_its_methods_run(dialect):
    subs = a_set()
    before = state(subs)
    ran.clear()
    for flt in ("a = 1", subs["eu"], ("amqp:sql-filter", "a = 1"), {"f": "a = 1"}):
        with pytest.raises(TypeError, match=ACCEPTED_DIALECTS):
            subs.add("new", flt, dialect)
    with pytest.raises(TypeError, match=ACCEPTED_DIALECTS):
        Subscriptions({"a": "a = 1"}, dialect=dialect)
    assert ran == []
    assert state(subs) == before


def test_a_str_subclass_dialect_is_its_characters():
    cls = hostile_class(str)
    ran.clear()
    subs = Subscriptions({"order": "JMSType = 'order'"}, dialect=cls("jms"))
    assert subs.dialect == "jms" and type(subs.dialect) is str
    assert subs.add("refund", "JMSType = 'refund'", cls("jms")).dialect == "jms"
    assert subs.match(Message(properties={"subject": "order"})) == ["order"]
    assert ran == []


def test_an_unknown_dialect_name_is_a_filter_error_whatever_the_filter():
    """Also with a compiled Filter, which add used to take with any dialect name."""
    subs = a_set()
    before = state(subs)
    for flt in ("a = 1", subs["eu"]):
        for name in ("sql92", hostile_class(str)("sql92")):
            with pytest.raises(FilterError) as raised:
                subs.add("new", flt, name)
            assert raised.value.condition == "amqp:not-implemented"
    assert state(subs) == before


# --- filters and filter sets: definitions ------------------------------------------------------

@pytest.mark.parametrize("flt", hostile_objects(), ids=lambda o: type(o).__name__)
@pytest.mark.parametrize("name", ["new", "eu"])   # a new name, and a replacement
def test_a_hostile_filter_object_is_a_filter_error_and_changes_nothing(flt, name):
    subs = a_set()
    before = state(subs)
    with pytest.raises(FilterError):
        subs.add(name, flt)
    assert state(subs) == before


def _mappings() -> list:
    """Filter-set mappings whose every method in turn raises or lies, as
    Mapping and dict subclasses, holding a valid set."""
    found = []
    for base in (Mapping, dict):
        for only in ("__contains__", "__iter__", "__len__", "__getitem__", "keys", "items",
                     "__bool__", "__eq__", "__hash__", "__str__"):
            for lie in (False, True):
                cls = hostile_class(base, only=only, lie=lie)
                found.append(cls() if base is Mapping else cls({"f": ("amqp:sql-filter", "a = 1")}))
    return found

@pytest.mark.parametrize("mapping", _mappings(),
                         ids=lambda m: f"{type(m).__mro__[-2].__name__}-"
                                       f"{[k for k in vars(type(m)) if k in DUNDERS][0]}")
def test_a_hostile_filter_set_is_a_filter_error_or_what_it_holds(mapping):
    """A raising or lying mapping: only FilterError (the set unchanged), or the
    filter set it holds, compiled from one reading."""
    subs = a_set()
    before = state(subs)
    try:
        flt = subs.add("new", mapping)
    except FilterError:
        assert state(subs) == before
    else:
        assert flt.kind == "filter-set"
        assert subs.match(MESSAGES[0]) == [*before[3][0], "new"]


def test_a_mapping_that_raises_in_contains_is_a_filter_error():
    """The reproducer of issue 23 item 7: add read ``"described" in flt`` unguarded."""
    cls = hostile_class(Mapping, only="__contains__")
    subs = a_set()
    before = state(subs)
    with pytest.raises(FilterError) as raised:
        subs.add("eu", cls())
    assert raised.value.condition == "amqp:internal-error"
    assert state(subs) == before


def test_a_dict_key_whose_eq_raises_is_a_filter_error():
    """An exact dict whose key hashes as 'described' and cannot be compared."""
    key = hostile_class(object, only="__eq__")()
    type(key).__hash__ = lambda self: hash("described")
    subs = a_set()
    before = state(subs)
    with pytest.raises(FilterError):
        subs.add("new", {key: ("amqp:sql-filter", "a = 1")})
    assert state(subs) == before


class _Lengthless(Mapping):
    """Says it is empty; holds ``size`` filters (or never ends, for None)."""

    def __init__(self, size: int | None) -> None:
        self.size = size

    def __len__(self) -> int:
        return 0

    def __iter__(self):
        names = itertools.count() if self.size is None else range(self.size)
        return (f"f{i}" for i in names)

    def __getitem__(self, key):
        if not key.startswith("f"):
            raise KeyError(key)
        return ("amqp:sql-filter", "a = 1")


@pytest.mark.parametrize("size", [3 * filtex.Limits().max_set_entries, None])
def test_a_filter_set_whose_len_lies_is_held_to_the_limit(size):
    """compile_filter_set checked len() and then read every entry: a mapping
    saying it is empty passed max_set_entries, and one that never ends hung."""
    subs = a_set()
    before = state(subs)
    started = time.monotonic()
    for call in (lambda: filtex.compile_filter_set(_Lengthless(size)),
                 lambda: subs.add("new", _Lengthless(size))):
        with pytest.raises(FilterError) as raised:
            call()
        assert raised.value.condition == "amqp:resource-limit-exceeded"
        assert "max_set_entries" in str(raised.value)
    assert time.monotonic() - started < 30   # it used to never return
    assert state(subs) == before


def test_a_str_subclass_filter_is_its_characters():
    cls = hostile_class(str)
    subs = a_set()
    ran.clear()
    flt = subs.add("new", cls("a = 1"))
    assert type(flt.text) is str and flt.text == "a = 1"
    assert subs.match(MESSAGES[0])[-1] == "new"
    assert ran == []


# --- the constructor's container: the program's ---------------------------------------------

def _containers() -> list:
    found = []
    for only in ("items", "__iter__", "__getitem__", "keys", "__len__"):
        cls = hostile_class(dict, only=only)
        found.append(cls({"a": "a = 1"}))
    found.append(hostile_class(Mapping, only="__iter__")())
    found.append(hostile_class(list, only="__iter__")([("a", "a = 1")]))

    def broken():
        yield ("a", "a = 1")
        raise Trap("__next__")
    found.append(broken())
    return found


@pytest.mark.parametrize("filters", _containers(), ids=lambda c: type(c).__name__)
def test_a_container_that_cannot_be_read_is_a_type_error(filters):
    try:
        built = Subscriptions(filters)
    except TypeError as error:
        assert not isinstance(error, FilterError)
        assert "Subscriptions takes a mapping of names to filters or an iterable of " \
               "(name, filter) pairs; reading the" in str(error)
    else:   # a method the constructor does not use (dict's __len__, keys)
        assert list(built) == ["a"]


def test_a_container_lying_about_its_class_is_judged_by_its_type():
    ran.clear()
    for claims in (dict, list):
        with pytest.raises(TypeError, match="Subscriptions takes a mapping of names to filters"):
            Subscriptions(hostile_class(object, only="__bool__", claims=claims)())
    pairs = hostile_class(tuple, only="__eq__")(("a", "a = 1"))   # an item: by its type, too
    with pytest.raises(TypeError, match="item 0 is a HostileTuple"):
        Subscriptions([pairs])
    assert ran == []


# --- per message ---------------------------------------------------------------------------------

class _Unhashable(type):
    """A metaclass whose classes cannot be hashed nor compared."""

    def __hash__(cls):
        raise Trap("class __hash__")

    def __eq__(cls, other):
        raise Trap("class __eq__")


class Opaque(metaclass=_Unhashable):
    """A message value: the index cannot even ask what type it is."""


GATED = ["x = 5", "x > 5", "x < 5", "x BETWEEN 1 AND 9", "x = 'a'", "x IN ('a', 'b')",
         "x LIKE 'a%'", "x IS NULL", "x IS NOT NULL", "x = 'a' AND y = 'b'", "y = 'a' AND x = 5",
         "x = 5 OR x = 'a'"]


@pytest.mark.parametrize("dialect", ["amqp", "jms", "rabbitmq"])
def test_values_whose_class_cannot_be_hashed_give_the_one_by_one_answer(dialect):
    """The index hashed type(value) and satisfied() did too: match and
    evaluate_all raised where every filter alone answers."""
    filters = {}
    for i, text in enumerate(GATED):
        try:
            filters[f"s{i}"] = filtex.compile_sql(text, dialect)
        except FilterError:
            pass
    subs = Subscriptions(filters, dialect=dialect)
    for values in ({"x": Opaque(), "y": Opaque()}, {"x": Opaque(), "y": "b"}, {"x": Opaque()},
                   {"x": 5, "y": Opaque()}):
        message = Message(application_properties=values)
        verdicts = {name: flt.evaluate(message) for name, flt in filters.items()}
        assert subs.match(message) == [n for n, v in verdicts.items() if v is True]
        assert subs.evaluate_all(message) == {n: v for n, v in verdicts.items()
                                              if v is not False}


def test_a_hostile_receiving_connection_gives_the_one_by_one_answer():
    subs = a_set()
    subs.add("nl", ("apache.org:no-local-filter:list", []))
    connection = hostile_class(object)()
    message = Message(application_properties={"region": "EU"}, connection="c1")
    alone = {name: subs[name].evaluate(message, connection) for name in subs}
    assert subs.match(message, connection) == [n for n, v in alone.items() if v is True]
    assert subs.evaluate_all(message, connection) == {n: v for n, v in alone.items()
                                                      if v is not False}
