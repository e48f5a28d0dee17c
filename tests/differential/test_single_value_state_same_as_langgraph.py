"""A state that is one value (StateGraph(Annotated[list, add]), StateGraph(int)): whole histories.

Such a graph keeps its state in one channel, ``__root__``; nodes get the value and return the
update, streams show the value itself. Found by LangGraph's own tests (tools/langgraph_suite.py).
"""

import operator
from typing import Annotated

import pytest

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread

CAUSES, scenario = registry()


def growing_list(lib: Run, **compile_kw):
    """a appends the length, b appends "b", until the list has four items."""
    g = lib.StateGraph(Annotated[list, operator.add])
    g.add_node("a", lambda items: [len(items)])
    g.add_node("b", lambda items: ["b"])
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", lambda items: "b" if len(items) < 3 else lib.END)
    g.add_edge("b", "a")
    return g.compile(checkpointer=lib.saver(), **compile_kw)


@scenario
def a_list_state_with_a_reducer(lib: Run):
    graph = growing_list(lib)
    cfg = thread()
    lib.invoke(graph, [0], cfg)
    lib.stream(graph, [9], thread(), stream_mode="updates")
    lib.stream(graph, [9], thread(), stream_mode="values")
    lib.get_state(graph, cfg)
    lib.update_state(graph, cfg, [5])
    lib.get_state(graph, cfg)
    lib.history(graph, cfg)


@scenario
def an_int_state_interrupted_and_resumed(lib: Run):
    g = lib.StateGraph(int)
    g.add_node("double", lambda n: n * 2)
    g.add_node("ask", lambda n: n + lib.interrupt(f"add to {n}?"))
    g.add_edge(lib.START, "double")
    g.add_edge("double", "ask")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, 3, cfg)
    lib.get_state(graph, cfg)
    lib.invoke(graph, lib.Command(resume=10), cfg)
    lib.history(graph, cfg)


@scenario
def a_breakpoint_and_a_command_update(lib: Run):
    graph = growing_list(lib, interrupt_before=["b"])
    cfg = thread()
    lib.invoke(graph, [1], cfg)
    lib.invoke(graph, lib.Command(update=["x"]), cfg)
    lib.stream(graph, None, cfg, stream_mode=["updates", "values", "tasks"])
    lib.history(graph, cfg)


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))


def test_a_root_key_beside_other_keys_is_a_plain_key_as_in_langgraph():
    """``__root__`` makes a single-value state only when it is the state's one key; beside other
    keys it is an ordinary channel (LangGraph's test_root_graph reuses a thread so)."""
    from typing_extensions import TypedDict

    class State(TypedDict):
        __root__: Annotated[list, operator.add]
        something_else: str

    def final(lib):
        g = lib.StateGraph(State)
        g.add_node("a", lambda s: {"__root__": ["a"], "something_else": "x"})
        g.add_edge(lib.START, "a")
        return g.compile().invoke({"__root__": ["in"]})

    assert final(OURS) == final(LANGGRAPH) == {"__root__": ["in", "a"], "something_else": "x"}
