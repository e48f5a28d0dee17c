"""A compiled graph as a drawing: get_graph() returns nodes and edges, to_json(), draw_mermaid().

The edges come from what compile recorded (static edges, joins, branch path maps, Command
destinations), not from a dry run; their order and the mermaid text follow LangGraph's, so a
drawing saved from LangGraph compares equal. ``xray`` draws a subgraph inside its node.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

from lgcheckpoint.constants import END, START
from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.pregel.builder import ChannelWriteEntry, PregelNode

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

# the id LangGraph's JSON gives every node that runs a function (kept: saved drawings compare)
FUNCTION_ID = ["langgraph", "_internal", "_runnable", "RunnableCallable"]
COMPILED_ID = ["langgraph", "graph", "state", "CompiledStateGraph"]
STYLES = {"default": "fill:#f2f0ff,line-height:1.2", "first": "fill-opacity:0",
          "last": "fill:#bfb6fc"}  # mermaid classDefs, as LangGraph draws them
# inside a node's label; "#" first, as the entities after it contain one
ESCAPES = {"#": "#35;", "[": "#91;", "]": "#93;", "(": "#40;", ")": "#41;", "{": "#123;",
           "}": "#125;", '"': "#quot;", "<": "#60;", ">": "#62;", "|": "#124;"}


class DrawNode(NamedTuple):
    id: str  # "parent:child" for a node drawn inside its subgraph's node (xray)
    name: str
    data: Any = None  # the node's function or subgraph; None for END
    metadata: dict | None = None  # defer, __interrupt


class DrawEdge(NamedTuple):
    source: str
    target: str
    data: Any = None  # the branch's label for this target, when it differs from the target
    conditional: bool = False


@dataclass
class Graph:
    """What get_graph() returns; field and method names as on LangGraph's Graph."""

    nodes: dict[str, DrawNode] = field(default_factory=dict)
    edges: list[DrawEdge] = field(default_factory=list)

    def add_edge(self, source: str, target: str, data: Any = None, conditional: bool = False
                 ) -> None:
        """One edge per (source, target): the first one added wins."""
        if not any(e.source == source and e.target == target for e in self.edges):
            if target == END and END not in self.nodes:
                self.nodes[END] = DrawNode(END, END)
            self.edges.append(DrawEdge(source, target, data, conditional))

    def first_node(self, exclude: tuple = ()) -> DrawNode | None:
        """The one node no edge leads to (None if there are several or none)."""
        targets = {e.target for e in self.edges if e.source not in exclude}
        found = [n for n in self.nodes.values() if n.id not in exclude and n.id not in targets]
        return found[0] if len(found) == 1 else None

    def last_node(self, exclude: tuple = ()) -> DrawNode | None:
        """The one node no edge leaves (None if there are several or none)."""
        sources = {e.source for e in self.edges if e.target not in exclude}
        found = [n for n in self.nodes.values() if n.id not in exclude and n.id not in sources]
        return found[0] if len(found) == 1 else None

    def to_json(self, *, with_schemas: bool = False) -> dict:
        """{"nodes": [...], "edges": [...]} with the keys LangGraph's to_json() writes."""
        nodes = []
        for node in self.nodes.values():
            item: dict = {"id": node.id}
            if node.data is not None:
                kind = COMPILED_ID if hasattr(node.data, "get_graph") else getattr(
                    node.data, "lc_id", FUNCTION_ID)  # a Runnable node: its own (runnables.py)
                item.update(type="runnable", data={"id": kind, "name": node.id})
            if node.metadata is not None:
                item["metadata"] = node.metadata
            nodes.append(item)
        edges = [{"source": e.source, "target": e.target,
                  **({"data": e.data} if e.data is not None else {}),
                  **({"conditional": True} if e.conditional else {})} for e in self.edges]
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(self, *, with_styles: bool = True, curve_style: Any = "linear",
                     node_colors: Any = None, wrap_label_n_words: int = 9,
                     frontmatter_config: Any = None) -> str:
        """Mermaid flowchart text, line for line what LangGraph writes for the same graph."""
        refuse_unimplemented("draw_mermaid", {"frontmatter_config": frontmatter_config})
        return mermaid(self, with_styles, getattr(curve_style, "value", curve_style),
                       node_colors, wrap_label_n_words)

    def draw_ascii(self) -> str:
        raise NotImplementedError("lgcheckpoint does not draw ASCII art: use draw_mermaid(), or "
                                  "lgcheckpoint.viz for pictures")

    def trim_first_node(self) -> None:
        """Drop START when it has one edge and another node would then come first."""
        first = self.first_node()
        if first and self.first_node(exclude=(first.id,)) and len(
                {e for e in self.edges if e.source == first.id}) == 1:
            self.remove(first.id)

    def trim_last_node(self) -> None:
        last = self.last_node()
        if last and self.last_node(exclude=(last.id,)) and len(
                {e for e in self.edges if e.target == last.id}) == 1:
            self.remove(last.id)

    def remove(self, node_id: str) -> None:
        self.nodes.pop(node_id)
        self.edges = [e for e in self.edges if node_id not in (e.source, e.target)]

    def put_inside(self, name: str, sub: Graph) -> None:
        """Draw subgraph `sub` in place of node `name`: its nodes become "name:<id>"."""
        sub.trim_first_node()
        sub.trim_last_node()
        first, last = sub.first_node(), sub.last_node()
        self.nodes.pop(name)
        self.nodes.update({f"{name}:{k}": n._replace(id=f"{name}:{k}") for k, n in
                           sub.nodes.items()})
        self.edges += [e._replace(source=f"{name}:{e.source}", target=f"{name}:{e.target}")
                       for e in sub.edges]
        self.edges = [e._replace(
            source=f"{name}:{last.id}" if e.source == name and last else e.source,
            target=f"{name}:{first.id}" if e.target == name and first else e.target)
            for e in self.edges]


