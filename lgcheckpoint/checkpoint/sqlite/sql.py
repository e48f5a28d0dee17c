"""The SQL of the SQLite savers, and how a row becomes a CheckpointTuple and back.

Both front doors (``SqliteSaver`` on ``sqlite3``, ``AsyncSqliteSaver`` on ``aiosqlite``) build their
statements here, so the two differ only by ``await``. The tables are LangGraph's, column for column,
so a file written by either library opens in the other:

    checkpoints(thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                type, checkpoint, metadata)
    writes(thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx,
           channel, type, value)

``type`` + blob is the serializer's ``(type tag, bytes)`` pair; ``metadata`` is UTF-8 JSON text.
Nothing a caller passes is ever pasted into SQL: filter keys and values are bound parameters
(how a metadata filter becomes SQL: filters.py; how list() pages its rows: pages.py).
The core reading path ends here (docs/reading-path.md).
"""

from __future__ import annotations

import json
import operator
import sqlite3
from collections.abc import Sequence
from typing import Any, NamedTuple

from lgcheckpoint.checkpoint.base import (
    WRITES_IDX_MAP,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    RunnableConfig,
    address,
    as_config,
    get_checkpoint_id,
    get_checkpoint_metadata,
    list_limit,
    writes_address,
)
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError
from lgcheckpoint.checkpoint.sqlite.filters import metadata_condition

BUSY_TIMEOUT_MS = 30_000  # a second process writing the file makes us wait this long, not fail
PAGE_SIZE = 100  # list() reads this many rows per lock, so a caller may write while it iterates

SETUP_SCRIPT = f"""
PRAGMA journal_mode=WAL;
PRAGMA busy_timeout={BUSY_TIMEOUT_MS};
CREATE TABLE IF NOT EXISTS checkpoints (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    parent_checkpoint_id TEXT,
    type TEXT,
    checkpoint BLOB,
    metadata BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id)
);
CREATE TABLE IF NOT EXISTS writes (
    thread_id TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    task_path TEXT NOT NULL DEFAULT '',
    idx INTEGER NOT NULL,
    channel TEXT NOT NULL,
    type TEXT,
    value BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
);
CREATE INDEX IF NOT EXISTS checkpoints_thread_id_checkpoint_id
    ON checkpoints (thread_id, checkpoint_id, checkpoint_ns);
"""
# The index is ours, not LangGraph's: list() of a thread without a namespace walks it newest first
# and stops after `limit` rows, instead of sorting the whole thread (the primary key orders by
# namespace first). LangGraph opens the file as before; SQLite keeps the index up to date:
# every checkpoint put or deleted also writes one entry here (delete_thread: 12 VM instructions
# a checkpoint row instead of 7; the writes table is untouched by it).
# files made by LangGraph before it stored task_path lack the column; this adds it (once)
ADD_TASK_PATH = "ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''"


HAS_TASK_PATH = "SELECT COUNT(*) FROM pragma_table_info('writes') WHERE name = 'task_path'"


def setup_done_anyway(exc: sqlite3.OperationalError) -> bool:
    """The column already exists, or the file is read-only: reads go ahead, writes will say why."""
    return "duplicate column" in str(exc) or "readonly" in str(exc)


class Query(NamedTuple):
    """One statement with its bound parameters (``many``: params is a list of rows)."""

    sql: str
    params: Sequence[Any] = ()
    many: bool = False


class CheckpointRow(NamedTuple):
    """A row of ``checkpoints`` as the SELECTs below return it."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    type: str | None
    checkpoint: bytes | None
    metadata: bytes | None


KEY = "thread_id, checkpoint_ns, checkpoint_id"  # names one checkpoint; both tables start with it
REST = "parent_checkpoint_id, type, checkpoint, metadata"
WRITE_REST = "task_id, task_path, idx, channel, type, value"
COLUMNS = f"{KEY}, {REST}"


# --- reading ---------------------------------------------------------------------------------
# the hot statements are built once: a verb only binds its values
SELECT_BY_ID = (f"SELECT {COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                "AND checkpoint_id = ?")
SELECT_LATEST = (f"SELECT {COLUMNS} FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
                 "ORDER BY checkpoint_id DESC LIMIT 1")
# writes come in primary-key order (task_id, idx), free from the index; to_tuple then sorts them
# by task_path: cheaper than ORDER BY task_path, task_id, idx (SQLite sorts in a temp B-tree)
SELECT_WRITES = ("SELECT task_id, channel, type, value, {path} FROM writes WHERE thread_id = ? "
                 "AND checkpoint_ns = ? AND checkpoint_id = ? ORDER BY task_id, idx")
WRITES_SQL = {True: SELECT_WRITES.format(path="task_path"), False: SELECT_WRITES.format(path="''")}


def select_checkpoint(config: RunnableConfig) -> Query:
    """The checkpoint a config names, or its thread's newest in that namespace."""
    thread_id, ns, checkpoint_id = address(config)
    if checkpoint_id:
        return Query(SELECT_BY_ID, (thread_id, ns, checkpoint_id))
    return Query(SELECT_LATEST, (thread_id, ns))


def select_writes(row: CheckpointRow, has_task_path: bool = True) -> Query:
    """A checkpoint's pending writes, in (task_id, idx) order (to_tuple finishes the order)."""
    return Query(WRITES_SQL[has_task_path], row[:3])  # no task_path: an old read-only file


_TASK_PATH = operator.itemgetter(4)  # of a write: a select_writes row (page rows minus their key)

Condition = tuple[str, list[Any]]  # (SQL with ? placeholders, the values they bind)


