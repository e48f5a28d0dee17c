"""Node timeouts (pregel/timeouts.py): TimeoutPolicy, NodeTimeoutError, heartbeat, step_timeout.

Timeouts here are short (0.05 s) and the slow nodes sleep at most 1 s, only to be cancelled.
What LangGraph saves when a node times out is compared in tests/differential/test_timeouts_*.
"""

import asyncio
import operator
import sys
import time
from datetime import timedelta
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.channels import EphemeralValue, LastValue
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.config import get_stream_writer
from lgcheckpoint.constants import ERROR
from lgcheckpoint.errors import NodeCancelledError, NodeError, NodeTimeoutError
from lgcheckpoint.func import entrypoint, task
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.pregel import NodeBuilder, Pregel
from lgcheckpoint.runtime import DEFAULT_RUNTIME
from lgcheckpoint.types import RetryPolicy, Send, TimeoutPolicy

QUICK = 0.05  # seconds: the timeouts that are meant to fire
IDLE, TICK = 0.2, 0.08  # an idle timeout kept alive by progress every TICK (room for a busy CI)
NO_RETRY = RetryPolicy(max_attempts=1)


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def one_node(fn, **add_node_kwargs):
    return (StateGraph(State).add_node("n", fn, **add_node_kwargs)
            .add_edge(START, "n").add_edge("n", END))


async def sleeper(state: State) -> dict:
    await asyncio.sleep(1.0)
    return {"x": 99}


def run(coro):
    return asyncio.run(coro)


# --- the policy -------------------------------------------------------------------------------
def test_a_default_timeout_reaches_every_node_without_its_own_handlers_too():
    async def handler(state: State) -> dict:
        await asyncio.sleep(1.0)
        return {"x": -1}

    builder = one_node(sleeper, error_handler=handler).set_node_defaults(timeout=QUICK)
    builder.add_node("own", sleeper, timeout=5.0)
    nodes = builder.compile().nodes
    handler_node = nodes["__error_handler__n"]
    assert nodes["n"].timeout.run_timeout == QUICK == handler_node.timeout.run_timeout
    assert nodes["own"].timeout.run_timeout == 5.0  # a node's own timeout wins
    with pytest.raises(NodeTimeoutError) as caught:  # the handler of a timed-out node times out
        run(one_node(sleeper, error_handler=handler, retry_policy=NO_RETRY)
            .set_node_defaults(timeout=QUICK).compile().ainvoke({"x": 1}))
    assert caught.value.node == "__error_handler__n"


def test_a_number_or_timedelta_is_a_run_timeout_in_float_seconds():
    assert TimeoutPolicy.coerce(2) == TimeoutPolicy(run_timeout=2.0)
    assert TimeoutPolicy.coerce(timedelta(milliseconds=250)) == TimeoutPolicy(run_timeout=0.25)
    assert TimeoutPolicy.coerce(None) is None
    assert TimeoutPolicy.coerce(TimeoutPolicy()) is None  # no limit at all is no policy


def test_a_coerced_policy_is_returned_as_it_is():
    policy = TimeoutPolicy.coerce(TimeoutPolicy(run_timeout=1, idle_timeout=2))
    assert policy == TimeoutPolicy(run_timeout=1.0, idle_timeout=2.0)
    assert TimeoutPolicy.coerce(policy) is policy


@pytest.mark.parametrize("bad", [0, -1, timedelta(0)])
def test_a_limit_must_be_positive_in_every_api(bad):
    for declare in (lambda: TimeoutPolicy.coerce(bad), lambda: task(timeout=bad),
                    lambda: entrypoint(timeout=bad), lambda: Send("n", {}, timeout=bad),
                    lambda: StateGraph(State).add_node("n", sleeper, timeout=bad)):
        with pytest.raises(ValueError, match="greater than 0"):
            declare()


def test_refresh_on_takes_auto_or_heartbeat():
    with pytest.raises(ValueError, match="refresh_on"):
        TimeoutPolicy.coerce(TimeoutPolicy(idle_timeout=1, refresh_on="sometimes"))


def test_a_send_with_a_timeout_survives_the_serializer():
    serde = JsonPlusSerializer()
    packet = Send("n", {"x": 1}, timeout=TimeoutPolicy(run_timeout=1, idle_timeout=2))
    assert serde.loads_typed(serde.dumps_typed(packet)) == packet
    assert packet != Send("n", {"x": 1})  # the timeout is part of the packet


