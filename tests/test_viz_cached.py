"""The viewers mark a task whose writes are the node cache's entry for its input as cached,
on lgcheckpoint's runtime and on LangGraph's (the cache is the only place either records it)."""

import importlib
import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.viz import LineageGraph, load_history


class State(TypedDict):
    topic: str
    facts: Annotated[list, operator.add]


def fetch(state: State) -> dict:
    return {"facts": [f"facts about {state['topic']}"]}


def note(state: State) -> dict:
    return {"facts": ["noted"]}


@pytest.mark.parametrize("package", ["lgcheckpoint", "langgraph"])
@pytest.mark.parametrize("cache_kind", ["memory", "sqlite"])
def test_a_cached_task_is_marked_in_history_and_lineage(package, cache_kind, tmp_path):
    lib = {m: importlib.import_module(f"{package}.{m}") for m in
           ("graph", "types", "checkpoint.memory", "cache.memory", "cache.sqlite")}
    cache = (lib["cache.memory"].InMemoryCache() if cache_kind == "memory"
             else lib["cache.sqlite"].SqliteCache(path=str(tmp_path / "cache.sqlite")))
    g = lib["graph"].StateGraph(State)
    g.add_node("fetch", fetch, cache_policy=lib["types"].CachePolicy())
    g.add_node("note", note)  # no policy: never marked
    g.add_edge(lib["graph"].START, "fetch")
    g.add_edge("fetch", "note")
    graph = g.compile(checkpointer=lib["checkpoint.memory"].InMemorySaver(), cache=cache)
    for thread in ("t1", "t2"):
        graph.invoke({"topic": "owls", "facts": []}, {"configurable": {"thread_id": thread}})

    def marks(thread):
        history = load_history(graph, {"configurable": {"thread_id": thread}})
        return [(tw.name, tw.cached) for s in history.steps for tw in s.tasks
                if tw.name in ("fetch", "note")]

    # t1 ran fetch and stored it, t2 was served from it: both are the cache's entry for owls
    assert marks("t1") == marks("t2") == [("fetch", True), ("note", False)]
    graph.clear_cache(["fetch"])  # forgets owls: the saved writes stay, the mark goes
    assert marks("t1") == [("fetch", False), ("note", False)]
    graph.invoke({"topic": "bats", "facts": []}, {"configurable": {"thread_id": "t3"}})
    assert marks("t3") == [("fetch", True), ("note", False)]
    assert marks("t1") == [("fetch", False), ("note", False)]  # another input, another key
    lineage = LineageGraph(graph, {"configurable": {"thread_id": "t1"}})
    graph.invoke({"topic": "owls", "facts": []}, {"configurable": {"thread_id": "t4"}})  # stores
    text = "\n".join(lineage.refresh().details(s.key) for s in lineage.history.steps)
    assert "task fetch (cached): facts=" in text and "task note: facts=" in text
