"""list() and get_state_history over more than one page: SqliteSaver reads a page's writes in one
SELECT per (thread, namespace), and history builds each snapshot while the list is still open.
The reference is InMemorySaver holding the same puts. Next: tests/test_complexity.py."""

from __future__ import annotations

import asyncio
import copy
import operator
from contextlib import nullcontext
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.channels import DeltaChannel
from lgcheckpoint.checkpoint.base import empty_checkpoint
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver
from lgcheckpoint.checkpoint.sqlite.sql import PAGE_SIZE
from lgcheckpoint.constants import NULL_TASK_ID
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.pregel import state

THREADS, NAMESPACES, ROUNDS = ("t0", "t1"), ("", "inner:1"), 40  # 160 checkpoints, 2 pages


def puts():
    """(config, checkpoint, metadata, versions, writes) for every (thread, ns), round-robin, so
    every page of list(None) holds checkpoints of all four; most checkpoints carry writes."""
    parents = {(t, ns): None for t in THREADS for ns in NAMESPACES}
    for step in range(ROUNDS):
        for (thread_id, ns), parent_id in parents.items():
            version = f"{step + 1:08}.0"
            checkpoint = {**empty_checkpoint(), "id": str(uuid6(clock_seq=step)),
                          "channel_values": {"n": step, "log": [thread_id, ns, step]},
                          "channel_versions": {"n": version, "log": version}}
            conf = {"thread_id": thread_id, "checkpoint_ns": ns, "checkpoint_id": parent_id}
            metadata = {"source": "loop", "step": step, "parents": {}, "who": thread_id}
            # task ids sort against their paths, so the stored order must follow the path
            writes = [] if step % 5 == 0 else [
                ("task-b", "~0", [("n", step), ("log", f"b{step}")]),
                ("task-a", "~1", [("n", -step), ("log", f"a{step}")])]
            yield {"configurable": conf}, checkpoint, metadata, {"n": version, "log": version}, \
                writes
            parents[(thread_id, ns)] = checkpoint["id"]


