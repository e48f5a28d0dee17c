"""SqliteCache: a node cache in a SQLite file, in LangGraph's ``cache`` table (same rows).

A namespace is stored joined by commas; a value as (encoding, val) from the serializer.
End of the side trip from pregel/loop.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from typing import Mapping, Sequence

from lgcheckpoint.cache.base import BaseCache, FullKey, Namespace, ValueT, expired, expiry

SCHEMA = """CREATE TABLE IF NOT EXISTS cache (
    ns TEXT, key TEXT, expiry REAL, encoding TEXT NOT NULL, val BLOB NOT NULL,
    PRIMARY KEY (ns, key))"""


class SqliteCache(BaseCache[ValueT]):
    """One connection shared by the run's threads, behind a lock; WAL mode.

    The connection closes when the cache is garbage collected (a graph may hold a clone)."""

    def __init__(self, *, path: str, serde: object = None) -> None:
        super().__init__(serde=serde)
        self._conn = sqlite3.connect(path, check_same_thread=False)
        self._lock = threading.RLock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(SCHEMA)
        self._conn.commit()

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        if not keys:
            return {}
        rows = ",".join("(?, ?)" for _ in keys)
        params = [part for ns, key in keys for part in (",".join(ns), key)]
        found: dict[FullKey, ValueT] = {}
        with self._lock, self._conn:  # one transaction: stale rows are deleted as they are found
            for ns, key, expires_at, encoding, val in self._conn.execute(
                    f"SELECT ns, key, expiry, encoding, val FROM cache WHERE (ns, key) IN ({rows})",
                    params).fetchall():
                if expired(expires_at):
                    self._conn.execute("DELETE FROM cache WHERE ns = ? AND key = ?", (ns, key))
                else:
                    found[(tuple(ns.split(",")), key)] = self.serde.loads_typed((encoding, val))
        return found

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO cache (ns, key, expiry, encoding, val) "
                "VALUES (?, ?, ?, ?, ?)",
                [(",".join(ns), key, expiry(ttl), *self.serde.dumps_typed(value))
                 for (ns, key), (value, ttl) in pairs.items()])

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock, self._conn:
            if namespaces is None:
                self._conn.execute("DELETE FROM cache")
            else:
                self._conn.executemany("DELETE FROM cache WHERE ns = ?",
                                       [(",".join(ns),) for ns in namespaces])

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return await asyncio.to_thread(self.get, keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        await asyncio.to_thread(self.set, pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        await asyncio.to_thread(self.clear, namespaces)
