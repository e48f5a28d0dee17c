"""StateGraph's checks: a schema, a state key, a node's name and function, the edges at
compile. Each refusal names the culprit and what to do. Next: graph_shortcuts.py.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any, Sequence, get_args

from lgcheckpoint.constants import END, NS_END, NS_SEP, RESERVED, START
from lgcheckpoint.pregel import Pregel
from lgcheckpoint.pregel.runnables import is_runnable

if TYPE_CHECKING:
    from lgcheckpoint.graph import StateGraph


def schema_is_a_type(schema: Any) -> None:
    """A state schema is a class (or Annotated[type, reducer]), not a value."""
    if not isinstance(schema, type) and not get_args(schema):  # a value, not a type
        problem = (f"Invalid state_schema: {schema!r}. Expected a type or Annotated[type, "
                   "reducer]: pass the class (a TypedDict, dataclass or pydantic model)")
        if getattr(type(schema), "__hash__", None) is None:  # LangGraph fails here, too
            raise TypeError(problem)
        warnings.warn(problem, UserWarning, stacklevel=4)  # LangGraph warns and goes on


def no_managed_keys(schema: Any, managed: dict) -> None:
    """An input or output schema has no managed values (they are computed per step)."""
    if managed:
        raise ValueError(
            f"Invalid managed channels detected in {getattr(schema, '__name__', schema)}: "
            f"{', '.join(managed)}. Managed channels are not permitted in Input/Output schema.")


def state_key(key: str, channels: dict) -> None:
    """A state key is not one of the runtime's own channel names."""
    if key in RESERVED or key.startswith(("branch:", "join:")):
        raise ValueError(f"State key '{key}' is reserved by the runtime; rename it")


def new_node(nodes: dict, node: str, action: Any) -> None:
    """add_node: something that can run, under a name that is free and not the runtime's."""
    if not (callable(action) or isinstance(action, Pregel) or is_runnable(action)):
        raise TypeError(f"add_node('{node}', ...) got a {type(action).__name__}, which is not "
                        "callable: pass a function, a compiled graph or a langchain Runnable")
    if node in nodes:
        raise ValueError(f"Node `{node}` already present.")
    if node in RESERVED or node.startswith("__"):  # START and END among them
        raise ValueError(f"Node name `{node}` is reserved by the runtime; pick another name")
    if NS_SEP in node or NS_END in node:
        raise ValueError(f"'{NS_SEP}' and '{NS_END}' are reserved characters, not allowed in "
                         f"node names: rename `{node}`")


def edge_ends(start_key: str | list[str], end_key: str) -> None:
    """add_edge: END starts nothing and START ends nothing."""
    if END in ([start_key] if isinstance(start_key, str) else start_key):
        raise ValueError("END cannot be a start node")
    if end_key == START:
        raise ValueError("START cannot be an end node")


def edges(graph: StateGraph, interrupt: Sequence[str]) -> None:
    """Every edge, branch target and breakpoint names a node; START has an edge."""
    # a join's nodes were checked by add_edge; plain edges and branches are checked here
    sources = {s for s, _ in graph.edges} | set(graph.branches)
    for source in sources:
        if source not in graph.nodes and source != START:
            raise ValueError(f"Found edge starting at unknown node '{source}'")
    if START not in sources:
        raise ValueError("Graph must have an entrypoint: add at least one edge from START "
                         "to another node (add_edge(START, 'first_node'))")
    targets = {t for _, t in graph.edges}
    targets |= {t for spec in graph.nodes.values() for t in spec.ends}  # Command destinations
    for start, branches in graph.branches.items():
        for cond, branch in branches.items():
            for end in (branch.path_map or {}).values():
                if end not in graph.nodes and end != END:
                    raise ValueError(
                        f"At '{start}' node, '{cond}' branch found unknown target '{end}'")
    for target in targets:
        if target not in graph.nodes and target != END:
            raise ValueError(f"Found edge ending at unknown node `{target}`")
    for node in interrupt:
        if node not in graph.nodes:
            raise ValueError(f"Interrupt node `{node}` not found")