def get_graph(graph: Pregel, config: dict | None = None, *, xray: bool | int = False) -> Graph:
    """Nodes and edges of compiled `graph`; with xray, subgraphs (xray=N: N levels deep)."""
    specs = getattr(getattr(graph, "builder", None), "nodes", {})  # a StateGraph's add_node
    deferred = {name for name, spec in specs.items() if spec.defer}
    found = set()  # (source, target, conditional, label), drawn sorted as LangGraph does
    for name, node in graph.nodes.items():
        found |= {(name, chan.removeprefix("branch:to:"), False, None) for chan in node.edges}
        found |= {(name, chan.rsplit(":", 1)[1], False, None) for chan in node.joins}
        ends = node.ends if isinstance(node.ends, dict) else dict.fromkeys(node.ends)
        found |= {(name, target, True, label) for target, label in ends.items()}
        for branch in node.branches:
            pairs = branch.path_map.items() if branch.path_map is not None else [
                (n, n) for n in [*graph.nodes, END] if n not in (START, name)]
            found |= {(name, t, True, str(label)) for label, t in pairs}
    found |= deferred_edges(found, deferred)
    starts, written = channel_edges(graph)  # the low-level API's nodes (builder.py)
    found |= written
    drawing = Graph({name: DrawNode(name, name, node.subgraph or node.func or name,
                                    node_metadata(graph, name, name in deferred))
                     for name, node in graph.nodes.items()})
    if starts:  # no START node: the input's channels start these
        drawing.nodes[START] = DrawNode(START, START, START)
        for name in starts:
            drawing.add_edge(START, name)
    for source, target, conditional, label in sorted(found, key=lambda e: (*e[:3], e[3] or "")):
        drawing.add_edge(source, target, None if label == target else label, conditional)
    # a node nothing leaves ends the run (so edges to END are drawn last, as in LangGraph)
    termini = sorted({t for _, t, _, _ in found if t != END} - {s for s, *_ in found})
    for name in termini:
        drawing.add_edge(name, END)
    # a graph that loops for ever: LangGraph ends it after the last node of its 250-step dry run
    last = last_step(found, starts or [START])
    if not termini and len(last) == 1 and all(t != END for _, t, _, _ in found):
        drawing.add_edge(last.pop(), END, None, True)
    if xray:
        deeper = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
        for name, node in graph.nodes.items():
            if (inner := node.inner_graph) is not None and name in drawing.nodes:
                sub = get_graph(inner, config, xray=deeper)
                if len(sub.nodes) > 1 and sub.first_node() and sub.last_node():
                    drawing.put_inside(name, sub)
    return drawing


