"""The saver contract: what every saver must do, checked on each of them.

One set of cases runs on InMemorySaver, SqliteSaver, AsyncSqliteSaver, PostgresSaver and
AsyncPostgresSaver. The async savers are driven through their async verbs (aput, alist, ...),
awaited on the event loop they were made on. Files per saver keep only what is specific to it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from typing import Any, Iterator

import pytest

from lgcheckpoint.checkpoint.base import empty_checkpoint
from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.errors import MissingConfigError

SAVERS = ["memory", "sqlite", "sqlite-async", "postgres", "postgres-async"]


class SyncVerbs:
    """A sync saver's verbs, as they are (list collected into a list)."""

    def __init__(self, saver: Any) -> None:
        self.saver = saver
        self.get_tuple, self.put, self.put_writes = saver.get_tuple, saver.put, saver.put_writes
        self.delete_thread, self.delete_for_runs = saver.delete_thread, saver.delete_for_runs
        self.copy_thread, self.prune = saver.copy_thread, saver.prune

    def list(self, config: Any, **kwargs: Any) -> list:
        return list(self.saver.list(config, **kwargs))


class AsyncVerbs:
    """An async saver's a-verbs, each awaited on the saver's own event loop (another thread)."""

    def __init__(self, saver: Any, loop: asyncio.AbstractEventLoop) -> None:
        self.saver, self.loop = saver, loop
        awaited = self.awaiting
        self.get_tuple, self.put = awaited(saver.aget_tuple), awaited(saver.aput)
        self.put_writes = awaited(saver.aput_writes)
        self.delete_thread = awaited(saver.adelete_thread)
        self.delete_for_runs = awaited(saver.adelete_for_runs)
        self.copy_thread, self.prune = awaited(saver.acopy_thread), awaited(saver.aprune)

    def awaiting(self, averb: Any) -> Any:
        return lambda *args, **kwargs: self.wait(averb(*args, **kwargs))

    def wait(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout=30)

    def list(self, config: Any, **kwargs: Any) -> list:
        async def collect() -> list:
            return [t async for t in self.saver.alist(config, **kwargs)]
        return self.wait(collect())


@contextlib.contextmanager
def event_loop_thread() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        yield loop
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


@pytest.fixture(params=SAVERS)
def saver(request, tmp_path) -> Iterator[Any]:
    """Each saver behind one interface, on a fresh SQLite file or the test Postgres database."""
    kind = request.param
    if kind == "memory":
        yield SyncVerbs(InMemorySaver())
    elif kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(str(tmp_path / "contract.sqlite")) as sqlite_saver:
            yield SyncVerbs(sqlite_saver)
    elif kind == "postgres":
        from lgcheckpoint.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(request.getfixturevalue("postgres_uri")) as pg:
            pg.setup()
            yield SyncVerbs(pg)
    else:
        with event_loop_thread() as loop:
            opened: contextlib.AsyncExitStack = contextlib.AsyncExitStack()

            async def open_saver() -> Any:
                if kind == "sqlite-async":
                    from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver

                    path = str(tmp_path / "contract.sqlite")
                    return await opened.enter_async_context(
                        AsyncSqliteSaver.from_conn_string(path))
                from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver

                pg = await opened.enter_async_context(AsyncPostgresSaver.from_conn_string(
                    request.getfixturevalue("postgres_uri")))
                await pg.setup()
                return pg

            verbs = AsyncVerbs(asyncio.run_coroutine_threadsafe(open_saver(), loop).result(), loop)
            try:
                yield verbs
            finally:
                verbs.wait(opened.aclose())


def new_thread() -> str:
    """A thread id of its own: the Postgres database is shared by the whole session."""
    return f"contract-{uuid.uuid4().hex[:12]}"


def config(thread_id: str, checkpoint_id: str | None = None, ns: str = "") -> dict:
    conf = {"thread_id": thread_id, "checkpoint_ns": ns}
    if checkpoint_id is not None:
        conf["checkpoint_id"] = checkpoint_id
    return {"configurable": conf}


def put_chain(saver: Any, thread_id: str, metadata: list[dict]) -> list[dict]:
    """One checkpoint per metadata dict, each the child of the one before; their configs."""
    configs: list[dict] = []
    for step, meta in enumerate(metadata):
        checkpoint = empty_checkpoint()
        checkpoint["id"] = str(uuid6(clock_seq=step))
        version = saver.saver.get_next_version(None if step == 0 else str(step), None)
        checkpoint["channel_values"] = {"n": step}
        checkpoint["channel_versions"] = {"n": version}
        parent = configs[-1] if configs else config(thread_id)
        configs.append(saver.put(parent, checkpoint, meta, {"n": version}))
    return configs


