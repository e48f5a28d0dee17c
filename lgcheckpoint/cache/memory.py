"""InMemoryCache: a node cache in a dict, for one process. Next: cache/sqlite.py."""

from __future__ import annotations

import threading
from typing import Mapping, Sequence

from lgcheckpoint.cache.base import BaseCache, FullKey, Namespace, ValueT, expired, expiry


class InMemoryCache(BaseCache[ValueT]):
    """Entries as {namespace: {key: (type tag, bytes, expiry)}}, serialized like on disk."""

    def __init__(self, *, serde: object = None) -> None:
        super().__init__(serde=serde)
        self._cache: dict[Namespace, dict[str, tuple[str, bytes, float | None]]] = {}
        self._lock = threading.RLock()  # tasks of one step finish in several threads

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        found: dict[FullKey, ValueT] = {}
        with self._lock:
            for ns, key in keys:
                entry = self._cache.get(tuple(ns), {}).get(key)
                if entry is None:
                    continue
                if expired(entry[2]):  # forgotten when found stale
                    del self._cache[tuple(ns)][key]
                else:
                    found[(tuple(ns), key)] = self.serde.loads_typed(entry[:2])
        return found

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        with self._lock:
            for (ns, key), (value, ttl) in pairs.items():
                self._cache.setdefault(tuple(ns), {})[key] = (
                    *self.serde.dumps_typed(value), expiry(ttl))

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._cache.clear()
            for ns in namespaces or ():
                self._cache.pop(tuple(ns), None)
