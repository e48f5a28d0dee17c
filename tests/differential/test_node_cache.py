"""Node and task caching (CachePolicy, compile(cache=...), @task, @entrypoint) against LangGraph.

Each scenario records its streams, node calls, histories and the saver's content, plus the
cache's own rows (namespace, key, stored bytes): a SqliteCache file written by one library reads
the same as the other's. Caches: InMemoryCache and SqliteCache on a file; savers: InMemorySaver,
a SQLite file and Postgres; async scenarios also on the async savers.
"""

import asyncio
import operator
import sqlite3
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread
from tests.differential.test_savers import async_saver_factory, saver_factory  # noqa: F401

CAUSES, scenario = registry()


class State(TypedDict):
    query: str
    docs: Annotated[list, operator.add]


def cache_rows(lib: Run, cache) -> list:
    """What the cache holds: (namespace, key, encoding, bytes as hex, has an expiry)."""
    if isinstance(cache, lib.SqliteCache):
        rows = cache._conn.execute("SELECT ns, key, encoding, val, expiry FROM cache").fetchall()
        return sorted((ns, key, enc, val.hex(), exp is not None) for ns, key, enc, val, exp in rows)
    return sorted((",".join(ns), key, enc, val.hex(), exp is not None)
                  for ns, entries in cache._cache.items()
                  for key, (enc, val, exp) in entries.items())


def rag_graph(lib: Run, cache, **policy):
    """retrieve (cached) -> answer; answer is cached by the query alone (a key_func)."""

    def retrieve(state: State) -> dict:
        lib.count("retrieve")
        return {"docs": [f"doc about {state['query']}"]}

    def answer(state: State) -> dict:
        lib.count("answer")
        return {"query": state["query"].upper()}

    g = lib.StateGraph(State)
    g.add_node("retrieve", retrieve, cache_policy=lib.CachePolicy(**policy))
    g.add_node("answer", answer, cache_policy=lib.CachePolicy(
        key_func=lambda state: state["query"]))
    g.add_edge(lib.START, "retrieve")
    g.add_edge("retrieve", "answer")
    return g.compile(checkpointer=lib.saver(), cache=cache)


def same_input_on_two_threads_runs_once(lib: Run, cache):
    graph = rag_graph(lib, cache)
    lib.stream(graph, {"query": "cats", "docs": []}, thread("t1"), stream_mode="updates")
    lib.stream(graph, {"query": "cats", "docs": []}, thread("t2"),
               stream_mode=["updates", "tasks"])
    lib.invoke(graph, {"query": "dogs", "docs": []}, thread("t3"))  # another input: runs
    lib.note("cache", cache_rows(lib, cache))


def expired_entries_are_not_used(lib: Run, cache):
    graph = rag_graph(lib, cache, ttl=0)  # expires as soon as it is stored
    lib.invoke(graph, {"query": "cats", "docs": []}, thread("t1"))
    lib.invoke(graph, {"query": "cats", "docs": []}, thread("t2"))


def clear_cache_forgets_a_node(lib: Run, cache):
    graph = rag_graph(lib, cache)
    lib.invoke(graph, {"query": "cats", "docs": []}, thread("t1"))
    graph.clear_cache(["retrieve"])
    lib.note("after clear_cache(['retrieve'])", cache_rows(lib, cache))
    lib.invoke(graph, {"query": "cats", "docs": []}, thread("t2"))
    graph.clear_cache()
    lib.note("after clear_cache()", cache_rows(lib, cache))
    lib.attempt("no cache", lambda: lib.StateGraph(State).add_node("x", lambda s: {})
                .add_edge(lib.START, "x").compile().clear_cache())


def failed_and_interrupted_nodes_are_not_cached(lib: Run, cache):
    attempts = []

    def flaky(state: State) -> dict:
        lib.count("flaky")
        attempts.append(1)
        if len(attempts) == 1:
            raise ValueError("first call fails")
        return {"docs": ["ok"]}

    def ask(state: State) -> dict:
        lib.count("ask")
        return {"query": lib.interrupt("which?")}

    g = lib.StateGraph(State)
    g.add_node("flaky", flaky, cache_policy=lib.CachePolicy())
    g.add_node("ask", ask, cache_policy=lib.CachePolicy())
    g.add_edge(lib.START, "flaky")
    g.add_edge("flaky", "ask")
    graph = g.compile(checkpointer=lib.saver(), cache=cache)
    lib.invoke(graph, {"query": "q", "docs": []}, thread("t1"))  # ValueError: not cached
    lib.invoke(graph, None, thread("t1"))  # flaky runs again, ask interrupts
    lib.invoke(graph, lib.Command(resume="cats"), thread("t1"))  # ask runs again, answered
    lib.invoke(graph, {"query": "q", "docs": []}, thread("t2"))  # both cached now
    lib.note("cache", cache_rows(lib, cache))


