"""The graph's shape: nodes and edges of a compiled graph (``get_graph()``), or, without a graph,
the shape a thread's writes reveal (a task of X writing ``branch:to:Y`` means an edge X -> Y).
The super-step player draws each frame on this. Next: ``player.py``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from lgcheckpoint.viz.history import History, channel_target, is_packet
from lgcheckpoint.viz.palette import RED, STRONG_RED, YELLOW
from lgcheckpoint.viz.render import DotView, graph_header, quote

# yellow = ran in this step (its writes are the changes); red = fires: runs next; red edge = taken
RUNNING, NEXT, FIRED = YELLOW, STRONG_RED, STRONG_RED
NEXT_FILL = RED


class Edge(NamedTuple):
    source: str
    target: str
    conditional: bool  # dashed: decided at run time (a router or a Send)


class Topology(NamedTuple):
    nodes: list[str]
    edges: list[Edge]


def graph_topology(graph: Any) -> Topology:
    """Read a compiled graph's drawable graph: ``.nodes`` (dict) and ``.edges`` (source/target)."""
    if not hasattr(graph, "get_graph"):
        raise TypeError(f"{type(graph).__name__} has no get_graph(): pass a compiled graph")
    drawable = graph.get_graph()
    edges = {Edge(e.source, e.target, bool(getattr(e, "conditional", False)))
             for e in drawable.edges}
    return Topology(list(drawable.nodes), sorted(edges))


def inferred_topology(history: History) -> Topology:
    """Nodes from the trigger map; edges from what named tasks wrote (routing channels, Sends)."""
    nodes = list(history.node_triggers)
    edges = set()
    for step in history.steps:
        for task in step.tasks:
            if task.name not in nodes:
                continue
            for channel, value in task.regular:
                target = channel_target(channel)
                if target:
                    edges.add(Edge(task.name, target, False))
                elif is_packet(value):  # a Send
                    edges.add(Edge(task.name, value.node, True))
    return Topology(nodes, sorted(edges))


def topology_dot(topo: Topology, running=(), next_nodes=(), fired=(), caption: str = "") -> str:
    """Deterministic DOT: nodes that ran filled yellow, next nodes red with a thick red border,
    edges taken red. The caption is left-aligned text under the drawing."""
    lines = graph_header("topology")
    if caption:
        left_aligned = quote(caption + "\n", newline="\\l")  # \l ends a left-aligned line
        lines.append(f"  labelloc=b; labeljust=l; label={left_aligned};")
    for n in topo.nodes:
        attrs = ["shape=oval"] if n in ("__start__", "__end__") else []
        if n in running:
            attrs.append(f'fillcolor="{RUNNING}"')
        if n in next_nodes:
            attrs += [f'color="{NEXT}"', "penwidth=3"]
            if n not in running:
                attrs.append(f'fillcolor="{NEXT_FILL}"')
        lines.append(f"  {quote(n)}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    for e in topo.edges:
        attrs = ["style=dashed"] if e.conditional else []
        if (e.source, e.target) in fired:
            attrs += [f'color="{FIRED}"', "penwidth=2"]
        lines.append(f"  {quote(e.source)} -> {quote(e.target)}"
                     + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


class GraphDrawing(DotView):
    """A compiled graph's topology as SVG (the static form of ``graph.get_graph()``)."""

    def __init__(self, graph: Any):
        self.topology = graph_topology(graph)
        self.dot = topology_dot(self.topology)

    def __repr__(self) -> str:
        return f"GraphDrawing({len(self.topology.nodes)} nodes, {len(self.topology.edges)} edges)"
