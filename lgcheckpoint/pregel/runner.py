"""Running one step's tasks: a task (its node, its edges, its retries) and the sync step; their
async twins are in arunner.py.

A lone task runs inline (most steps have one); several run in a thread pool. Each finished
task is committed at once, so its writes are queued for saving (saves.py) before the step ends.
A failed attempt waits and tries again (retries.py); a Command for a parent graph bubbles up
(parent_commands.py). Next: pregel/__init__.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import contextvars
import itertools
import queue
import threading
import time
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Mapping

from lgcheckpoint.constants import CHECKPOINT_ID, STEP, TASK_ID
from lgcheckpoint.errors import (
    GraphInterrupt, InvalidUpdateError, NodeCancelledError, ParentCommand, is_invalid_resume,
)
from lgcheckpoint.managed import read_managed
from lgcheckpoint.pregel import timeouts
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.node import Branch, Node, branch_writes
from lgcheckpoint.pregel.parent_commands import command_for
from lgcheckpoint.pregel.retries import retry_delay
from lgcheckpoint.runtime import task_runtime
from lgcheckpoint.types import Send, current_task

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

Commit = Callable[[Task, "BaseException | None"], "Task | None"]  # -> an error handler's task


# --- one task ------------------------------------------------------------------------------
def task_config(task: Task) -> dict:
    """The config a node sees: the run's config plus where this task runs."""
    conf = task.config["configurable"]
    ns = conf.get("checkpoint_ns", "")
    metadata = {**task.config.get("metadata", {}), "langgraph_step": conf.get(STEP),
                "langgraph_node": task.name, "langgraph_triggers": task.triggers,
                "langgraph_path": task.path, "langgraph_checkpoint_ns": task.ns}
    return {**task.config, "metadata": metadata,
            "configurable": {**conf, "checkpoint_ns": task.ns, "checkpoint_id": None,
                             "checkpoint_map": {**conf.get("checkpoint_map", {}),
                                                ns: conf.get(CHECKPOINT_ID)},
                             TASK_ID: task.id}}


def call_user(task: Task, fn: Callable, value: Any, injects: tuple[str, ...] = ()) -> Any:
    """Call a node or path function with the extras it declared (config=, writer=, runtime=...)."""
    return fn(value, **{name: injected(task, name) for name in injects})


def injected(task: Task, name: str) -> Any:
    """One keyword argument LangGraph injects: the task's config, or a field of its Runtime."""
    if name == "config":
        return task_config(task)
    if name == "error":  # an error handler's NodeError (None in any other task)
        return task.error
    runtime = task_runtime(task)
    return runtime if name == "runtime" else getattr(
        runtime, "stream_writer" if name == "writer" else name)


def watched(task: Task, call: Callable[[Task], Any]) -> Any:
    """call(task), in view of the run's langchain callbacks if it has any: then the task is a
    traced run (pregel/tracing.py) and a chat model the node calls streams its tokens
    (stream_mode="messages", pregel/messages_stream.py)."""
    if not task.config.get("callbacks"):
        return call(task)
    from lgcheckpoint.pregel import tracing  # langchain-core: only for such runs

    return tracing.watch(task, call, task_config(task))


def call_node(task: Task) -> Any:
    node = task.node
    if node.subgraph is not None:  # invoked within this task, so it runs as the task's child
        return node.subgraph.invoke(task.input)
    if node.func is None:  # START forwards the input
        return task.input
    if node.is_async:
        raise RuntimeError(f"Node '{task.name}' is async: run the graph with ainvoke/astream")
    return call_user(task, node.func, task.input, node.injects)


def async_twin(func: Any) -> Callable | None:
    """A node object that also has an async form (``ainvoke``, as the prebuilt ToolNode does, to
    await async tools) runs that form in an async run, instead of its sync form in a thread."""
    twin = getattr(func, "ainvoke", None)
    return twin if callable(func) and asyncio.iscoroutinefunction(twin) else None


def collect_writes(task: Task, result: Any, graph: Pregel, is_async: bool = False) -> list:
    """Writes a node's result implies; returns conditional edges as (branch, path result)."""
    timeouts.ensure_open(task)  # an attempt that outlived its timeout writes nothing
    task.writes.extend(task.node.result_writes(result))
    check_sends(task, graph.nodes)
    return [(b, call_edge(task, b, branch_state(b, task, result), is_async))
            for b in task.node.branches]


def call_edge(task: Task, branch: Branch, state: Any, is_async: bool) -> Any:
    """A conditional edge's path function (an async run awaits an async one's coroutine later);
    with langchain callbacks, it is a run inside its node's (pregel/tracing.py)."""
    path = is_async and async_twin(branch.path) or branch.path
    if not task.config.get("callbacks"):
        return call_user(task, path, state, branch.injects)
    from lgcheckpoint.pregel import tracing

    return tracing.edge(task, branch, partial(call_user, task, path, state, branch.injects),
                        state, is_async)


def branch_state(branch: Branch, task: Task, result: Any) -> Any:
    """What a conditional edge reads: the state with the task's writes, and managed values."""
    state = task.local_read(branch.reads)
    if branch.managed:
        state.update(read_managed(branch.managed, task.scratchpad))
    return branch_input(branch, state, result)


def branch_input(branch: Branch, state: dict, returned: Any) -> Any:
    """A conditional edge sees the state including this task's own writes; without a schema of
    its own, also the keys of the dict its node returned (even keys the state does not have)."""
    if branch.mapper is not None:
        return branch.mapper(state)
    passthrough = branch.sees_update and isinstance(returned, dict)
    return {**returned, **state} if passthrough else state