def cached_routing_and_sends(lib: Run, cache):
    """A cached node's writes include its edges: a conditional edge and Send packets."""

    def plan(state: State) -> dict:
        lib.count("plan")
        return {"query": state["query"] + "!"}

    def fan_out(state: State) -> list:
        return [lib.Send("fetch", {"query": q, "docs": []}) for q in state["query"].split()]

    def fetch(state: State) -> dict:
        lib.count("fetch")
        return {"docs": [state["query"]]}

    g = lib.StateGraph(State)
    g.add_node("plan", plan, cache_policy=lib.CachePolicy())
    g.add_node("fetch", fetch, cache_policy=lib.CachePolicy())
    g.add_edge(lib.START, "plan")
    g.add_conditional_edges("plan", fan_out, ["fetch"])
    graph = g.compile(checkpointer=lib.saver(), cache=cache)
    lib.invoke(graph, {"query": "a b", "docs": []}, thread("t1"))
    # two cache hits in one step: their chunks' order is the order the cache returns them (a
    # SQLite table's row order, set by which fetch finished first in t1), so compare them sorted
    chunks = graph.stream({"query": "a b", "docs": []}, thread("t2"), stream_mode="updates")
    lib.note("t2 updates, sorted", sorted(map(repr, chunks)))
    lib.invoke(graph, {"query": "b c", "docs": []}, thread("t3"))  # fetch(b!) ... only c runs


def resume_reuses_pending_writes_not_the_cache(lib: Run, cache):
    """After an interrupt, the finished sibling's writes come from the checkpoint's writes."""

    def slow(state: State) -> dict:
        lib.count("slow")
        return {"docs": ["slow"]}

    def ask(state: State) -> dict:
        lib.count("ask")
        return {"docs": [lib.interrupt("ok?")]}

    g = lib.StateGraph(State)
    g.add_node("slow", slow, cache_policy=lib.CachePolicy())
    g.add_node("ask", ask)
    g.add_edge(lib.START, "slow")
    g.add_edge(lib.START, "ask")
    graph = g.compile(checkpointer=lib.saver(), cache=cache)
    lib.invoke(graph, {"query": "q", "docs": []}, thread("t1"))
    lib.stream(graph, lib.Command(resume="yes"), thread("t1"), stream_mode="updates")
    lib.stream(graph, {"query": "q", "docs": []}, thread("t2"), stream_mode="updates")


def async_same_input_runs_once(lib: Run, cache):
    graph = rag_graph(lib, cache)
    lib.ainvoke(graph, {"query": "cats", "docs": []}, thread("t1"))
    lib.astream(graph, {"query": "cats", "docs": []}, thread("t2"), stream_mode="updates")
    lib.note("cache", cache_rows(lib, cache))


def cached_task_calls(lib: Run, cache):
    """@task(cache_policy=...): a call with arguments seen before returns the cached result,
    in the same run and on another thread; task.clear_cache forgets them."""

    @lib.task(cache_policy=lib.CachePolicy())
    def lookup(word: str) -> str:
        lib.count("lookup")
        return word.upper()

    @lib.task
    def ask(text: str) -> str:
        return lib.interrupt(f"keep {text}?")

    @lib.entrypoint(checkpointer=lib.saver(), cache=cache)
    def workflow(words: list) -> dict:
        found = [lookup(w).result() for w in words]
        return {"found": found, "keep": ask(" ".join(found)).result()}

    lib.invoke(workflow, ["a", "b", "a"], thread("t1"))  # the second "a" is a hit
    lib.stream(workflow, lib.Command(resume="yes"), thread("t1"), stream_mode="updates")
    lib.stream(workflow, ["b", "c"], thread("t2"), stream_mode=["updates", "tasks"])
    lib.note("cache", cache_rows(lib, cache))
    lookup.clear_cache(cache)
    lib.note("after lookup.clear_cache", cache_rows(lib, cache))
    lib.invoke(workflow, ["a"], thread("t3"))


