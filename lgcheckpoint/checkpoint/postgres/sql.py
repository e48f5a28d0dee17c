"""Everything the Postgres savers say to the database, and how rows become checkpoints again.

Three tables (LangGraph's layout, so either library opens the other's database):

* ``checkpoints``        one row per checkpoint; the checkpoint and its metadata as JSONB
* ``checkpoint_blobs``   one row per (thread, namespace, channel, version): a channel's value
* ``checkpoint_writes``  one row per pending write of a task, keyed by (checkpoint, task, idx)

Channel values go where LangGraph puts them, with one difference on purpose. A small
str/int/float/bool/None is kept *inline* in the checkpoint JSONB (as LangGraph does: no blob row,
so a step costs fewer rows), anything else in ``checkpoint_blobs`` keyed by version, so an
unchanged value is stored once. The difference: LangGraph also inlines a *big* string, again in
every checkpoint; we blob it (see ``inline``). Both loaders merge inline values with blobs, so each
library still reads the other's rows.

Each verb is ONE ``Statement`` built here (several tables change through data-modifying CTEs), so
it is atomic without an explicit transaction and costs one round trip (list() reads a page at a
time: ``list_first``). ``__init__.py`` (sync) and ``aio.py`` (async) only run them, so the
two front doors differ by ``await`` alone.
Next: ``postgres/__init__.py``.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator, Sequence
from typing import Any, NamedTuple

from lgcheckpoint.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
    HistoryWalk,
    PutWrites,
    TASKS,
    RunnableConfig,
    address,
    as_config,
    get_checkpoint_id,
    get_checkpoint_metadata,
    id_list,
    list_limit,
    next_string_version,
    prune_threads,
    writes_address,
)
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot
from lgcheckpoint.checkpoint.errors import InvalidCheckpointError


class Statement(NamedTuple):
    """One SQL statement with its bound parameters (never pasted into the text)."""

    query: str
    params: Any = ()


# --- schema ----------------------------------------------------------------------------------
# Position in this list is the migration's version in ``checkpoint_migrations``. It mirrors
# LangGraph's list entry by entry, so a database set up by either library counts as set up by both.
MIGRATIONS = [
    "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY);",
    """CREATE TABLE IF NOT EXISTS checkpoints (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        parent_checkpoint_id TEXT,
        type TEXT,
        checkpoint JSONB NOT NULL,
        metadata JSONB NOT NULL DEFAULT '{}',
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id));""",
    """CREATE TABLE IF NOT EXISTS checkpoint_blobs (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        channel TEXT NOT NULL,
        version TEXT NOT NULL,
        type TEXT NOT NULL,
        blob BYTEA,
        PRIMARY KEY (thread_id, checkpoint_ns, channel, version));""",
    """CREATE TABLE IF NOT EXISTS checkpoint_writes (
        thread_id TEXT NOT NULL,
        checkpoint_ns TEXT NOT NULL DEFAULT '',
        checkpoint_id TEXT NOT NULL,
        task_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        channel TEXT NOT NULL,
        type TEXT,
        blob BYTEA NOT NULL,
        PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));""",
    "ALTER TABLE checkpoint_blobs ALTER COLUMN blob DROP NOT NULL;",
    "SELECT 1;",  # a placeholder LangGraph keeps so later version numbers stay where they were
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx "
    "ON checkpoint_blobs(thread_id);",
    "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx "
    "ON checkpoint_writes(thread_id);",
    "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
]
# Ours, outside the numbered list (which stays LangGraph's): every setup() creates it if missing.
# list() of a thread without a namespace walks it newest first and stops after `limit` rows,
# instead of sorting the whole thread (the primary key orders by namespace first).
INDEXES = ["CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_checkpoint_id_idx "
           "ON checkpoints(thread_id, checkpoint_id);"]
LAST_MIGRATION = "SELECT v FROM checkpoint_migrations ORDER BY v DESC LIMIT 1"
RECORD_MIGRATION = "INSERT INTO checkpoint_migrations (v) VALUES (%s)"

# --- reading: one query brings a checkpoint, its channel values and its pending writes ----------
# Values: for every (channel, version) the checkpoint names, the blob stored under that version,
# each found by its primary key (LATERAL ... LIMIT 1 stops the planner from hashing every blob of
# the thread instead, which makes loading slower the longer the thread grows).
# Writes: sorted as the loop applies them (task_path, task_id, idx), in byte order like Python.
# Sends: a checkpoint from before v4 (LangGraph's checkpoint package still writes v=2) takes the
# Send packets its parent's tasks wrote to TASKS as its TASKS value, as LangGraph's saver does;
# a column of the same query, so a list() page still costs one round trip.
# convert_to(), not ::bytea, turns text into bytes: a cast would read backslashes as escapes.
SELECT_COLUMNS = """
SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata,
    (SELECT array_agg(array[convert_to(cv.key, 'UTF8'), convert_to(bl.type, 'UTF8'), bl.blob])
       FROM jsonb_each_text(checkpoint -> 'channel_versions') AS cv
       CROSS JOIN LATERAL (
           SELECT type, blob FROM checkpoint_blobs
            WHERE (thread_id, checkpoint_ns, channel, version)
                = (checkpoints.thread_id, checkpoints.checkpoint_ns, cv.key, cv.value)
            LIMIT 1) AS bl
    ) AS blobs,
    (SELECT array_agg(array[convert_to(cw.task_id, 'UTF8'), convert_to(cw.channel, 'UTF8'),
                            convert_to(cw.type, 'UTF8'), cw.blob]
                      ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx)
       FROM checkpoint_writes cw
      WHERE cw.thread_id = checkpoints.thread_id AND cw.checkpoint_ns = checkpoints.checkpoint_ns
        AND cw.checkpoint_id = checkpoints.checkpoint_id
    ) AS writes,
    CASE WHEN (checkpoint ->> 'v')::int < 4 THEN
    (SELECT array_agg(array[convert_to(cw.type, 'UTF8'), cw.blob]
                      ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx)
       FROM checkpoint_writes cw
      WHERE cw.thread_id = checkpoints.thread_id AND cw.checkpoint_ns = checkpoints.checkpoint_ns
        AND cw.checkpoint_id = checkpoints.parent_checkpoint_id AND cw.channel = '{tasks}')
    END AS sends
