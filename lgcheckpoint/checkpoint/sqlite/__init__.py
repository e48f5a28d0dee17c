"""SqliteSaver: checkpoints in one SQLite file, LangGraph's tables, safe for threads and processes.

Every verb is: build the statement (``sql.py``), then run it under the saver's lock. Writes run in
one transaction each, so a failed put leaves nothing half-written; its first statement writes, so
SQLite takes the file's write lock at once and a second process waits for it (WAL + busy timeout)
instead of failing. The async verbs
inherited from the base run the sync ones in a worker thread, behind the same lock.
Next: ``sqlite/explain.py`` (driver errors in plain words), then ``sqlite/aio.py``.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from typing import Any

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
    get_checkpoint_id,
)
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.sqlite import housekeeping, history, pages, sql
from lgcheckpoint.checkpoint.sqlite.explain import explain
from lgcheckpoint.checkpoint.sqlite.sql import Query

__all__ = ["SqliteSaver"]


class SqliteSaver(StringVersions, BaseCheckpointSaver[str]):
    """A saver on a ``sqlite3.Connection`` (open it with ``check_same_thread=False``)."""

    def __init__(
        self, conn: sqlite3.Connection, *, serde: SerializerProtocol | None = None
    ) -> None:
        super().__init__(serde=serde)
        self.conn = conn
        self.is_setup = False  # set True to skip creating tables (e.g. on a read-only file)
        self.has_task_path = True  # False only on a read-only file from before LangGraph stored it
        self.lock = threading.Lock()  # one statement sequence at a time on the shared connection

    @classmethod
    @contextmanager
    def from_conn_string(cls, path: str) -> Iterator[SqliteSaver]:
        """Open a file (or ":memory:") for as long as the ``with`` block lasts."""
        conn = sqlite3.connect(path, check_same_thread=False, timeout=sql.BUSY_TIMEOUT_MS / 1000)
        with closing(conn):
            yield cls(conn)

    def setup(self) -> None:
        """Create the tables if missing (idempotent; every verb calls it first)."""
        if self.is_setup:
            return
        try:
            self.conn.executescript(sql.SETUP_SCRIPT)
            self.conn.execute(sql.ADD_TASK_PATH)
            self.conn.commit()
        except sqlite3.OperationalError as exc:
            if not sql.setup_done_anyway(exc):
                raise
            self.has_task_path = bool((self._fetch(Query(sql.HAS_TASK_PATH)))[0][0])
        self.is_setup = True

    # --- the four verbs ------------------------------------------------------------------------
    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                  ) -> dict[str, DeltaChannelHistory]:
        """Ancestors a page at a time until every channel found its seed, then their writes."""
        with self._locked():  # set up first: it finds out whether the file has task_path
            read = history.HistoryRead(config, channels, self.serde, self.has_task_path)
            query = read.next
            while query is not None:
                query = read.take(self._fetch(query))
            rows = self._fetch(read.writes()) if read.visited else []
        return read.result(rows)

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The named checkpoint (or the thread's newest) with its pending writes."""
        query = sql.select_checkpoint(config)
        with self._locked():
            cursor = self.conn.cursor()  # one cursor for both reads: a new one per read costs more
            row = cursor.execute(query.sql, query.params).fetchone()
            if row is None:
                return None
            writes = sql.select_writes(row, self.has_task_path)
            found = cursor.execute(writes.sql, writes.params).fetchall()
        named = config if get_checkpoint_id(config) else None  # echoed back, as LangGraph does
        return sql.to_tuple(named, row, found, self.serde)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first: the keys in one SELECT, then a page of rows per lock
        (see ``sql.list_keys``); the lock is never held while the caller works."""
        with self._locked():
            keys = self._fetch(sql.list_keys(config, filter, before, limit))
        for query in pages.list_pages(keys):
            with self._locked():
                rows = self._fetch(query)
                found = [write for q in pages.select_page_writes(rows, self.has_task_path)
                         for write in self._fetch(q)]
            writes = pages.writes_by_checkpoint(found)
            for row in rows:
                yield sql.to_tuple(None, row, writes.get(tuple(row[:3]), []), self.serde)

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Publish a checkpoint (serialised before the lock is taken)."""
        query, saved = sql.insert_checkpoint(config, checkpoint, metadata, self.serde)
        self._write([query])
        return saved

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save one task's writes against the checkpoint it ran from."""
        self._write([sql.insert_writes(config, writes, task_id, task_path, self.serde)])

    def put_writes_and_checkpoint(
        self,
        task: PutWrites,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """put_writes then put in one transaction: one commit (one fsync) per step, not two."""
        query, saved = sql.insert_checkpoint(config, checkpoint, metadata, self.serde)
        self._write([sql.insert_writes(*task, self.serde), query])  # writes first, publish last
        return saved

    # --- housekeeping --------------------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        self._write(sql.delete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._write(housekeeping.delete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._write(housekeeping.copy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._write(housekeeping.prune(thread_ids, strategy))

    # --- running statements --------------------------------------------------------------------
    @contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the lock (tables set up first); driver errors come out in plain words."""
        with self.lock:
            try:
                self.setup()
                yield
            except (sqlite3.Error, ValueError) as exc:
                if (better := explain(exc)) is None:
                    raise
                raise better from exc

    def _fetch(self, query: Query) -> list[Any]:
        return self.conn.execute(query.sql, query.params).fetchall()

    def _write(self, queries: list[Query]) -> None:
        """Run statements as one transaction: all of them, or none."""
        with self._locked():
            # sqlite3 opens a transaction before our first statement, which writes, so SQLite takes
            # the write lock right then (waiting if busy); explicitly only on an autocommit
            # connection, or to refuse a caller's open transaction rather than commit it
            if self.conn.isolation_level is None or self.conn.in_transaction:
                self.conn.execute("BEGIN IMMEDIATE")
            try:
                for q in queries:
                    (self.conn.executemany if q.many else self.conn.execute)(q.sql, q.params)
                self.conn.commit()
            except BaseException:
                self.conn.rollback()
                raise
