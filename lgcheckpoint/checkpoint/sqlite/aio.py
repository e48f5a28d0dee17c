"""AsyncSqliteSaver: the SQLite saver on aiosqlite; the same statements as SqliteSaver, awaited.

Read it side by side with ``sqlite/__init__.py``: each verb is the same lines with ``await``. The
sync verbs exist for code running in another thread (a sync node inside ``ainvoke``): they hand
the coroutine to the saver's event loop and wait; from the loop's own thread they would deadlock,
so they raise instead. End of the side trip from sqlite/sql.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

import aiosqlite

from lgcheckpoint.checkpoint.base import (
    SyncOverAsync,
    StringVersions,
    BaseCheckpointSaver,
    DeltaChannelHistory,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PutWrites,
    RunnableConfig,
    get_checkpoint_id,
)
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.sqlite import housekeeping, history, pages, sql
from lgcheckpoint.checkpoint.sqlite.explain import explain
from lgcheckpoint.checkpoint.sqlite.sql import Query

__all__ = ["AsyncSqliteSaver"]


class AsyncSqliteSaver(SyncOverAsync, StringVersions, BaseCheckpointSaver[str]):
    """A saver on an ``aiosqlite.Connection``; create it inside the event loop that will use it."""

    def __init__(
        self, conn: aiosqlite.Connection, *, serde: SerializerProtocol | None = None
    ) -> None:
        super().__init__(serde=serde)
        try:
            self.loop = asyncio.get_running_loop()  # where the sync verbs send their coroutines
        except RuntimeError:
            raise RuntimeError("create AsyncSqliteSaver inside a running event loop (in an async "
                               "function), or use the sync SqliteSaver") from None
        self.conn = conn
        self.is_setup = False  # set True to skip creating tables (e.g. on a read-only file)
        self.has_task_path = True  # False only on a read-only file from before LangGraph stored it
        self.lock = asyncio.Lock()  # one statement sequence at a time on the shared connection

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, path: str) -> AsyncIterator[AsyncSqliteSaver]:
        """Open a file (or ":memory:") for as long as the ``async with`` block lasts."""
        async with aiosqlite.connect(path, timeout=sql.BUSY_TIMEOUT_MS / 1000) as conn:
            yield cls(conn)

    async def setup(self) -> None:
        """Create the tables if missing (idempotent; every verb calls it first)."""
        if self.is_setup:
            return
        if not self.conn._thread.is_alive() and self.conn._running:
            await self.conn  # a connection made with aiosqlite.connect() but never awaited
        try:
            await self.conn.executescript(sql.SETUP_SCRIPT)
            await self.conn.execute(sql.ADD_TASK_PATH)
            await self.conn.commit()
        except sqlite3.OperationalError as exc:
            if not sql.setup_done_anyway(exc):
                raise
            self.has_task_path = bool((await self._fetch(Query(sql.HAS_TASK_PATH)))[0][0])
        self.is_setup = True

    # --- the four verbs ------------------------------------------------------------------------
    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                        ) -> dict[str, DeltaChannelHistory]:
        """Ancestors a page at a time until every channel found its seed, then their writes."""
        async with self._locked():  # set up first: it finds out whether the file has task_path
            read = history.HistoryRead(config, channels, self.serde, self.has_task_path)
            query = read.next
            while query is not None:
                query = read.take(await self._fetch(query))
            rows = await self._fetch(read.writes()) if read.visited else []
        return read.result(rows)

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The named checkpoint (or the thread's newest) with its pending writes."""
        query = sql.select_checkpoint(config)
        async with self._locked():
            rows = await self._fetch(query)
            if not rows:
                return None
            writes = await self._fetch(sql.select_writes(rows[0], self.has_task_path))
        named = config if get_checkpoint_id(config) else None  # echoed back, as LangGraph does
        return sql.to_tuple(named, rows[0], writes, self.serde)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Checkpoints newest first: the keys in one SELECT, then a page of rows per lock
        (see ``sql.list_keys``); the lock is never held while the caller works."""
        async with self._locked():
            keys = await self._fetch(sql.list_keys(config, filter, before, limit))
        for query in pages.list_pages(keys):
            async with self._locked():
                rows = await self._fetch(query)
                found = [write for q in pages.select_page_writes(rows, self.has_task_path)
                         for write in await self._fetch(q)]
            writes = pages.writes_by_checkpoint(found)
            for row in rows:
                yield sql.to_tuple(None, row, writes.get(tuple(row[:3]), []), self.serde)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Publish a checkpoint (serialised before the lock is taken)."""
        query, saved = sql.insert_checkpoint(config, checkpoint, metadata, self.serde)
        await self._write([query])
        return saved

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save one task's writes against the checkpoint it ran from."""
        await self._write([sql.insert_writes(config, writes, task_id, task_path, self.serde)])

    async def aput_writes_and_checkpoint(
        self,
        task: PutWrites,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """put_writes then put in one transaction: one commit (one fsync) per step, not two."""
        query, saved = sql.insert_checkpoint(config, checkpoint, metadata, self.serde)
        await self._write([sql.insert_writes(*task, self.serde), query])  # writes first
        return saved

    # --- housekeeping --------------------------------------------------------------------------
    async def adelete_thread(self, thread_id: str) -> None:
        await self._write(sql.delete_thread(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._write(housekeeping.delete_for_runs(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._write(housekeeping.copy_thread(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._write(housekeeping.prune(thread_ids, strategy))

    # --- running statements --------------------------------------------------------------------
    async def _fetch(self, query: Query) -> list[Any]:
        return list(await self.conn.execute_fetchall(query.sql, query.params))

    async def _write(self, queries: list[Query]) -> None:
        """Run statements as one transaction: all of them, or none."""
        async with self._locked():
            # as in SqliteSaver._write: BEGIN IMMEDIATE only on autocommit or an open transaction
            if self.conn.isolation_level is None or self.conn.in_transaction:
                await self.conn.execute("BEGIN IMMEDIATE")
            try:
                for q in queries:
                    await (self.conn.executemany if q.many else self.conn.execute)(q.sql, q.params)
                await self.conn.commit()
            except BaseException:
                await self.conn.rollback()
                raise

    @asynccontextmanager
    async def _locked(self) -> AsyncIterator[None]:
        """Hold the lock (tables set up first); driver errors come out in plain words."""
        async with self.lock:
            try:
                await self.setup()
                yield
            except (sqlite3.Error, ValueError) as exc:
                if (better := explain(exc)) is None:
                    raise
                raise better from exc
