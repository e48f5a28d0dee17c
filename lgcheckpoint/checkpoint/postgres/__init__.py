"""PostgresSaver: checkpoints in Postgres through psycopg 3 — the saver for many processes at once.

The SQL and the row mapping live in ``sql.py``; this file only lends out a connection and runs
one statement per verb: each write is atomic on its own and one round trip, and a read is the
query of ``sql.SELECT_SQL`` (list() reads its first page so; for more, the keys of the rest once,
then ``sql.PAGE_SIZE`` rows per statement by key). It also takes the thread guard's advisory lock
for a run (``checkpoint/locks.py``): on the saver's own connection, or on a connection the pool
lends to that run until it ends, which then carries the run's statements as well. The async twin
is ``aio.py``, the same file with ``await``.

    with PostgresSaver.from_conn_string("postgresql://postgres@localhost/postgres") as saver:
        saver.setup()                       # once per database: creates or migrates the tables
        graph = builder.compile(checkpointer=saver)

Left out compared with LangGraph: ``ShallowPostgresSaver`` (refused by name, see the end of this
file), an externally managed ``Pipeline``,
DeltaChannel history, and migrating pre-v4 checkpoints' pending sends. Next: ``postgres/aio.py``.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Iterator, Sequence
from typing import Any

import psycopg
from psycopg import Connection
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from lgcheckpoint.checkpoint.base import (
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
from lgcheckpoint.checkpoint.postgres import sql
from lgcheckpoint.checkpoint.postgres.sql import Statement
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.errors import SaverNotSetUpError, StoreUnavailableError
from lgcheckpoint.checkpoint.locks import TRY_LOCK_SQL, UNLOCK_SQL, thread_key

Conn = Connection | ConnectionPool  # one connection (we lock around it) or a pool (no lock needed)


class PostgresSaver(StringVersions, BaseCheckpointSaver[str]):
    """Saves checkpoints, blobs and pending writes in LangGraph's three Postgres tables."""

    # setup() runs the ones this database has not recorded; a subclass may append its own
    MIGRATIONS = sql.MIGRATIONS

    def __init__(
        self, conn: Conn, pipe: Any = None, serde: SerializerProtocol | None = None
    ) -> None:
        # ``pipe`` is accepted so LangGraph code ports unchanged; each verb is one statement anyway
        super().__init__(serde=serde)
        if not isinstance(conn, (Connection, ConnectionPool)):
            raise TypeError(
                "PostgresSaver needs a psycopg Connection or ConnectionPool, got "
                f"{type(conn).__name__} (for asyncio use postgres.aio.AsyncPostgresSaver)"
            )
        self.conn = conn
        # one connection serves one statement at a time; a pool hands each thread its own
        self.lock = threading.Lock() if isinstance(conn, Connection) else contextlib.nullcontext()
        # a cursor per connection, reused: it keeps the adapters it looked up (a new one per
        # statement costs ~20 µs); used only under the lock or while the pool lends the connection
        self.cursors: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.pins: dict[int, Pin] = {}  # thread lock key -> the pooled connection its run holds

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(
        cls, conn_string: str, *, pipeline: bool = False, serde: SerializerProtocol | None = None
    ) -> Iterator[PostgresSaver]:
        """Open one autocommit connection for the saver's lifetime, close it afterwards."""
        with Connection.connect(conn_string, autocommit=True, prepare_threshold=0) as conn:
            yield cls(conn, serde=serde)

    def setup(self) -> None:
        """Create the tables, or run only the migrations this database has not seen yet."""
        with self._connection() as conn, conn.cursor(row_factory=dict_row) as cur:
            cur.execute(self.MIGRATIONS[0])
            last = cur.execute(sql.LAST_MIGRATION).fetchone()
            for version in range(0 if last is None else last["v"] + 1, len(self.MIGRATIONS)):
                cur.execute(self.MIGRATIONS[version])
                cur.execute(sql.RECORD_MIGRATION, (version,))
            for index in sql.INDEXES:
                cur.execute(index)

    # --- reading ---------------------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint the config names (or its thread's newest), with its pending writes."""
        rows = self._fetch(sql.select_one(config), config)
        return sql.row_to_tuple(rows[0], self.serde) if rows else None

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                  ) -> dict[str, DeltaChannelHistory]:
        """A page of ancestors per query (wanted channels only) until every seed is found."""
        read = sql.HistoryRead(config, channels, self.serde)
        query = read.next
        while query is not None:
            query = read.take(self._fetch(query, config))
        return read.result()

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, a page of rows per statement (see ``sql.PAGE_SIZE``);
        ``filter`` matches metadata by JSONB containment."""
        first = self._fetch(sql.list_first(config, filter, before, limit), config)
        for row in first:
            yield sql.row_to_tuple(row, self.serde)
        rest = sql.list_rest(config, filter, before, limit, first)
        for statement in sql.list_pages(self._fetch(rest, config) if rest else []):
            for row in self._fetch(statement, config):
                yield sql.row_to_tuple(row, self.serde)

    # --- writing ---------------------------------------------------------------------------------
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Blobs of changed channels and the checkpoint row, together or not at all."""
        statement, next_config = sql.put_statement(
            config, checkpoint, metadata, new_versions, self.serde
        )
        self._execute(statement, config)
        return next_config

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """One task's writes, saved before its step ends so a crash does not lose them."""
        self._execute(sql.put_writes_statement(config, writes, task_id, task_path, self.serde),
                      config)

    def put_writes_and_checkpoint(
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
        self._execute(statement, config)
        return next_config

    def delete_thread(self, thread_id: str) -> None:
        """Every checkpoint, blob and write of the thread."""
        self._execute(sql.delete_thread_statement(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Checkpoints whose metadata run_id is listed, their writes and blobs nobody else uses."""
        self._execute(sql.delete_for_runs_statement(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """All rows of one thread again under another thread id."""
        self._execute(sql.copy_thread_statement(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """keep_latest: only each namespace's newest checkpoint survives; delete: nothing does."""
        self._execute(sql.prune_statement(thread_ids, strategy))


    # --- the thread guard's lock (checkpoint/locks.py) ------------------------------------------
    def try_advisory_lock(self, key: int) -> bool:
        """Take a thread's lock for a run: on the saver's connection, or on one the pool lends
        until ``advisory_unlock`` (the run's statements go through it meanwhile)."""
        if isinstance(self.conn, Connection):
            with self._connection() as conn:
                return cursor_of(self.cursors, conn).execute(TRY_LOCK_SQL, (key,)).fetchone()[
                    "locked"]
        for attempt in (1, 2):
            with _explain_errors():
                conn = self.conn.getconn()
            try:
                with _explain_errors():
                    check_usable(conn)
                    locked = cursor_of(self.cursors, conn).execute(TRY_LOCK_SQL, (key,)).fetchone()
            except BaseException as exc:
                conn.close()  # whatever stopped it, no lock may stay on a pooled session
                self.conn.putconn(conn)  # the pool drops a closed one
                if attempt == 2 or not isinstance(exc, PostgresUnavailableError):
                    raise
                self.conn.check()  # a server that dropped idle sessions: the rest go too
                continue
            if locked["locked"]:
                self.pins[key] = Pin(conn, threading.Lock())
            else:
                self.conn.putconn(conn)
            return locked["locked"]
        raise AssertionError("unreachable")

    def advisory_unlock(self, key: int) -> None:
        """Release the thread's lock; a lent connection goes back to the pool."""
        if isinstance(self.conn, Connection):
            with self._connection() as conn:
                cursor_of(self.cursors, conn).execute(UNLOCK_SQL, (key,))
            return
        pin = self.pins.pop(key)
        with pin.mutex:
            conn, pin.conn = pin.conn, None
            try:
                cursor_of(self.cursors, conn).execute(UNLOCK_SQL, (key,))
            except psycopg.Error:
                conn.close()  # the lock ends with its session; the pool drops a closed one
                raise
            finally:
                self.conn.putconn(conn)

    # --- connections ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def _connection(self, config: RunnableConfig | None = None) -> Iterator[Connection]:
        """A usable autocommit connection, with missing tables reported as 'run setup()': the one
        a run on the config's thread holds, or the saver's own, or one lent by the pool."""
        pin = pinned(self.pins, config)
        if pin is not None:
            with pin.mutex:
                if pin.conn is not None:  # not yet given back by the run
                    with _explain_errors():
                        yield pin.conn
                    return
        with self.lock, _borrow(self.conn) as conn, _explain_errors():
            check_usable(conn)
            yield conn

    def _fetch(self, statement: Statement, config: RunnableConfig | None = None
               ) -> list[dict[str, Any]]:
        """Rows of one query, as dicts (a pool's dead connection is replaced and read again;
        a run's own connection is not: its lock died with it)."""
        retry = isinstance(self.conn, ConnectionPool) and pinned(self.pins, config) is None
        for attempt in (1, 2):
            try:
                with self._connection(config) as conn:
                    cursor = cursor_of(self.cursors, conn)
                    return cursor.execute(statement.query, statement.params).fetchall()
            except PostgresUnavailableError:
                if attempt == 2 or not retry:
                    raise
        raise AssertionError("unreachable")

    def _execute(self, statement: Statement | None, config: RunnableConfig | None = None) -> None:
        """Run one write statement (atomic on its own: the savers build one per verb)."""
        if statement is not None:
            with self._connection(config) as conn:
                cursor_of(self.cursors, conn).execute(statement.query, statement.params)


class Pin:
    """A pooled connection one run holds its thread's lock on (None once given back)."""

    def __init__(self, conn: Any, mutex: Any) -> None:
        self.conn = conn
        self.mutex = mutex  # one statement at a time on it (a threading or an asyncio Lock)


def pinned(pins: dict[int, Pin], config: RunnableConfig | None) -> Pin | None:
    """The connection a run on this config's thread holds, if any (sync and async savers)."""
    if not pins or not config:
        return None
    thread_id = config.get("configurable", {}).get("thread_id")
    return None if thread_id is None else pins.get(thread_key(str(thread_id)))


def cursor_of(cursors: weakref.WeakKeyDictionary, conn: Any) -> Any:
    """The saver's cursor on this connection, made once (binary parameters, rows as dicts)."""
    cursor = cursors.get(conn)
    if cursor is None or cursor.closed:
        cursor = cursors[conn] = conn.cursor(binary=True, row_factory=dict_row)
    return cursor


@contextlib.contextmanager
def _borrow(conn: Conn) -> Iterator[Connection]:
    """The connection itself, or one lent by the pool for the duration."""
    if isinstance(conn, ConnectionPool):
        try:
            with conn.connection() as lent:
                yield lent
        except psycopg.OperationalError:
            conn.check()  # drop every dead connection now: the next call gets a live one
            raise
    else:
        yield conn


def check_usable(conn: Connection | psycopg.AsyncConnection) -> None:
    """Refuse a closed connection, and one without autocommit (our writes would never commit)."""
    if conn.closed:
        raise psycopg.OperationalError(
            "the saver's Postgres connection is closed; create the saver with an open one"
        )
    if not conn.autocommit:
        raise ValueError(
            "the Postgres savers need an autocommit connection: connect(uri, autocommit=True), "
            "or a pool made with kwargs={'autocommit': True}"
        )


@contextlib.contextmanager
def _explain_errors() -> Iterator[None]:
    """Turn 'relation does not exist' into the fix: run setup() (shared with the async saver)."""
    try:
        yield
    except psycopg.errors.UndefinedTable as exc:
        raise SaverNotSetUpError(
            f"the checkpoint tables are missing ({exc.diag.message_primary}); "
            "call saver.setup() once on this database before using the saver"
        ) from exc
    except psycopg.OperationalError as exc:
        if isinstance(exc, StoreUnavailableError):
            raise
        raise PostgresUnavailableError(
            f"the Postgres connection failed ({' '.join(str(exc).split())}); each write is one "
            "statement, so nothing half-written is stored. Resume the thread with "
            "graph.invoke(None, config) once the server is back: a saver on a ConnectionPool "
            "reconnects by itself, a saver on one Connection needs a new one") from exc


class PostgresUnavailableError(StoreUnavailableError, psycopg.OperationalError):
    """The server or the connection went away; still a psycopg.OperationalError for old code."""


# --- refused by name ---------------------------------------------------------------------------
# LangGraph deprecated ShallowPostgresSaver (langgraph-checkpoint-postgres 2.0.20; removal in 3.0)
# for PostgresSaver with durability="exit", which we have. It keeps only a thread's latest
# checkpoint, in a table layout of its own under the same table names as PostgresSaver's, so one
# database cannot hold both, and history, time travel and forks (what the course shows) would
# have nothing to read. The name imports, so a program that only mentions it runs.
class ShallowPostgresSaver:
    """Refused: use PostgresSaver with durability="exit" (the comment above says why)."""

    instead = "PostgresSaver"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise TypeError(shallow_refusal(type(self)))

    @classmethod
    def from_conn_string(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(shallow_refusal(cls))


def shallow_refusal(cls: Any) -> str:
    return (f"lgcheckpoint does not implement {cls.__name__}: LangGraph deprecated it (since "
            f"langgraph-checkpoint-postgres 2.0.20) for {cls.instead} with durability=\"exit\", "
            f"which saves only a run's last checkpoint; use {cls.instead}.from_conn_string(...) "
            "and graph.invoke(..., durability=\"exit\")")


__all__ = ["PostgresSaver", "ShallowPostgresSaver", "Conn"]
