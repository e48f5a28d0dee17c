"""A compiled graph used as a langchain Runnable (pregel/as_runnable.py), beside LangGraph: piped,
mapped, retried, bound, given fallbacks, as a node of another graph, streamed through a sequence.

Each scenario runs the same program on both libraries and compares what it returns.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from langchain_core.runnables import (
    Runnable, RunnableLambda, RunnableParallel, RunnablePassthrough,
)
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS

LIBS = pytest.mark.parametrize("lib", [LANGGRAPH, OURS], ids=["langgraph", "ours"])


class State(TypedDict):
    x: int
    seen: Annotated[list, operator.add]


def counter_graph(lib, fail_first: int = 0):
    """x -> x + 1 in node "inc", then "double"; "inc" fails its first `fail_first` calls."""
    calls = {"inc": 0}

    def inc(state: State) -> dict:
        calls["inc"] += 1
        if calls["inc"] <= fail_first:
            raise ValueError(f"flaky call {calls['inc']}")
        return {"x": state["x"] + 1, "seen": ["inc"]}

    def double(state: State) -> dict:
        return {"x": state["x"] * 2, "seen": ["double"]}

    builder = lib.StateGraph(State)
    builder.add_node("inc", inc)
    builder.add_node("double", double)
    builder.add_edge(lib.START, "inc")
    builder.add_edge("inc", "double")
    return builder.compile(), calls


def run_both(scenario) -> None:
    """The scenario's result on ours equals LangGraph's."""
    assert scenario(OURS) == scenario(LANGGRAPH)


def test_pipe_and_or_invoke_and_stream() -> None:
    def scenario(lib):
        app, _ = counter_graph(lib)
        chain = app | RunnablePassthrough()
        piped = app.pipe(RunnableLambda(lambda s: s["x"]), RunnableLambda(lambda x: -x))
        return (chain.invoke({"x": 1, "seen": []}), list(chain.stream({"x": 2, "seen": []})),
                piped.invoke({"x": 3, "seen": []}), piped.batch([{"x": 3, "seen": []}]))
    run_both(scenario)


def test_map_batch_and_async() -> None:
    def scenario(lib):
        app, _ = counter_graph(lib)
        inputs = [{"x": i, "seen": []} for i in range(4)]
        mapped = app.map()
        return (mapped.invoke(inputs), asyncio.run(mapped.ainvoke(inputs)),
                [s["x"] for s in app.batch(inputs)])
    run_both(scenario)


def test_with_retry_runs_the_graph_again() -> None:
    def scenario(lib):
        app, calls = counter_graph(lib, fail_first=2)
        retried = app.with_retry(stop_after_attempt=3, wait_exponential_jitter=False)
        result = retried.invoke({"x": 1, "seen": []})
        return result, calls["inc"]
    run_both(scenario)


def test_with_retry_gives_up() -> None:
    def scenario(lib):
        app, calls = counter_graph(lib, fail_first=5)
        with pytest.raises(ValueError, match="flaky call 2") as info:
            app.with_retry(stop_after_attempt=2, wait_exponential_jitter=False).invoke(
                {"x": 1, "seen": []})
        return str(info.value), calls["inc"]
    run_both(scenario)


def test_with_fallbacks_and_bind() -> None:
    def scenario(lib):
        app, _ = counter_graph(lib, fail_first=10)
        ok, _ = counter_graph(lib)
        fallback = app.with_fallbacks([ok]).invoke({"x": 5, "seen": []})
        bound = ok.bind(stream_mode="values")  # keyword arguments reach invoke / stream
        return fallback, list(bound.stream({"x": 1, "seen": []}))
    run_both(scenario)


def test_a_mapped_graph_as_a_node_with_a_saver() -> None:
    def scenario(lib):
        inner, _ = counter_graph(lib)

        class Outer(TypedDict):
            items: list
            total: int

        def prepare(state: Outer) -> dict:
            return {"items": [{"x": i, "seen": []} for i in state["items"]]}

        inner_each = inner.map() | RunnableLambda(lambda outs: {"total": sum(o["x"] for o in outs)})
        builder = lib.StateGraph(Outer)
        builder.add_node("prepare", prepare)
        builder.add_node("each", RunnableLambda(lambda s: s["items"]) | inner_each)
        builder.add_edge(lib.START, "prepare")
        builder.add_edge("prepare", "each")
        app = builder.compile(checkpointer=lib.InMemorySaver())
        config = {"configurable": {"thread_id": "1"}}
        result = app.invoke({"items": [1, 2, 3], "total": 0}, config)
        return result, app.get_state(config).values
    run_both(scenario)


def test_astream_log_final_output() -> None:
    """astream_log's own patches (the stream and the final output) do not need callbacks."""
    def scenario(lib):
        app, _ = counter_graph(lib)

        async def patches() -> list:
            return [op for log in [p async for p in app.astream_log(
                {"x": 1, "seen": []}, include_names=["none"])] for op in log.ops
                    if op["path"] in ("/streamed_output/-", "/final_output")]
        return asyncio.run(patches())
    run_both(scenario)


def test_a_graph_inside_langchain_compositions() -> None:
    """On the right of ``|``, in a dict of steps: langchain takes the graph as a Runnable."""
    def scenario(lib):
        app, _ = counter_graph(lib)
        before = RunnableLambda(lambda x: {"x": x, "seen": []})
        parallel = RunnableParallel(a=app, b=RunnablePassthrough())
        return (isinstance(app, Runnable), (before | app).invoke(3),
                parallel.invoke({"x": 1, "seen": []}), (before | app | before.map()).get_name())
    run_both(scenario)


def test_astream_log_shows_each_node_run_streamed_and_finished() -> None:
    """With langchain callbacks (pregel/tracing.py), astream_log's handler sees the graph's run and
    each node's run: its streamed output, its final output, in order (ids and times aside)."""
    def scenario(lib):
        app, _ = counter_graph(lib)

        async def patches() -> list:
            return [(op["op"], op["path"], op["value"] if op["path"].endswith("output/-")
                     or op["path"].endswith("final_output") else None)
                    async for log in app.astream_log({"x": 1, "seen": []}) for op in log.ops
                    if not op["path"].endswith("end_time")]
        return asyncio.run(patches())
    run_both(scenario)
