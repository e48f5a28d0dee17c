"""Streaming while a step runs: the step works beside the caller, who gets chunks as they come.

A step's chunks (a task's updates, a custom chunk a node writes) go into the run's Chunks; each
append wakes the caller. LangGraph runs a lone task inline (its chunks come when it ends) unless
the caller can see chunks from inside a task: custom mode, subgraphs=True, or an
entrypoint (stream_eager). Several tasks, or a step_timeout, always run beside the caller, so a
fast task's updates arrive while its slow sibling still runs. Closing the stream lets a sync step
finish (nothing stops a thread) and cancels an async one. Next: pregel/saves.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from collections import deque
from contextlib import aclosing
from typing import Any, AsyncIterator, Awaitable, Callable, Iterator


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


def runs_beside(graph: Any, run: Any, tasks: list) -> bool:
    """Whether the caller should get chunks before the step ends (LangGraph's rule)."""
    eager = graph.stream_eager or run.subgraphs or "custom" in run.modes  # ("messages" is refused)
    return eager or len(tasks) > 1 or graph.step_timeout is not None


def step(graph: Any, run: Any, work: Callable[[], None], tasks: list) -> Iterator[None]:
    """Run a step's tasks; yield whenever the caller has chunks to read."""
    if runs_beside(graph, run, tasks):
        yield from step_beside(work, run.chunks)
    else:
        work()


async def astep(graph: Any, run: Any, work: Callable[[], Awaitable[None]], tasks: list
                ) -> AsyncIterator[None]:
    """Async twin of step."""
    if not runs_beside(graph, run, tasks):
        await work()
        return
    async with aclosing(astep_beside(work, run.chunks)) as beside:
        async for _ in beside:
            yield


def step_beside(step: Callable[[], None], chunks: Chunks) -> Iterator[None]:
    """Run the step in a thread; yield each time chunks arrive; re-raise the step's error."""
    ready = threading.Event()
    outcome: concurrent.futures.Future = concurrent.futures.Future()

    def work() -> None:
        try:
            outcome.set_result(step())
        except BaseException as exc:
            outcome.set_exception(exc)
        finally:
            ready.set()

    chunks.wake = ready.set
    thread = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                              name="lgc-step", daemon=True)
    thread.start()
    try:
        while not outcome.done():
            ready.wait()
            ready.clear()  # chunks appended after this wake the next wait
            yield
    finally:
        thread.join()  # a closed stream: its tasks finish and commit (a thread cannot stop)
        chunks.wake = nothing
    outcome.result()


async def astep_beside(step: Callable[[], Awaitable[None]], chunks: Chunks) -> AsyncIterator[None]:
    """Async twin: the step is an asyncio task; closing the stream cancels it."""
    ready, event_loop = asyncio.Event(), asyncio.get_running_loop()
    chunks.wake = lambda: event_loop.call_soon_threadsafe(ready.set)  # sync nodes: threads
    work = asyncio.ensure_future(step())
    waiter = None
    try:
        while not work.done():
            if waiter is None or waiter.done():
                waiter = asyncio.ensure_future(ready.wait())
            await asyncio.wait({work, waiter}, return_when=asyncio.FIRST_COMPLETED)
            ready.clear()
            yield
    finally:
        chunks.wake = nothing
        if waiter is not None:
            waiter.cancel()
        if not work.done():  # the caller closed the stream: cancel the step's tasks
            work.cancel()
            await asyncio.gather(work, return_exceptions=True)
    work.result()