def entrypoint_cache_policy(lib: Run, cache):
    """@entrypoint(cache_policy=...) caches the entrypoint itself and its calls (a failed call
    is not cached); a call's own policy (a key_func) wins."""

    @lib.task
    def square(x: int) -> int:
        lib.count("square")
        if x < 0:
            raise ValueError("negative")
        return x * x

    @lib.task(cache_policy=lib.CachePolicy(key_func=lambda x, tag: str(x)))
    def label(x: int, tag: str) -> str:
        lib.count("label")
        return f"{tag}{x}"

    @lib.entrypoint(checkpointer=lib.saver(), cache=cache, cache_policy=lib.CachePolicy())
    def workflow(xs: list) -> list:
        lib.count("workflow")
        return [label(square(x).result(), str(i)).result() for i, x in enumerate(xs)]

    lib.invoke(workflow, [2, 3], thread("t1"))
    lib.invoke(workflow, [2, 3], thread("t2"))  # the entrypoint is a hit: nothing runs
    lib.invoke(workflow, [3, 2], thread("t3"))  # every call is a hit
    lib.invoke(workflow, [-1], thread("t4"))
    lib.invoke(workflow, [-1], thread("t5"))  # not cached: runs (and fails) again
    lib.note("cache", cache_rows(lib, cache))


def async_cached_task_calls(lib: Run, cache):
    started, gathered = [], [0]  # the calls whose bodies began; how many the gather waits for

    @lib.task(cache_policy=lib.CachePolicy())
    async def fetch(x: int) -> int:
        lib.count("fetch")
        started.append(x)
        # no gathered call finishes before the others have started (their lookups done): in
        # LangGraph a lookup still in flight hands a call that just finished its own cached
        # write a second time (README, "differences"), on a loaded machine now and then
        for _ in range(2000):
            if len(started) >= gathered[0]:
                break
            await asyncio.sleep(0.001)
        return x * 10

    @lib.entrypoint(checkpointer=lib.saver(), cache=cache)
    async def workflow(xs: list) -> list:
        gathered[0] = len(started) + len(xs)
        first = await asyncio.gather(*(fetch(x) for x in xs))
        # LangGraph stores a cache entry in the background: the repeated call waits for it
        for _ in range(2000):
            if len(cache_rows(lib, cache)) >= len(set(xs)):
                break
            await asyncio.sleep(0.001)
        return [*first, await fetch(xs[0])]

    lib.ainvoke(workflow, [1, 2], thread("t1"))
    # one call at a time in t2: LangGraph's async lookups of concurrent calls race (README)
    lib.astream(workflow, [2], thread("t2"), stream_mode="updates")
    lib.note("cache", cache_rows(lib, cache))


for fn in (same_input_on_two_threads_runs_once, expired_entries_are_not_used,
           clear_cache_forgets_a_node, failed_and_interrupted_nodes_are_not_cached,
           cached_routing_and_sends, resume_reuses_pending_writes_not_the_cache,
           async_same_input_runs_once, cached_task_calls, entrypoint_cache_policy,
           async_cached_task_calls):
    scenario(fn)


@pytest.fixture(params=["memory", "sqlite-file"])
def cache_kind(request, tmp_path):
    """A factory for one kind of cache, taking the library (a file per library)."""
    if request.param == "memory":
        return lambda lib: lib.InMemoryCache()
    return lambda lib: lib.SqliteCache(path=str(tmp_path / f"cache.{lib.name}.sqlite"))


def with_cache(name: str, make_cache):
    return lambda lib: CAUSES[name](lib, make_cache(lib.lib))


SYNC = [name for name in CAUSES if not name.startswith("async")]
ASYNC = [name for name in CAUSES if name.startswith("async")]


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name, cache_kind):
    scenario = with_cache(name, cache_kind)
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))


@pytest.mark.parametrize("name", SYNC)
def test_same_as_langgraph_on_saver(name, cache_kind, saver_factory):  # noqa: F811
    scenario = with_cache(name, cache_kind)
    assert_same(name, record(scenario, LANGGRAPH, saver_factory),
                record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", ASYNC)
def test_async_same_as_langgraph_on_async_saver(name, cache_kind,
                                                async_saver_factory):  # noqa: F811
    scenario = with_cache(name, cache_kind)
    assert_same(name, record(scenario, LANGGRAPH, async_saver_factory),
                record(scenario, OURS, async_saver_factory))


def test_a_sqlite_cache_file_written_by_langgraph_serves_lgcheckpoint(tmp_path):
    """Same rows: a cache LangGraph filled makes our run skip the node (and the other way)."""
    path = str(tmp_path / "shared-cache.sqlite")
    for writer, reader in ((LANGGRAPH, OURS), (OURS, LANGGRAPH)):
        sqlite3.connect(path).execute("DROP TABLE IF EXISTS cache").connection.commit()
        calls = {}
        for lib in (writer, reader):
            log = record(lambda run: run.invoke(
                rag_graph(run, lib.SqliteCache(path=path)), {"query": "x", "docs": []},
                thread(lib.name)), lib)
            calls[lib.name] = dict(log).get("node calls", {})
        assert calls[writer.name] == {"retrieve": 1, "answer": 1}
        assert calls[reader.name] == {}, f"{reader.name} re-ran nodes {writer.name} cached"
