"""Managed values (RemainingSteps, IsLastStep), whole histories against LangGraph.

The values a node sees are recorded (``lib.note``), and the savers' content shows they are
never stored. Each scenario runs on InMemorySaver, a SQLite file and Postgres, and the async
ones on the async savers.
"""


import operator
from dataclasses import dataclass
from typing import Annotated

import pytest
from typing_extensions import NotRequired, TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread
from tests.differential.test_savers import async_saver_factory, saver_factory  # noqa: F401

CAUSES, scenario = registry()


def looping_graph(lib: Run, seen: list):
    """A loop that stops itself two steps before the recursion limit."""

    class State(TypedDict):
        n: int
        log: Annotated[list, operator.add]
        remaining_steps: lib.RemainingSteps
        is_last_step: NotRequired[lib.IsLastStep]

    def work(state: State) -> dict:
        seen.append(("work", state["remaining_steps"], state["is_last_step"]))
        return {"n": state["n"] + 1, "log": [state["remaining_steps"]]}

    def again(state: State) -> str:
        seen.append(("again", state["remaining_steps"], state["is_last_step"]))
        return lib.END if state["remaining_steps"] <= 2 else "work"

    g = lib.StateGraph(State)
    g.add_node("work", work)
    g.add_edge(lib.START, "work")
    g.add_conditional_edges("work", again, ["work", lib.END])
    return g.compile(checkpointer=lib.saver())


@scenario
def loop_stops_itself_with_remaining_steps(lib: Run):
    seen: list = []
    graph = looping_graph(lib, seen)
    cfg = {**thread(), "recursion_limit": 6}
    lib.invoke(graph, {"n": 0, "log": []}, cfg)
    lib.note("seen", seen)
    lib.history(graph, cfg)


@scenario
def remaining_steps_count_from_the_resumed_step(lib: Run):
    seen: list = []
    graph = looping_graph(lib, seen)
    cfg = {**thread(), "recursion_limit": 3}
    lib.invoke(graph, {"n": 0, "log": []}, cfg)  # GraphRecursionError: the loop had no room
    lib.invoke(graph, None, {**thread(), "recursion_limit": 5})  # resumes with a fresh window
    lib.note("seen", seen)


@scenario
def is_last_step_ends_an_agent_loop(lib: Run):
    @dataclass
    class State:
        steps: int = 0
        is_last_step: lib.IsLastStep = False

    def agent(state: State) -> dict:
        return {"steps": state.steps + 1}

    def route(state: State) -> str:
        return lib.END if state.is_last_step else "agent"

    g = lib.StateGraph(State)
    g.add_node("agent", agent)
    g.add_edge(lib.START, "agent")
    g.add_conditional_edges("agent", route, ["agent", lib.END])
    graph = g.compile(checkpointer=lib.saver())
    cfg = {**thread(), "recursion_limit": 4}
    lib.invoke(graph, {"steps": 0}, cfg)
    lib.stream(graph, {"steps": 10}, cfg, stream_mode=["updates", "values"])


@scenario
def a_write_to_a_managed_value_is_saved_then_ignored(lib: Run):
    class State(TypedDict):
        n: int
        remaining_steps: lib.RemainingSteps

    g = lib.StateGraph(State)
    g.add_node("cheat", lambda state: {"n": state["remaining_steps"], "remaining_steps": 99})
    g.add_node("after", lambda state: {"n": state["n"] + state["remaining_steps"]})
    g.add_edge(lib.START, "cheat")
    g.add_edge("cheat", "after")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"n": 0, "remaining_steps": 5}, thread())  # input: not a channel either
    lib.stream(graph, {"n": 1}, thread("t2"), stream_mode="updates")


@scenario
def managed_values_refused_in_an_input_schema(lib: Run):
    class State(TypedDict):
        n: int

    class In(TypedDict):
        n: int
        remaining_steps: lib.RemainingSteps

    lib.attempt("input schema", lambda: lib.StateGraph(State, input_schema=In))
    lib.attempt("output schema", lambda: lib.StateGraph(State, output_schema=In))


@scenario
def update_state_runs_edges_that_read_managed_values(lib: Run):
    seen: list = []
    graph = looping_graph(lib, seen)
    cfg = {**thread(), "recursion_limit": 4}
    lib.invoke(graph, {"n": 0, "log": []}, cfg)
    lib.update_state(graph, thread(), {"n": 10}, as_node="work")  # the edge sees a 2-step window
    lib.get_state(graph, thread())
    lib.note("seen", seen)


@scenario
def async_loop_stops_itself(lib: Run):
    seen: list = []
    graph = looping_graph(lib, seen)
    cfg = {**thread(), "recursion_limit": 5}
    lib.ainvoke(graph, {"n": 0, "log": []}, cfg)
    lib.note("seen", seen)


SYNC = [name for name in CAUSES if not name.startswith("async")]
ASYNC = [name for name in CAUSES if name.startswith("async")]


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))


@pytest.mark.parametrize("name", SYNC)
def test_same_as_langgraph_on_saver(name, saver_factory):  # noqa: F811
    scenario = CAUSES[name]
    assert_same(name, record(scenario, LANGGRAPH, saver_factory),
                record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", ASYNC)
def test_async_same_as_langgraph_on_async_saver(name, async_saver_factory):  # noqa: F811
    scenario = CAUSES[name]
    assert_same(name, record(scenario, LANGGRAPH, async_saver_factory),
                record(scenario, OURS, async_saver_factory))