def add_branch_writes(task: Task, routes: list, graph: Pregel) -> None:
    timeouts.ensure_open(task)  # an async path function may have outlived the timeout
    for branch, result in routes:
        task.writes.extend(branch_writes(branch.destinations(result)))
    check_sends(task, graph.nodes)


def check_sends(task: Task, known_nodes: Mapping[str, Node]) -> None:
    for _, value in task.writes:
        if isinstance(value, Send) and value.node not in known_nodes:
            raise InvalidUpdateError(
                f"Node '{task.name}' sent a packet to unknown node '{value.node}': "
                "Send(node=...) must name one of "
                f"{sorted(n for n in known_nodes if not n.startswith('__'))}")


def run_task(task: Task, graph: Pregel) -> None:
    """Run a node with its retry policy; its writes end up in task.writes."""
    if timeouts.task_timeout(task) is not None:  # only an async run can cancel an attempt
        raise timeouts.sync_run_refused(task.name)
    for attempts in itertools.count(1):
        task.writes.clear()
        task.attempt, task.first_attempt_time = attempts, task.first_attempt_time or time.time()
        token = current_task.set(task)
        try:
            try:
                routes = collect_writes(task, watched(task, call_node), graph)
            except ParentCommand as exc:  # a Command(graph=PARENT), from this node or a subgraph
                routes = collect_writes(task, command_for(task, exc), graph)
            return add_branch_writes(task, routes, graph)
        except asyncio.CancelledError as exc:  # raised by the node itself: nothing cancels threads
            raise NodeCancelledError(task.name) from exc
        except Exception as exc:
            time.sleep(retry_delay(task, exc, attempts))
        finally:
            current_task.reset(token)


# --- one step --------------------------------------------------------------------------------
def step_gate(semaphore: Callable[[int], Any], tasks: list[Task]) -> Any:
    """What each of a step's tasks holds while it runs: config["max_concurrency"] of them at
    once (None: a gate that never closes). The @task calls they make are not counted: a caller
    waiting on its call would hold a slot."""
    limit = tasks[0].config.get("max_concurrency") if tasks else None
    if limit is not None and (type(limit) is not int or limit < 1):
        raise ValueError(f"max_concurrency must be a positive int (or None), got {limit!r}")
    return contextlib.nullcontext() if limit is None else semaphore(limit)


def raise_step_errors(errors: list[BaseException]) -> None:
    """A real error beats interrupts; all interrupts of a step surface together."""
    if real := [e for e in errors if not isinstance(e, GraphInterrupt)]:
        raise real[0]
    if errors:
        raise GraphInterrupt(tuple(i for e in errors for i in e.interrupts))


def step_timed_out(errors: list[BaseException], timeout_error: type = TimeoutError) -> None:
    """Past the graph's step_timeout: a task's own error first, else TimeoutError."""
    raise_step_errors(errors)
    raise timeout_error("Timed out")  # LangGraph's words; one class since Python 3.11


def stops_the_step(error: BaseException) -> bool:
    """A failed task (its error not handled) ends its step: an interrupt does not, nor an
    answer that did not fit interrupt(response_schema=...), so the other answered tasks
    finish and are not re-run."""
    return not isinstance(error, GraphInterrupt) and not is_invalid_resume(error)


def end_task(commit: Commit, errors: list, task: Task, exc: BaseException | None) -> list[Task]:
    """Commit a finished task. Its error fails the step, unless commit returns a handler's task
    (handlers.py): then that task is what runs next, in this step."""
    handler = commit(task, exc)
    if exc is not None and handler is None:
        errors.append(exc)
    return [handler] if handler is not None else []


def run_step(tasks: list[Task], commit: Commit, graph: Pregel, pool_holder: list) -> None:
    """Run a step's tasks (inline if alone, else in threads); commit each as it finishes.
    A failed node's error handler joins the step at once, beside the tasks still running.
    Past graph.step_timeout it raises TimeoutError, once the threads still running have ended
    (nothing can stop a thread) and their tasks are committed too, as LangGraph does; a handler
    due after that runs on resume (its error is saved)."""
    errors: list[BaseException] = []
    ended = partial(end_task, commit, errors)
    while len(tasks) == 1 and graph.step_timeout is None:  # a lone task (or handler) inline
        try:
            run_task(tasks[0], graph)
            tasks = ended(tasks[0], None)
        except Exception as exc:
            tasks = ended(tasks[0], exc)
    if tasks:
        if not pool_holder:
            pool_holder.append(concurrent.futures.ThreadPoolExecutor(thread_name_prefix="lgc"))
        gate = step_gate(threading.BoundedSemaphore, tasks)
        finished: queue.SimpleQueue = queue.SimpleQueue()  # (task, future), as each finishes

        def run_gated(task: Task) -> None:
            with gate:
                run_task(task, graph)

        def submit(task: Task) -> None:
            fut = pool_holder[0].submit(contextvars.copy_context().run, run_gated, task)
            fut.add_done_callback(lambda fut: finished.put((task, fut)))

        for task in tasks:
            submit(task)
        running, late = len(tasks), False
        deadline = None if graph.step_timeout is None else time.monotonic() + graph.step_timeout
        while running:  # commit each task as it finishes; a handler it returns runs too
            try:
                task, fut = finished.get(timeout=None if deadline is None or late else
                                         max(0.0, deadline - time.monotonic()))
            except queue.Empty:  # past the step's timeout: wait for the threads, start nothing
                late = True
                continue
            handlers = ended(task, fut.exception())
            running -= 1
            for handler in [] if late else handlers:
                running += 1
                submit(handler)
        if late:
            step_timed_out(errors)
    raise_step_errors(errors)