# --- sync functions are refused: a thread cannot be cancelled ---------------------------------
def test_a_sync_node_with_a_timeout_is_refused_at_compile():
    builder = one_node(lambda s: {"x": 1}, timeout=1)  # add_node accepts it ...
    with pytest.raises(ValueError, match="only supported for async nodes"):
        builder.compile()  # ... compile says why not


def test_a_sync_task_or_entrypoint_with_a_timeout_is_refused_when_declared():
    with pytest.raises(ValueError, match="Task 'double' is sync"):
        @task(timeout=1)
        def double(x):
            return 2 * x
    with pytest.raises(ValueError, match="only supported for async nodes"):
        @entrypoint(timeout=1)
        def workflow(x):
            return x


def test_a_low_level_node_takes_a_timeout_and_its_sync_function_is_refused():
    def build(fn):
        node = NodeBuilder().subscribe_only("a").do(fn).set_timeout(QUICK).write_to("b")
        return Pregel(nodes={"n": node}, channels={"a": EphemeralValue(int), "b": LastValue(int)},
                      input_channels="a", output_channels="b")
    with pytest.raises(ValueError, match="Node 'n' is sync"):
        build(lambda x: x)
    with pytest.raises(NodeTimeoutError):
        run(build(sleeper).ainvoke(1))
    with pytest.raises(ValueError, match="greater than 0"):
        NodeBuilder().set_timeout(0)


# --- an attempt that runs too long ------------------------------------------------------------
def test_an_idle_node_times_out_with_the_policy_in_the_error():
    graph = one_node(sleeper, timeout=TimeoutPolicy(run_timeout=5, idle_timeout=QUICK)).compile()
    with pytest.raises(NodeTimeoutError) as caught:
        run(graph.ainvoke({"x": 1}))
    error = caught.value
    assert (error.node, error.kind, error.timeout) == ("n", "idle", QUICK)
    assert (error.run_timeout, error.idle_timeout) == (5.0, QUICK)
    assert not isinstance(error, TimeoutError)  # so the default RetryPolicy retries it


def test_a_fast_node_is_not_disturbed():
    async def fast(state):
        return {"x": state["x"] + 1}
    graph = one_node(fast, timeout=TimeoutPolicy(idle_timeout=1.0, run_timeout=1.0)).compile()
    assert run(graph.ainvoke({"x": 1})) == {"x": 2, "log": []}


def test_heartbeat_refreshes_the_idle_clock_but_not_the_run_clock():
    async def beating(state, runtime):
        for _ in range(5):
            await asyncio.sleep(TICK)
            runtime.heartbeat()
        return {"x": 5}
    idle_only = one_node(beating, timeout=TimeoutPolicy(idle_timeout=IDLE)).compile()
    assert run(idle_only.ainvoke({"x": 0}))["x"] == 5  # twice the idle timeout, never idle
    capped = one_node(beating, timeout=TimeoutPolicy(run_timeout=IDLE, idle_timeout=IDLE),
                      retry_policy=NO_RETRY).compile()
    with pytest.raises(NodeTimeoutError) as caught:
        run(capped.ainvoke({"x": 0}))
    assert caught.value.kind == "run"


async def chatty(state):
    """Writes a custom chunk every TICK, five times: progress, if custom output counts as such."""
    write = get_stream_writer()
    for i in range(5):
        await asyncio.sleep(TICK)
        write(i)
    return {"x": 5}


def test_custom_stream_output_is_progress_only_under_refresh_on_auto():
    auto = one_node(chatty, timeout=TimeoutPolicy(idle_timeout=IDLE)).compile()
    chunks = run(collect(auto.astream({"x": 0}, stream_mode="custom")))
    assert chunks == [0, 1, 2, 3, 4]
    strict = one_node(chatty, timeout=TimeoutPolicy(idle_timeout=IDLE, refresh_on="heartbeat"),
                      retry_policy=NO_RETRY).compile()
    with pytest.raises(NodeTimeoutError):
        run(strict.ainvoke({"x": 0}))


def test_output_inside_a_timed_subgraph_node_is_its_progress():
    inner = one_node(chatty).compile()
    for refresh_on, finishes in (("auto", True), ("heartbeat", False)):
        outer = one_node(inner, timeout=TimeoutPolicy(idle_timeout=IDLE, refresh_on=refresh_on),
                         retry_policy=NO_RETRY).compile()
        if finishes:
            assert run(outer.ainvoke({"x": 0}))["x"] == 5
        else:
            with pytest.raises(NodeTimeoutError):
                run(outer.ainvoke({"x": 0}))