def channel_edges(graph: Pregel) -> tuple[list[str], set]:
    """Edges of nodes that write channels (the low-level API): the nodes the input starts, and
    from each node to the nodes its writes trigger."""
    lowlevel = {n: node for n, node in graph.nodes.items() if isinstance(node, PregelNode)}
    if not lowlevel or START in graph.nodes:
        return [], set()
    inputs = graph.input_channels
    starts = sorted({n for chan in ([inputs] if isinstance(inputs, str) else inputs)
                     for n in graph.trigger_to_nodes.get(chan, ())})
    # from each node to every node that a channel it writes triggers
    found = {(name, n, False, None) for name, node in lowlevel.items()
             for w in node.writers if isinstance(w, ChannelWriteEntry)
             for n in graph.trigger_to_nodes.get(w.channel, ())}
    return starts, found


def deferred_edges(found: set, deferred: set, limit: int = 250) -> set:
    """Dotted edges into a deferred node from the step just before it runs, when that step did
    not trigger it: LangGraph's dry run draws who was running when the graph went quiet."""
    edges: set = set()
    tasks, waiting = {START}, {}  # waiting: deferred node -> the nodes that triggered it
    for _ in range(limit if deferred else 0):
        after = {t for s, t, _, _ in found if s in tasks and t != END} - deferred
        for s, t, _, _ in found:
            if s in tasks and t in deferred:
                waiting.setdefault(t, set()).add(s)
        if not after and waiting:  # nothing else runs: the deferred nodes do
            edges |= {(s, node, True, None) for node, by in waiting.items() if not by & tasks
                      for s in tasks}
            after, waiting = set(waiting), {}
        if not after:
            break
        tasks = after
    return edges


def last_step(found: set, first: list[str], limit: int = 250) -> set:
    """The nodes running in the last step of a dry run that follows every edge from the
    first step's nodes (START's)."""
    tasks, last = set(first), set()
    for _ in range(limit + 1):
        if not tasks:
            break
        last, tasks = tasks, {t for s, t, _, _ in found if s in tasks and t != END}
    return last


def node_metadata(graph: Pregel, name: str, deferred: bool) -> dict | None:
    """What LangGraph shows under a node's name: its metadata, deferred, interrupted before /
    after, the tools of a ToolNode."""
    meta: dict = dict(getattr(graph.nodes[name], "metadata", {}))  # NodeBuilder().meta(...)
    if deferred:
        meta["defer"] = True
    interrupts = (("before", graph.interrupt_before_nodes), ("after", graph.interrupt_after_nodes))
    when = [w for w, nodes in interrupts if nodes != "*" and name in nodes]
    if when:
        meta["__interrupt"] = ",".join(when)
    tools = getattr(graph.nodes[name].func, "tools_by_name", None)  # a ToolNode names its tools
    if isinstance(tools, dict) and tools:
        meta["__tools"] = list(tools)
    return meta or None


def safe_id(label: str) -> str:
    """A mermaid node id: characters other than letters, digits, _ and - as \\<hex>."""
    allowed = string.ascii_letters + string.digits + "_-"
    return "".join(c if c in allowed else "\\" + format(ord(c), "x") for c in label)


