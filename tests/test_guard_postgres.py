"""The thread guard on Postgres leaves nothing behind: its advisory lock lives for the run only, on
a connection the caller gave (the saver's own, or one its pool lends the run), so once the caller
closes its connection or pool the database can be dropped without FORCE (issue 26, item 1)."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from typing import TypedDict

import psycopg
import pytest
from psycopg.conninfo import make_conninfo
from psycopg_pool import AsyncConnectionPool, ConnectionPool

from lgcheckpoint.checkpoint.postgres import PostgresSaver
from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver
from lgcheckpoint.errors import StaleResumeError, ThreadBusyError
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.types import Command
from tests.reliability import two_humans_child

pytestmark = pytest.mark.postgres


class State(TypedDict):
    n: int


def admin(uri: str) -> str:
    """The same server's maintenance database, to create, watch and drop ours from."""
    return make_conninfo(uri, dbname="postgres")


@pytest.fixture
def database(postgres_uri):
    """A database of this test's own, which the test itself must be able to drop."""
    name = f"lgc_guard_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin(postgres_uri), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield name, make_conninfo(postgres_uri, dbname=name)
    with psycopg.connect(admin(postgres_uri), autocommit=True) as conn:  # if the test failed
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def sessions(uri: str, name: str) -> list[int]:
    """Backend pids connected to the database, the watcher's own excluded."""
    with psycopg.connect(admin(uri), autocommit=True) as conn:
        rows = conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (name,))
        return sorted(pid for (pid,) in rows.fetchall())


def advisory_holders(uri: str, name: str) -> list[int]:
    """Pids holding an advisory lock in the database."""
    with psycopg.connect(admin(uri), autocommit=True) as conn:
        rows = conn.execute(
            "SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database "
            "WHERE l.locktype = 'advisory' AND l.granted AND d.datname = %s", (name,))
        return sorted(pid for (pid,) in rows.fetchall())


def counting_graph(saver, seen: dict | None = None, uri: str = "", name: str = ""):
    """START -> a: while a runs, it records who holds the thread's lock and who is connected."""

    def a(state: State) -> State:
        if seen is not None:
            seen["holders"], seen["sessions"] = advisory_holders(uri, name), sessions(uri, name)
        return {"n": state["n"] + 1}

    builder = StateGraph(State)
    builder.add_node("a", a)
    builder.add_edge(START, "a")
    return builder.compile(checkpointer=saver)


