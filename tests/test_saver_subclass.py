"""A user's saver subclass whose put_writes predates task_path still runs (pregel/saves.py):
the runtime passes task_path only when put_writes takes it, and never skips the override."""

import asyncio
import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt


class Trail(TypedDict):
    trail: Annotated[list, operator.add]


def fan_out_then_ask():
    """Two parallel nodes (one writes early, one last in the step), then an interrupt."""
    g = StateGraph(Trail)
    g.add_node("left", lambda s: {"trail": ["left"]})
    g.add_node("right", lambda s: {"trail": ["right"]})
    g.add_node("ask", lambda s: {"trail": [interrupt("name?")]})
    g.add_edge(START, "left")
    g.add_edge(START, "right")
    g.add_edge(["left", "right"], "ask")
    g.add_edge("ask", END)
    return g


def recording(base):
    """base with put_writes overridden in the old three-argument form."""
    class Recording(base):
        def put_writes(self, config, writes, task_id):
            self.recorded.append(sorted(channel for channel, _ in writes))
            return super().put_writes(config, writes, task_id)
    return Recording


def arecording(base):
    """base with aput_writes overridden in the old form (an async saver's put_writes may call
    aput_writes, and InMemorySaver's aput_writes calls put_writes: override one side only)."""
    class Recording(base):
        async def aput_writes(self, config, writes, task_id):
            self.recorded.append(sorted(channel for channel, _ in writes))
            return await super().aput_writes(config, writes, task_id)
    return Recording


@pytest.mark.parametrize("durability", ["sync", "async", "exit"])
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_old_style_put_writes_override_sync(kind, durability, sqlite_path):
    if kind == "memory":
        return run_sync(recording(InMemorySaver)(), durability)
    with recording(SqliteSaver).from_conn_string(sqlite_path) as saver:
        run_sync(saver, durability)


def run_sync(saver, durability):
    saver.recorded = []
    graph = fan_out_then_ask().compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "1"}}
    graph.invoke({"trail": []}, cfg, durability=durability)
    assert graph.get_state(cfg).next == ("ask",)
    assert ["__interrupt__"] in saver.recorded  # written through the override
    if durability != "exit":
        assert saver.recorded.count(["join:left+right:ask", "trail"]) == 2  # both parallel tasks
    assert graph.invoke(Command(resume="Ada"), cfg, durability=durability) == {
        "trail": ["left", "right", "Ada"]}


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_old_style_aput_writes_override_async(kind, sqlite_path):
    async def run():
        if kind == "memory":
            return await run_async(arecording(InMemorySaver)())
        async with arecording(AsyncSqliteSaver).from_conn_string(sqlite_path) as saver:
            return await run_async(saver)

    async def run_async(saver):
        saver.recorded = []
        graph = fan_out_then_ask().compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "1"}}
        await graph.ainvoke({"trail": []}, cfg)
        assert (await graph.aget_state(cfg)).next == ("ask",)
        assert saver.recorded.count(["join:left+right:ask", "trail"]) == 2
        assert ["__interrupt__"] in saver.recorded
        return await graph.ainvoke(Command(resume="Ada"), cfg)
    assert asyncio.run(run()) == {"trail": ["left", "right", "Ada"]}
