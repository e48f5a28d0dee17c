"""The async twins of runner.py: a task awaits its node (an async node, a Runnable's
``ainvoke``, a sync node in a worker thread), each attempt timed (timeouts.py); a step's tasks run
as asyncio tasks, each committed as it finishes. Unlike threads, tasks still running past
``step_timeout`` (or when the caller stops reading) are cancelled.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import asyncio
import contextvars
import itertools
import time
from functools import partial
from typing import TYPE_CHECKING, Any

from lgcheckpoint.errors import NodeCancelledError, ParentCommand
from lgcheckpoint.pregel import timeouts
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.parent_commands import command_for
from lgcheckpoint.pregel.retries import retry_delay
from lgcheckpoint.pregel.runner import (
    Commit, add_branch_writes, async_twin, call_node, call_user, collect_writes, end_task,
    raise_step_errors, step_gate, step_timed_out, stops_the_step, watched,
)
from lgcheckpoint.types import current_task

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel


# --- one task ----------------------------------------------------------------------------
async def acall_node(task: Task) -> Any:
    node = task.node
    if node.subgraph is not None:
        return await node.subgraph.ainvoke(task.input)
    if node.is_async:
        return await call_user(task, node.func, task.input, node.injects)
    if (twin := async_twin(node.func)) is not None:  # ToolNode, a langchain Runnable's ainvoke
        return await call_user(task, twin, task.input, node.injects)
    # a sync node (or START) runs in a worker thread, keeping the task context
    return await asyncio.to_thread(contextvars.copy_context().run, call_node, task)


async def arun_task(task: Task, graph: Pregel) -> None:
    """Async twin of run_task: awaits async nodes and path functions, each try timed."""
    for attempts in itertools.count(1):
        task.writes.clear()
        task.attempt, task.first_attempt_time = attempts, task.first_attempt_time or time.time()
        token = current_task.set(task)
        try:
            return await timeouts.run_timed(task, lambda: aattempt(task, graph))
        except asyncio.CancelledError as exc:
            if timeouts.cancelled_by_node():  # not by us: a failure of the node
                raise NodeCancelledError(task.name) from exc
            raise
        except Exception as exc:
            await asyncio.sleep(retry_delay(task, exc, attempts))
        finally:
            current_task.reset(token)


async def aattempt(task: Task, graph: Pregel) -> None:
    """One try of a task: the node, then its conditional edges, all into task.writes."""
    try:
        routes = collect_writes(task, await watched(task, acall_node), graph, is_async=True)
    except ParentCommand as exc:
        routes = collect_writes(task, command_for(task, exc), graph, is_async=True)
    routes = [(b, await r if asyncio.iscoroutine(r) else r) for b, r in routes]
    add_branch_writes(task, routes, graph)


# --- one step ----------------------------------------------------------------------------
async def arun_step(tasks: list[Task], commit: Commit, graph: Pregel) -> None:
    """Async twin of run_step: a lone task is awaited inline, several run as asyncio tasks.
    Past graph.step_timeout the tasks still running are cancelled (saved as cancelled)."""
    errors: list[BaseException] = []
    ended = partial(end_task, commit, errors)
    timeout = graph.step_timeout
    while len(tasks) == 1 and timeout is None:  # a lone task (or handler) runs inline
        try:
            await arun_task(tasks[0], graph)
            tasks = ended(tasks[0], None)
        except asyncio.CancelledError:  # the caller closed the stream (live.py)
            commit(tasks[0], asyncio.CancelledError())  # saved as cancelled, as LangGraph does
            raise
        except Exception as exc:
            tasks = ended(tasks[0], exc)
    gate = step_gate(asyncio.Semaphore, tasks)

    async def run_gated(task: Task) -> None:
        async with gate:
            await arun_task(task, graph)

    running = {asyncio.ensure_future(run_gated(t)): t for t in tasks}
    deadline = None if timeout is None else time.monotonic() + timeout
    while running:
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        try:
            done, _ = await asyncio.wait(running, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the caller closed the stream (live.py)
            cancel_all(running, commit)
            raise
        if not done:  # past the step's timeout
            cancel_all(running, commit)
            step_timed_out(errors, asyncio.TimeoutError)
        for fut in [f for f in running if f in done]:  # a set has no order; tasks do
            running.update((asyncio.ensure_future(run_gated(h)), h)
                           for h in ended(running.pop(fut), fut.exception()))
        if running and any(map(stops_the_step, errors)):  # the others are cancelled
            running = cancel_all(running, commit)
    raise_step_errors(errors)


def cancel_all(running: dict, commit: Commit) -> dict:
    """Cancel the step's running tasks; each is saved as cancelled, as LangGraph saves it."""
    for fut, task in running.items():
        fut.cancel()
        commit(task, asyncio.CancelledError())
    return {}