def test_a_timed_subgraph_node_refuses_a_sync_run():
    inner = one_node(lambda s: {"x": 1}).compile()
    graph = one_node(inner, timeout=1.0).compile()  # a subgraph can be cancelled: accepted
    with pytest.raises(ValueError, match="run the graph with ainvoke"):
        graph.invoke({"x": 0})
    assert run(graph.ainvoke({"x": 0}))["x"] == 1


async def collect(stream):
    return [chunk async for chunk in stream]


def test_a_timed_out_attempt_is_retried_with_a_fresh_clock():
    attempts = []

    async def slow_then_fast(state, runtime):
        attempts.append(runtime.execution_info.node_attempt)
        if len(attempts) == 1:
            await asyncio.sleep(1.0)
        return {"x": len(attempts)}
    retry = RetryPolicy(initial_interval=0, jitter=False, retry_on=NodeTimeoutError)
    graph = one_node(slow_then_fast, timeout=TimeoutPolicy(idle_timeout=QUICK),
                     retry_policy=retry).compile()
    assert run(graph.ainvoke({"x": 0}))["x"] == 2
    assert attempts == [1, 2]


def test_a_timeout_the_node_raises_itself_is_not_ours():
    async def inner_timeout(state):
        raise asyncio.TimeoutError("inner")
    graph = one_node(inner_timeout, timeout=TimeoutPolicy(idle_timeout=1.0)).compile()
    with pytest.raises(asyncio.TimeoutError, match="inner"):
        run(graph.ainvoke({"x": 0}))


def test_a_node_that_swallows_cancellation_still_times_out():
    async def stubborn(state):
        try:
            await asyncio.sleep(1.0)
        except asyncio.CancelledError:
            pass
        return {"x": 99}
    graph = one_node(stubborn, timeout=QUICK, retry_policy=NO_RETRY).compile()
    with pytest.raises(NodeTimeoutError):
        run(graph.ainvoke({"x": 0}))


def test_a_timed_out_attempt_that_ignores_its_cancellation_writes_nothing():
    attempts = []

    async def stubborn_then_slow(state):
        attempts.append(1)
        if len(attempts) == 1:
            try:
                await asyncio.sleep(1.0)
            except asyncio.CancelledError:
                await asyncio.sleep(0.1)  # goes on after its timeout ...
            return {"x": 99}  # ... and returns while the retry runs
        await asyncio.sleep(0.3)
        return {"x": 1}
    retry = RetryPolicy(initial_interval=0, jitter=False, retry_on=NodeTimeoutError)
    graph = one_node(stubborn_then_slow, timeout=0.5, retry_policy=retry).compile()
    assert run(graph.ainvoke({"x": 0}))["x"] == 1


def test_a_send_timeout_wins_over_its_nodes():
    async def slow(state):
        await asyncio.sleep(0.3)
        return {"x": 1}
    graph = (StateGraph(State).add_node("n", slow, timeout=5.0)
             .add_conditional_edges(START, lambda s: [Send("n", s, timeout=QUICK)]).compile())
    with pytest.raises(NodeTimeoutError) as caught:
        run(graph.ainvoke({"x": 0}))
    assert (caught.value.kind, caught.value.run_timeout) == ("run", QUICK)


def test_task_and_entrypoint_timeouts():
    @task(timeout=TimeoutPolicy(idle_timeout=QUICK))
    async def slow_task(x):
        await asyncio.sleep(1.0)
        return x

    @entrypoint()
    async def calls_it(x):
        return await slow_task(x)

    @entrypoint(timeout=TimeoutPolicy(idle_timeout=QUICK))
    async def slow_workflow(x):
        await asyncio.sleep(1.0)
        return x

    for workflow, name in ((calls_it, "slow_task"), (slow_workflow, "slow_workflow")):
        with pytest.raises(NodeTimeoutError) as caught:
            run(workflow.ainvoke(1))
        assert caught.value.node == name


def test_a_task_keeps_its_own_timeout_keyword():
    @task(timeout=1.0)
    async def echo(*, timeout):
        return timeout

    @entrypoint()
    async def workflow(x):
        return await echo(timeout=x)

    assert run(workflow.ainvoke(5)) == 5


