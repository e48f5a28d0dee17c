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


def stale_answer_then_fresh_run(lib) -> tuple[list, list, tuple]:
    """Ask, answer, answer again with nothing pending, then start a fresh run on the thread.
    Returns each call's outcome (an error as its class name, an interrupt as its value), the
    answers stored on the latest checkpoint after the stale one, and the final state."""
    class Asked(TypedDict):
        foo: str

    def ask(state):
        return {"foo": f"answer={lib.interrupt('name?')}"}

    g = lib.StateGraph(Asked)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    saver = lib.InMemorySaver()
    graph = g.compile(checkpointer=saver)
    cfg = thread()
    outcomes = []
    for value in [{"foo": ""}, lib.Command(resume="ada"), lib.Command(resume="stale")]:
        try:
            outcomes.append(asked(graph.invoke(value, cfg)))
        except StaleResumeError as exc:
            outcomes.append(type(exc).__name__)
    writes = saver.get_tuple(cfg).pending_writes
    stored = [value for _, channel, value in writes if channel == "__resume__"]
    outcomes.append(asked(graph.invoke({"foo": ""}, cfg)))  # asks again on both libraries
    state = graph.get_state(cfg)
    return outcomes, stored, (state.values, state.next)


def asked(output: dict) -> dict:
    """A run's output with its interrupts as their values (their ids hash random task ids)."""
    if "__interrupt__" not in output:
        return output
    return {**output, "__interrupt__": [i.value for i in output["__interrupt__"]]}


def test_a_resume_with_nothing_pending_is_refused_here_and_dropped_later_by_langgraph():
    """The thread guard's one difference (README): LangGraph stores the stale answer, which
    the next fresh run drops; ours refuses it and stores nothing. The fresh run is the same."""
    theirs, ours = stale_answer_then_fresh_run(LANGGRAPH), stale_answer_then_fresh_run(OURS)
    assert theirs[0][2] == {"foo": "answer=ada"} and ours[0][2] == "StaleResumeError"
    assert (theirs[1], ours[1]) == (["stale"], [])  # stored there, refused here
    assert ours[0][:2] + ours[0][3:] == theirs[0][:2] + theirs[0][3:]
    assert ours[2] == theirs[2] == ({"foo": ""}, ("ask",))
