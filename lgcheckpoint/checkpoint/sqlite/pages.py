"""list() on SQLite a page at a time: the keys of every match first, then their rows and writes.

Both front doors run list() as ``list_keys`` (sql.py), then for each page ``list_pages``' query
and ``select_page_writes``' queries, the lock taken per page, so a caller may write while it
iterates. End of the side trip from checkpoint/sqlite/sql.py.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from lgcheckpoint.checkpoint.sqlite.sql import (
    COLUMNS, KEY, LIST_ORDER, PAGE_SIZE, CheckpointRow, Query,
)

# list() in two phases: one SELECT reads the keys of every match in list order (keys only: one
# sort, however many threads match), then the rows PAGE_SIZE keys at a time, the lock taken per
# page. Memory holds the keys and one page; a key deleted meanwhile is skipped. (Paging "after the
# last row seen" sorted every match again for each page: quadratic for a listing across threads.)
# Postgres reads its first page directly, to spare a round trip; here a statement costs
# microseconds and a second scan of every match would cost more.
def list_pages(keys: list[tuple[str, str, str]]) -> Iterator[Query]:
    """The rows of PAGE_SIZE keys at a time, each page in list() order (a join on the keys is
    one primary-key lookup a key; `(key) IN (VALUES ...)` would scan the table)."""
    for start in range(0, len(keys), PAGE_SIZE):
        page = keys[start:start + PAGE_SIZE]
        yield Query(f"WITH page({KEY}) AS (VALUES " + ", ".join(["(?, ?, ?)"] * len(page))
                    + f") SELECT {COLUMNS} FROM page JOIN checkpoints USING ({KEY}){LIST_ORDER}",
                    [value for key in page for value in key])


# a page of list(): the writes of all its checkpoints of one (thread, namespace) in one SELECT,
# the ids bound as one JSON array; each checkpoint's writes again in (task_id, idx) order
PAGE_WRITES = ("SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, type, value, "
               "{path} FROM writes WHERE thread_id = ? AND checkpoint_ns = ? "
               "AND checkpoint_id IN (SELECT value FROM json_each(?)) "
               "ORDER BY checkpoint_id, task_id, idx")
PAGE_WRITES_SQL = {True: PAGE_WRITES.format(path="task_path"),
                   False: PAGE_WRITES.format(path="''")}


def select_page_writes(rows: list[CheckpointRow], has_task_path: bool = True) -> list[Query]:
    """The pending writes of a page of checkpoints: one SELECT per (thread, namespace) in it."""
    ids: dict[tuple[str, str], list[str]] = {}
    for thread_id, ns, checkpoint_id, *_ in rows:
        ids.setdefault((thread_id, ns), []).append(checkpoint_id)
    return [Query(PAGE_WRITES_SQL[has_task_path], (thread_id, ns, json.dumps(checkpoint_ids)))
            for (thread_id, ns), checkpoint_ids in ids.items()]


def writes_by_checkpoint(found: list[Sequence[Any]]) -> dict[tuple[str, str, str], list[Any]]:
    """Rows of select_page_writes split by checkpoint (a row's first three columns), in order."""
    by_checkpoint: dict[tuple[str, str, str], list[Any]] = {}
    for thread_id, ns, checkpoint_id, *write in found:
        by_checkpoint.setdefault((thread_id, ns, checkpoint_id), []).append(write)
    return by_checkpoint
