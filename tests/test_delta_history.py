"""DeltaChannel directly: the channel's own rules, what is refused, and get_delta_channel_history
(each saver's fast walk returns what the contract's default walk, one get_tuple per ancestor,
returns, on a thread with a fork). Whole histories against LangGraph: differential/."""

import asyncio
import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.channels import DeltaChannel
from lgcheckpoint.checkpoint.base import BaseCheckpointSaver
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgcheckpoint.graph import END, START, StateGraph


def extend(state, writes):
    return [*state, *(item for write in writes for item in write)]


class State(TypedDict):
    items: Annotated[list, DeltaChannel(extend, snapshot_frequency=3)]
    other: Annotated[list, DeltaChannel(extend, snapshot_frequency=50)]
    n: Annotated[int, operator.add]


def graph(saver):
    g = StateGraph(State)
    g.add_node("a", lambda s: {"items": [s["n"]], "n": 1})
    g.add_node("b", lambda s: {"items": ["b"], "other": [s["n"]]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_conditional_edges("a", lambda s: "a" if s["n"] < 40 else END)
    return g.compile(checkpointer=saver)


def thread_with_fork(saver):
    app, cfg = graph(saver), {"configurable": {"thread_id": "t"}}
    app.invoke({"items": ["start"], "n": 0}, cfg)
    old = list(app.get_state_history(cfg))[25].config
    app.invoke(None, old)  # a fork: its checkpoints must not see the first branch's writes
    return [t.config for t in saver.list(cfg)]


def check_same_as_default(saver, configs):
    for config in configs[::7]:
        fast = saver.get_delta_channel_history(config=config, channels=["items", "other"])
        slow = BaseCheckpointSaver.get_delta_channel_history(
            saver, config=config, channels=["items", "other"])
        assert fast == slow
    assert saver.get_delta_channel_history(config=configs[0], channels=[]) == {}


def test_in_memory_walk_same_as_default():
    saver = InMemorySaver()
    check_same_as_default(saver, thread_with_fork(saver))


def test_sqlite_walk_same_as_default(tmp_path, monkeypatch):
    from lgcheckpoint.checkpoint.sqlite import history

    monkeypatch.setattr(history.HistoryRead, "PAGE", 5)  # many pages: the walk resumes where it was
    with SqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
        configs = thread_with_fork(saver)
        check_same_as_default(saver, configs)
        history = saver.get_delta_channel_history(config=configs[0], channels=["items"])
        assert "seed" in history["items"]  # the walk stopped at a snapshot
        assert len(history["items"]["writes"]) < 3


def test_async_sqlite_walk_same_as_default(tmp_path):
    async def main():
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "t.db")) as saver:
            app, cfg = graph(saver), {"configurable": {"thread_id": "t"}}
            await app.ainvoke({"items": ["start"], "n": 0}, cfg)
            configs = [t.config async for t in saver.alist(cfg)]
            for config in configs[::9]:
                fast = await saver.aget_delta_channel_history(config=config, channels=["items"])
                slow = await BaseCheckpointSaver.aget_delta_channel_history(
                    saver, config=config, channels=["items"])
                assert fast == slow
    asyncio.run(main())


def test_a_saver_without_its_own_walk_gets_the_default_sync_and_async():
    class ThirdParty(InMemorySaver):
        get_delta_channel_history = BaseCheckpointSaver.get_delta_channel_history

    saver = ThirdParty()
    configs = thread_with_fork(saver)
    for config in configs[::11]:
        fast = InMemorySaver.get_delta_channel_history(saver, config=config, channels=["items"])
        assert saver.get_delta_channel_history(config=config, channels=["items"]) == fast
        slow = asyncio.run(saver.aget_delta_channel_history(config=config, channels=["items"]))
        assert slow == fast
    # InMemorySaver's first base is a BaseCheckpointSaver: LangGraph's tests take the default
    # walk from it (InMemorySaver.__mro__[1]), as from LangGraph's own InMemorySaver
    assert InMemorySaver.__mro__[1].get_delta_channel_history is (
        BaseCheckpointSaver.get_delta_channel_history)


@pytest.mark.postgres
def test_postgres_walk_same_as_default(postgres_uri, monkeypatch):
    from lgcheckpoint.checkpoint.postgres import PostgresSaver, sql

    monkeypatch.setattr(sql.HistoryRead, "PAGE", 5)

    with PostgresSaver.from_conn_string(postgres_uri) as saver:
        saver.setup()
        saver.delete_thread("t")
        check_same_as_default(saver, thread_with_fork(saver))
        saver.delete_thread("t")


@pytest.mark.lesson("18_delta_channel")
def test_channel_rules():
    from lgcheckpoint.channels import MISSING
    from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot
    from lgcheckpoint.errors import InvalidUpdateError
    from lgcheckpoint.types import Overwrite

    with pytest.raises(ValueError, match="snapshot_frequency"):
        DeltaChannel(extend, snapshot_frequency=0)
    chan = DeltaChannel(extend, list).from_checkpoint(DeltaSnapshot(["a"]))
    chan.replay_writes([("t", "k", ["b"]), ("t", "k", Overwrite(["x"])), ("t", "k", ["y"])])
    assert chan.get() == ["x", "y"]  # the last Overwrite restarts the fold
    assert chan.checkpoint() is MISSING  # never stored as such: pregel/delta.py decides
    with pytest.raises(InvalidUpdateError, match="Overwrite"):
        chan.update([Overwrite([1]), Overwrite([2])])


@pytest.mark.lesson("18_delta_channel")
def test_exit_durability_keeps_the_writes_a_load_replays():
    """"exit" saves one checkpoint: the run's delta writes go on a stub before it (new thread)."""
    saver = InMemorySaver()
    app = graph(saver)
    exit_cfg, sync_cfg = ({"configurable": {"thread_id": t}} for t in ("exit", "sync"))
    app.invoke({"items": [], "n": 38}, exit_cfg, durability="exit")
    app.invoke({"items": [], "n": 38}, sync_cfg, durability="sync")
    assert app.get_state(exit_cfg).values == app.get_state(sync_cfg).values
    stored = list(saver.list(exit_cfg))
    assert [t.metadata["step"] for t in stored] == [2, -2]  # the last checkpoint, and the stub
    assert stored[1].pending_writes  # where the load finds the writes
