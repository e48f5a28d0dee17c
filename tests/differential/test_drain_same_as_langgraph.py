"""Run draining (RunControl, GraphDrained) behaves as in LangGraph: whole histories compared,
on every saver; a drain asked from another thread or task stops the run between steps."""

import asyncio
import threading

import pytest

from tests.differential.harness import assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_drain import DRAIN, chain
from tests.differential.test_savers import async_saver_factory, saver_factory  # noqa: F401


@pytest.mark.parametrize("name", list(DRAIN))
def test_same_as_langgraph(name):
    scenario = DRAIN[name]
    assert_same(name, record(scenario, LANGGRAPH), record(scenario, OURS))


@pytest.mark.parametrize("name", [n for n in DRAIN if "resume" in n and "async" not in n])
def test_same_as_langgraph_on_saver(name, saver_factory):  # noqa: F811
    scenario = DRAIN[name]
    assert_same(name, record(scenario, LANGGRAPH, saver_factory),
                record(scenario, OURS, saver_factory))


@pytest.mark.parametrize("name", [n for n in DRAIN if n.startswith("async")])
def test_same_as_langgraph_on_async_saver(name, async_saver_factory):  # noqa: F811
    scenario = DRAIN[name]
    assert_same(name, record(scenario, LANGGRAPH, async_saver_factory),
                record(scenario, OURS, async_saver_factory))


@pytest.mark.parametrize("lib", [LANGGRAPH, OURS], ids=str)
def test_drain_from_another_thread(lib):
    started, finish = threading.Event(), threading.Event()
    ran: list = []

    def first(state):
        started.set()
        finish.wait(5)
        ran.append("first")
        return {"trail": ["first"]}

    class Run:  # just what chain() needs
        StateGraph, START = lib.StateGraph, lib.START

        def count(self, name):
            ran.append(name)

    control, outcome = lib.RunControl(), []
    graph = chain(Run(), first)
    worker = threading.Thread(target=lambda: outcome.append(
        _outcome(lambda: graph.invoke({"trail": []}, control=control))))
    worker.start()
    assert started.wait(5)
    control.request_drain("sigterm")
    finish.set()
    worker.join(10)
    assert [type(outcome[0]).__name__, outcome[0].reason, ran] == ["GraphDrained", "sigterm",
                                                                    ["first"]]


@pytest.mark.parametrize("lib", [LANGGRAPH, OURS], ids=str)
def test_drain_from_another_asyncio_task(lib):
    ran: list = []

    async def main():
        started = asyncio.Event()

        async def first(state):
            started.set()
            await asyncio.sleep(0.05)
            ran.append("first")
            return {"trail": ["first"]}

        class Run:
            StateGraph, START = lib.StateGraph, lib.START

            def count(self, name):
                ran.append(name)

        control = lib.RunControl()
        graph = chain(Run(), first)
        run = asyncio.ensure_future(graph.ainvoke({"trail": []}, control=control))
        await started.wait()
        control.request_drain("sigterm")
        return await asyncio.gather(run, return_exceptions=True)

    [error] = asyncio.run(main())
    assert [type(error).__name__, error.reason, ran] == ["GraphDrained", "sigterm", ["first"]]


def _outcome(fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the outcome is what we compare
        return exc


def test_control_must_be_a_run_control():
    graph = chain(type("R", (), {"StateGraph": OURS.StateGraph, "START": OURS.START,
                                 "count": lambda self, n: None})(), lambda s: {})
    with pytest.raises(TypeError, match="control must be a RunControl"):
        graph.invoke({"trail": []}, control="drain")