""".format(tasks=TASKS)
SELECT_SQL = SELECT_COLUMNS + "FROM checkpoints "

# --- writing: every verb is ONE statement, so it is atomic by itself and one round trip ------
# Rows go in as a VALUES list with one parameter per field: cheaper to bind and to plan than
# unnest() of arrays, which only a big batch uses (Postgres takes at most 65,535 parameters).
# Each statement's text depends only on its row count, so it is built once (cached) and psycopg
# prepares it once.
VALUES_MAX_ROWS = 64
BLOB_COLUMNS = {"c": "text", "v": "text", "t": "text", "b": "bytea"}  # channel, version, type, blob
WRITE_COLUMNS = {"i": "int", "c": "text", "t": "text", "b": "bytea"}  # idx, channel, type, blob


def rows_sql(fixed: str, columns: dict[str, str], n: int) -> str:
    """``n`` rows: the ``fixed`` expressions, then one parameter per column (name -> SQL type)."""
    if n <= VALUES_MAX_ROWS:
        return "VALUES " + ",\n       ".join(
            f"({fixed}, " + ", ".join(f"%({c}{i})s" for c in columns) + ")" for i in range(n))
    arrays = ", ".join(f"%({c})s::{sql_type}[]" for c, sql_type in columns.items())
    return f"SELECT {fixed}, {', '.join('u.' + c for c in columns)} " \
           f"FROM unnest({arrays}) AS u({', '.join(columns)})"


def rows_params(params: dict[str, Any], columns: dict[str, list[Any]]) -> dict[str, Any]:
    """``params`` plus the rows' values, bound as ``rows_sql`` names them."""
    if len(next(iter(columns.values()))) > VALUES_MAX_ROWS:
        return params | columns
    for c, values in columns.items():
        params.update((f"{c}{i}", value) for i, value in enumerate(values))
    return params


# put: the changed channels' blobs (a version already stored is the same value: keep it), then the
# checkpoint row, which carries the inline values itself.
BLOBS_CTE = """WITH new_blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    {rows}
    ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
)"""
CHECKPOINT_ROW = """
INSERT INTO checkpoints
    (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
VALUES (%(thread)s, %(ns)s, %(id)s, %(parent)s, {checkpoint}, %(metadata)s::jsonb)
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata"""

