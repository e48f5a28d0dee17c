"""BaseCache: the contract of a node cache, a few verbs over (namespace, key) -> value.

A value is stored serialized (the (type tag, bytes) pair of a checkpoint serializer) with an
optional expiry. Namespaces let ``clear_cache`` forget one node's entries. Next: cache/memory.py.
"""

from __future__ import annotations

import copy
import time
from abc import ABC, abstractmethod
from typing import Any, Collection, Generic, Mapping, Sequence, TypeVar

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer

ValueT = TypeVar("ValueT")
Namespace = tuple[str, ...]  # ("__pregel_ns_writes", "module.function", node name)
FullKey = tuple[Namespace, str]  # (namespace, key)


class BaseCache(ABC, Generic[ValueT]):
    """Get, set (with a time to live) and clear cached values; every verb has an async twin."""

    serde: Any = JsonPlusSerializer()

    def __init__(self, *, serde: Any = None) -> None:
        self.serde = serde or self.serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The values found (and not expired) for these keys."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Store each value with its time to live in seconds (None: no expiry)."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Forget the given namespaces' entries, or every entry."""

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        self.clear(namespaces)

    def with_allowlist(self, extra: Collection[tuple[str, ...]]) -> BaseCache[ValueT]:
        """A shallow clone whose serializer may also build these types (the graph's schemas)."""
        allow = getattr(self.serde, "with_msgpack_allowlist", None)
        serde = allow(extra) if allow is not None else self.serde
        if serde is self.serde:
            return self
        clone = copy.copy(self)
        clone.serde = serde
        return clone


def expiry(ttl: int | None) -> float | None:
    """When an entry stored now with this time to live expires (a Unix timestamp)."""
    return None if ttl is None else time.time() + ttl


def expired(expires_at: float | None) -> bool:
    return expires_at is not None and time.time() >= expires_at
