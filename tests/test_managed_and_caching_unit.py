"""Direct tests of the functions chapters 19 (managed values) and 20 (node caching) show."""

import operator
import time
from collections import deque
from typing import Annotated

import pytest
from typing_extensions import NotRequired, TypedDict
from xxhash import xxh3_128_hexdigest

from lgcheckpoint.cache.memory import InMemoryCache
from lgcheckpoint.cache.sqlite import SqliteCache
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.managed import (IsLastStep, IsLastStepManager, RemainingSteps,
                                  RemainingStepsManager, Window, managed_value_of, read_managed)
from lgcheckpoint.pregel import caching
from lgcheckpoint.types import CachePolicy


@pytest.mark.lesson("19_managed_values")
def test_managed_values_read_the_step_window():
    assert read_managed({"left": RemainingStepsManager, "last": IsLastStepManager},
                        Window(step=5, stop=8)) == {"left": 3, "last": False}
    assert read_managed({"last": IsLastStepManager}, Window(7, 8)) == {"last": True}
    assert managed_value_of(NotRequired[RemainingSteps]) is RemainingStepsManager
    assert managed_value_of(Annotated[list, operator.add]) is None


@pytest.mark.lesson("19_managed_values")
def test_a_managed_key_is_not_a_channel_nor_output():
    class State(TypedDict):
        n: int
        left: RemainingSteps
        last: IsLastStep

    builder = StateGraph(State)
    assert set(builder.managed) == {"left", "last"} and set(builder.channels) == {"n"}
    builder.add_node("a", lambda s: {"n": s["left"]})
    builder.add_edge(START, "a")
    graph = builder.compile()
    assert graph.invoke({"n": 0}, {"recursion_limit": 5}) == {"n": 4}


@pytest.mark.lesson("20_node_caching")
@pytest.mark.parametrize("make", [InMemoryCache, lambda: SqliteCache(path=":memory:")])
def test_a_cache_keeps_values_by_namespace_until_they_expire(make):
    cache = make()
    ns_a, ns_b = ("w", "m.f", "a"), ("w", "m.g", "b")
    cache.set({(ns_a, "k1"): (deque([("x", 1)]), None), (ns_a, "k2"): ({"v": 2}, 0),
               (ns_b, "k1"): ([3], 60)})
    time.sleep(0.01)
    assert cache.get([(ns_a, "k1"), (ns_a, "k2"), (ns_b, "k1"), (ns_b, "zz")]) == {
        (ns_a, "k1"): deque([["x", 1]]), (ns_b, "k1"): [3]}  # k2 expired at once (ttl 0)
    cache.clear([ns_a])
    assert cache.get([(ns_a, "k1"), (ns_b, "k1")]) == {(ns_b, "k1"): [3]}
    cache.clear()
    assert cache.get([(ns_b, "k1")]) == {}


@pytest.mark.lesson("20_node_caching")
def test_cache_key_and_entry_follow_langgraph():
    def fetch(state):
        return {"facts": [state["topic"]]}

    class State(TypedDict):
        topic: str
        facts: Annotated[list, operator.add]

    builder = StateGraph(State)
    builder.add_node("fetch", fetch, cache_policy=CachePolicy(key_func=lambda s: s["topic"],
                                                              ttl=9))
    builder.add_edge(START, "fetch")
    graph = builder.compile(cache=InMemoryCache())
    node = graph.nodes["fetch"]
    task = type("T", (), {"node": node, "input": {"topic": "owls"}, "writes": [("facts", [1])],
                          "cache_key": None})()
    key = caching.cache_key(task)
    assert key.ns == ("__pregel_ns_writes", f"{__name__}.{fetch.__qualname__}", "fetch")
    assert key.key == xxh3_128_hexdigest(b"owls")  # of what key_func returned, as text
    assert key.ttl == 9
    task.cache_key = key
    assert caching.entry(task, task.writes) == {(key.ns, key.key): (deque([("facts", [1])]), 9)}
    assert caching.entry(task, [("__error__", ValueError())]) == {}  # failures are not cached
