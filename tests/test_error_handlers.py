"""Node error handlers (pregel/handlers.py): who runs when a node fails, and what is saved.

The same behaviours are compared with LangGraph, whole histories at a time, in
tests/differential/scenarios_interrupts.py (the error_handler scenarios).
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.constants import ERROR, ERROR_SOURCE_NODE
from lgcheckpoint.errors import NodeError
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import CachePolicy, Command, RetryPolicy, interrupt


class State(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]


def thread(t: str = "t1") -> dict:
    return {"configurable": {"thread_id": t}}


def failing(message: str = "boom", calls: list | None = None):
    """A node that always raises; `calls` counts its calls."""

    def node(state: State) -> State:
        if calls is not None:
            calls.append(message)
        raise ValueError(message)

    return node


def visit(name: str):
    return lambda state: {"trail": [name]}


def test_the_handler_gets_a_node_error_and_routes_on_with_a_command():
    seen: list[NodeError] = []

    def handler(state: State, error: NodeError) -> Command:
        seen.append(error)
        return Command(update={"trail": [f"handled {error.node}"]}, goto="after")

    graph = (StateGraph(State)
             .add_node("bad", failing(), error_handler=handler)
             .add_node("after", visit("after"))
             .add_node("skipped", visit("skipped"))
             .add_edge(START, "bad").add_edge("bad", "skipped")  # a failed node's edge: not taken
             .compile())
    assert graph.invoke({"trail": []}) == {"trail": ["handled bad", "after"]}
    assert [(e.node, type(e.error), str(e.error)) for e in seen] == [("bad", ValueError, "boom")]


def test_the_handler_streams_under_its_own_node_name():
    graph = (StateGraph(State)
             .add_node("bad", failing(), error_handler=lambda state: {"trail": ["handled"]})
             .add_edge(START, "bad").compile())
    assert list(graph.stream({"trail": []}, stream_mode="updates")) == [
        {"__error_handler__bad": {"trail": ["handled"]}}]


def test_retries_are_used_up_before_the_handler_runs():
    calls: list = []
    policy = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=ValueError)
    graph = (StateGraph(State)
             .add_node("bad", failing(calls=calls), retry_policy=policy,
                       error_handler=lambda state: {"trail": ["handled"]})
             .add_edge(START, "bad").compile())
    assert graph.invoke({"trail": []}) == {"trail": ["handled"]}
    assert len(calls) == 3


def test_a_failing_handler_fails_the_run_and_no_default_handler_catches_it():
    def broken(state: State) -> State:
        raise RuntimeError("the handler broke")

    graph = (StateGraph(State)
             .set_node_defaults(error_handler=lambda state: {"trail": ["default"]})
             .add_node("bad", failing(), error_handler=broken)
             .add_edge(START, "bad").compile())
    with pytest.raises(RuntimeError, match="the handler broke"):
        graph.invoke({"trail": []})


def test_a_node_without_a_handler_still_fails_the_run():
    graph = StateGraph(State).add_node("bad", failing()).add_edge(START, "bad").compile()
    with pytest.raises(ValueError, match="boom"):
        graph.invoke({"trail": []})


def test_an_interrupt_is_never_handled():
    handled: list = []

    def asks(state: State) -> State:
        return {"trail": [f"got {interrupt('ok?')}"]}

    graph = (StateGraph(State)
             .add_node("asks", asks, error_handler=lambda s: handled.append(s) or {})
             .add_edge(START, "asks").compile(checkpointer=InMemorySaver()))
    out = graph.invoke({"trail": []}, thread())
    assert out["__interrupt__"][0].value == "ok?"
    assert graph.invoke(Command(resume="yes"), thread()) == {"trail": ["got yes"]}
    assert handled == []


def test_a_command_to_the_parent_is_not_handled():
    def child_node(state: State) -> Command:
        return Command(graph=Command.PARENT, goto="after", update={"trail": ["from child"]})

    child = StateGraph(State).add_node("c", child_node).add_edge(START, "c").compile()
    graph = (StateGraph(State)
             .add_node("sub", child, error_handler=lambda state: {"trail": ["handled"]})
             .add_node("after", visit("after"))
             .add_edge(START, "sub").compile())
    assert graph.invoke({"trail": []}) == {"trail": ["from child", "after"]}


def test_a_failing_subgraph_is_handled_by_the_parent_node_handler():
    child = StateGraph(State).add_node("c", failing("deep")).add_edge(START, "c").compile()
    seen: list = []

    def handler(state: State, error: NodeError) -> State:
        seen.append((error.node, str(error.error)))
        return {"trail": ["handled"]}

    graph = (StateGraph(State).add_node("sub", child, error_handler=handler)
             .add_edge(START, "sub").compile())
    assert graph.invoke({"trail": []}) == {"trail": ["handled"]}
    assert seen == [("sub", "deep")]


def test_the_failed_task_saves_its_error_and_its_source_the_handler_its_writes():
    saver = InMemorySaver()
    graph = (StateGraph(State)
             .add_node("bad", failing(), error_handler=lambda state: {"trail": ["handled"]})
             .add_edge(START, "bad").compile(checkpointer=saver))
    graph.invoke({"trail": []}, thread())
    step0 = [s for s in graph.get_state_history(thread()) if s.metadata["step"] == 0][0]
    writes = saver.get_tuple(step0.config).pending_writes
    by_channel = {chan: (tid, value) for tid, chan, value in writes}
    failed_id = by_channel[ERROR][0]
    assert by_channel[ERROR_SOURCE_NODE] == (failed_id, "bad")
    assert by_channel["trail"][1] == ["handled"] and by_channel["trail"][0] != failed_id
    # get_state shows the failed task with its error, the handler is no task of that step
    assert [(t.name, t.error, t.result) for t in step0.tasks] == [
        ("bad", "ValueError('boom')", None)]


def test_a_resume_after_the_handler_crashed_reruns_the_handler_not_the_node():
    calls: list = []
    crash = [True]

    def handler(state: State, error: NodeError) -> State:
        calls.append(f"handler saw {error.node}: {error.error}")
        if crash[0]:
            raise RuntimeError("handler crash")
        return {"trail": ["recovered"]}

    graph = (StateGraph(State)
             .set_node_defaults(error_handler=handler)
             .add_node("bad", failing(calls=calls))
             .add_edge(START, "bad").compile(checkpointer=InMemorySaver()))
    with pytest.raises(RuntimeError, match="handler crash"):
        graph.invoke({"trail": []}, thread())
    crash[0] = False
    assert graph.invoke(None, thread()) == {"trail": ["recovered"]}
    # the node ran once; the handler twice, the second time with the saved error
    assert calls == ["boom", "handler saw bad: boom", "handler saw bad: ValueError('boom')"]


def test_the_handler_runs_while_a_sibling_is_still_running():
    import threading

    handler_started = threading.Event()

    def slow_sibling(state: State) -> State:
        assert handler_started.wait(5), "the handler waited for the step's other tasks"
        return {"trail": ["sibling"]}

    def handler(state: State) -> State:
        handler_started.set()
        return {"trail": ["handled"]}

    graph = (StateGraph(State)
             .add_node("bad", failing(), error_handler=handler)
             .add_node("sibling", slow_sibling)
             .add_edge(START, "bad").add_edge(START, "sibling").compile())
    assert sorted(graph.invoke({"trail": []})["trail"]) == ["handled", "sibling"]


def test_set_node_defaults_gives_every_node_without_its_own_handler_the_default():
    def default(state: State, error: NodeError) -> State:
        return {"trail": [f"default for {error.node}"]}

    def own(state: State, error: NodeError) -> State:
        return {"trail": [f"own for {error.node}"]}

    graph = (StateGraph(State)
             .set_node_defaults(error_handler=default)
             .add_node("a", failing(), error_handler=own)
             .add_node("b", failing())
             .add_conditional_edges(START, lambda s: s["trail"][0], ["a", "b"])
             .compile())
    assert graph.invoke({"trail": ["a"]})["trail"] == ["a", "own for a"]
    assert graph.invoke({"trail": ["b"]})["trail"] == ["b", "default for b"]


def test_set_node_defaults_retry_applies_to_handlers_too_cache_and_handler_do_not():
    policy = RetryPolicy(max_attempts=2)
    cache = CachePolicy()
    graph = (StateGraph(State)
             .set_node_defaults(retry_policy=policy, cache_policy=cache,
                                error_handler=visit("default"))
             .add_node("a", visit("a"), error_handler=visit("own"))
             .add_node("b", visit("b"), retry_policy=RetryPolicy(max_attempts=5))
             .add_edge(START, "a").compile())
    nodes = graph.nodes
    assert nodes["a"].retry_policy == (policy,) and nodes["a"].cache_policy is cache
    assert nodes["b"].retry_policy[0].max_attempts == 5  # a node's own policy wins
    for handler in ("__error_handler__a", "__default_error_handler__"):
        assert nodes[handler].retry_policy == (policy,)
        assert nodes[handler].cache_policy is None and nodes[handler].error_handler is None
    assert nodes["a"].error_handler == "__error_handler__a"
    assert nodes["b"].error_handler == "__default_error_handler__"


def test_set_node_defaults_refuses_what_it_does_not_implement():
    with pytest.raises(TypeError, match=r"set_node_defaults\(store=...\)"):
        StateGraph(State).set_node_defaults(store=object())


def test_error_is_injected_only_when_typed_node_error():
    got: list = []

    def plain(state: State, error=None) -> State:  # untyped: not LangGraph's injected `error`
        got.append(("plain", error))
        raise ValueError("x")

    # this module's annotations are strings (from __future__ import annotations): "NodeError"
    def handler(state: State, error: NodeError) -> State:
        got.append(("handler", error.node))
        return {}

    def typed_node(state: State, error: NodeError = None) -> State:  # not a handler: None
        got.append(("typed", error))
        return {}

    graph = (StateGraph(State)
             .add_node("plain", plain, error_handler=handler)
             .add_node("typed", typed_node)
             .add_edge(START, "plain").add_edge(START, "typed").compile())
    graph.invoke({"trail": []})
    assert sorted(got, key=str) == [("handler", "plain"), ("plain", None), ("typed", None)]


def test_async_handlers_run_in_async_runs():
    async def bad(state: State) -> State:
        raise ValueError("async boom")

    async def handler(state: State, error: NodeError) -> Command:
        return Command(update={"trail": [str(error.error)]}, goto=END)

    graph = (StateGraph(State).add_node("bad", bad, error_handler=handler)
             .add_node("sibling", visit("sibling"))
             .add_edge(START, "bad").add_edge(START, "sibling").compile())
    out = asyncio.run(graph.ainvoke({"trail": []}))
    assert sorted(out["trail"]) == ["async boom", "sibling"]


def test_accepts_error_by_its_annotation_type_or_name():
    from lgcheckpoint.pregel.node import accepts

    def typed(state, error): ...

    def untyped(state, error): ...

    typed.__annotations__ = {"error": NodeError}  # a real type, not a string
    assert accepts(typed, "error") and not accepts(untyped, "error")