# A thread LangGraph started may have an unchanged value that LangGraph kept inline in the
# parent's JSONB but we do not inline (a big str, say), so it has no blob. Such values (same
# channel, same version as ours) are carried over into our row, so the thread keeps them; put()
# adds this only when the checkpoint has such a value (on our own threads it then finds nothing).
INHERITING = """%(checkpoint)s::jsonb || jsonb_build_object('channel_values', coalesce((
        SELECT jsonb_object_agg(pv.key, pv.value)
          FROM checkpoints p, jsonb_each(p.checkpoint -> 'channel_values') AS pv
         WHERE (p.thread_id, p.checkpoint_ns, p.checkpoint_id) = (%(thread)s, %(ns)s, %(parent)s)
           AND p.checkpoint -> 'channel_versions' -> pv.key
             = %(checkpoint)s::jsonb -> 'channel_versions' -> pv.key), '{}')
        || (%(checkpoint)s::jsonb -> 'channel_values'))"""


@functools.lru_cache(maxsize=256)
def put_query(blobs: int, inheriting: bool) -> str:
    """The put statement for ``blobs`` blob rows, with a LangGraph parent's inline values or not."""
    row = CHECKPOINT_ROW.format(checkpoint=INHERITING if inheriting else "%(checkpoint)s::jsonb")
    if not blobs:
        return row
    return BLOBS_CTE.format(rows=rows_sql("%(thread)s, %(ns)s", BLOB_COLUMNS, blobs)) + row


# put_writes: a task's ordinary writes are final once saved (a replay keeps the first);
# special ones (error, interrupt, ...) have fixed indexes and a retry replaces them
WRITES_SQL = """
INSERT INTO checkpoint_writes
    (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob)
{rows}
ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) """
WRITE_FIXED = "%(thread)s, %(ns)s, %(id)s, %(task_id)s, %(task_path)s"
KEEP_FIRST = "DO NOTHING"
REPLACE = "DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob"


@functools.lru_cache(maxsize=256)
def writes_query(writes: int, replace: bool) -> str:
    """The put_writes statement for ``writes`` rows: keep what is there, or replace it."""
    rows = rows_sql(WRITE_FIXED, WRITE_COLUMNS, writes)
    return WRITES_SQL.format(rows=rows) + (REPLACE if replace else KEEP_FIRST)


@functools.lru_cache(maxsize=256)
def with_writes(put: str, writes: str) -> str:
    """``put`` with the writes statement as its first CTE, the writes' parameters renamed w_*."""
    writes = re.sub(r"%\((\w+)\)s", r"%(w_\1)s", writes)
    if put.startswith("WITH "):
        return f"WITH task_writes AS ({writes}),\n" + put[len("WITH "):]
    return f"WITH task_writes AS ({writes})" + put


# --- housekeeping ------------------------------------------------------------------------------
DELETE_THREADS_SQL = """
WITH gone_checkpoints AS (DELETE FROM checkpoints WHERE thread_id = ANY(%(threads)s)),
     gone_blobs AS (DELETE FROM checkpoint_blobs WHERE thread_id = ANY(%(threads)s))
DELETE FROM checkpoint_writes WHERE thread_id = ANY(%(threads)s)"""

COPY_THREAD_SQL = """
WITH copied_checkpoints AS (
    INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id,
                             type, checkpoint, metadata)
    SELECT %(dst)s, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata
      FROM checkpoints WHERE thread_id = %(src)s
    ON CONFLICT DO NOTHING
), copied_blobs AS (
    INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob)
    SELECT %(dst)s, checkpoint_ns, channel, version, type, blob
      FROM checkpoint_blobs WHERE thread_id = %(src)s
    ON CONFLICT DO NOTHING
)
INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path,
                               idx, channel, type, blob)
SELECT %(dst)s, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, blob
  FROM checkpoint_writes WHERE thread_id = %(src)s
ON CONFLICT DO NOTHING"""

# One statement, so every part sees the same snapshot of the thread: drop the run's checkpoints,
# their writes, the parent links that pointed at them, and blobs no remaining checkpoint names.
DELETE_FOR_RUNS_SQL = """
WITH dropped AS (
    DELETE FROM checkpoints WHERE metadata ->> 'run_id' = ANY(%(runs)s)
    RETURNING thread_id, checkpoint_ns, checkpoint_id
), dropped_writes AS (
    DELETE FROM checkpoint_writes w USING dropped d
    WHERE (w.thread_id, w.checkpoint_ns, w.checkpoint_id)
        = (d.thread_id, d.checkpoint_ns, d.checkpoint_id)
), orphans AS (
    UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM dropped d
    WHERE (c.thread_id, c.checkpoint_ns, c.parent_checkpoint_id)
          = (d.thread_id, d.checkpoint_ns, d.checkpoint_id)
      AND (c.metadata ->> 'run_id' = ANY(%(runs)s)) IS NOT TRUE
)
DELETE FROM checkpoint_blobs b
WHERE b.thread_id IN (SELECT thread_id FROM dropped) AND NOT EXISTS (
    SELECT 1 FROM checkpoints c
    WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns
      AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version
      AND (c.metadata ->> 'run_id' = ANY(%(runs)s)) IS NOT TRUE)"""

