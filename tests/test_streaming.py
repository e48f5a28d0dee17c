"""Streaming while a step runs (pregel/live.py): chunks reach the caller before the step ends.

No timing thresholds: a node waits on an event that only the reading loop sets, after it has
received the chunk under test. If the chunk were held until the step ended, the node would wait
its full PATIENCE and record False. LangGraph's order is compared in
tests/differential/test_streaming_same_as_langgraph.py.
"""

import asyncio
import operator
import threading
from contextlib import aclosing, closing
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.config import get_stream_writer
from lgcheckpoint.func import entrypoint, task
from lgcheckpoint.graph import START, StateGraph

PATIENCE = 5.0  # seconds a node waits for the caller; reached only when streaming is broken
THREAD = {"configurable": {"thread_id": "1"}}


class State(TypedDict):
    log: Annotated[list, operator.add]


def fan_out(fast, slow, saver=None):
    g = StateGraph(State)
    g.add_node("fast", fast)
    g.add_node("slow", slow)
    g.add_edge(START, "fast")
    g.add_edge(START, "slow")
    return g.compile(checkpointer=saver)


def test_fast_task_updates_arrive_while_its_sibling_runs():
    seen, released = threading.Event(), []

    def slow(state: State) -> dict:
        released.append(seen.wait(PATIENCE))
        return {"log": ["slow"]}

    graph = fan_out(lambda state: {"log": ["fast"]}, slow)
    chunks = []
    for chunk in graph.stream({"log": []}, stream_mode="updates"):
        chunks.append(chunk)
        if "fast" in chunk:
            seen.set()
    assert released == [True]
    assert chunks == [{"fast": {"log": ["fast"]}}, {"slow": {"log": ["slow"]}}]


def test_custom_chunk_arrives_before_its_node_ends():
    seen, released = threading.Event(), []

    def node(state: State) -> dict:
        get_stream_writer()("half")
        released.append(seen.wait(PATIENCE))
        get_stream_writer()("done")
        return {"log": ["node"]}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_edge(START, "node")
    chunks = []
    for chunk in g.compile().stream({"log": []}, stream_mode=["custom", "updates"]):
        chunks.append(chunk)
        if chunk == ("custom", "half"):
            seen.set()
    assert released == [True]
    assert chunks == [("custom", "half"), ("custom", "done"),
                      ("updates", {"node": {"log": ["node"]}})]


def test_a_lone_task_runs_in_the_callers_thread_unless_chunks_come_from_inside():
    """LangGraph's rule: a lone task runs inline, unless custom/subgraphs/entrypoint streaming."""
    threads = []

    def node(state: State) -> dict:
        threads.append(threading.current_thread())
        return {"log": ["node"]}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_edge(START, "node")
    graph = g.compile()
    list(graph.stream({"log": []}, stream_mode="updates"))
    list(graph.stream({"log": []}, stream_mode="custom"))
    assert threads[0] is threading.current_thread()
    assert threads[1] is not threading.current_thread()


def test_an_entrypoint_streams_each_task_result_as_it_commits():
    seen, released = threading.Event(), []

    @task
    def first() -> int:
        return 1

    @task
    def second() -> int:
        released.append(seen.wait(PATIENCE))
        return 2

    @entrypoint()
    def main(inputs: dict) -> list:
        return [first().result(), second().result()]

    chunks = []
    for chunk in main.stream({}):
        chunks.append(chunk)
        if "first" in chunk:
            seen.set()
    assert released == [True]
    assert chunks == [{"first": 1}, {"second": 2}, {"main": [1, 2]}]


def test_a_failing_task_still_fails_the_stream():
    def broken(state: State) -> dict:
        raise ValueError("broken node")

    graph = fan_out(lambda state: {"log": ["fast"]}, broken)
    with pytest.raises(ValueError, match="broken node"):
        list(graph.stream({"log": []}))


def test_closing_a_sync_stream_lets_the_running_step_finish_and_saves_it():
    def slow(state: State) -> dict:
        threading.Event().wait(0.1)
        return {"log": ["slow"]}

    graph = fan_out(lambda state: {"log": ["fast"]}, slow, InMemorySaver())
    with closing(graph.stream({"log": []}, THREAD)) as chunks:
        assert next(chunks) == {"fast": {"log": ["fast"]}}
    state = graph.get_state(THREAD)
    assert sorted(state.values["log"]) == ["fast", "slow"] and state.next == ()


def test_closing_astream_cancels_the_running_task_and_keeps_the_finished_ones_writes():
    cancelled = []

    async def slow(state: State) -> dict:
        try:
            await asyncio.sleep(PATIENCE)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return {"log": ["slow"]}

    async def fast(state: State) -> dict:
        return {"log": ["fast"]}

    graph = fan_out(fast, slow, InMemorySaver())

    async def first_chunk():
        async with aclosing(graph.astream({"log": []}, THREAD)) as chunks:
            async for chunk in chunks:
                return chunk

    assert asyncio.run(first_chunk()) == {"fast": {"log": ["fast"]}}
    assert cancelled == [True]
    state = graph.get_state(THREAD)
    assert state.values == {"log": ["fast"]} and state.next == ("slow",)


def test_closing_an_entrypoints_astream_cancels_its_running_call():
    cancelled = []

    @task
    async def fast() -> str:
        return "fast"

    @task
    async def slow() -> str:
        try:
            await asyncio.sleep(PATIENCE)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "slow"

    @entrypoint(checkpointer=InMemorySaver())
    async def main(inputs: dict) -> list:
        return list(await asyncio.gather(fast(), slow()))

    async def first_chunk():
        async with aclosing(main.astream({}, THREAD)) as chunks:
            async for chunk in chunks:
                return chunk

    assert asyncio.run(first_chunk()) == {"fast": "fast"}
    assert cancelled == [True]
    (entry,) = main.get_state(THREAD).tasks  # the entrypoint's task, saved as cancelled
    assert "CancelledError" in repr(entry.error)  # as saved (the serializer keeps its repr)
