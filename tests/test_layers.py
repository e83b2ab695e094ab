"""The import graph of filtex: no circle.

Every import statement counts, at the top of a module, inside a function, or
for type checkers only (as import-linter counts them): a circle of any kind
means two modules each need the other's meaning. Circles are found at module
level and at package level (a subpackage, or a top-level module, as one unit).
"""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "filtex"

def _modules() -> dict[str, Path]:
    found = {}
    for path in ROOT.rglob("*.py"):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def import_edges() -> dict[str, set[str]]:
    """module -> the filtex modules it imports (every import statement)."""
    modules = _modules()
    edges: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - (node.level - 1)]
                    target = ".".join(base + ([node.module] if node.module else []))
                else:
                    target = node.module or ""
                for alias in node.names:
                    sub = f"{target}.{alias.name}"
                    targets.add(sub if sub in modules else target)
        edges[name] = {t for t in targets if t in modules and t != name}
    return edges


def circles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one node (Tarjan's
    algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def _unit(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and (ROOT / parts[1]).is_dir():
        return f"filtex.{parts[1]}"
    return module


def package_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, targets in edges.items():
        for target in targets:
            if _unit(module) != _unit(target):
                graph.setdefault(_unit(module), set()).add(_unit(target))
    return graph


def test_no_module_circle():
    assert circles(import_edges()) == []


def test_no_package_circle():
    assert circles(package_edges(import_edges())) == []


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}, "f": {"d"}}
    assert circles(graph) == [{"a", "b", "c"}]
    edges = import_edges()
    assert "filtex.codegen.loader" in edges["filtex.row"]
    assert "filtex.arrow.engine" in edges["filtex.filter"]   # a type-only import counts


def _engine(target: str, package: str) -> bool:
    return target == package or target.startswith(package + ".")


ROW_ENGINE_IMPORTERS = {
    "filtex": "re-exports Explanation (type checkers only)",
    "filtex.compiler": "the front door: the one place a checked tree becomes a Filter",
    "filtex.filter": "Filter.explain runs the row engine's explainer",
    "filtex.plan.oracle": "the one module that runs the row engine on a value",
}


def test_the_row_engine_is_reached_through_the_front_door_and_the_oracle_only():
    """Engines and tools do not build or run row functions themselves: a filter's
    functions come from the front door, answers for values from plan/oracle."""
    importers = {module for module, targets in import_edges().items()
                 if not _engine(module, "filtex.row")
                 and any(_engine(t, "filtex.row") for t in targets)}
    assert importers == set(ROW_ENGINE_IMPORTERS)


def test_spark_the_index_and_lint_read_the_plan_not_the_batch_engine():
    """Spark, the subscription index and the linter import no module of the row
    or the batch engine. One edge is the design: Spark's Arrow UDF is the
    batch engine run on Spark's workers (``filtex.arrow.evaluate``, its public
    entry), for the rows native expressions cannot answer exactly."""
    allowed = {("filtex.spark.udf", "filtex.arrow")}
    found = {(module, target) for module, targets in import_edges().items()
             if _engine(module, "filtex.spark") or _engine(module, "filtex.subscriptions")
             or module == "filtex.lint"
             for target in targets
             if _engine(target, "filtex.row") or _engine(target, "filtex.arrow")}
    assert found == allowed


# --- the pipeline's direction ---------------------------------------------------------------

LAYERS = [
    ("inputs and guarantees (at the side)", {
        "filtex._version", "filtex.errors", "filtex.names", "filtex.limits", "filtex.cache",
        "filtex.footprint", "filtex.quoting", "filtex.message", "filtex.accessors",
        "filtex.forms", "filtex.proton_message", "filtex.proton_copies", "filtex.typed_json",
        "filtex.files",
        "filtex.amqp", "filtex.table", "filtex.spark_io", "filtex.runtime", "filtex.codegen",
        "filtex.tree", "filtex.functions", "filtex.dialects", "filtex.filter"}),
    ("front ends", {"filtex.sql", "filtex.described"}),
    ("the row engine", {"filtex.row"}),
    ("the front door", {"filtex.compiler"}),
    ("the plan", {"filtex.plan"}),
    ("engines", {"filtex.arrow", "filtex.spark", "filtex.subscriptions"}),
    ("tools", {"filtex.lint", "filtex.endpoint", "filtex.cli", "filtex", "filtex.__main__"}),
]
"""Units (packages, top-level modules) from the bottom of the pipeline to the top.
``filter.py`` is at the side: it is what the front door makes and every stage takes."""

CONVENIENCES = {
    ("filtex.filter", "filtex.arrow"): "Filter.evaluate_batch and filter_table (lazy)",
    ("filtex.filter", "filtex.row"): "Filter.explain (lazy)",
}
"""The imports that point up: a Filter's methods that run an engine on it."""


def test_every_import_points_down_the_pipeline():
    """A unit imports only its own layer's and lower layers' units (the other
    tests keep a layer free of circles). A new package must be placed here."""
    rank = {unit: index for index, (_, units) in enumerate(LAYERS) for unit in units}
    graph = package_edges(import_edges())
    units = {_unit(m) for m in import_edges()}
    assert units <= set(rank), f"place these in LAYERS: {sorted(units - set(rank))}"
    upward = sorted((unit, target) for unit, targets in graph.items() for target in targets
                    if rank[target] > rank[unit] and (unit, target) not in CONVENIENCES)
    assert upward == [], f"imports that point up the pipeline: {upward}"
    used = {(u, t) for u, targets in graph.items() for t in targets}
    assert set(CONVENIENCES) <= used, "a convenience that is gone: take it out"