# Keep the newest checkpoint of each (thread, namespace) with its writes and the blobs it names;
# drop the rest. One statement, one snapshot: a checkpoint saved meanwhile is neither seen nor lost.
# A subgraph call's namespace ("node:task_id") goes entirely with the root checkpoint it started
# from, once that one is saved and pruned (as in LangGraph); a subgraph with its own lasting
# namespace (no ":") keeps its newest checkpoint like the root.
PRUNE_KEEP_LATEST_SQL = """
WITH heads AS (
    SELECT DISTINCT ON (thread_id, checkpoint_ns)
           thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata -> 'parents' ->> '' AS root
      FROM checkpoints WHERE thread_id = ANY(%(threads)s)
     ORDER BY thread_id, checkpoint_ns, checkpoint_id DESC
), kept AS (
    SELECT * FROM heads h
     WHERE strpos(h.checkpoint_ns, ':') = 0
        OR NOT EXISTS (SELECT 1 FROM checkpoints r   -- its root checkpoint is saved ...
                        WHERE (r.thread_id, r.checkpoint_ns, r.checkpoint_id)
                            = (h.thread_id, '', h.root))
        OR h.root IN (SELECT r.checkpoint_id FROM heads r   -- ... and is not the one kept
                       WHERE r.thread_id = h.thread_id AND r.checkpoint_ns = '')
), dropped AS (
    DELETE FROM checkpoints c WHERE c.thread_id = ANY(%(threads)s) AND NOT EXISTS (
        SELECT 1 FROM kept k WHERE (k.thread_id, k.checkpoint_ns, k.checkpoint_id)
                                 = (c.thread_id, c.checkpoint_ns, c.checkpoint_id))
    RETURNING c.thread_id, c.checkpoint_ns, c.checkpoint_id
), dropped_writes AS (
    DELETE FROM checkpoint_writes w USING dropped d
    WHERE (w.thread_id, w.checkpoint_ns, w.checkpoint_id)
        = (d.thread_id, d.checkpoint_ns, d.checkpoint_id)
), orphans AS (
    UPDATE checkpoints c SET parent_checkpoint_id = NULL FROM kept k
    WHERE (c.thread_id, c.checkpoint_ns, c.checkpoint_id)
        = (k.thread_id, k.checkpoint_ns, k.checkpoint_id)
)
DELETE FROM checkpoint_blobs b WHERE b.thread_id = ANY(%(threads)s) AND NOT EXISTS (
    SELECT 1 FROM kept k WHERE k.thread_id = b.thread_id AND k.checkpoint_ns = b.checkpoint_ns
                           AND k.checkpoint -> 'channel_versions' ->> b.channel = b.version)"""

INLINED_BY_LANGGRAPH = (str, int, float, bool)  # types LangGraph keeps in its JSONB, like None
INLINE_MAX_CHARS = 512  # a longer str is one blob per version, not a copy in every checkpoint
SURROGATE = re.compile("[\ud800-\udfff]")  # half of a UTF-16 pair: text with no UTF-8 form
INT_MAX_BITS = 4096  # 1,234 digits: an int beyond this goes through the serializer


# --- statements for each verb --------------------------------------------------------------------
def select_one(config: RunnableConfig) -> Statement:
    """The checkpoint a config names, or the newest of its thread and namespace."""
    thread_id, ns, checkpoint_id = address(config)
    if checkpoint_id:
        return Statement(
            SELECT_SQL + "WHERE thread_id = %s AND checkpoint_ns = %s AND checkpoint_id = %s",
            (thread_id, ns, checkpoint_id),
        )
    return Statement(
        SELECT_SQL + "WHERE thread_id = %s AND checkpoint_ns = %s "
        "ORDER BY checkpoint_id DESC LIMIT 1",
        (thread_id, ns),
    )


