"""The async step: a step's tasks as asyncio tasks, each committed as it finishes; unlike
threads, tasks still running past ``step_timeout`` (or when the caller stops reading) are
cancelled. The tasks themselves run as in runner.py (``arun_task``).
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import asyncio
import time
from functools import partial
from typing import TYPE_CHECKING

from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.runner import (
    Commit, arun_task, end_task, raise_step_errors, step_gate, step_timed_out, stops_the_step,
)

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel


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