# --- reading back --------------------------------------------------------------------------------
def test_filter_matches_metadata_keys_by_equality(saver):
    thread = new_thread()
    put_chain(saver, thread, [{"source": "input", "step": -1, "user": "ann", "a.b": 1},
                              {"source": "loop", "step": 0, "user": "bob"}])

    def steps(**filter: Any) -> list[int]:
        return [t.metadata["step"] for t in saver.list(config(thread), filter=filter)]

    assert steps() == [0, -1]  # newest first
    assert steps(source="loop") == [0]
    assert steps(user="ann", step=-1) == [-1]
    assert steps(user="ann", step=0) == []
    assert steps(**{"a.b": 1}) == [-1]  # a key with a dot is one plain key
    assert steps(missing="x") == []


def test_writes_come_back_in_the_order_the_loop_applies_them(saver):
    thread = new_thread()
    (saved,) = put_chain(saver, thread, [{"step": 0}])
    saver.put_writes(saved, [("b", 1), ("b", 2)], "task-2", "~__pregel_pull, b")
    saver.put_writes(saved, [("a", 1)], "task-1", "~__pregel_pull, a")
    saver.put_writes(saved, [("b", 99)], "task-2", "~__pregel_pull, b")  # a retry: first wins
    saver.put_writes(saved, [("__error__", "first")], "task-3", "~__pregel_pull, c")
    saver.put_writes(saved, [("__error__", "second")], "task-3", "~__pregel_pull, c")
    pending = saver.get_tuple(saved).pending_writes
    assert pending == [("task-1", "a", 1), ("task-2", "b", 1), ("task-2", "b", 2),
                       ("task-3", "__error__", "second")]  # special channels are replaced


def test_latest_and_named_checkpoints_with_their_parents(saver):
    thread = new_thread()
    first, second = put_chain(saver, thread, [{"step": 0}, {"step": 1}])
    latest = saver.get_tuple(config(thread))
    assert latest.config["configurable"]["checkpoint_id"] == second["configurable"][
        "checkpoint_id"]
    assert latest.parent_config["configurable"]["checkpoint_id"] == first["configurable"][
        "checkpoint_id"]
    assert saver.get_tuple(first).checkpoint["channel_values"] == {"n": 0}
    assert saver.get_tuple(config(thread, str(uuid6(clock_seq=9)))) is None
    assert saver.get_tuple(config(new_thread())) is None


# --- bad input ------------------------------------------------------------------------------------
def test_bad_configs_and_arguments_say_what_to_do(saver):
    with pytest.raises(MissingConfigError, match="thread_id"):
        saver.get_tuple({"configurable": {}})
    with pytest.raises(MissingConfigError, match="thread_id"):
        saver.put({}, empty_checkpoint(), {}, {})
    with pytest.raises(MissingConfigError, match="checkpoint_id"):
        saver.put_writes(config(new_thread()), [("a", 1)], "task")
    with pytest.raises(TypeError, match=r"prune\(\['t'\]\)"):
        saver.prune("t")
    with pytest.raises(ValueError, match="unknown prune strategy"):
        saver.prune(["t"], strategy="oldest")
    with pytest.raises(TypeError, match="not a single string"):
        saver.delete_for_runs("run-1")
    for limit in (-1, "10", 2.0, True):  # one check, base.list_limit, in every saver
        with pytest.raises(ValueError, match="limit must be a non-negative int"):
            list(saver.list(None, limit=limit))
    assert isinstance(MissingConfigError("x"), (KeyError, ValueError))  # either except works


# --- thread operations ----------------------------------------------------------------------------
def test_copy_then_delete_thread(saver):
    source, target = new_thread(), new_thread()
    configs = put_chain(saver, source, [{"step": 0}, {"step": 1}])
    saver.put_writes(configs[-1], [("n", 5)], "task-1", "")
    saver.copy_thread(source, target)
    copied = saver.get_tuple(config(target))
    assert copied.checkpoint["id"] == configs[-1]["configurable"]["checkpoint_id"]
    assert copied.pending_writes == [("task-1", "n", 5)]
    assert len(saver.list(config(target))) == 2
    saver.delete_thread(source)
    assert saver.get_tuple(config(source)) is None and saver.list(config(source)) == []
    assert len(saver.list(config(target))) == 2  # the copy is its own


def test_prune_keeps_the_latest_or_deletes_everything(saver):
    kept, gone = new_thread(), new_thread()
    configs = put_chain(saver, kept, [{"step": 0}, {"step": 1}, {"step": 2}])
    put_chain(saver, gone, [{"step": 0}])
    saver.prune([kept], strategy="keep_latest")
    (latest,) = saver.list(config(kept))
    assert latest.checkpoint["id"] == configs[-1]["configurable"]["checkpoint_id"]
    assert latest.parent_config is None  # its parent is gone
    assert latest.checkpoint["channel_values"] == {"n": 2}
    saver.prune([kept, gone], strategy="delete")
    assert saver.list(config(kept)) == [] and saver.list(config(gone)) == []
