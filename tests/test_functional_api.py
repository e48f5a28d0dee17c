"""Chapter 17's functions, one direct test each, and the errors the functional API gives.

The whole-history comparison with LangGraph is tests/differential/test_functional_api.py.
Run this chapter's tests with ``pytest --lesson 17``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sqlite3

import pytest

from lgcheckpoint.cache.sqlite import SqliteCache
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.constants import END, PREVIOUS
from lgcheckpoint.func import EntrypointNode, entrypoint, task
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.runtime import Runtime, get_runtime
from lgcheckpoint.types import CachePolicy, Command, interrupt
from lgcheckpoint.viz.history import load_history

THREAD = {"configurable": {"thread_id": "1"}}


@pytest.mark.lesson("17_functional_api")
def test_result_writes_split_a_final_into_return_and_saved_value():
    node = EntrypointNode("wf", lambda x: x, [START], START, frozenset())
    assert node.result_writes(entrypoint.final(value=1, save=2)) == [(END, 1), (PREVIOUS, 2)]
    assert node.result_writes("same") == [(END, "same"), (PREVIOUS, "same")]


@pytest.mark.lesson("17_functional_api")
def test_a_finished_call_is_not_run_again_after_an_interrupt(sqlite_path):
    runs = []

    @task
    def side_effect(x: int) -> int:
        runs.append(x)
        return x + 1

    @task
    def ask() -> str:
        return interrupt("go?")

    def workflow(x: int) -> list:
        return [side_effect(x).result(), ask().result()]

    with SqliteSaver.from_conn_string(sqlite_path) as saver:
        entrypoint(checkpointer=saver)(workflow).invoke(1, THREAD)
    with SqliteSaver.from_conn_string(sqlite_path) as saver:  # another process, say
        again = entrypoint(checkpointer=saver)(workflow)
        assert again.invoke(Command(resume="yes"), THREAD) == [2, "yes"]
    assert runs == [1]


@pytest.mark.lesson("17_functional_api")
def test_the_lineage_names_each_task_call_by_its_function(sqlite_path):
    @task
    def price(cart: list) -> int:
        return sum(cart)

    @task
    def ask(total: int) -> str:
        return interrupt(f"pay {total}?")

    saver = SqliteSaver(sqlite3.connect(sqlite_path, check_same_thread=False))

    @entrypoint(checkpointer=saver)
    def checkout(cart: list) -> str:
        return ask(price(cart).result()).result()

    checkout.invoke([1, 2], THREAD)
    checkout.invoke(Command(resume="ok"), THREAD)
    first = load_history(saver, THREAD).steps[0]
    assert {(t.name, tuple(t.regular)) for t in first.tasks if t.name != "checkout"} == {
        ("(no task)", ()), ("price", (("__return__", 3),)), ("ask", (("__return__", "ok"),))}


def test_previous_is_the_last_saved_value_of_the_thread():
    @entrypoint(checkpointer=InMemorySaver())
    def running_total(n: int, *, previous: int | None = None) -> entrypoint.final[int, int]:
        total = (previous or 0) + n
        return entrypoint.final(value=previous, save=total)

    assert [running_total.invoke(n, THREAD) for n in (1, 2, 3)] == [None, 1, 3]


def test_async_entrypoint_awaits_its_calls():
    @task
    async def double(x: int) -> int:
        await asyncio.sleep(0)
        return 2 * x

    @entrypoint()
    async def workflow(xs: list) -> list:
        return list(await asyncio.gather(*(double(x) for x in xs)))

    assert asyncio.run(workflow.ainvoke([1, 2, 3])) == [2, 4, 6]


def test_context_reaches_nodes_and_tasks_as_the_schema_type():
    @dataclasses.dataclass
    class Ctx:
        user: str

    @task
    def whoami() -> str:
        return get_runtime().context.user

    @entrypoint(context_schema=Ctx)
    def workflow(_: int, *, runtime: Runtime) -> tuple:
        return type(runtime.context).__name__, whoami().result()

    assert workflow.invoke(0, context={"user": "ada"}) == ("Ctx", "ada")


def test_misuse_gets_an_error_that_names_the_fix():
    @task
    def lonely() -> int:
        return 1

    with pytest.raises(RuntimeError, match="called outside a running graph"):
        lonely()
    with pytest.raises(RuntimeError, match="get_runtime"):
        get_runtime()

    @task
    async def slow() -> int:
        return 1

    @entrypoint()
    def sync_caller(_: int) -> int:
        return slow().result()

    with pytest.raises(RuntimeError, match="async: run the graph with ainvoke"):
        sync_caller.invoke(0)
    with pytest.raises(ValueError, match="at least one parameter"):
        entrypoint()(lambda: None)
    with pytest.raises(NotImplementedError, match="Generators"):
        entrypoint()(lambda x: (yield x))


@pytest.mark.parametrize(("where", "make"), [  # timeout= is implemented: tests/test_timeouts.py
    ("entrypoint(store=", lambda: entrypoint(store=object())),
])
def test_options_we_do_not_implement_are_refused_by_name(where, make):
    with pytest.raises(TypeError, match=f"does not implement {where.replace('(', '[(]')}"):
        make()


def test_cache_options_take_a_cache_and_a_cache_policy():
    for make, message in [(lambda: task(cache_policy=object()), "task[(]cache_policy=...[)]"),
                          (lambda: entrypoint(cache_policy=60), "entrypoint[(]cache_policy="),
                          (lambda: entrypoint(cache=object()), "entrypoint[(]cache=...[)] takes")]:
        with pytest.raises(TypeError, match=message):
            make()


def test_concurrent_calls_found_in_the_cache_each_take_their_entry_once(tmp_path):
    """LangGraph's async lookups race (README): a hit's writes can be applied twice."""
    runs: list[int] = []

    @task(cache_policy=CachePolicy())
    async def fetch(x: int) -> int:
        runs.append(x)
        return x * 10

    cache = SqliteCache(path=str(tmp_path / "cache.sqlite"))
    saver = InMemorySaver()

    @entrypoint(checkpointer=saver, cache=cache)
    async def workflow(xs: list) -> list:
        return list(await asyncio.gather(*(fetch(x) for x in xs)))

    assert asyncio.run(workflow.ainvoke([1, 2], THREAD)) == [10, 20]
    config = {"configurable": {"thread_id": "2"}}
    assert asyncio.run(workflow.ainvoke([2, 1, 3], config)) == [20, 10, 30]
    assert runs == [1, 2, 3]
    writes = list(saver.list(config))[-1].pending_writes  # the step's: one per call
    assert sorted(v for _, c, v in writes if c == "__return__") == [10, 20, 30]
    fetch.clear_cache(cache)
    assert cache.get([(("__pregel_ns_writes", fetch.__qualname__), "x")]) == {}


def test_a_state_graph_node_can_call_a_task_and_see_the_runtime():
    @task
    def shout(text: str) -> str:
        return text.upper()

    def node(state: dict, runtime: Runtime) -> dict:
        return {"text": shout(state["text"]).result() + str(runtime.context)}

    from typing_extensions import TypedDict

    class State(TypedDict):
        text: str

    graph = StateGraph(State, context_schema=int).add_node("node", node)
    graph.add_edge(START, "node")
    assert graph.compile().invoke({"text": "hi"}, context=7) == {"text": "HI7"}