# --- what is saved ----------------------------------------------------------------------------
def test_a_timed_out_node_saves_only_its_error_and_runs_again_on_resume():
    calls = []

    async def slow_once(state):
        calls.append(1)
        if len(calls) == 1:
            await asyncio.sleep(1.0)
        return {"x": 7, "log": ["n"]}
    saver, cfg = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    graph = one_node(slow_once, timeout=QUICK, retry_policy=NO_RETRY).compile(checkpointer=saver)
    with pytest.raises(NodeTimeoutError):
        run(graph.ainvoke({"x": 0, "log": []}, cfg))
    writes = saver.get_tuple(cfg).pending_writes
    assert [channel for _tid, channel, _value in writes] == [ERROR]  # no writes of its own
    assert writes[0][2].startswith("NodeTimeoutError(")  # an error is stored as its repr
    assert run(graph.ainvoke(None, cfg)) == {"x": 7, "log": ["n"]}  # resume re-runs it
    assert len(calls) == 2


# --- cancellation raised by a node ------------------------------------------------------------
@pytest.mark.skipif(sys.version_info < (3, 11), reason="Python 3.10 has no Task.cancelling() "
                    "to tell the node's own CancelledError from ours (LangGraph cannot either)")
def test_a_node_raising_cancelled_error_fails_the_run():
    async def ok(state):
        return {"log": ["ok"]}

    async def boom(state):
        raise asyncio.CancelledError("from the node")
    graph = (StateGraph(State).add_node("ok", ok).add_node("boom", boom)
             .add_edge(START, "ok").add_edge(START, "boom").compile())
    with pytest.raises(NodeCancelledError) as caught:
        run(graph.ainvoke({"x": 0, "log": []}))
    assert caught.value.node == "boom"
    assert isinstance(caught.value.__cause__, asyncio.CancelledError)


def test_a_sync_node_raising_cancelled_error_fails_the_run():
    def boom(state):
        raise asyncio.CancelledError
    with pytest.raises(NodeCancelledError):
        one_node(boom).compile().invoke({"x": 0, "log": []})


# --- a whole super-step -----------------------------------------------------------------------
def two_branches(checkpointer=None):
    async def quick(state):
        await asyncio.sleep(QUICK)
        return {"log": ["quick"]}
    builder = (StateGraph(State).add_node("quick", quick).add_node("slow", sleeper)
               .add_edge(START, "quick").add_edge(START, "slow"))
    graph = builder.compile(checkpointer=checkpointer)
    graph.step_timeout = 0.3
    return graph


def test_step_timeout_cancels_the_slow_task_and_keeps_the_finished_ones():
    saver, cfg = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    graph = two_branches(saver)
    seen = []

    async def consume():
        async for chunk in graph.astream({"x": 0, "log": []}, cfg, stream_mode="updates"):
            seen.append(chunk)
    with pytest.raises(asyncio.TimeoutError, match="Timed out"):
        run(consume())
    assert seen == [{"quick": {"log": ["quick"]}}]
    tasks = {t.name: t for t in run(graph.aget_state(cfg)).tasks}
    assert tasks["quick"].result == {"log": ["quick"]}
    assert tasks["slow"].error == "CancelledError()"


def test_step_timeout_in_a_sync_run_keeps_what_the_late_thread_wrote():
    def slow(state):
        time.sleep(0.3)  # a thread cannot be stopped: the step waits for it, then raises
        return {"log": ["slow"]}
    saver, cfg = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    graph = (StateGraph(State).add_node("slow", slow).add_node("other", lambda s: {"x": 2})
             .add_edge(START, "slow").add_edge(START, "other").compile(checkpointer=saver))
    graph.step_timeout = QUICK
    with pytest.raises(TimeoutError):
        graph.invoke({"x": 0, "log": []}, cfg)
    writes = {(channel, str(value)) for _tid, channel, value in saver.get_tuple(cfg).pending_writes}
    assert writes == {("log", "['slow']"), ("x", "2")}


# --- names LangGraph code imports -------------------------------------------------------------
def test_default_runtime_heartbeat_is_a_no_op_outside_a_timed_attempt():
    DEFAULT_RUNTIME.heartbeat()
    assert DEFAULT_RUNTIME.override(execution_info=None).context is None


def test_node_error_names_the_node_and_its_error():
    error = ValueError("bad")
    assert NodeError(node="n", error=error) == NodeError("n", error)
