"""SQLite's DeltaChannel history: walk the parent chain a page of ancestors per query.

A recursive SELECT follows ``parent_checkpoint_id`` a page at a time until every channel found its
seed (a stored value); then one SELECT reads the wanted channels' writes. ``HistoryRead`` only
builds the queries and folds their rows, so both front doors run it.
End of the side trip from pregel/loop.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from lgcheckpoint.checkpoint.base import PendingWrite, RunnableConfig, address
from lgcheckpoint.checkpoint.delta_history import DeltaChannelHistory, HistoryWalk
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.sqlite.sql import Query

PARENT_OF = ("SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = :thread "
             "AND checkpoint_ns = :ns AND (:id IS NULL OR checkpoint_id = :id) "
             "ORDER BY checkpoint_id DESC LIMIT 1")
ANCESTORS = """WITH RECURSIVE chain(checkpoint_id, parent_checkpoint_id, type, checkpoint) AS (
    SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints
    WHERE thread_id = :thread AND checkpoint_ns = :ns AND checkpoint_id = :id
    UNION ALL
    SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint FROM checkpoints AS c
    JOIN chain ON c.thread_id = :thread AND c.checkpoint_ns = :ns
        AND c.checkpoint_id = chain.parent_checkpoint_id
    LIMIT :page)
SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM chain"""
HISTORY_WRITES = ("SELECT checkpoint_id, task_id, channel, type, value FROM writes "
                  "WHERE thread_id = ? AND checkpoint_ns = ? "
                  "AND checkpoint_id IN (SELECT value FROM json_each(?)) "
                  "AND channel IN (SELECT value FROM json_each(?)) ORDER BY {path}, task_id, idx")


class HistoryRead:
    """The reads of get_delta_channel_history, for both front doors: run each Query it hands
    out and give it the rows. Ancestors come a page at a time, newest first, until every
    channel found its seed (a stored value); then one query reads the wanted writes."""

    PAGE = 64

    def __init__(self, config: RunnableConfig, channels: Sequence[str],
                 serde: SerializerProtocol, has_task_path: bool) -> None:
        self.thread, self.ns, target = address(config)
        self.walk, self.serde, self.has_task_path = HistoryWalk(channels), serde, has_task_path
        self.visited: list[tuple[str, dict[str, Any]]] = []  # (ancestor id, wanted values)
        self.ids: set[str] = set()
        self.next: Query | None = Query(PARENT_OF, {"thread": self.thread, "ns": self.ns,
                                                    "id": target or None}) if channels else None
        self.remaining = set(channels)

    def take(self, rows: list[Sequence[Any]]) -> Query | None:
        """Rows of the last query; returns the next one (None: the chain is read)."""
        if not self.visited and self.next is not None and self.next.sql is PARENT_OF:
            parent = rows[0][0] if rows else None  # the target's parent: the first ancestor
        else:
            parent = None
            for checkpoint_id, parent, type_, blob in rows:
                if checkpoint_id in self.ids:  # a corrupt chain that cycles: stop
                    parent = None
                    break
                self.ids.add(checkpoint_id)
                values = self.serde.loads_typed((type_, blob))["channel_values"]
                wanted = {c: values[c] for c in self.remaining if c in values}
                self.visited.append((checkpoint_id, wanted))
                self.remaining -= wanted.keys()
                if not self.remaining:
                    parent = None
                    break
            if len(rows) < self.PAGE:
                parent = None
        self.next = None if parent is None else Query(
            ANCESTORS, {"thread": self.thread, "ns": self.ns, "id": parent, "page": self.PAGE})
        return self.next

    def writes(self) -> Query:
        ids = json.dumps([checkpoint_id for checkpoint_id, _ in self.visited])
        path = "task_path" if self.has_task_path else "''"
        return Query(HISTORY_WRITES.format(path=path),
                     (self.thread, self.ns, ids, json.dumps(self.walk.channels)))

    def result(self, rows: list[Sequence[Any]]) -> dict[str, DeltaChannelHistory]:
        by_checkpoint: dict[str, list[PendingWrite]] = {}
        for checkpoint_id, task_id, channel, type_, value in rows:
            by_checkpoint.setdefault(checkpoint_id, []).append(
                (task_id, channel, self.serde.loads_typed((type_, value))))
        for checkpoint_id, values in self.visited:
            self.walk.visit(values, by_checkpoint.get(checkpoint_id))
        return self.walk.result()
