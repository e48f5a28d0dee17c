"""Which saved task results are in the node cache: the one place LangGraph records "cached".

A checkpoint does not say that a task's writes came from the cache (they are saved as ordinary
pending writes). The cache itself does: for a task whose node has a ``cache_policy``, rebuild its
input from the checkpoint it ran from, compute the cache key as the runtime does (namespace
``("__pregel_ns_writes", module.function, node)``, xxh3-128 of ``key_func(input)``) and look it
up in the graph's cache. Duck-typed: works for lgcheckpoint's graphs and LangGraph's.
``lineage.py`` shows the mark ("task fetch (cached)").
End of the side trip from checkpoint/base.py.
"""

from __future__ import annotations

from typing import Any

from xxhash import xxh3_128_hexdigest

CACHE_NS_WRITES = "__pregel_ns_writes"
SPECIAL = ("__error__", "__interrupt__", "__resume__", "__scheduled__", "__error_source_node__")


def function_of(node: Any) -> Any:
    """The user's function behind a node (ours: .func; LangGraph's: .bound.func)."""
    return getattr(node, "func", None) or getattr(getattr(node, "bound", None), "func", None)


def cache_address(name: str, node: Any, values: dict) -> tuple | None:
    """(namespace, key) of a pull task of ``node`` that ran from channel ``values``."""
    policy = getattr(node, "cache_policy", None)
    reads = getattr(node, "reads", None) or getattr(node, "channels", None)
    if policy is None or not isinstance(reads, (list, tuple)) or getattr(node, "managed", None):
        return None  # no policy, a single-channel node, or an input with managed values
    value: Any = {k: values[k] for k in reads if k in values}
    if getattr(node, "mapper", None) is not None:
        value = node.mapper(value)
    key = policy.key_func(value)
    fn = function_of(node)
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    ident = f"{module}.{qualname}" if module and qualname else "__dynamic__"
    return ((CACHE_NS_WRITES, ident, name),
            xxh3_128_hexdigest(key.encode() if isinstance(key, str) else key))


def is_cached(graph: Any, name: str, values: dict, regular: list) -> bool:
    """True if the graph's cache holds exactly these writes for this task's input."""
    cache, node = getattr(graph, "cache", None), (getattr(graph, "nodes", None) or {}).get(name)
    if cache is None or node is None or not regular:
        return False
    try:
        address = cache_address(name, node, values)
        found = cache.get([address]).get(address) if address else None
    except Exception:  # noqa: BLE001 - a key_func that fails on old values: not shown as cached
        return False
    return found is not None and [tuple(w) for w in found if w[0] not in SPECIAL] == [
        tuple(w) for w in regular]


def mark_cached(steps: list, graph: Any) -> None:
    """Flag each pull task whose saved writes are the node cache's entry for its input."""
    if getattr(graph, "cache", None) is None:
        return
    for step in steps:
        step.tasks = [tw._replace(cached=True) if tw.name in step.triggered and is_cached(
            graph, tw.name, step.values, tw.regular) else tw for tw in step.tasks]
