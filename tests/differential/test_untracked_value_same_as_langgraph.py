"""UntrackedValue, whole histories (found by LangGraph's own tests, tools/langgraph_suite.py)."""

import operator
import threading
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread

CAUSES, scenario = registry()


@scenario
def untracked_value_is_never_checkpointed(lib: Run):
    class State(TypedDict):
        answer: str
        client: Annotated[str, lib.UntrackedValue]

    g = lib.StateGraph(State)
    g.add_node("connect", lambda state: {"answer": "", "client": "socket-1"})
    g.add_node("ask", lambda state: {"answer": "via " + state["client"]})
    g.add_edge(lib.START, "connect")
    g.add_edge("connect", "ask")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"answer": ""}, cfg)
    lib.get_state(graph, cfg)
    lib.history(graph, cfg)


@scenario
def untracked_value_guard_refuses_two_writes(lib: Run):
    class State(TypedDict):
        client: Annotated[str, lib.UntrackedValue]

    g = lib.StateGraph(State)
    g.add_node("a", lambda state: {"client": "a"})
    g.add_node("b", lambda state: {"client": "b"})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    graph = g.compile(checkpointer=lib.saver())
    lib.attempt("two writes", lambda: graph.invoke({"client": "x"}, thread()))


class Resource:
    """Something no checkpoint can hold (a lock)."""

    def __init__(self, name: str) -> None:
        self.name, self.lock = name, threading.Lock()


@scenario
def untracked_value_in_a_send_is_left_out_of_the_packet(lib: Run):
    class State(TypedDict):
        log: Annotated[list, operator.add]
        client: Annotated[Resource, lib.UntrackedValue]

    g = lib.StateGraph(State)
    g.add_node("connect", lambda state: {"log": ["connected"], "client": Resource("s1")})
    g.add_node("use", lambda state: {"log": ["used " + state["client"].name]})
    g.add_edge(lib.START, "connect")
    g.add_conditional_edges("connect", lambda state: [lib.Send("use", state)])
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.note("log", graph.invoke({"log": []}, cfg)["log"])
    lib.history(graph, cfg)


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))
