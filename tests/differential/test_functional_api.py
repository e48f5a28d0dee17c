"""The functional API (@entrypoint, @task) and Runtime: whole histories, as in LangGraph.

Each task call is a PUSH task whose result is a pending write ``__return__``; these scenarios
check that we write the same checkpoints, writes, versions and streams, and that a resumed
entrypoint re-runs only the calls that had not finished (``node calls`` counts them). Every
scenario runs on InMemorySaver, SQLite and Postgres; the async ones also on the async savers.
"""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread
from tests.differential.test_savers import saver_of

SYNC, sync_scenario = registry()
ASYNC, async_scenario = registry()


def counted(lib: Run, name: str, fn: Any, **options: Any) -> Any:
    """A @task that counts its runs (to see which calls a resume runs again)."""
    def body(*args: Any) -> Any:
        lib.count(name)
        return fn(*args)

    body.__name__ = name
    return lib.task(body, **options)


@sync_scenario
def three_tasks_interrupt_resume(lib: Run):
    """The course's example: two finished calls are not re-run after the interrupt."""
    add_one = counted(lib, "add_one", lambda x: x + 1)
    double = counted(lib, "double", lambda x: x * 2)
    ask = counted(lib, "ask", lambda x: lib.interrupt(f"send {x}?"))

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(n: int) -> dict:
        a = add_one(n).result()
        b = double(a).result()
        return {"a": a, "b": b, "answer": ask(b).result()}

    cfg = thread()
    lib.invoke(workflow, 3, cfg)
    lib.get_state(workflow, cfg)
    lib.stream(workflow, lib.Command(resume="yes"), cfg, stream_mode=["updates", "values"])


