"""Node timeouts: each attempt of an async node gets run_timeout seconds and an idle watchdog.

A TimeoutPolicy (types.py) comes from ``add_node(timeout=...)``, ``@task(timeout=...)``,
``@entrypoint(timeout=...)``, ``NodeBuilder().set_timeout(...)``, or a ``Send(..., timeout=...)``
(over its node's). The runner
(arunner.arun_task) runs each attempt through ``run_timed``:

| case                                         | what happens                                    |
|----------------------------------------------|-------------------------------------------------|
| no policy                                    | the attempt is awaited as it is                 |
| ``run_timeout`` seconds pass                 | attempt cancelled, NodeTimeoutError kind="run"  |
| ``idle_timeout`` passes without progress     | attempt cancelled, NodeTimeoutError kind="idle" |
| progress, any ``refresh_on``                 | ``runtime.heartbeat()`` (of the innermost)      |
| progress, ``refresh_on="auto"`` only         | custom stream output, @task calls, also made    |
|                                              | inside a subgraph node or a call it started;    |
|                                              | LangChain callback events under the node's run  |
|                                              | in a run with callbacks or the "messages"       |
|                                              | stream (pregel/tracing.py: Progress)            |
| a subgraph's steps; callback events in a run | not progress here (LangGraph counts the chunks  |
| with neither callbacks nor "messages"        | a subgraph streams, and those events)           |
| output after the timeout                     | dropped; a @task call is refused (cancelled)    |
| an attempt that ignores its cancellation     | its result is dropped (ensure_open), the error  |
|                                              | raised and the next attempt run all the same    |
| the node raises TimeoutError itself          | it propagates unchanged: not our timeout        |
| the node raises asyncio.CancelledError       | NodeCancelledError: a failure, not a stop       |
| NodeTimeoutError and a RetryPolicy           | retried like any error; each try a fresh clock  |
| what is saved                                | as for any failure: the task's ERROR write, no  |
|                                              | writes of its own; resuming runs it again       |
| a sync node with a policy                    | refused with ValueError when the graph is built |
|                                              | (validate.py; a thread cannot be cancelled); a  |
|                                              | Runnable or ToolNode with its own async form is |
|                                              | timed (runs_async)                              |
| a timed subgraph node in a sync run (invoke) | refused with ValueError: use ainvoke/astream    |
| blocking code in an async node (time.sleep)  | the watchdogs fire only when it yields          |

A graph's ``step_timeout`` (seconds for a whole super-step) is the runner's: runner.py.
Next: pregel/handlers.py.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import time
from contextlib import suppress
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from lgcheckpoint.errors import NodeTimeoutError
from lgcheckpoint.runtime import open_clocks
from lgcheckpoint.types import TimeoutPolicy

if TYPE_CHECKING:
    from lgcheckpoint.pregel.algo import Task

SYNC_REFUSED = ("Node timeouts are only supported for async nodes because sync Python "
                "execution cannot be safely cancelled in-process.")


def sync_timeout_refused(name: str, kind: str = "Node", func: Any = None) -> ValueError:
    """The error for a timeout on a sync function: make it `async def`, or drop the timeout."""
    what = "is sync" if func is None or inspect.isroutine(func) or isinstance(
        func, functools.partial) else f"runs a {type(func).__name__}, not an `async def` function"
    return ValueError(f"{SYNC_REFUSED} {kind} {name!r} {what}: make it `async def` and run "
                      "the graph with ainvoke/astream, or remove timeout=")


def runs_async(func: Any) -> bool:
    """A node object an async run awaits (runner.async_twin) can be timed: a langchain Runnable
    node (node.RunnableCall) whose async form is its own code, an object with an async
    ``ainvoke`` (ToolNode)."""
    runnable = getattr(func, "runnable", None)
    if runnable is not None:
        return native_async(runnable)
    return inspect.iscoroutinefunction(getattr(func, "ainvoke", None))


def native_async(runnable: Any) -> bool:
    """LangGraph's rule: a RunnableLambda of an async function, a binding of one (with_config),
    a sequence or parallel of such steps, or a Runnable that overrides ainvoke."""
    # such a node exists only with langchain-core
    from langchain_core.runnables import Runnable, RunnableLambda, RunnableParallel
    from langchain_core.runnables.base import RunnableBindingBase, RunnableSequence

    while isinstance(runnable, RunnableBindingBase):
        runnable = runnable.bound
    if isinstance(runnable, (RunnableSequence, RunnableParallel)):
        steps = runnable.steps if isinstance(runnable, RunnableSequence) else list(
            runnable.steps__.values())
        return all(native_async(step) for step in steps)
    if isinstance(runnable, RunnableLambda):
        return bool(getattr(runnable, "afunc", None))
    return type(runnable).ainvoke is not Runnable.ainvoke


def sync_run_refused(name: str) -> ValueError:
    """The error for a timed node (a subgraph) met by a sync run, which cannot cancel it."""
    return ValueError(f"{SYNC_REFUSED} Node {name!r} has a timeout: run the graph with "
                      "ainvoke/astream")


def task_timeout(task: Task) -> TimeoutPolicy | None:
    """A Send's own policy wins over its node's."""
    return task.timeout or task.node.timeout


class AttemptClock:
    """The idle clock of one timed attempt: progress resets it; closing it drops late output."""

    def __init__(self, policy: TimeoutPolicy) -> None:
        self.policy, self.open = policy, True
        self.started = self.last_progress = time.monotonic()

    def heartbeat(self) -> None:
        """Explicit progress (runtime.heartbeat): refreshes the idle clock in every mode."""
        self.last_progress = time.monotonic()

    def progress(self) -> None:
        """Output the graph sees: refreshes the idle clock only under refresh_on="auto"."""
        if self.policy.refresh_on == "auto":
            self.heartbeat()

    async def idle_expired(self) -> None:
        """Return once idle_timeout seconds pass without progress."""
        while (left := self.last_progress + self.policy.idle_timeout - time.monotonic()) > 0:
            await asyncio.sleep(left)


def note_call(name: str) -> None:
    """A @task call is progress of the timed attempts it runs in; after a timeout, refused."""
    clocks = open_clocks.get()
    if not all(clock.open for clock in clocks):
        raise asyncio.CancelledError(f"the caller timed out: task '{name}' is not run")
    for clock in clocks:
        clock.progress()


def ensure_open(task: Task) -> None:
    """Stop a timed-out attempt that ignored its cancellation before it writes anything: the
    task's writes belong to its next attempt by now."""
    if task_timeout(task) is not None and not open_clocks.get()[-1].open:
        raise asyncio.CancelledError(f"'{task.name}' timed out; this attempt's writes are dropped")