def mermaid(graph: Graph, with_styles: bool, curve: str, colors: Any, wrap: int) -> str:
    """The flowchart: header, nodes, edges grouped by subgraph ("a:b" inside "a"), styles."""
    text = f"---\nconfig:\n  flowchart:\n    curve: {curve}\n---\ngraph TD;\n" if (
        with_styles) else "graph TD;\n"
    first, last = graph.first_node(), graph.last_node()
    shapes = {first.id: "{0}([{1}]):::first"} if first else {}
    shapes.update({last.id: "{0}([{1}]):::last"} if last else {})
    inside: dict[str, list[DrawNode]] = {}  # subgraph prefix -> its nodes
    for key, node in graph.nodes.items():
        inside.setdefault(key.rpartition(":")[0], []).append(node)

    def node_line(node: DrawNode) -> str:
        name = node.name.split(":")[-1]
        label = f"<p>{name}</p>" if name[:1] in "*_`" and name[-1:] in "*_`" and name else name
        shown = {k: metadata_text(v) for k, v in (node.metadata or {}).items()}
        if lines := [escape(f"{k} = {v}") for k, v in shown.items() if v is not None]:
            label += "<hr/><small><em>" + "\n".join(lines) + "</em></small>"
        return "\t" + shapes.get(node.id, "{0}({1})").format(safe_id(node.id), label) + "\n"

    groups: dict[str, list[DrawEdge]] = {}  # edges by the prefix their ends share
    for edge in graph.edges:
        pairs = zip(edge.source.split(":"), edge.target.split(":"))
        groups.setdefault(":".join(s for s, t in pairs if s == t), []).append(edge)
    seen: set[str] = set()

    def block(edges: list[DrawEdge], prefix: str) -> str:
        out = ""
        boxed = prefix and not (len(edges) == 1 and edges[0].source == edges[0].target)
        if boxed:
            name = prefix.rsplit(":", 1)[-1]
            if name in seen:
                raise ValueError(f"Found duplicate subgraph '{name}': give subgraph nodes "
                                 "unique names")
            seen.add(name)
            out += f"\tsubgraph {name}\n"
            out += "".join(node_line(n) for n in inside.get(prefix, ())) if with_styles else ""
        for edge in edges:
            out += f"\t{safe_id(edge.source)}{arrow(edge, wrap)}{safe_id(edge.target)};\n"
        for nested, nested_edges in groups.items():
            if nested and nested.rpartition(":")[0] == prefix:  # a subgraph right inside
                out += block(nested_edges, nested)
        seen.add(prefix)  # drawn: the loop below boxes only the prefixes with no edges
        return out + ("\tend\n" if boxed else "")

    text += "".join(node_line(n) for n in inside.get("", ())) if with_styles else ""
    text += block(groups.get("", []), "")  # the top level, then each subgraph inside it
    if with_styles:
        for prefix, nodes in inside.items():
            if prefix and ":" not in prefix and prefix not in seen:
                text += f"\tsubgraph {prefix}\n" + "".join(map(node_line, nodes)) + "\tend\n"
        styles = {k: getattr(colors, k, v) for k, v in STYLES.items()}
        text += "".join(f"\tclassDef {k} {v}\n" for k, v in styles.items())
    return text


def arrow(edge: DrawEdge, wrap: int) -> str:
    """--> or -.-> (conditional), with the label wrapped every `wrap` words."""
    if edge.data is None:
        return " -.-> " if edge.conditional else " --> "
    words = str(edge.data).split()
    lines = [" ".join(words[i:i + wrap]) for i in range(0, len(words), wrap)]
    label = "&nbsp<br>&nbsp".join(lines) if len(words) > wrap else edge.data
    return f" -. &nbsp;{label}&nbsp; .-> " if edge.conditional else f" -- &nbsp;{label}&nbsp; --> "


def metadata_text(value: Any) -> str | None:
    """A metadata value as mermaid shows it; None (left out) for anything but plain values."""
    plain = (str, int, float, bool)
    if isinstance(value, plain):
        return str(value)
    if isinstance(value, (list, tuple, set)) and all(isinstance(v, plain) for v in value):
        items = [str(v) for v in value]
        return ", ".join(sorted(items) if isinstance(value, set) else items)
    return None


def escape(text: str) -> str:
    for char, entity in ESCAPES.items():
        text = text.replace(char, entity)
    return text