def list_conditions(
    config: RunnableConfig | None, filter: dict[str, Any] | None, before: RunnableConfig | None
) -> tuple[list[str], list[Any]]:
    """WHERE terms and their parameters: thread / namespace / id, metadata and ``before``."""
    wheres: list[str] = []
    params: list[Any] = []
    if config is not None:
        thread_id = address(config).thread_id
        wheres.append("thread_id = %s")
        params.append(thread_id)
        if (ns := config["configurable"].get("checkpoint_ns")) is not None:
            wheres.append("checkpoint_ns = %s")
            params.append(str(ns))
        if checkpoint_id := get_checkpoint_id(config):
            wheres.append("checkpoint_id = %s")
            params.append(checkpoint_id)
    if filter:
        # the filter travels as one bound JSON value: its keys never become SQL text
        if not isinstance(filter, dict):
            raise TypeError(f"filter must be a dict of metadata key -> value, got {filter!r}")
        wheres.append("metadata @> %s::jsonb")
        params.append(to_json(filter, "filter"))
    if before is not None and (before_id := get_checkpoint_id(before)):
        wheres.append("checkpoint_id < %s")
        params.append(before_id)
    return wheres, params


# list() reads a page at a time. The first page is one statement, rows and all (most listings,
# limit=10 say, end there; a statement here costs a round trip and planning, ~0.5 ms). If more is
# wanted, ONE statement finds the keys of every further match, newest first: the matches are
# sorted once, not once a page, and keys alone are priced low (~54,000 for 300,000 rows, under
# jit_above_cost = 100,000; JIT would add ~4 ms here but ~0.3 s to SELECT_SQL). Then PAGE_SQL
# reads PAGE_SIZE rows per statement by key (~860 units a row: a page stays under the threshold).
# Memory holds the keys and one page, nothing stays open between rows, and a key deleted
# meanwhile is skipped.
PAGE_SIZE = 64
# checkpoint ids can tie across threads and namespaces: the order must still be total
LIST_ORDER = " ORDER BY checkpoint_id DESC, thread_id DESC, checkpoint_ns DESC"
KEY = ("thread_id", "checkpoint_ns", "checkpoint_id")  # a checkpoint's primary key
KEYS_SQL = f"SELECT {', '.join(KEY)} FROM checkpoints "
# A page by key: each key's row found by its primary key in key order (LATERAL ... LIMIT 1: on a
# table not yet ANALYZEd, a join or IN list was planned as a hash join over a scan of the whole
# table, and priced past the JIT threshold, for every page).
PAGE_SQL = SELECT_COLUMNS + """FROM unnest(%s::text[], %s::text[], %s::text[])
    WITH ORDINALITY AS page(t, ns, id, n)
CROSS JOIN LATERAL (
    SELECT * FROM checkpoints AS c WHERE (c.thread_id, c.checkpoint_ns, c.checkpoint_id)
        = (page.t, page.ns, page.id) LIMIT 1) AS checkpoints
ORDER BY page.n"""


def list_first(config: RunnableConfig | None, filter: dict[str, Any] | None,
               before: RunnableConfig | None, limit: int | None) -> Statement:
    """list()'s first page, rows and all: the newest PAGE_SIZE matches (or ``limit``)."""
    limit = list_limit(limit)
    wheres, params = list_conditions(config, filter, before)
    size = PAGE_SIZE if limit is None else min(limit, PAGE_SIZE)
    return Statement(SELECT_SQL + ("WHERE " + " AND ".join(wheres) if wheres else "")
                     + LIST_ORDER + " LIMIT %s", (*params, size))


def list_rest(config: RunnableConfig | None, filter: dict[str, Any] | None,
              before: RunnableConfig | None, limit: int | None,
              first: list[dict[str, Any]]) -> Statement | None:
    """The keys of every match after a full first page, in list() order (None: nothing more)."""
    if len(first) < PAGE_SIZE or (limit is not None and limit <= PAGE_SIZE):
        return None
    wheres, params = list_conditions(config, filter, before)
    wheres.append("(checkpoint_id, thread_id, checkpoint_ns) < (%s, %s, %s)")
    params += [first[-1]["checkpoint_id"], first[-1]["thread_id"], first[-1]["checkpoint_ns"]]
    query = KEYS_SQL + "WHERE " + " AND ".join(wheres) + LIST_ORDER
    if limit is None:
        return Statement(query, tuple(params))
    return Statement(query + " LIMIT %s", (*params, limit - PAGE_SIZE))


def list_pages(keys: list[dict[str, Any]]) -> Iterator[Statement]:
    """PAGE_SQL for PAGE_SIZE keys at a time, each page in list() order."""
    for start in range(0, len(keys), PAGE_SIZE):
        page = keys[start:start + PAGE_SIZE]
        yield Statement(PAGE_SQL, tuple([key[column] for key in page] for column in KEY))


