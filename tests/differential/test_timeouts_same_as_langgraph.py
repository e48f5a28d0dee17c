"""Node timeouts against LangGraph: what is saved when an attempt or a super-step times out.

Each scenario runs async nodes with a short timeout (0.05 s, the slow attempt sleeps 1 s and is
cancelled), then resumes; the records hold the error raised, the node calls, every state and
history, and the saver's content (a timed-out task's ERROR write, its siblings' writes).
Also on the async savers (SQLite file, Postgres when available).
"""

import asyncio
import operator
import time
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread
from tests.differential.test_savers import async_saver_factory  # noqa: F401

CAUSES, scenario = registry()
QUICK = 0.05  # seconds


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def slow_first_time(lib: Run, name: str):
    """An async node that hangs on its first call and answers at once after that."""

    async def node(state: State) -> dict:
        lib.count(name)
        if lib.calls[name] == 1:
            await asyncio.sleep(1.0)
        return {"x": state["x"] + 1, "log": [name]}

    return node


def logger(lib: Run, name: str):
    async def node(state: State) -> dict:
        lib.count(name)
        return {"log": [name]}

    return node


@scenario
def node_times_out_then_resumes(lib: Run):
    """first -> slow (times out) -> last; resuming runs slow again, not first."""
    g = lib.StateGraph(State)
    g.add_node("first", logger(lib, "first"))
    g.add_node("slow", slow_first_time(lib, "slow"),
               timeout=lib.TimeoutPolicy(idle_timeout=QUICK),
               retry_policy=lib.RetryPolicy(max_attempts=1))
    g.add_node("last", logger(lib, "last"))
    g.add_edge(lib.START, "first")
    g.add_edge("first", "slow")
    g.add_edge("slow", "last")
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"x": 0, "log": []}, thread(1))
    lib.ainvoke(graph, None, thread(1))


@scenario
def timed_out_node_beside_a_finished_one(lib: Run):
    """quick and slow in one step: quick's writes stay saved; resuming runs only slow."""
    g = lib.StateGraph(State)
    g.add_node("quick", logger(lib, "quick"))
    g.add_node("slow", slow_first_time(lib, "slow"), timeout=QUICK,
               retry_policy=lib.RetryPolicy(max_attempts=1))
    g.add_edge(lib.START, "quick")
    g.add_edge(lib.START, "slow")
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"x": 0, "log": []}, thread(1))
    lib.ainvoke(graph, None, thread(1))


@scenario
def timed_out_attempt_is_retried(lib: Run):
    """The retry policy retries NodeTimeoutError: one run, two calls, no error saved."""
    g = lib.StateGraph(State)
    g.add_node("slow", slow_first_time(lib, "slow"),
               timeout=lib.TimeoutPolicy(run_timeout=QUICK),
               retry_policy=lib.RetryPolicy(initial_interval=0, jitter=False,
                                            retry_on=lib.NodeTimeoutError))
    g.add_edge(lib.START, "slow")
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"x": 0, "log": []}, thread(1))


@scenario
def send_with_its_own_timeout(lib: Run):
    """Two Sends to one node, one with a short timeout: only that packet's task fails."""
    async def work(arg: dict) -> dict:
        lib.count(f"work {arg['x']}")
        if arg["x"] == 2 and lib.calls["work 2"] == 1:
            await asyncio.sleep(1.0)
        return {"log": [arg["x"]]}

    def fan_out(state: State) -> list:
        return [lib.Send("work", {"x": 1}),
                lib.Send("work", {"x": 2}, timeout=lib.TimeoutPolicy(idle_timeout=QUICK))]

    g = lib.StateGraph(State)
    g.add_node("work", work, retry_policy=lib.RetryPolicy(max_attempts=1))
    g.add_conditional_edges(lib.START, fan_out, ["work"])
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"x": 0, "log": []}, thread(1))
    lib.ainvoke(graph, None, thread(1))


@scenario
def timed_node_interrupts_and_resumes(lib: Run):
    """An interrupt inside a timed node is not a failure: it waits, and the answer resumes it."""
    async def ask(state: State) -> dict:
        lib.count("ask")
        answer = lib.interrupt("how many?")
        return {"x": answer, "log": ["ask"]}

    g = lib.StateGraph(State)
    g.add_node("ask", ask, timeout=lib.TimeoutPolicy(run_timeout=5, idle_timeout=5))
    g.add_edge(lib.START, "ask")
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"x": 0, "log": []}, thread(1))
    lib.ainvoke(graph, lib.Command(resume=3), thread(1))


@scenario
def step_timeout_cancels_the_slow_task(lib: Run):
    """A graph's step_timeout: quick finishes and is saved, slow is cancelled; resume runs slow."""
    async def quick(state: State) -> dict:
        lib.count("quick")
        await asyncio.sleep(QUICK)
        return {"log": ["quick"]}

    g = lib.StateGraph(State)
    g.add_node("quick", quick)
    g.add_node("slow", slow_first_time(lib, "slow"))
    g.add_edge(lib.START, "quick")
    g.add_edge(lib.START, "slow")
    graph = g.compile(checkpointer=lib.saver())
    graph.step_timeout = 0.5
    lib.astream(graph, {"x": 0, "log": []}, thread(1), stream_mode="updates")
    lib.ainvoke(graph, None, thread(1))


@scenario
def step_timeout_in_a_sync_run(lib: Run):
    """Sync nodes: the step waits for the thread it cannot stop, keeps its writes, then raises."""
    def slow(state: State) -> dict:
        lib.count("slow")
        time.sleep(0.3)
        return {"log": ["slow"]}

    def quick(state: State) -> dict:
        lib.count("quick")
        return {"x": 1}

    g = lib.StateGraph(State)
    g.add_node("slow", slow)
    g.add_node("quick", quick)
    g.add_edge(lib.START, "slow")
    g.add_edge(lib.START, "quick")
    graph = g.compile(checkpointer=lib.saver())
    graph.step_timeout = QUICK
    lib.invoke(graph, {"x": 0, "log": []}, thread(1))
    lib.invoke(graph, None, thread(1))


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))


@pytest.mark.parametrize("name", [name for name in CAUSES if "sync_run" not in name])
def test_same_as_langgraph_on_async_saver(name, async_saver_factory):  # noqa: F811
    scenario, factory = CAUSES[name], async_saver_factory
    assert_same(name, record(scenario, LANGGRAPH, factory), record(scenario, OURS, factory))


def test_a_send_with_a_timeout_is_stored_as_langgraph_stores_it():
    """Same bytes both ways: a pending Send keeps its TimeoutPolicy across the two libraries."""
    stored = {}
    for lib in (LANGGRAPH, OURS):
        packet = lib.Send("work", {"x": 1}, timeout=lib.TimeoutPolicy(run_timeout=1,
                                                                      idle_timeout=2))
        stored[lib.name] = lib.JsonPlusSerializer().dumps_typed(packet)
    assert stored["langgraph"] == stored["ours"]
    back = OURS.JsonPlusSerializer().loads_typed(stored["langgraph"])
    assert back.timeout == OURS.TimeoutPolicy(run_timeout=1.0, idle_timeout=2.0)
