"""Command(resume=...) at a static breakpoint continues the run; after the end it is refused.

LangGraph continues past interrupt_before on a resume; the thread guard must not call that answer
stale (found by LangGraph's own tests, tools/langgraph_suite.py). Whole histories compared.
"""

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.errors import StaleResumeError
from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread

CAUSES, scenario = registry()


class State(TypedDict):
    foo: str


def two_steps(lib: Run):
    g = lib.StateGraph(State)
    g.add_node("node1", lambda s: {"foo": s["foo"] + "|node-1"})
    g.add_node("node2", lambda s: {"foo": s["foo"] + "|node-2"})
    g.add_edge(lib.START, "node1")
    g.add_edge("node1", "node2")
    return g.compile(checkpointer=lib.saver(), interrupt_before=["node1"])


@scenario
def resume_at_a_static_breakpoint(lib: Run):
    graph = two_steps(lib)
    cfg = thread()
    lib.invoke(graph, {"foo": "abc"}, cfg)
    lib.invoke(graph, lib.Command(resume="node1"), cfg)
    lib.history(graph, cfg)


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))


def test_a_resume_after_the_end_is_still_refused():
    from lgcheckpoint.checkpoint.memory import InMemorySaver
    from lgcheckpoint.graph import START, StateGraph
    from lgcheckpoint.types import Command

    g = StateGraph(State)
    g.add_node("node1", lambda s: {"foo": s["foo"] + "|node-1"})
    g.add_edge(START, "node1")
    graph = g.compile(checkpointer=InMemorySaver(), interrupt_before=["node1"])
    cfg = {"configurable": {"thread_id": "t"}}
    graph.invoke({"foo": "abc"}, cfg)
    assert graph.invoke(Command(resume="go"), cfg) == {"foo": "abc|node-1"}
    with pytest.raises(StaleResumeError):
        graph.invoke(Command(resume="again"), cfg)
