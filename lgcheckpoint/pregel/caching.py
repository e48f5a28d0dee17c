"""Node caching: a task whose node has a CachePolicy and whose input was seen before is not run.

Before a step runs, each such task looks up its key, ``(("__pregel_ns_writes", module.function,
node), xxh3(key_func(input)))``; a hit's writes become the task's writes, are saved as its
pending writes and streamed with ``{"__metadata__": {"cached": True}}``, exactly as if it ran.
A task that finished (no error, no interrupt) stores its writes there for next time.

A @task call with a cache policy (its own, or its entrypoint's) is cached the same way, keyed
by ``(("__pregel_ns_writes", module.function), xxh3(key_func(*args, **kwargs)))``: its hit is
applied before it would run, its one write ``__return__`` is what the caller gets back.

Caching and resuming both skip a node, but differ in scope: pending writes belong to one
checkpoint of one thread (a resume reuses what that step already did), while the cache is keyed
by input alone, across threads and runs, until its ttl ends or clear_cache(). Next: cache/base.py.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable, Sequence

from xxhash import xxh3_128_hexdigest

from lgcheckpoint.cache.base import BaseCache, FullKey, Namespace
from lgcheckpoint.constants import ERROR, INTERRUPT, PUSH
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.node import Node
from lgcheckpoint.types import CacheKey, CachePolicy

CACHE_NS_WRITES = "__pregel_ns_writes"  # LangGraph's namespace for cached task writes


def identifier(fn: Any) -> str | None:
    """``module.qualname`` of a node's function (None: it has no module, so it is dynamic)."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    module = getattr(fn, "__module__", None)
    return f"{module}.{name}" if name and module else None


def namespace(node: Node) -> Namespace:
    """The cache namespace of a node's writes: clear_cache forgets one node by it."""
    return (CACHE_NS_WRITES, identifier(node.func) or "__dynamic__", node.name)


def call_namespace(func: Any) -> Namespace:
    """The cache namespace of a task function's calls (no node name: any caller shares it)."""
    return (CACHE_NS_WRITES, identifier(func) or "__dynamic__")


def digest(key: str | bytes) -> str:
    return xxh3_128_hexdigest(key.encode() if isinstance(key, str) else key)


def cache_key(task: Task) -> CacheKey | None:
    """Where this task's writes are cached, if its node has a cache policy."""
    policy = task.node.cache_policy
    if policy is None:
        return None
    return CacheKey(namespace(task.node), digest(policy.key_func(task.input)), policy.ttl)


def call_key(func: Any, policy: CachePolicy, args: tuple, kwargs: dict) -> CacheKey | None:
    """Where a task call's result is cached, if it has a cache policy."""
    if policy is None:
        return None
    return CacheKey(call_namespace(func), digest(policy.key_func(*args, **kwargs)), policy.ttl)


def wanted(tasks: Iterable[Task]) -> dict[FullKey, Task]:
    """Tasks to look up: a cache policy, and no writes reused from an earlier run."""
    found = {}
    for task in tasks:
        if not task.writes and (key := task.cache_key or cache_key(task)) is not None:
            task.cache_key = key
            found[(key.ns, key.key)] = task
    return found


def take_hits(wanted: dict[FullKey, Task], found: dict[FullKey, Any]) -> list[Task]:
    """Give each task found in the cache its cached writes; return those tasks."""
    for full_key, writes in found.items():
        wanted[full_key].writes.extend((chan, value) for chan, value in writes)
    return [wanted[full_key] for full_key in found]


def entry(task: Task, writes: list) -> dict[FullKey, tuple[deque, int | None]]:
    """What to store after a node's task finished: its writes (a deque, as LangGraph does).

    A task call's entry is stored by calls.py instead, before its caller gets the result, so
    the caller's next call with the same arguments finds it."""
    return {} if task.path[0] == PUSH and task.path[-1] is True else finished_entry(task, writes)


def finished_entry(task: Task, writes: list) -> dict[FullKey, tuple[deque, int | None]]:
    """A failed or interrupted task is not cached: a hit would skip it without raising."""
    key = task.cache_key
    if key is None or any(chan in (ERROR, INTERRUPT) for chan, _ in writes):
        return {}
    return {(key.ns, key.key): (deque(task.writes), key.ttl)}


class CacheClearing:
    """Pregel's clear_cache and aclear_cache (mixed in): drop the cached writes of some nodes."""

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Forget the cached writes of these nodes (default: every node)."""
        self._cache_for_clearing().clear(self._cache_namespaces(nodes))

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        await self._cache_for_clearing().aclear(self._cache_namespaces(nodes))

    def _cache_for_clearing(self) -> BaseCache:
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache: "
                             "compile(cache=InMemoryCache()) first")
        return self.cache

    def _cache_namespaces(self, nodes: Sequence[str] | None) -> list[tuple[str, ...]]:
        return [namespace(self.nodes[n]) for n in nodes or self.nodes if n in self.nodes]