def drop(uri: str, name: str) -> None:
    """DROP DATABASE without FORCE, once the caller closed what it opened: no session is left
    (a closed connection's server process ends within moments), so the drop cannot be refused.
    Checked by sessions, not by a stopwatch: a loaded machine makes a clean drop slow too."""
    deadline = time.monotonic() + 3
    while (left := sessions(uri, name)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"sessions still open after the caller closed its own: {left}"
    with psycopg.connect(admin(uri), autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}"')  # raises ObjectInUse if anyone is connected


@pytest.mark.parametrize("kind", ["connection", "pool"])
def test_a_sync_run_leaves_no_session_and_the_caller_can_drop_the_database(database, kind):
    name, uri = database
    conn = (psycopg.connect(uri, autocommit=True) if kind == "connection" else
            ConnectionPool(uri, min_size=2, max_size=2, kwargs={"autocommit": True}, open=True))
    if kind == "pool":
        conn.wait()  # both of the pool's connections are open
    theirs = sessions(uri, name)  # the caller's own: one connection, or the pool's two
    saver = PostgresSaver(conn)
    saver.setup()
    seen: dict = {}
    graph = counting_graph(saver, seen, uri, name)
    assert graph.invoke({"n": 0}, {"configurable": {"thread_id": "t"}}) == {"n": 1}
    assert seen["sessions"] == theirs, "the run opened a session of its own"
    assert len(seen["holders"]) == 1 and set(seen["holders"]) <= set(theirs)
    assert sessions(uri, name) == theirs and advisory_holders(uri, name) == []
    conn.close()
    drop(uri, name)


@pytest.mark.parametrize("kind", ["connection", "pool"])
def test_an_async_run_leaves_no_session_and_the_caller_can_drop_the_database(database, kind):
    name, uri = database

    async def main() -> tuple[list[int], dict, list[int], list[int]]:
        if kind == "connection":
            conn = await psycopg.AsyncConnection.connect(uri, autocommit=True)
        else:
            conn = AsyncConnectionPool(uri, min_size=2, max_size=2,
                                       kwargs={"autocommit": True}, open=False)
            await conn.open(wait=True)
        theirs = await asyncio.to_thread(sessions, uri, name)
        saver = AsyncPostgresSaver(conn)
        await saver.setup()
        seen: dict = {}
        graph = counting_graph(saver, seen, uri, name)
        assert await graph.ainvoke({"n": 0}, {"configurable": {"thread_id": "t"}}) == {"n": 1}
        after = await asyncio.to_thread(sessions, uri, name)
        holders = await asyncio.to_thread(advisory_holders, uri, name)
        await conn.close()
        return theirs, seen, after, holders

    theirs, seen, after, holders = asyncio.run(main())
    assert seen["sessions"] == theirs, "the run opened a session of its own"
    assert len(seen["holders"]) == 1 and set(seen["holders"]) <= set(theirs)
    assert after == theirs and holders == []
    drop(uri, name)


def test_a_pool_of_one_connection_serves_runs_on_many_threads(postgres_uri):
    """A run's statements go through the connection its lock is held on: it never needs a second
    one, so more runs than connections wait for the pool instead of deadlocking."""
    with ConnectionPool(postgres_uri, min_size=1, max_size=1, kwargs={"autocommit": True},
                        timeout=20) as pool:
        saver = PostgresSaver(pool)
        saver.setup()
        graph = counting_graph(saver)
        results: list = []

        def run(i: int) -> None:
            try:
                results.append(graph.invoke({"n": i}, {"configurable": {"thread_id": f"one-{i}"}}))
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                results.append(exc)

        workers = [threading.Thread(target=run, args=(i,)) for i in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert sorted(r["n"] for r in results) == [1, 2, 3, 4], results


def test_an_async_pool_of_one_connection_serves_runs_on_many_threads(postgres_uri):
    async def main() -> list:
        async with AsyncConnectionPool(postgres_uri, min_size=1, max_size=1, timeout=20,
                                       kwargs={"autocommit": True}, open=False) as pool:
            saver = AsyncPostgresSaver(pool)
            await saver.setup()
            graph = counting_graph(saver)
            return await asyncio.gather(*(
                graph.ainvoke({"n": i}, {"configurable": {"thread_id": f"aone-{i}"}})
                for i in range(4)))

    assert sorted(r["n"] for r in asyncio.run(main())) == [1, 2, 3, 4]


@pytest.mark.parametrize("strategy", ["reject", "enqueue"])
def test_runs_sharing_one_connection_are_kept_apart(postgres_uri, strategy, tmp_path):
    """One session may take the same advisory lock twice, so runs of two savers on one
    connection are kept apart by the guard's in-process lock: the node runs once."""
    side = tmp_path / "side.txt"
    thread = f"shared-{strategy}-{uuid.uuid4().hex[:6]}"
    config = {"configurable": {"thread_id": thread}}
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        savers = [PostgresSaver(conn), PostgresSaver(conn)]
        savers[0].setup()
        graphs = [two_humans_child.review_graph(s, str(side), seconds=0.2) for s in savers]
        graphs[0].invoke({"text": "publish?"}, config)
        outcomes, barrier = [], threading.Barrier(4)

        def human(who: int) -> None:
            barrier.wait()
            try:
                graphs[who % 2].invoke(Command(resume=f"yes {who}"), config,
                                       multitask_strategy=strategy)
                outcomes.append("ran")
            except ThreadBusyError:
                outcomes.append("busy")
            except StaleResumeError:
                outcomes.append("stale")

        humans = [threading.Thread(target=human, args=(i,)) for i in range(4)]
        for h in humans:
            h.start()
        for h in humans:
            h.join(30)
    assert sorted(outcomes).count("ran") == 1 and len(outcomes) == 4, outcomes
    assert len(side.read_text().splitlines()) == 1
