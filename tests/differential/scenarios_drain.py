"""Scenarios of run draining: RunControl.request_drain() lets the step under way finish, stops
before the next one (GraphDrained) and leaves the thread resumable with ``invoke(None)``. Same
contract as ``scenarios_loop.py``: ``scenario(lib)`` drives recording verbs.
"""

from __future__ import annotations

from tests.differential.harness import Run, registry
from tests.differential.scenarios_loop import Trail, thread, visit

DRAIN, scenario = registry()


def draining(name: str, lib: Run, control=None, reason: str = "sigterm"):
    """A node that asks the run to drain (through `control`, else its runtime's), then visits."""

    def node(state: dict) -> dict:
        (control or lib.get_runtime().control).request_drain(reason)
        return visit(name, lib)(state)

    return node


def chain(lib: Run, first, saver=None, **compile_kw):
    """START -> first -> second -> third, each counted."""
    g = lib.StateGraph(Trail)
    g.add_node("first", first)
    g.add_node("second", visit("second", lib))
    g.add_node("third", visit("third", lib))
    g.add_edge(lib.START, "first")
    g.add_edge("first", "second")
    g.add_edge("second", "third")
    return g.compile(checkpointer=saver, **compile_kw)


def drained(lib: Run, label: str, fn) -> None:
    """Run fn, recording its outcome and, for GraphDrained, the reason it carries."""
    result = lib.attempt(label, fn)
    if isinstance(result, lib.GraphDrained):
        lib.note(f"{label}: drain reason", result.reason)


@scenario
def drain_stops_before_the_next_step(lib: Run):
    control = lib.RunControl()
    graph = chain(lib, draining("first", lib, control))
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, control=control))
    lib.note("drain requested", (control.drain_requested, control.drain_reason))


@scenario
def drain_in_the_last_step_finishes_normally(lib: Run):
    control = lib.RunControl()
    g = lib.StateGraph(Trail)
    g.add_node("only", draining("only", lib, control))
    g.add_edge(lib.START, "only")
    lib.invoke(g.compile(), {"trail": []}, control=control)
    lib.note("drain requested", control.drain_requested)


@scenario
def drain_requested_before_the_run_runs_nothing(lib: Run):
    control = lib.RunControl()
    control.request_drain("pre-drained")
    graph = chain(lib, visit("first", lib), lib.saver())
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, thread(), control=control))
    lib.invoke(graph, None, thread())


def resumes_after_drain(lib: Run, durability: str):
    control = lib.RunControl()
    graph = chain(lib, draining("first", lib, control), lib.saver())
    cfg = thread()
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, cfg, control=control,
                                                durability=durability))
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg, durability=durability)


@scenario
def drained_run_resumes_sync(lib: Run):
    resumes_after_drain(lib, "sync")


@scenario
def drained_run_resumes_async(lib: Run):
    resumes_after_drain(lib, "async")


@scenario
def drained_run_resumes_exit(lib: Run):
    resumes_after_drain(lib, "exit")


@scenario
def drain_through_the_runtime_without_a_control(lib: Run):
    """Every run has a RunControl in its runtime, even when the caller passed none."""
    graph = chain(lib, draining("first", lib, reason="rollout"), lib.saver())
    cfg = thread()
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, cfg))
    lib.invoke(graph, None, cfg)


@scenario
def drain_stream_yields_the_finished_step(lib: Run):
    control = lib.RunControl()
    graph = chain(lib, draining("first", lib, control), lib.saver())
    chunks: list = []

    def run():
        for chunk in graph.stream({"trail": []}, thread(), control=control,
                                  stream_mode=["updates", "values"]):
            chunks.append(chunk)

    drained(lib, "stream", run)
    lib.note("chunks before the drain", chunks)
    lib.stream(graph, None, thread(), stream_mode="updates")


@scenario
def drain_lets_parallel_siblings_finish(lib: Run):
    control = lib.RunControl()
    g = lib.StateGraph(Trail)
    g.add_node("a", draining("a", lib, control))
    g.add_node("b", visit("b", lib))
    g.add_node("join", visit("join", lib))
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge(["a", "b"], "join")
    graph = g.compile(checkpointer=lib.saver())
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, thread(), control=control))
    lib.invoke(graph, None, thread())


def child(lib: Run, control=None, **compile_kw):
    g = lib.StateGraph(Trail)
    g.add_node("inner", draining("inner", lib, control))
    g.add_node("inner2", visit("inner2", lib))
    g.add_edge(lib.START, "inner")
    g.add_edge("inner", "inner2")
    return g.compile(**compile_kw)


def parent(lib: Run, sub):
    g = lib.StateGraph(Trail)
    g.add_node("child", sub)
    g.add_node("after", visit("after", lib))
    g.add_edge(lib.START, "child")
    g.add_edge("child", "after")
    return g.compile(checkpointer=lib.saver())


@scenario
def drain_from_a_per_thread_subgraph_resumes_the_parent(lib: Run):
    control = lib.RunControl()
    graph = parent(lib, child(lib, control, checkpointer=True))
    cfg = thread()
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, cfg, control=control))
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, None, cfg)


@scenario
def drain_from_a_subgraph_with_checkpoints_per_call(lib: Run):
    control = lib.RunControl()
    graph = parent(lib, child(lib, control))
    cfg = thread()
    drained(lib, "invoke", lambda: graph.invoke({"trail": []}, cfg, control=control))
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, None, cfg)


@scenario
def drain_before_a_breakpoint_stops_at_the_breakpoint(lib: Run):
    graph = chain(lib, draining("first", lib, reason="rollout"), lib.saver(),
                  interrupt_before=["second"])
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, control=lib.RunControl())
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)


@scenario
def drain_before_a_breakpoint_given_to_the_run(lib: Run):
    graph = chain(lib, draining("first", lib, reason="rollout"), lib.saver())
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, control=lib.RunControl(), interrupt_before=["second"])
    lib.invoke(graph, None, cfg, interrupt_before=["second"])


@scenario
def drain_before_a_subgraph_breakpoint(lib: Run):
    graph = parent(lib, child(lib, interrupt_before=["inner2"]))
    cfg = thread()
    lib.invoke(graph, {"trail": []}, cfg, control=lib.RunControl())
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, None, cfg)


@scenario
def drain_lets_a_task_call_of_the_step_run(lib: Run):
    control = lib.RunControl()

    @lib.task
    def plus_one(x: int) -> int:
        lib.count("plus_one")
        return x + 1

    @lib.entrypoint(checkpointer=lib.saver())
    def program(x: int) -> int:
        control.request_drain()
        return plus_one(x).result()

    lib.invoke(program, 1, thread(), control=control)


@scenario
def async_drain_resumes(lib: Run):
    control = lib.RunControl()

    async def first(state: dict) -> dict:
        control.request_drain("sigterm")
        lib.count("first")
        return {"trail": ["first"]}

    graph = chain(lib, first, lib.saver())
    cfg = thread()
    drained(lib, "ainvoke", lambda: lib.run_async(
        graph.ainvoke({"trail": []}, cfg, control=control)))
    lib.ainvoke(graph, None, cfg)
