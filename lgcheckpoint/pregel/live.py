"""Streaming while a step runs: the step works beside the caller, who gets chunks as they come.

A step's chunks (a task's updates, a custom chunk a node writes) go into the run's Chunks; each
append wakes the caller. LangGraph runs a lone task inline (its chunks come when it ends) unless
the caller can see chunks from inside a task: custom or messages mode, subgraphs=True, or an
entrypoint (stream_eager). Several tasks, or a step_timeout, always run beside the caller, so a
fast task's updates arrive while its slow sibling still runs. Closing the stream lets a sync step
finish (nothing stops a thread) and cancels an async one.
Next: pregel/messages_stream.py (chunks from inside a chat model a node calls).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections import deque
from typing import TYPE_CHECKING, Any, AsyncIterator, Awaitable, Callable, Iterator

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel, Run
    from lgcheckpoint.pregel.algo import Task


def nothing() -> None:
    """Nobody waits for chunks: an append wakes no one."""


class Chunks(deque):
    """The run's chunks for the caller, (namespace, mode, payload); an append wakes the caller."""

    def __init__(self) -> None:
        super().__init__()
        self.wake: Callable[[], None] = nothing  # set while a step runs beside the caller

    def append(self, chunk: Any) -> None:
        super().append(chunk)
        self.wake()


def runs_beside(graph: Pregel, run: Run, tasks: list[Task]) -> bool:
    """Whether the caller should get chunks before the step ends (LangGraph's rule)."""
    eager = graph.stream_eager or run.subgraphs or "custom" in run.modes or "messages" in run.modes
    return eager or len(tasks) > 1 or graph.step_timeout is not None


def step(graph: Pregel, run: Run, work: Callable[[], None], tasks: list[Task]) -> Iterator[None]:
    """Run a step's tasks; yield whenever the caller has chunks to read. Beside the caller, the
    step runs in a thread; its error is re-raised here."""
    if not runs_beside(graph, run, tasks):
        work()
        return
    ready = threading.Event()
    outcome: concurrent.futures.Future = concurrent.futures.Future()

    def in_thread() -> None:
        try:
            outcome.set_result(work())
        except BaseException as exc:
            outcome.set_exception(exc)
        finally:
            ready.set()

    run.chunks.wake = ready.set
    thread = threading.Thread(target=contextvars.copy_context().run, args=(in_thread,),
                              name="lgc-step", daemon=True)
    thread.start()
    try:
        while not outcome.done():
            ready.wait()
            ready.clear()  # chunks appended after this wake the next wait
            yield
    finally:
        thread.join()  # a closed stream: its tasks finish and commit (a thread cannot stop)
        run.chunks.wake = nothing
    outcome.result()


async def astep(graph: Pregel, run: Run, work: Callable[[], Awaitable[None]], tasks: list[Task]
                ) -> AsyncIterator[None]:
    """Async twin of step: beside the caller, the step is an asyncio task; closing the stream
    cancels it."""
    if not runs_beside(graph, run, tasks):
        await work()
        return
    ready, event_loop = asyncio.Event(), asyncio.get_running_loop()
    run.chunks.wake = lambda: event_loop.call_soon_threadsafe(ready.set)  # sync nodes: threads
    running = asyncio.ensure_future(work())
    waiter = None
    try:
        while not running.done():
            if waiter is None or waiter.done():
                waiter = asyncio.ensure_future(ready.wait())
            await asyncio.wait({running, waiter}, return_when=asyncio.FIRST_COMPLETED)
            ready.clear()
            yield
    finally:
        run.chunks.wake = nothing
        if waiter is not None:
            waiter.cancel()
        if not running.done():  # the caller closed the stream: cancel the step's tasks
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
    running.result()
