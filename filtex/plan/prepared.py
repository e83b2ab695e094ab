"""A filter's plan, made once per filter and shared by every batch engine.

The batch engine (``arrow/``) lowers it to kernel arrays, Spark (``spark/``)
to Column expressions; both get it from ``prepared(flt)``, kept as long as the
filter lives."""
from __future__ import annotations

import threading
import weakref
from typing import Any

import numpy as np

from ..cache import BoundedCache
from ..dialects import AMQP
from ..limits import DEFAULT_LIMITS
from .atoms import TagPlan, plan_tags
from .arith import operand_tags
from .oracle import CompiledAtom
from ..table.schema import columns_for
from .skeleton import Plan, fields_read, plan

MAX_ATOMS = 48
"""Past this many atoms a filter is evaluated row by row: numba's compile time
grows with the kernel, and such filters are rare."""


class PreparedPlan:
    """What a filter needs for batches, made once per filter: its plan (or why
    it has none), each atom compiled by the row engine (``oracle``), the
    operand tags each arithmetic atom is exact on, and the atoms' decisions per
    set of tags present (``tag_plan``, a bounded cache)."""

    def __init__(self, flt: Any) -> None:
        self.plan: Plan = plan(flt.tree, AMQP.semantics) if flt.tree is not None else \
            Plan(None, (), "the filter has no checked tree")
        if self.plan.shape is not None and len(self.plan.atoms) > MAX_ATOMS:
            self.plan = Plan(None, (), f"more than {MAX_ATOMS} predicates")
        self.columns = _columns(flt.tree)
        limits = flt.options.get("limits", DEFAULT_LIMITS)
        self.atoms = [CompiledAtom(a, limits) for a in self.plan.atoms]
        self.operand_tags: dict[int, np.ndarray] = {}   # arithmetic atoms: tags it computes
        for index, compiled in enumerate(self.atoms):
            form = compiled.atom.arith
            if form is None:
                continue
            tags = operand_tags(form, compiled.atom.semantics)
            ok = np.zeros(256, np.uint8)
            ok[sorted(tags)] = 1
            self.operand_tags[index] = ok
        self.tag_plans: dict[tuple[Any, ...], TagPlan] = {}
        self.learned: dict[tuple[Any, ...], dict[Any, int]] = {}
        """Per (atom, tag, receiving connection): the outcomes of the values
        answered one by one (``DATA`` tags) that batches have met so far, at
        most ``atoms.MAX_DISTINCT`` each, so later batches look them up."""
        self.tables = BoundedCache(64, 64 << 20, lambda table: int(table.nbytes))
        """Tables batch engines derive from an atom and a batch's data, keyed by
        the data's content (a string table per dictionary): batches that share
        a dictionary, and a table evaluated again, reuse them."""
        self.walks: dict[Any, Any] = {}
        """The filter lowered for the walking kernel (``arrow/walk.py``), per
        receiving connection (False: it has no byte-level form)."""
        self.lock = threading.Lock()

    def tag_plan(self, index: int, tags: frozenset[int], rc: Any) -> TagPlan:
        try:
            key = (index, tags, rc)
            hash(key)
        except TypeError:
            return plan_tags(self.atoms[index], set(tags), rc)
        found = self.tag_plans.get(key)
        if found is None:
            found = plan_tags(self.atoms[index], set(tags), rc)
            with self.lock:
                if len(self.tag_plans) > 1024:
                    self.tag_plans.clear()
                self.tag_plans[key] = found
        return found


_prepared: "weakref.WeakKeyDictionary[Any, PreparedPlan]" = weakref.WeakKeyDictionary()
_prepared_lock = threading.Lock()


def prepared(flt: Any) -> PreparedPlan:
    found = _prepared.get(flt)
    if found is None:
        found = PreparedPlan(flt)
        with _prepared_lock:
            _prepared[flt] = found
    return found


def _columns(tree: Any) -> dict[str, set[str] | None] | None:
    """The message-table columns the filter's row views need (None: all)."""
    if tree is None:
        return None
    try:
        return columns_for(fields_read(tree))
    except RecursionError:
        return None
