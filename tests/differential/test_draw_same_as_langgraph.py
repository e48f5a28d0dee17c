"""get_graph(): to_json() and draw_mermaid() give LangGraph's text for the same graph (draw.py)."""

import json
import operator
from typing import Annotated, Literal, TypedDict

import pytest

from tests.differential.libs import LANGGRAPH, OURS


class State(TypedDict):
    items: Annotated[list, operator.add]


def add(item):
    return lambda state: {"items": [item]}


def routed(lib):
    """A router with a path map, a node with two successors, a breakpoint."""
    g = lib.StateGraph(State)
    for name in "abcd":
        g.add_node(name, add(name))
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", lambda s: "go", {"go": "b", "stop": lib.END})
    g.add_edge("b", "c")
    g.add_edge("b", "d")
    g.add_edge("d", lib.END)
    return g.compile(interrupt_before=["c"], interrupt_after=["c", "d"])


def fan_in(lib):
    """Two branches wait for each other (a join), one node deferred, a router by list."""
    g = lib.StateGraph(State)
    for name in ("first", "left", "right", "join", "last"):
        g.add_node(name, add(name), defer=name == "last")
    g.add_edge(lib.START, "first")
    g.add_conditional_edges("first", lambda s: ["left", "right"], ["left", "right"])
    g.add_edge(["left", "right"], "join")
    g.add_edge("join", "last")
    g.add_edge("last", lib.END)
    return g.compile()


def deferred_after_a_longer_branch(lib, join=False):
    """A deferred node waits for a longer branch: LangGraph draws a dotted edge from that
    branch's last node (the step before the deferred node runs), and no edge to END from it."""
    g = lib.StateGraph(State)
    for name in ("split", "short", "long1", "long2", "last"):
        g.add_node(name, add(name), defer=name == "last")
    g.add_edge(lib.START, "split")
    g.add_edge("split", "short")
    g.add_edge("split", "long1")
    g.add_edge("long1", "long2")
    g.add_edge(["split", "short"] if join else "short", "last")
    return g.compile()


def deferred_behind_a_join(lib):
    return deferred_after_a_longer_branch(lib, join=True)


def looping(lib):
    """A node that routes back to itself, by a Literal return type (no path map)."""
    def again(state) -> Literal["loop", "__end__"]:
        return "__end__"
    g = lib.StateGraph(State)
    g.add_node("loop", add(1))
    g.add_edge(lib.START, "loop")
    g.add_conditional_edges("loop", again)
    return g.compile()


def nested(lib):
    """A subgraph as a node and a function calling another subgraph (xray draws both inside)."""
    inner = lib.StateGraph(State)
    inner.add_node("one", add("one"))
    inner.add_node("two", add("two"))
    inner.add_edge(lib.START, "one")
    inner.add_edge("one", "two")
    inner = inner.compile()
    g = lib.StateGraph(State)
    g.add_node("prep", add("prep"))
    g.add_node("child", inner)
    g.add_node("caller", lambda state: inner.invoke(state))
    g.add_edge(lib.START, "prep")
    g.add_edge("prep", "child")
    g.add_edge("child", "caller")
    return g.compile()


def commands(lib):
    """Nodes that route by returning Command, their destinations declared (tuple, dict);
    a router whose path map has non-string keys."""
    def go(state):
        return lib.Command(goto="b", update={"items": ["go"]})
    g = lib.StateGraph(State)
    g.add_node("first", go, destinations=("b", "c"))
    g.add_node("b", go, destinations={"c": "to see", "d": "to do"})
    g.add_node("c", add("c"))
    g.add_node("d", add("d"))
    g.add_edge(lib.START, "first")
    g.add_conditional_edges("c", lambda s: True, {True: "d", False: lib.END})
    return g.compile()


def endless(lib):
    """Two nodes that call each other for ever, and a three-node cycle: LangGraph draws an exit."""
    g = lib.StateGraph(State)
    for name in ("human", "agent", "tool"):
        g.add_node(name, add(name))
    g.add_edge(lib.START, "human")
    g.add_edge("human", "agent")
    g.add_edge("agent", "tool")
    g.add_edge("tool", "human")
    return g.compile()


def endless_pair(lib):
    g = lib.StateGraph(State)
    g.add_node("human", add("human"))
    g.add_node("agent", add("agent"))
    g.add_edge(lib.START, "human")
    g.add_edge("human", "agent")
    g.add_conditional_edges("agent", lambda s: "human", ["human"])
    return g.compile()


def drawn(graph, **kw) -> tuple:
    drawing = graph.get_graph(**kw)
    return (json.dumps(drawing.to_json(), default=str, indent=1), drawing.draw_mermaid(),
            drawing.draw_mermaid(with_styles=False))


@pytest.mark.parametrize("build", [routed, fan_in, looping, nested, commands, endless,
                                   endless_pair, deferred_after_a_longer_branch,
                                   deferred_behind_a_join])
@pytest.mark.parametrize("xray", [False, True, 1])
def test_drawing_is_langgraphs(build, xray):
    assert drawn(build(OURS), xray=xray) == drawn(build(LANGGRAPH), xray=xray)


def test_unimplemented_drawing_options_are_refused():
    drawing = routed(OURS).get_graph()
    with pytest.raises(TypeError, match="frontmatter_config"):
        drawing.draw_mermaid(frontmatter_config={"config": {"theme": "neutral"}})
    with pytest.raises(NotImplementedError, match="draw_mermaid"):
        drawing.draw_ascii()


def with_a_tool_node(prebuilt: str, graph_module: str, messages_module: str):
    """A chat agent's graph: a ToolNode is drawn with LangGraph's id for it and its tools' names."""
    import importlib

    from langchain_core.tools import tool

    @tool
    def search(query: str) -> str:
        """Look the query up."""
        return query

    graph = importlib.import_module(graph_module)
    messages = importlib.import_module(messages_module)
    g = graph.StateGraph(messages.MessagesState)
    g.add_node("agent", lambda state: {})
    g.add_node("tools", importlib.import_module(prebuilt).ToolNode([search]))
    g.add_edge(graph.START, "agent")
    g.add_edge("agent", "tools")
    return g.compile()


def test_a_tool_node_is_drawn_as_langgraphs():
    ours = with_a_tool_node("lgcheckpoint.prebuilt", "lgcheckpoint.graph", "lgcheckpoint.messages")
    theirs = with_a_tool_node("langgraph.prebuilt", "langgraph.graph", "langgraph.graph")
    assert drawn(ours) == drawn(theirs)
    assert '"__tools": [\n     "search"' in drawn(ours)[0]