def inline(value: Any) -> bool:
    """Whether a value is kept in the checkpoint JSONB and comes back from it exactly as it was."""
    kind = type(value)  # exact types: a str or int subclass (an Enum...) keeps its class in a blob
    if value is None or kind is bool:
        return True
    if kind is int:  # (past ~4,300 digits Python refuses to read a JSON number back)
        return value.bit_length() <= INT_MAX_BITS
    if kind is float:  # JSONB prints 1e16 as 10000000000000000 (an int) and has no -0.0 or nan
        text = repr(value)
        return "e" not in text and "n" not in text and text != "-0.0"
    if kind is str:  # JSONB cannot hold NUL or a lone surrogate
        return len(value) <= INLINE_MAX_CHARS and "\x00" not in value and (
            value.isascii() or not SURROGATE.search(value))
    return False


def put_statement(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    serde: SerializerProtocol,
) -> tuple[Statement, RunnableConfig]:
    """Blobs of the changed channels that are not inline, and the checkpoint row."""
    thread_id, ns, parent_id = address(config)
    values = checkpoint["channel_values"]
    inline_values = {ch: v for ch, v in values.items() if inline(v)}
    # a DeltaChannel snapshot is a blob, marked `true` in the JSONB as LangGraph marks it
    markers = {ch: True for ch, v in values.items() if isinstance(v, DeltaSnapshot)}
    # a changed channel with no value (e.g. consumed) gets no row, as in LangGraph
    blobs = [(ch, version) for ch, version in new_versions.items()
             if ch in values and ch not in inline_values]
    inheriting = bool(parent_id) and any(
        ch not in new_versions and ch not in inline_values and isinstance(v, INLINED_BY_LANGGRAPH)
        for ch, v in values.items()
    )
    params = {
        "thread": thread_id, "ns": ns, "id": checkpoint["id"], "parent": parent_id,
        # serialized here, before anything is sent, so a bad value fails without a round trip
        "checkpoint": to_json({**checkpoint, "channel_values": {**inline_values, **markers}},
                              "checkpoint"),
        # LangGraph's Postgres saver (only it) drops a "writes" key from metadata
        "metadata": to_json({k: v for k, v in get_checkpoint_metadata(config, metadata).items()
                             if k != "writes"}, "metadata"),
    }
    if blobs:
        typed = [serde.dumps_typed(values[channel]) for channel, _ in blobs]
        params = rows_params(params, {
            "c": [channel for channel, _ in blobs], "v": [str(version) for _, version in blobs],
            "t": [type_tag for type_tag, _ in typed], "b": [blob for _, blob in typed]})
    statement = Statement(put_query(len(blobs), inheriting), params)
    return statement, as_config(thread_id, ns, checkpoint["id"])


def put_writes_statement(
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
    serde: SerializerProtocol,
) -> Statement | None:
    """One row per write; special channels take their fixed negative index so a retry overwrites."""
    thread_id, ns, checkpoint_id = writes_address(config)
    if not writes:
        return None
    typed = [serde.dumps_typed(value) for _, value in writes]
    params = rows_params(
        {"thread": thread_id, "ns": ns, "id": checkpoint_id, "task_id": str(task_id),
         "task_path": task_path},
        {"i": [WRITES_IDX_MAP.get(channel, idx) for idx, (channel, _) in enumerate(writes)],
         "c": [channel for channel, _ in writes],
         "t": [type_tag for type_tag, _ in typed], "b": [blob for _, blob in typed]})
    special = all(channel in WRITES_IDX_MAP for channel, _ in writes)
    return Statement(writes_query(len(writes), special), params)


def put_writes_and_checkpoint_statement(
    task: PutWrites,
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    new_versions: ChannelVersions,
    serde: SerializerProtocol,
) -> tuple[Statement, RunnableConfig]:
    """put_writes and put as ONE statement (the writes ride along as a CTE): one commit."""
    put, next_config = put_statement(config, checkpoint, metadata, new_versions, serde)
    if (writes := put_writes_statement(*task, serde)) is None:
        return put, next_config
    # the writes' parameters get a prefix: both statements bind %(thread)s, %(id)s, %(b0)s...
    params = {**{"w_" + key: value for key, value in writes.params.items()}, **put.params}
    return Statement(with_writes(put.query, writes.query), params), next_config


def delete_thread_statement(thread_id: str) -> Statement:
    """Every row of the thread, in all namespaces, from all three tables."""
    return Statement(DELETE_THREADS_SQL, {"threads": [str(thread_id)]})


