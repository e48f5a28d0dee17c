"""No knots: the package's imports form no cycle and never climb from a lower layer to a higher one.

Draw the modules as rooms and their imports as arrows (read with ``ast``: at module level and
inside functions; an ``if TYPE_CHECKING:`` block is skipped, it never runs). Importing
``lgcheckpoint.pregel.runner`` from outside ``pregel/`` also runs ``pregel/__init__.py``, so that
is an arrow too. ``python tests/test_imports.py`` prints every cycle (grouped in knots: modules
that all reach each other) and every upward import, and exits 0 when there are none.
"""

import ast
import sys
from collections import defaultdict
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "lgcheckpoint"

# Bottom first. A module may import from its own layer or any layer below it, never above.
# A name is a module ("types") or a whole package ("checkpoint": every module in it).
LAYERS = [
    # storage: LangGraph ships these as separate packages (langgraph-checkpoint, langgraph.cache);
    # they store (type tag, bytes) and know nothing of graphs
    ("storage", ["checkpoint", "cache"]),
    # the words every layer above speaks: reserved names, the values users hand in, the errors;
    # inside this layer: response_schema, then types, then errors and constants
    ("vocabulary", ["warnings", "response_schema", "types", "callbacks", "errors", "constants"]),
    # where state lives between steps, and the values computed per step
    ("state", ["channels", "managed"]),
    # what the engine hands a node besides its state (context=, the stream writer, heartbeat)
    ("runtime", ["runtime"]),
    # one run at a time per thread: the engine holds the guard, the guard knows no engine
    ("guard", ["guard"]),
    # the engine: compiled nodes, the super-step loop, the savers' calls, the public methods
    ("engine", ["pregel"]),
    # how users build graphs, and the helpers a running node calls (config reads the runner's task)
    ("front", ["graph", "graph_checks", "graph_shortcuts", "state_schema", "node_defaults", "func",
               "config"]),
    # chat messages and the prebuilt tools (the messages extra): built on the front, never below
    ("chat", ["messages", "prebuilt"]),
    # the viewers: they read saver.list() and get_state() (and the engine's rules, to explain a
    # step); nothing below imports them, so the runtime never needs a viewer's packages
    ("viewers", ["viz"]),
    # the package's front door and the tools around it
    ("tools", ["__init__", "__main__", "cli", "swap", "tour", "course", "course_pictures",
               "demos"]),
]


def module_name(file: Path) -> str:
    """lgcheckpoint/pregel/runner.py -> "pregel.runner"; a package's __init__.py is the package."""
    parts = file.relative_to(PKG).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" and len(parts) > 1 else parts)


MODULES = {module_name(f): f for f in sorted(PKG.rglob("*.py"))}


def layer_of(module: str) -> int:
    """The index in LAYERS of the entry naming this module or the package it is in."""
    found = [i for i, (_, names) in enumerate(LAYERS) for name in names
             if module == name or module.startswith(name + ".")]
    assert len(found) == 1, f"name {module} in exactly one layer of LAYERS (found {len(found)})"
    return found[0]


def imported(module: str) -> list[tuple[str, int]]:
    """The package's modules this module imports, with the line of each import."""
    file = MODULES[module]
    here = module.split(".") if file.name == "__init__.py" else module.split(".")[:-1]
    found = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for branch in child.orelse:
                    visit_one(branch)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.extend((alias.name, node.lineno) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: from the module's package, one level up per extra dot
                parts = here[: len(here) - node.level + 1]
                base = ".".join(["lgcheckpoint", *parts, *([base] if base else [])])
            # "from lgcheckpoint.pregel import timeouts" imports the module pregel.timeouts
            found.extend((f"{base}.{a.name}" if own(f"{base}.{a.name}") else base, node.lineno)
                         for a in node.names)
        visit(node)

    visit(ast.parse(file.read_text()))
    targets = []
    for name, line in found:
        target = own(name)
        if target is None or target == module:
            continue
        targets.append((target, line))
        package = target.rsplit(".", 1)[0] if "." in target else None
        if package and not (module + ".").startswith(package + "."):
            targets.append((package, line))  # importing pkg.mod from outside runs pkg/__init__
    return targets


def own(name: str) -> str | None:
    """The package module a dotted import names ("lgcheckpoint.x.y" -> "x.y"), else None."""
    if name == "lgcheckpoint":
        return "__init__"
    if not name.startswith("lgcheckpoint."):
        return None
    name = name.removeprefix("lgcheckpoint.")
    return name if name in MODULES else None


def arrows() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import}."""
    graph: dict[str, dict[str, int]] = defaultdict(dict)
    for module in MODULES:
        for target, line in imported(module):
            graph[module].setdefault(target, line)
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The shortest cycle through each module that is in one, each cycle once."""
    found, seen = [], set()
    for module in MODULES:
        cycle = shortest_cycle(graph, module)
        if cycle and frozenset(zip(cycle, cycle[1:])) not in seen:
            seen.add(frozenset(zip(cycle, cycle[1:])))
            found.append(cycle)
    return found


def knots(found: list[list[str]]) -> list[set[str]]:
    """Cycles that share a module tie one knot: the modules that all reach each other."""
    groups: list[set[str]] = []
    for cycle in found:
        joined = {*cycle}.union(*(g for g in groups if g & set(cycle)))
        groups = [g for g in groups if not g & set(cycle)] + [joined]
    return groups


def shortest_cycle(graph: dict[str, dict[str, int]], start: str) -> list[str] | None:
    """Breadth first from start back to start: the shortest way round, or None."""
    paths, seen = [[start]], {start}
    while paths:
        path = paths.pop(0)
        for target in graph.get(path[-1], {}):
            if target == start:
                return path + [start]
            if target not in seen:
                seen.add(target)
                paths.append(path + [target])
    return None


def upward(graph: dict[str, dict[str, int]]) -> list[str]:
    """Each import line that reaches a higher layer, as "file:line  a (layer) -> b (layer)"."""
    found = {}
    for module, targets in sorted(graph.items()):
        for target, line in targets.items():
            if (high := layer_of(target)) > (low := layer_of(module)):
                found.setdefault((module, line), f"{MODULES[module].relative_to(PKG.parent)}:"
                                 f"{line}  {module} ({LAYERS[low][0]}) -> {target} "
                                 f"({LAYERS[high][0]})")
    return list(found.values())


def test_every_module_has_one_layer():
    for module in MODULES:
        layer_of(module)


def test_no_import_cycles():
    found = cycles(arrows())
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


def test_no_import_climbs_to_a_higher_layer():
    found = upward(arrows())
    assert not found, "imports from a lower layer up (see LAYERS):\n" + "\n".join(found)


if __name__ == "__main__":
    graph = arrows()
    found_cycles, found_upward = cycles(graph), upward(graph)
    tied = knots(found_cycles)
    print(f"{len(found_cycles)} cycles (in {len(tied)} knots) / {len(found_upward)} upward imports")
    for knot in tied:
        print(f"knot of {len(knot)} modules: {', '.join(sorted(knot))}")
        for cycle in found_cycles:
            if cycle[0] in knot:
                print("  cycle: ", " -> ".join(cycle))
    for line in found_upward:
        print("upward: ", line)
    sys.exit(1 if found_cycles or found_upward else 0)