async def run_timed(task: Task, attempt: Callable[[], Awaitable[Any]]) -> Any:
    """Await one attempt; if a limit of the task's policy passes first, cancel it and raise."""
    policy = task_timeout(task)
    if policy is None:
        return await attempt()
    clock = AttemptClock(policy)
    token = open_clocks.set((*open_clocks.get(), clock))
    body = asyncio.ensure_future(attempt())  # runs in a copy of this context, clock included
    open_clocks.reset(token)
    watchdogs = [asyncio.ensure_future(clock.idle_expired())] if policy.idle_timeout else []
    try:  # run_timeout bounds the wait itself (None: no bound)
        done, _ = await asyncio.wait([body, *watchdogs], timeout=policy.run_timeout,
                                     return_when=asyncio.FIRST_COMPLETED)
        if body in done:  # finished in time (even if the watchdog fired at the same moment)
            return body.result()
        kind = "idle" if done else "run"  # the watchdog fired, or the wait timed out
        task.writes.clear()  # nothing of a timed-out attempt is saved
        raise NodeTimeoutError(task.name, time.monotonic() - clock.started, kind=kind,
                               idle_timeout=policy.idle_timeout, run_timeout=policy.run_timeout)
    finally:
        clock.open = False
        for future in (body, *watchdogs):
            future.cancel()
        if not body.done():  # it stops at its next await; nobody reads its error
            body.add_done_callback(drain)


def drain(future: asyncio.Future) -> None:
    """Mark a cancelled attempt's outcome as read, so asyncio does not log it."""
    with suppress(asyncio.CancelledError, Exception):
        future.exception()


def cancelled_by_node() -> bool:
    """A CancelledError while nobody cancels our asyncio task was raised by the node itself.
    Python 3.10 cannot tell (no Task.cancelling): there it stays a cancellation, as in LangGraph."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is not None and cancelling() == 0