PUTS = list(puts())  # once: both savers get the same checkpoint ids
MIDDLE = {"configurable": {"checkpoint_id": PUTS[len(PUTS) // 2][1]["id"]}}


def fill(saver) -> None:
    for config, checkpoint, metadata, versions, writes in PUTS:
        saved = saver.put(config, checkpoint, metadata, versions)
        for task_id, path, task_writes in writes:
            saver.put_writes(saved, task_writes, task_id, path)
    saver.copy_thread("t0", "t0-copy")  # the same checkpoint ids in a third thread


async def afill(saver) -> None:
    for config, checkpoint, metadata, versions, writes in PUTS:
        saved = await saver.aput(config, checkpoint, metadata, versions)
        for task_id, path, task_writes in writes:
            await saver.aput_writes(saved, task_writes, task_id, path)
    await saver.acopy_thread("t0", "t0-copy")


def key(saved) -> tuple[str, str, str]:
    conf = saved.config["configurable"]
    return conf["checkpoint_id"], conf["thread_id"], conf["checkpoint_ns"]


def fields(tuples) -> list:
    """Every field of each tuple, sorted by (id, thread, ns): the savers' orders may differ."""
    return sorted((key(t), t.config, t.checkpoint, t.metadata, t.parent_config, t.pending_writes)
                  for t in tuples)


def expected(reference, config, kwargs) -> list:
    """InMemorySaver's answer; a limit keeps the newest by (id, thread, ns), SQLite's order."""
    limit = kwargs.get("limit")
    rows = fields(reference.list(config, **{k: v for k, v in kwargs.items() if k != "limit"}))
    return rows if limit is None else sorted(rows[::-1][:limit])


SELECTIONS = {  # list() arguments whose pages span threads, namespaces, or neither
    "every thread": (None, {}),
    "one thread, every namespace": ({"configurable": {"thread_id": "t1"}}, {}),
    "one namespace": ({"configurable": {"thread_id": "t0", "checkpoint_ns": "inner:1"}}, {}),
    "filtered, limited": (None, {"filter": {"who": "t0"}, "limit": ROUNDS + 7}),
    "before, limited": (None, {"before": MIDDLE, "limit": PAGE_SIZE // 2 + 3}),
    "before": ({"configurable": {"thread_id": "t1"}}, {"before": MIDDLE}),
}


@pytest.fixture(scope="module")
def reference():
    saver = InMemorySaver()
    fill(saver)
    return saver


def test_puts_fill_more_than_a_page():
    assert len(PUTS) > PAGE_SIZE


@pytest.mark.parametrize("name", SELECTIONS)
def test_sqlite_pages_match_memory(tmp_path, reference, name):
    """Field by field, pending writes in order, over pages spanning threads and namespaces."""
    config, kwargs = SELECTIONS[name]
    with SqliteSaver.from_conn_string(str(tmp_path / "pages.sqlite")) as saver:
        fill(saver)
        ours = list(saver.list(config, **kwargs))
    assert ours and [key(t) for t in ours] == sorted(map(key, ours), reverse=True)
    assert fields(ours) == expected(reference, config, kwargs)
    assert any(t.pending_writes for t in ours) and any(not t.pending_writes for t in ours)


@pytest.mark.parametrize("name", SELECTIONS)
def test_async_sqlite_pages_match_memory(tmp_path, reference, name):
    config, kwargs = SELECTIONS[name]

    async def read():
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "pages.sqlite")) as saver:
            await afill(saver)
            return [t async for t in saver.alist(config, **kwargs)]

    ours = asyncio.run(read())
    assert ours and fields(ours) == expected(reference, config, kwargs)


def test_sqlite_write_order_follows_task_path(tmp_path):
    """task-b (path ~0) before task-a (path ~1), each in its own idx order."""
    with SqliteSaver.from_conn_string(str(tmp_path / "order.sqlite")) as saver:
        fill(saver)
        saved = next(t for t in saver.list(None) if t.pending_writes)
    step = saved.checkpoint["channel_values"]["n"]
    assert saved.pending_writes == [("task-b", "n", step), ("task-b", "log", f"b{step}"),
                                    ("task-a", "n", -step), ("task-a", "log", f"a{step}")]


# --- get_state_history while the list is open ----------------------------------------------------
def extend(state, writes):
    return [*state, *(item for write in writes for item in write)]


class Growing(TypedDict):
    items: Annotated[list, DeltaChannel(extend, snapshot_frequency=7)]
    n: Annotated[int, operator.add]


LOOPS = PAGE_SIZE + 30  # the history spans two of SqliteSaver's pages


def growing_graph(saver):
    """One node appending n to a delta channel (rebuilt from the saver in every snapshot)."""
    g = StateGraph(Growing)
    g.add_node("a", lambda s: {"items": [s["n"]], "n": 1})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "a" if s["n"] < LOOPS else END)
    return g.compile(checkpointer=saver)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_history_while_the_thread_grows(tmp_path, kind):
    """Snapshots read the saver (delta channels) while list() is open, and a write between two
    snapshots neither blocks nor changes the rest: the history is the one read before."""
    path = str(tmp_path / "history.sqlite")
    with nullcontext(InMemorySaver()) if kind == "memory" else SqliteSaver.from_conn_string(
            path) as saver:
        check_history_while_growing(growing_graph(saver))


def check_history_while_growing(app) -> None:
    config = {"configurable": {"thread_id": "g"}, "recursion_limit": 10 * LOOPS}
    app.invoke({"items": [], "n": 0}, config)
    before = list(app.get_state_history(config))
    assert len(before) > PAGE_SIZE
    for snap in before:  # every delta value rebuilt: n items for n
        assert snap.values.get("items", []) == list(range(snap.values.get("n", 0)))
    history = app.get_state_history(config)
    during = [next(history)]
    app.update_state(config, {"n": 1000})  # a newer checkpoint while the list is open
    during += list(history)
    assert during == before
    assert len(list(app.get_state_history(config))) == len(before) + 1


# --- a snapshot reads the saved checkpoint; it copies only what writes will change ---------------
class Count(TypedDict):
    n: int


def paused_before_inc():
    """A counter stopped before its step, so the checkpoint has one task still to run."""
    g = StateGraph(Count)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(START, "inc")
    g.add_edge("inc", END)
    saver = InMemorySaver()
    app, config = g.compile(checkpointer=saver), {"configurable": {"thread_id": "s"}}
    app.invoke({"n": 0}, config, interrupt_before=["inc"])
    return app, saver, config


@pytest.mark.parametrize("live", [False, True])
def test_snapshot_leaves_the_saved_tuple_alone(live):
    """Writes land on the restored checkpoint, never on the saver's tuple: a null write (both
    ways), and shown live, the finished task's (it marks what inc has seen)."""
    app, saver, config = paused_before_inc()
    head = saver.get_tuple(config).config
    saver.put_writes(head, [("n", 5)], NULL_TASK_ID)
    saver.put_writes(head, [("n", 7)], app.get_state(config).tasks[0].id)
    saved = saver.get_tuple(config)
    before = copy.deepcopy(saved.checkpoint)
    snap = state.snapshot(app, saved.config, saved, saver, live=live)
    assert snap.values == {"n": 7 if live else 5} and saved.checkpoint == before
