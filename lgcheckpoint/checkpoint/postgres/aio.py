"""AsyncPostgresSaver: ``PostgresSaver`` for asyncio — same statements (``sql.py``), with ``await``.

Takes a psycopg ``AsyncConnection`` (guarded by an ``asyncio.Lock``) or an ``AsyncConnectionPool``.
The sync verbs also work, from a thread other than the event loop's: they hand the coroutine to
that loop and wait. End of the side trip from sqlite/sql.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import weakref
from collections.abc import AsyncIterator, Sequence
from typing import Any

import psycopg
from psycopg import AsyncConnection
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

from lgcheckpoint.checkpoint.base import (
    SyncOverAsync,
    StringVersions,
    BaseCheckpointSaver,
    ChannelVersions,
    DeltaChannelHistory,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PutWrites,
    RunnableConfig,
)
from lgcheckpoint.checkpoint.locks import TRY_LOCK_SQL, UNLOCK_SQL
from lgcheckpoint.checkpoint.postgres import (
    Pin, PostgresUnavailableError, ShallowPostgresSaver, _explain_errors, check_usable,
    cursor_of, pinned, sql,
)
from lgcheckpoint.checkpoint.postgres.sql import Statement
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol

AsyncConn = AsyncConnection | AsyncConnectionPool


class AsyncPostgresSaver(SyncOverAsync, StringVersions, BaseCheckpointSaver[str]):
    """The asyncio twin of PostgresSaver: same tables, same rows, native async I/O."""

    # setup() runs the ones this database has not recorded; a subclass may append its own
    MIGRATIONS = sql.MIGRATIONS

    def __init__(
        self, conn: AsyncConn, pipe: Any = None, serde: SerializerProtocol | None = None
    ) -> None:
        # ``pipe`` is accepted so LangGraph code ports unchanged; each verb is one statement anyway
        super().__init__(serde=serde)
        if not isinstance(conn, (AsyncConnection, AsyncConnectionPool)):
            raise TypeError(
                "AsyncPostgresSaver needs a psycopg AsyncConnection or AsyncConnectionPool, got "
                f"{type(conn).__name__} (for sync code use postgres.PostgresSaver)"
            )
        self.conn = conn
        # one connection serves one statement at a time; a pool lends each task its own
        single = isinstance(conn, AsyncConnection)
        self.lock = asyncio.Lock() if single else contextlib.nullcontext()
        self.cursors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # as in PostgresSaver
        self.pins: dict[int, Pin] = {}  # as in PostgresSaver
        try:
            self.loop = asyncio.get_running_loop()  # where the sync verbs send their work
        except RuntimeError:
            raise RuntimeError("create AsyncPostgresSaver in async code (a running loop)") from None

    @classmethod
    @contextlib.asynccontextmanager
    async def from_conn_string(
        cls, conn_string: str, *, pipeline: bool = False, serde: SerializerProtocol | None = None
    ) -> AsyncIterator[AsyncPostgresSaver]:
        """Open one autocommit connection for the saver's lifetime, close it afterwards."""
        async with await AsyncConnection.connect(
            conn_string, autocommit=True, prepare_threshold=0
        ) as conn:
            yield cls(conn, serde=serde)

    async def setup(self) -> None:
        """Create the tables, or run only the migrations this database has not seen yet."""
        async with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(self.MIGRATIONS[0])
            last = await (await cur.execute(sql.LAST_MIGRATION)).fetchone()
            for version in range(0 if last is None else last["v"] + 1, len(self.MIGRATIONS)):
                await cur.execute(self.MIGRATIONS[version])
                await cur.execute(sql.RECORD_MIGRATION, (version,))
            for index in sql.INDEXES:
                await cur.execute(index)

    # --- reading ---------------------------------------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        rows = await self._fetch(sql.select_one(config), config)
        return sql.row_to_tuple(rows[0], self.serde) if rows else None

    async def aget_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                        ) -> dict[str, DeltaChannelHistory]:
        """A page of ancestors per query (wanted channels only) until every seed is found."""
        read = sql.HistoryRead(config, channels, self.serde)
        query = read.next
        while query is not None:
            query = read.take(await self._fetch(query, config))
        return read.result()

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        first = await self._fetch(sql.list_first(config, filter, before, limit), config)
        for row in first:
            yield sql.row_to_tuple(row, self.serde)
        rest = sql.list_rest(config, filter, before, limit, first)
        for statement in sql.list_pages(await self._fetch(rest, config) if rest else []):
            for row in await self._fetch(statement, config):
                yield sql.row_to_tuple(row, self.serde)

    # --- writing ---------------------------------------------------------------------------------
    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        statement, next_config = sql.put_statement(
            config, checkpoint, metadata, new_versions, self.serde
        )
        await self._execute(statement, config)
        return next_config

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        statement = sql.put_writes_statement(config, writes, task_id, task_path, self.serde)
        await self._execute(statement, config)

    async def aput_writes_and_checkpoint(
        self,
        task: PutWrites,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """put_writes then put in one statement: one commit (one WAL flush) per step, not two."""
        statement, next_config = sql.put_writes_and_checkpoint_statement(
            task, config, checkpoint, metadata, new_versions, self.serde
        )
        await self._execute(statement, config)
        return next_config

    async def adelete_thread(self, thread_id: str) -> None:
        await self._execute(sql.delete_thread_statement(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._execute(sql.delete_for_runs_statement(run_ids))

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._execute(sql.copy_thread_statement(source_thread_id, target_thread_id))

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await self._execute(sql.prune_statement(thread_ids, strategy))


    # --- the thread guard's lock (checkpoint/locks.py) ------------------------------------------
    async def atry_advisory_lock(self, key: int) -> bool:
        """As PostgresSaver.try_advisory_lock: a pool lends the run a connection until unlock."""
        if isinstance(self.conn, AsyncConnection):
            async with self._connection() as conn:
                cursor = await cursor_of(self.cursors, conn).execute(TRY_LOCK_SQL, (key,))
                return (await cursor.fetchone())["locked"]
        for attempt in (1, 2):
            with _explain_errors():
                conn = await self.conn.getconn()
            try:
                with _explain_errors():
                    check_usable(conn)
                    cursor = cursor_of(self.cursors, conn)
                    locked = await (await cursor.execute(TRY_LOCK_SQL, (key,))).fetchone()
            except BaseException as exc:
                await conn.close()  # whatever stopped it, no lock may stay on a pooled session
                await self.conn.putconn(conn)  # the pool drops a closed one
                if attempt == 2 or not isinstance(exc, PostgresUnavailableError):
                    raise
                await self.conn.check()
                continue
            if locked["locked"]:
                self.pins[key] = Pin(conn, asyncio.Lock())
            else:
                await self.conn.putconn(conn)
            return locked["locked"]
        raise AssertionError("unreachable")

    async def aadvisory_unlock(self, key: int) -> None:
        if isinstance(self.conn, AsyncConnection):
            async with self._connection() as conn:
                await cursor_of(self.cursors, conn).execute(UNLOCK_SQL, (key,))
            return
        pin = self.pins.pop(key)
        async with pin.mutex:
            conn, pin.conn = pin.conn, None
            try:
                await cursor_of(self.cursors, conn).execute(UNLOCK_SQL, (key,))
            except psycopg.Error:
                await conn.close()  # the lock ends with its session; the pool drops a closed one
                raise
            finally:
                await self.conn.putconn(conn)

    def try_advisory_lock(self, key: int) -> bool:
        return self._wait(self.atry_advisory_lock(key))

    def advisory_unlock(self, key: int) -> None:
        self._wait(self.aadvisory_unlock(key))

    # --- connections ---------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _connection(self, config: RunnableConfig | None = None
                          ) -> AsyncIterator[AsyncConnection]:
        """A usable autocommit connection, as in PostgresSaver._connection."""
        pin = pinned(self.pins, config)
        if pin is not None:
            async with pin.mutex:
                if pin.conn is not None:
                    with _explain_errors():
                        yield pin.conn
                    return
        async with self.lock, _borrow(self.conn) as conn:
            with _explain_errors():
                check_usable(conn)
                yield conn

    async def _fetch(self, statement: Statement, config: RunnableConfig | None = None
                     ) -> list[dict[str, Any]]:
        async with self._connection(config) as conn:
            cursor = await cursor_of(self.cursors, conn).execute(statement.query, statement.params)
            return await cursor.fetchall()

    async def _execute(self, statement: Statement | None, config: RunnableConfig | None = None
                       ) -> None:
        """Run one write statement (atomic on its own: the savers build one per verb)."""
        if statement is not None:
            async with self._connection(config) as conn:
                await cursor_of(self.cursors, conn).execute(statement.query, statement.params)


@contextlib.asynccontextmanager
async def _borrow(conn: AsyncConn) -> AsyncIterator[AsyncConnection]:
    """The connection itself, or one lent by the pool for the duration."""
    if isinstance(conn, AsyncConnectionPool):
        async with conn.connection() as lent:
            yield lent
    else:
        yield conn


class AsyncShallowPostgresSaver(ShallowPostgresSaver):
    """Refused: use AsyncPostgresSaver with durability="exit" (postgres/__init__.py says why)."""

    instead = "AsyncPostgresSaver"


__all__ = ["AsyncPostgresSaver", "AsyncShallowPostgresSaver"]