def delete_for_runs_statement(run_ids: Sequence[str]) -> Statement | None:
    """The checkpoints whose metadata run_id is listed, with their writes and unshared blobs."""
    runs = id_list(run_ids, "delete_for_runs")
    return Statement(DELETE_FOR_RUNS_SQL, {"runs": runs}) if runs else None


def copy_thread_statement(source_thread_id: str, target_thread_id: str) -> Statement:
    """Same rows under a new thread id; checkpoint ids (and so their order) are kept."""
    return Statement(COPY_THREAD_SQL, {"src": str(source_thread_id), "dst": str(target_thread_id)})


def prune_statement(thread_ids: Sequence[str], strategy: str) -> Statement | None:
    """keep_latest: each namespace's newest checkpoint survives; delete: nothing of the threads."""
    threads = prune_threads(thread_ids, strategy)
    if not threads:
        return None
    query = DELETE_THREADS_SQL if strategy == "delete" else PRUNE_KEEP_LATEST_SQL
    return Statement(query, {"threads": threads})


# --- get_delta_channel_history: a page of ancestors per query, only the wanted channels ---------
# The recursive CTE follows parent ids from the anchor (the target's parent, or where the last
# page stopped); each ancestor comes with its wanted values (inline or blob) and its wanted writes.
HISTORY_ANCHORS = {
    "first": "checkpoint_id = (SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = "
             "%(thread)s AND checkpoint_ns = %(ns)s AND (%(id)s::text IS NULL OR checkpoint_id = "
             "%(id)s) ORDER BY checkpoint_id DESC LIMIT 1)",
    "next": "checkpoint_id = %(id)s",
}
HISTORY_SQL = """
WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, checkpoint, depth) AS (
    SELECT checkpoint_id, parent_checkpoint_id, checkpoint, 1 FROM checkpoints
     WHERE thread_id = %(thread)s AND checkpoint_ns = %(ns)s AND {anchor}
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, chain.depth + 1
      FROM chain JOIN checkpoints c ON c.thread_id = %(thread)s AND c.checkpoint_ns = %(ns)s
       AND c.checkpoint_id = chain.parent_checkpoint_id
     WHERE chain.depth < %(page)s)
SELECT checkpoint_id, parent_checkpoint_id,
    (SELECT jsonb_object_agg(iv.key, iv.value) FROM jsonb_each(checkpoint -> 'channel_values') iv
      WHERE iv.key = ANY(%(channels)s)) AS inline,
    (SELECT array_agg(array[convert_to(cv.key, 'UTF8'), convert_to(bl.type, 'UTF8'), bl.blob])
       FROM jsonb_each_text(checkpoint -> 'channel_versions') AS cv
       CROSS JOIN LATERAL (
           SELECT type, blob FROM checkpoint_blobs
            WHERE (thread_id, checkpoint_ns, channel, version)
                = (%(thread)s, %(ns)s, cv.key, cv.value)
            LIMIT 1) AS bl
      WHERE cv.key = ANY(%(channels)s)) AS blobs,
    (SELECT array_agg(array[convert_to(cw.task_id, 'UTF8'), convert_to(cw.channel, 'UTF8'),
                            convert_to(cw.type, 'UTF8'), cw.blob]
                      ORDER BY cw.task_path COLLATE "C", cw.task_id COLLATE "C", cw.idx)
       FROM checkpoint_writes cw
      WHERE cw.thread_id = %(thread)s AND cw.checkpoint_ns = %(ns)s
        AND cw.checkpoint_id = chain.checkpoint_id AND cw.channel = ANY(%(channels)s)) AS writes
FROM chain ORDER BY depth"""


class HistoryRead:
    """get_delta_channel_history for both front doors: run each Statement it hands out and give
    it the rows, until every channel found its seed or the chain ends."""

    PAGE = 64

    def __init__(self, config: RunnableConfig, channels: Sequence[str],
                 serde: SerializerProtocol) -> None:
        thread, ns, target = address(config)
        self.walk, self.serde, self.seen = HistoryWalk(channels), serde, set()
        self.params = {"thread": thread, "ns": ns, "page": self.PAGE, "channels": list(channels)}
        self.next: Statement | None = Statement(
            HISTORY_SQL.format(anchor=HISTORY_ANCHORS["first"]),
            {**self.params, "id": target or None}) if channels else None

    def take(self, rows: list[dict[str, Any]]) -> Statement | None:
        """The rows of the last page; returns the next page's statement (None: done)."""
        for row in rows:
            if row["checkpoint_id"] in self.seen:  # a corrupt chain that cycles: stop
                return None
            self.seen.add(row["checkpoint_id"])
            where = f"checkpoint {row['checkpoint_id']!r}"
            # a JSON null cannot be told from "nothing stored": not a seed
            values = {c: v for c, v in (row["inline"] or {}).items() if v is not None}
            for channel, type_tag, blob in as_text(row["blobs"]):
                if type_tag != "empty":
                    values[channel] = decode(self.serde, type_tag, blob, f"{channel!r} of {where}")
            self.walk.visit(values, [
                (task_id, channel, decode(self.serde, type_tag, blob, f"write of {where}"))
                for task_id, channel, type_tag, blob in as_text(row["writes"])])
            if not self.walk.remaining:
                return None
        parent = rows[-1]["parent_checkpoint_id"] if len(rows) == self.PAGE else None
        self.next = None if parent is None else Statement(
            HISTORY_SQL.format(anchor=HISTORY_ANCHORS["next"]), {**self.params, "id": parent})
        return self.next

    def result(self) -> dict[str, DeltaChannelHistory]:
        return self.walk.result()


