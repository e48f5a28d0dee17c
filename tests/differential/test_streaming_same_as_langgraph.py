"""Streaming while a step runs, against LangGraph: what the caller gets, and when.

A slow node waits until the caller has received an earlier chunk (an event the reading loop sets),
so the record shows each chunk in the order it reached the caller beside what the nodes saw:
"released by the caller: True" only if that chunk arrived while the node still ran (a stream that
held chunks until the step ended would time out and record False). The early-close scenarios
stop reading after the first chunk and compare what each library saved.
"""

import asyncio
import operator
import threading
from contextlib import aclosing, closing
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread

CAUSES, scenario = registry()
PATIENCE = 5.0  # seconds a node waits for the caller (only reached when a chunk is held back)


class State(TypedDict):
    log: Annotated[list, operator.add]


def fan_out(lib: Run, fast, slow):
    """START -> fast and START -> slow, one step of two tasks."""
    g = lib.StateGraph(State)
    g.add_node("fast", fast)
    g.add_node("slow", slow)
    g.add_edge(lib.START, "fast")
    g.add_edge(lib.START, "slow")
    return g.compile(checkpointer=lib.saver())


@scenario
def fast_branch_streams_while_slow_runs(lib: Run):
    """The fast task's updates reach the caller while its sibling still runs (sync). With custom
    mode on, LangGraph also wakes on each chunk; without it, its wait can return before the
    finished task's commit streamed the update, and the chunk then waits for the slow task (a
    race ours does not have: tests/test_streaming.py)."""
    seen = threading.Event()

    def slow(state: State) -> dict:
        lib.note("slow released by the caller", seen.wait(PATIENCE))
        return {"log": ["slow"]}

    graph = fan_out(lib, lambda state: {"log": ["fast"]}, slow)

    def read() -> None:
        for chunk in graph.stream({"log": []}, thread(1), stream_mode=["updates", "custom"]):
            lib.note("chunk", chunk)
            if chunk[0] == "updates" and "fast" in chunk[1]:
                seen.set()

    lib.attempt("stream", read)
    lib.get_state(graph, thread(1))


@scenario
def custom_chunk_arrives_before_its_node_ends(lib: Run):
    """A lone node writes a custom chunk, then waits for the caller to have read it."""
    seen = threading.Event()

    def node(state: State) -> dict:
        writer = lib.get_stream_writer()
        writer({"progress": "half"})
        lib.note("node released by the caller", seen.wait(PATIENCE))
        writer({"progress": "done"})
        return {"log": ["node"]}

    g = lib.StateGraph(State)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    graph = g.compile(checkpointer=lib.saver())

    def read() -> None:
        for chunk in graph.stream({"log": []}, thread(1), stream_mode=["custom", "updates"]):
            lib.note("chunk", chunk)
            if chunk == ("custom", {"progress": "half"}):
                seen.set()

    lib.attempt("stream", read)


@scenario
def async_fast_branch_streams_while_slow_runs(lib: Run):
    """Async twin: the slow node awaits an event the reading loop sets."""
    holder: dict = {}

    async def slow(state: State) -> dict:
        try:
            await asyncio.wait_for(holder["seen"].wait(), PATIENCE)
            lib.note("slow released by the caller", True)
        except asyncio.TimeoutError:
            lib.note("slow released by the caller", False)
        return {"log": ["slow"]}

    async def fast(state: State) -> dict:
        return {"log": ["fast"]}

    graph = fan_out(lib, fast, slow)

    async def read() -> None:
        holder["seen"] = asyncio.Event()
        async for chunk in graph.astream({"log": []}, thread(1), stream_mode="updates"):
            lib.note("chunk", chunk)
            if "fast" in chunk:
                holder["seen"].set()

    lib.attempt("astream", lambda: lib.run_async(read()))
    lib.get_state(graph, thread(1))


@scenario
def closing_astream_cancels_the_running_task(lib: Run):
    """Stop reading after the first chunk: the slow task is cancelled, the fast one's writes
    are saved, and the next step never starts."""
    async def slow(state: State) -> dict:
        try:
            await asyncio.sleep(PATIENCE)
        except asyncio.CancelledError:
            lib.note("slow cancelled", True)
            raise
        return {"log": ["slow"]}

    async def fast(state: State) -> dict:
        return {"log": ["fast"]}

    graph = fan_out(lib, fast, slow)

    async def read() -> None:
        async with aclosing(graph.astream({"log": []}, thread(1))) as chunks:
            async for chunk in chunks:
                lib.note("chunk", chunk)
                break

    lib.attempt("astream", lambda: lib.run_async(read()))
    lib.get_state(graph, thread(1))


@scenario
def closing_a_sync_stream_lets_the_step_finish(lib: Run):
    """Sync: a thread cannot be stopped, so closing waits for the slow task; both are saved."""
    def slow(state: State) -> dict:
        threading.Event().wait(0.2)
        lib.note("slow ran to its end", True)
        return {"log": ["slow"]}

    graph = fan_out(lib, lambda state: {"log": ["fast"]}, slow)

    def read() -> None:
        with closing(graph.stream({"log": []}, thread(1))) as chunks:
            first = next(chunks)
        # noted after the close: LangGraph may hand over fast's chunk before or after slow ends
        # (its wait can return before the commit callback streamed the chunk)
        lib.note("first chunk", first)

    lib.attempt("stream", read)
    lib.get_state(graph, thread(1))


@scenario
def closing_an_entrypoints_astream_cancels_its_calls(lib: Run):
    """An entrypoint awaits a fast and a slow @task; the caller stops after the fast one's
    chunk: the slow call is cancelled, and the saver keeps what LangGraph keeps."""
    @lib.task
    async def fast() -> str:
        return "fast"

    @lib.task
    async def slow() -> str:
        try:
            await asyncio.sleep(PATIENCE)
        except asyncio.CancelledError:
            lib.note("slow cancelled", True)
            raise
        return "slow"

    @lib.entrypoint(checkpointer=lib.saver())
    async def main(inputs: dict) -> list:
        return list(await asyncio.gather(fast(), slow()))

    async def read() -> None:
        async with aclosing(main.astream({}, thread(1))) as chunks:
            async for chunk in chunks:
                lib.note("chunk", chunk)
                break

    lib.attempt("astream", lambda: lib.run_async(read()))
    lib.get_state(main, thread(1))


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))