@sync_scenario
def previous_and_final(lib: Run):
    """`previous` is the last saved value; entrypoint.final returns one value, saves another."""
    @lib.entrypoint(checkpointer=lib.saver())
    def counter(n: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + n
        return lib.entrypoint.final(value=f"was {previous}", save=total)

    cfg = thread()
    for n in (1, 2, 3):
        lib.invoke(counter, n, cfg)
    lib.stream(counter, 4, cfg, stream_mode="updates")


@sync_scenario
def update_state_sets_previous(lib: Run):
    """update_state on an entrypoint writes what the function would have returned."""
    @lib.entrypoint(checkpointer=lib.saver())
    def remember(inputs: Any, *, previous: Any) -> Any:
        return {"previous": previous, "current": inputs}

    cfg = thread()
    lib.update_state(remember, cfg, {"a": "-1"})
    lib.invoke(remember, {"a": "1"}, cfg)
    lib.update_state(remember, cfg, {"a": "3"})
    lib.stream(remember, {"a": "2"}, cfg)


@sync_scenario
def parallel_calls_and_nested_calls(lib: Run):
    """Several calls in flight at once, and a task that calls another task."""
    square = counted(lib, "square", lambda x: x * x)

    @lib.task
    def sum_of_squares(xs: list) -> int:
        return sum(f.result() for f in [square(x) for x in xs])

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(xs: list) -> dict:
        futures = [square(x) for x in xs]
        return {"each": [f.result() for f in futures], "sum": sum_of_squares(xs).result()}

    lib.invoke(workflow, [1, 2, 3], thread())


@sync_scenario
def two_interrupts_in_sequence(lib: Run):
    """Each resume answers the next question; every finished call keeps its result."""
    first = counted(lib, "first", lambda: lib.interrupt("first?"))
    second = counted(lib, "second", lambda: lib.interrupt("second?"))
    work = counted(lib, "work", lambda a, b: f"{a}+{b}")

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(_: Any) -> str:
        return work(first().result(), second().result()).result()

    cfg = thread()
    lib.invoke(workflow, "go", cfg)
    lib.invoke(workflow, lib.Command(resume="A"), cfg)
    lib.invoke(workflow, lib.Command(resume="B"), cfg)


@sync_scenario
def interrupt_in_the_entrypoint_itself(lib: Run):
    done = counted(lib, "done", lambda x: x.upper())

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(text: str) -> str:
        shout = done(text).result()
        return shout + " " + lib.interrupt("ok?")

    cfg = thread()
    lib.invoke(workflow, "hi", cfg)
    lib.invoke(workflow, lib.Command(resume="fine"), cfg)


@sync_scenario
def failing_task_and_retry(lib: Run):
    """A task's error is saved as its write and raised in the entrypoint; a retry policy
    re-runs it in place (no new checkpoint)."""
    attempts = []

    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 2:
            raise ConnectionError("try again")
        return x

    retried = counted(lib, "flaky", flaky,
                      retry_policy=lib.RetryPolicy(initial_interval=0, jitter=False))
    broken = counted(lib, "broken", lambda: (_ for _ in ()).throw(ValueError("boom")))

    @lib.entrypoint(checkpointer=lib.saver())
    def ok(x: int) -> int:
        return retried(x).result()

    @lib.entrypoint(checkpointer=lib.saver())
    def fails(x: int) -> int:
        return broken().result()

    lib.invoke(ok, 5, thread("ok"))
    lib.invoke(fails, 5, thread("fails"))


@sync_scenario
def task_called_from_a_state_graph_node(lib: Run):
    class State(TypedDict):
        text: str

    shout = counted(lib, "shout", lambda s: s.upper())

    def node(state: State) -> dict:
        return {"text": shout(state["text"]).result() + lib.interrupt("more?")}

    g = lib.StateGraph(State)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    graph = g.compile(checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, {"text": "a"}, cfg)
    lib.invoke(graph, lib.Command(resume="!"), cfg)


@sync_scenario
def context_and_runtime(lib: Run):
    """invoke(context=...) reaches nodes and tasks through `runtime` and get_runtime()."""
    @dataclasses.dataclass
    class Ctx:
        user: str

    @lib.task
    def greet(name: str) -> str:
        runtime = lib.get_runtime(Ctx)
        return f"hi {name} from {runtime.context.user}"

    @lib.entrypoint(checkpointer=lib.saver(), context_schema=Ctx)
    def workflow(name: str, *, runtime: Any, previous: Any = None) -> dict:
        return {"greeting": greet(name).result(), "user": runtime.context.user,
                "previous": runtime.previous, "also": previous}

    cfg = thread()
    lib.invoke(workflow, "ada", cfg, context={"user": "bob"})
    lib.invoke(workflow, "eve", cfg, context=Ctx("carol"))

    class State(TypedDict):
        out: str

    def node(state: State, runtime: Any) -> dict:
        return {"out": f"{runtime.context.user} {runtime.store}"}

    g = lib.StateGraph(State, context_schema=Ctx)
    g.add_node("node", node)
    g.add_edge(lib.START, "node")
    lib.invoke(g.compile(), {"out": ""}, context={"user": "dan"})


@sync_scenario
def streams_of_an_entrypoint(lib: Run):
    one = counted(lib, "one", lambda: 1)

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(x: int, *, writer) -> int:  # noqa: ANN001 - typed, LangGraph would not inject
        writer(f"custom {x}")
        return one().result() + x

    for mode in ("updates", "values", "tasks", "custom", "checkpoints"):
        lib.stream(workflow, 1, thread(mode), stream_mode=mode)


@async_scenario
def async_entrypoint_interrupt_resume(lib: Run):
    async def fetch(x: int) -> int:
        lib.count("fetch")
        await asyncio.sleep(0)
        return x * 10

    fetch.__name__ = "fetch"
    fetch_task = lib.task(fetch)
    ask = counted(lib, "ask", lambda x: lib.interrupt(f"keep {x}?"))

    @lib.entrypoint(checkpointer=lib.saver())
    async def workflow(xs: list) -> dict:
        values = await asyncio.gather(*(fetch_task(x) for x in xs))
        return {"values": values, "keep": await ask(sum(values))}

    cfg = thread()
    lib.ainvoke(workflow, [1, 2], cfg)
    lib.astream(workflow, lib.Command(resume="yes"), cfg, stream_mode="updates")


@async_scenario
def async_sync_entrypoint_calls_tasks(lib: Run):
    """A sync entrypoint run with ainvoke: its calls return futures with .result()."""
    double = counted(lib, "double", lambda x: 2 * x)

    @lib.entrypoint(checkpointer=lib.saver())
    def workflow(x: int, *, previous: Any = None) -> int:
        return double(x).result() + (previous or 0)

    cfg = thread()
    lib.ainvoke(workflow, 1, cfg)
    lib.ainvoke(workflow, 2, cfg)


@pytest.fixture(params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def saver_factory(request):
    return saver_of(request.param, request)


@pytest.fixture(params=["memory", "aio-sqlite",
                        pytest.param("aio-postgres", marks=pytest.mark.postgres)])
def async_saver_factory(request):
    return saver_of(request.param, request)


@pytest.mark.parametrize("name", list(SYNC))
def test_functional_api_same_as_langgraph(name, saver_factory):
    scenario = SYNC[name]
    assert_same(name, record(scenario, LANGGRAPH, saver_factory),
                record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", list(ASYNC))
def test_async_functional_api_same_as_langgraph(name, async_saver_factory):
    scenario = ASYNC[name]
    assert_same(name, record(scenario, LANGGRAPH, async_saver_factory),
                record(scenario, OURS, async_saver_factory))


def test_a_thread_langgraph_interrupted_resumes_here_without_rerunning_finished_calls(
        sqlite_path):
    """Same task ids and interrupt ids as LangGraph: we find the results it saved."""
    runs: list[str] = []

    def workflow_on(lib):
        def body(name, fn):
            def run(*args):
                runs.append(f"{lib.name}:{name}")
                return fn(*args)
            run.__name__ = name
            return lib.task(run)

        add_one = body("add_one", lambda x: x + 1)
        # a call inside a call, then a question: on resume `outer` runs again, its call does not
        outer = body("outer", lambda x: [add_one(x).result(), lib.interrupt(f"send {x}?")])

        def workflow(n: int) -> list:
            return [add_one(n).result(), outer(n).result()]

        return workflow

    cfg = thread()
    with LANGGRAPH.SqliteSaver.from_conn_string(sqlite_path) as saver:
        asked = LANGGRAPH.entrypoint(checkpointer=saver)(workflow_on(LANGGRAPH)).invoke(3, cfg)
    with OURS.SqliteSaver.from_conn_string(sqlite_path) as saver:
        graph = OURS.entrypoint(checkpointer=saver)(workflow_on(OURS))
        assert graph.get_state(cfg).interrupts[0].id == asked["__interrupt__"][0].id
        assert graph.invoke(OURS.Command(resume="yes"), cfg) == [4, [4, "yes"]]
    assert runs == ["langgraph:add_one", "langgraph:outer", "langgraph:add_one", "ours:outer"]