# --- rows back into checkpoints -------------------------------------------------------------
def row_to_tuple(row: dict[str, Any], serde: SerializerProtocol) -> CheckpointTuple:
    """A ``SELECT_SQL`` row as a CheckpointTuple: inline values (LangGraph's rows) plus blobs."""
    thread_id, ns, checkpoint_id = row["thread_id"], row["checkpoint_ns"], row["checkpoint_id"]
    where = f"thread {thread_id!r}, namespace {ns!r}, checkpoint {checkpoint_id!r}"
    checkpoint = row["checkpoint"]
    values = dict(checkpoint.get("channel_values") or {})  # LangGraph's inline values, if any
    for channel, type_tag, blob in as_text(row["blobs"]):
        if type_tag != "empty":
            values[channel] = decode(serde, type_tag, blob, f"channel {channel!r} of {where}")
    writes = []
    for task_id, channel, type_tag, blob in as_text(row["writes"]):
        what = f"write to {channel!r} by task {task_id!r} of {where}"
        writes.append((task_id, channel, decode(serde, type_tag, blob, what)))
    if row["sends"]:
        checkpoint = with_sends(checkpoint, values, row["sends"], serde, where)
    parent_id = row["parent_checkpoint_id"]
    return CheckpointTuple(
        config=as_config(thread_id, ns, checkpoint_id),
        checkpoint={**checkpoint, "channel_values": values},
        metadata=row["metadata"],
        parent_config=as_config(thread_id, ns, parent_id) if parent_id else None,
        pending_writes=writes,
    )


def with_sends(checkpoint: Checkpoint, values: dict[str, Any], sends: list[list[bytes]],
               serde: SerializerProtocol, where: str) -> Checkpoint:
    """A pre-v4 checkpoint with its parent's Sends as the TASKS value, at the newest version."""
    values[TASKS] = [decode(serde, type_tag, blob, f"Send to {TASKS!r} before {where}")
                     for type_tag, blob in as_text(sends)]
    versions = checkpoint["channel_versions"]
    newest = max(versions.values()) if versions else next_string_version(None)
    return {**checkpoint, "channel_versions": {**versions, TASKS: newest}}


def as_text(arrays: list[list[bytes | None]] | None) -> Iterator[list[Any]]:
    """The query's bytea arrays, every element but the last (the blob) back to text."""
    for *texts, blob in arrays or ():
        yield [t.decode() if t is not None else "" for t in texts] + [blob]


def decode(serde: SerializerProtocol, type_tag: str, blob: bytes | None, what: str) -> Any:
    """Deserialize one stored value; a row that cannot be read names itself in the error."""
    try:
        return serde.loads_typed((type_tag, blob if blob is not None else b""))
    except InvalidCheckpointError as exc:  # keep its class (e.g. UnsafeTypeError), add the row
        raise type(exc)(f"cannot decode the stored {what}: {exc}") from exc
    except Exception as exc:  # noqa: BLE001 - any failure here means the stored bytes are bad
        raise InvalidCheckpointError(
            f"cannot decode the stored {what} (type {type_tag!r}): {exc}"
        ) from exc


def to_json(obj: Any, what: str) -> str:
    """JSON for a JSONB column, refusing what Postgres cannot store with a message that says so."""
    try:
        text = json.dumps(obj, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"the {what} must be JSON-serializable for Postgres JSONB: {exc}") from exc
    if "\\u0000" in text:  # (so no stored metadata has one, and a filter with one matches nothing)
        raise ValueError(f"the {what} contains a NUL character, which Postgres JSONB cannot store")
    return text