def list_conditions(config: RunnableConfig | None, filter: dict[str, Any] | None,
                    before: RunnableConfig | None) -> list[Condition]:
    """What list() selects: a thread (namespace, id), metadata matches, ids older than before."""
    conditions: list[Condition] = []
    if config is not None:
        conditions.append(("thread_id = ?", [address(config).thread_id]))
        if (ns := config["configurable"].get("checkpoint_ns")) is not None:
            conditions.append(("checkpoint_ns = ?", [ns]))
        if checkpoint_id := get_checkpoint_id(config):
            conditions.append(("checkpoint_id = ?", [checkpoint_id]))
    conditions += [metadata_condition(key, value) for key, value in (filter or {}).items()]
    if before is not None and (before_id := get_checkpoint_id(before)):
        conditions.append(("checkpoint_id < ?", [before_id]))
    return conditions


# list() reads these keys first, then their rows a page at a time (pages.py)
LIST_ORDER = " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"  # ids can tie


def list_keys(config: RunnableConfig | None, filter: dict[str, Any] | None,
              before: RunnableConfig | None, limit: int | None) -> Query:
    """The keys of every checkpoint list() yields, in its order, at most ``limit`` of them."""
    limit = list_limit(limit)
    conditions = list_conditions(config, filter, before)
    where = " AND ".join(text for text, _ in conditions)
    query = f"SELECT {KEY} FROM checkpoints {'WHERE ' + where if where else ''}{LIST_ORDER}"
    params = [value for _, values in conditions for value in values]
    return Query(query, params) if limit is None else Query(query + " LIMIT ?", params + [limit])


def to_tuple(config: RunnableConfig | None, row: Sequence[Any], writes: list[Sequence[Any]],
             serde: SerializerProtocol) -> CheckpointTuple:
    """Decode a row and its writes; ``config`` is the caller's when it named the checkpoint."""
    thread_id, ns, checkpoint_id, parent_id, type_, blob, stored_metadata = row  # a CheckpointRow
    try:
        checkpoint = serde.loads_typed((type_, blob))
        metadata = json.loads(stored_metadata) if stored_metadata is not None else {}
        if not isinstance(checkpoint, dict) or "channel_values" not in checkpoint:
            raise TypeError(f"decoded to a {type(checkpoint).__name__}, not a checkpoint")
    except Exception as exc:  # noqa: BLE001 - any decoder failure means the stored bytes are bad
        raise InvalidCheckpointError(f"{_where(row)}: the checkpoint or metadata column could not "
                                     f"be decoded (type tag {type_!r}): {exc}") from exc
    pending: list[PendingWrite] = []
    writes.sort(key=_TASK_PATH)  # stable: (task_path, task_id, idx), the loop's apply order
    for task_id, channel, value_type, value, _ in writes:
        try:
            pending.append((task_id, channel, serde.loads_typed((value_type, value))))
        except Exception as exc:  # noqa: BLE001
            raise InvalidCheckpointError(f"{_where(row)}: the write of task {task_id!r} to channel "
                                         f"{channel!r} could not be decoded: {exc}") from exc
    parent = as_config(thread_id, ns, parent_id) if parent_id else None
    return CheckpointTuple(config or as_config(thread_id, ns, checkpoint_id), checkpoint, metadata,
                           parent, pending)


def _where(row: Sequence[Any]) -> str:
    """Names a stored checkpoint in an error message."""
    return f"thread {row[0]!r}, namespace {row[1]!r}, checkpoint {row[2]!r}"


# --- writing ---------------------------------------------------------------------------------
# json.dumps(..., ensure_ascii=False) builds a new encoder on every call; the same text from one
METADATA_JSON = json.JSONEncoder(ensure_ascii=False)
INSERT_CHECKPOINT = f"INSERT OR REPLACE INTO checkpoints ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"
_INSERT_WRITES = (f"INSERT OR {{}} INTO writes ({KEY}, {WRITE_REST}) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
REPLACE_WRITES, KEEP_WRITES = _INSERT_WRITES.format("REPLACE"), _INSERT_WRITES.format("IGNORE")


def insert_checkpoint(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                      serde: SerializerProtocol) -> tuple[Query, RunnableConfig]:
    """The INSERT publishing a checkpoint (parent: the config's checkpoint_id), and its config."""
    thread_id, ns, parent_id = address(config)
    type_, blob = serde.dumps_typed(checkpoint)
    merged = get_checkpoint_metadata(config, metadata)
    try:
        meta = METADATA_JSON.encode(merged).encode("utf-8", "ignore")
    except (TypeError, ValueError) as exc:
        raise TypeError(f"checkpoint metadata must be JSON-serialisable (str, number, bool, None, "
                        f"list, dict): {exc}; nothing was written") from exc
    row = (thread_id, ns, checkpoint["id"], parent_id, type_, blob, meta)
    query = Query(INSERT_CHECKPOINT, row)
    return query, as_config(config["configurable"]["thread_id"], ns, checkpoint["id"])


def insert_writes(config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                  task_path: str, serde: SerializerProtocol) -> Query:
    """One task's writes; special channels (errors, interrupts...) replace, others never do."""
    thread_id, ns, checkpoint_id = writes_address(config)
    key, dumps = (thread_id, ns, str(checkpoint_id), task_id, task_path), serde.dumps_typed
    rows = [(*key, WRITES_IDX_MAP.get(channel, idx), channel, *dumps(value))
            for idx, (channel, value) in enumerate(writes)]
    special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
    return Query(REPLACE_WRITES if special else KEEP_WRITES, rows, many=True)


# --- housekeeping (each list of statements runs in one transaction; more: housekeeping.py) -------
def delete_thread(thread_id: str) -> list[Query]:
    """Forget every checkpoint and write of a thread, in all namespaces."""
    return [Query(f"DELETE FROM {table} WHERE thread_id = ?", (str(thread_id),))
            for table in ("writes", "checkpoints")]
