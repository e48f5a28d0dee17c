"""Task calls: a function decorated with @task, called while a node runs, is a PUSH task.

The n-th call a running task makes gets a deterministic id (checkpoint, step, caller's path, n),
so after an interrupt or a crash the same call finds the result it saved as a pending write
(``__return__``) and is not run again. The call runs beside its caller in the same step (a
thread, or an asyncio task), is committed as it finishes, and hands its result to the caller
through a future. A call whose cache policy finds its arguments in the graph's cache takes the
cached result instead of running (pregel/caching.py). func.py builds entrypoints and tasks on
this. End of the side trip from graph.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import threading
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Sequence

from lgcheckpoint.constants import CALL, CONF, PUSH, RETURN
from lgcheckpoint.pregel import caching, timeouts
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.algo import Task, make_task, reuse_pending_writes, task_path_str
from lgcheckpoint.pregel.node import Node, Write
from lgcheckpoint.pregel.arunner import arun_step
from lgcheckpoint.pregel.arunner import arun_task
from lgcheckpoint.pregel.runner import run_step, run_task
from lgcheckpoint.types import CachePolicy, RetryPolicy, TimeoutPolicy, current_task

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel
    from lgcheckpoint.pregel.loop import PregelLoop


class Call(NamedTuple):
    """One call of a task function: what to run, with which arguments."""

    func: Callable
    name: str
    args: tuple
    kwargs: dict
    retry_policy: Sequence[RetryPolicy]
    injects: tuple[str, ...]  # config=, runtime=... the function declares and the caller left out
    cache_policy: CachePolicy | None = None  # arguments seen before return the cached result
    timeout: TimeoutPolicy | None = None  # for each attempt (pregel/timeouts.py)


class CallNode(Node):
    """The node a call runs as: it writes its return value to ``__return__``, nothing else."""

    def result_writes(self, result: Any) -> list[Write]:
        return [(RETURN, result)]


def call_node(call: Call, default_policy: Sequence[RetryPolicy]) -> CallNode:
    func, args, kwargs = call.func, call.args, call.kwargs
    if asyncio.iscoroutinefunction(func):
        async def run(_input: Any, **injected: Any) -> Any:
            return await func(*args, **kwargs, **injected)
    else:
        def run(_input: Any, **injected: Any) -> Any:
            return func(*args, **kwargs, **injected)
    run.__wrapped__ = func  # type: ignore[attr-defined]  # tracing.py names the arguments
    return CallNode(call.name, run, [PUSH], [], frozenset(),
                    retry_policy=call.retry_policy or default_policy, injects=call.injects,
                    timeout=call.timeout)


def submit(call: Call) -> Any:
    """Run a task call from the running node: a future (sync) or an awaitable (async)."""
    parent = current_task.get(None)
    if parent is None or CALL not in parent.config[CONF]:
        raise RuntimeError(f"Task '{call.name}' was called outside a running graph: call it from "
                           "an @entrypoint function, another @task or a graph node")
    timeouts.note_call(call.name)  # progress of a timed caller
    return parent.config[CONF][CALL].submit(parent, call)


def done_future(task: Task) -> concurrent.futures.Future:
    """The future of a call that finished in an earlier run: its saved return value."""
    fut: concurrent.futures.Future = concurrent.futures.Future()
    fut.set_result(next((v for c, v in task.writes if c == RETURN), None))
    return fut


class Calls:
    """The calls made during one run's steps: scheduled on the loop, run, committed, awaited."""

    def __init__(self, loop: PregelLoop, graph: Pregel) -> None:
        self.loop, self.graph = loop, graph
        self.lock = threading.Lock()  # calls commit from worker threads
        self.futures: list = []  # calls of the running step (the step waits for them all)
        loop.spec.config[CONF][CALL] = self

    def accept(self, parent: Task, call: Call) -> Task:
        """The PUSH task for the caller's next call; it carries its saved writes if it ran."""
        loop = self.loop
        with self.lock:
            idx = parent.scratchpad.call_counter
            parent.scratchpad.call_counter += 1
            # the call runs inside its caller: its namespace is "caller:id|name"
            config = {**parent.config, CONF: {**parent.config[CONF], "checkpoint_ns": parent.ns}}
            node = call_node(call, self.graph.retry_policy)  # the call's, else its entrypoint's
            task = make_task(loop.here()._replace(config=config), node, (call.args, call.kwargs),
                             (PUSH, parent.path, idx, True), (PUSH,),
                             (PUSH, task_path_str(parent.path), str(idx)))
            loop.tasks[task.id] = task
            if not loop.start.replaying:
                reuse_pending_writes({task.id: task}, loop.pending_writes)
            if self.graph.cache is not None:  # the call's, else its entrypoint's
                policy = call.cache_policy or self.graph.cache_policy
                task.cache_key = caching.call_key(call.func, policy, call.args, call.kwargs)
            if not task.writes:
                loop.running.add(task.id)
            loop.emit("tasks", out.task_payload(task))
        return task

    def apply_cached(self, task: Task, wanted: dict, found: dict) -> bool:
        """Give a call found in the cache its cached writes, saved as it would save them."""
        with self.lock:
            return not self.loop.apply_cached([task], wanted, found)

    def commit(self, task: Task, error: BaseException | None) -> Task | None:
        with self.lock:
            return self.loop.commit(task, error)

    def finish_call(self, task: Task, error: BaseException | None) -> Any:
        """Commit a finished call, then give its caller the result (or raise its error)."""
        self.commit(task, error)
        if error is not None:
            raise error
        return next((v for c, v in task.writes if c == RETURN), None)


class SyncCalls(Calls):
    """Calls in a sync run: each runs in the run's thread pool."""

    def __init__(self, loop: PregelLoop, graph: Pregel, pool: list) -> None:
        super().__init__(loop, graph)
        self.pool = pool  # the run's thread pool, created on first need

    def submit(self, parent: Task, call: Call) -> concurrent.futures.Future:
        if asyncio.iscoroutinefunction(call.func):
            raise RuntimeError(f"Task '{call.name}' is async: run the graph with ainvoke/astream")
        task = self.accept(parent, call)
        if wanted := caching.wanted([task]):
            self.apply_cached(task, wanted, self.graph.cache.get(tuple(wanted)))
        if task.writes:
            return done_future(task)
        if not self.pool:
            self.pool.append(concurrent.futures.ThreadPoolExecutor(thread_name_prefix="lgc"))
        fut = self.pool[0].submit(contextvars.copy_context().run, self.run, task)
        with self.lock:
            self.futures.append(fut)
        return fut

    def run(self, task: Task) -> Any:
        try:
            run_task(task, self.graph)
        except Exception as exc:
            return self.finish_call(task, exc)
        result = self.finish_call(task, None)
        if entry := caching.finished_entry(task, task.writes):  # before the caller goes on
            self.graph.cache.set(entry)
        return result

    def step(self, tasks: list[Task]) -> None:
        """Run a step's tasks; it ends when the calls they made have ended too."""
        try:
            run_step(tasks, self.commit, self.graph, self.pool)
        finally:
            while self.futures:  # a call may make calls of its own
                with self.lock:
                    futures, self.futures = self.futures, []
                concurrent.futures.wait(futures)


class AsyncCalls(Calls):
    """Calls in an async run: each is an asyncio task on the run's event loop."""

    def __init__(self, loop: PregelLoop, graph: Pregel) -> None:
        super().__init__(loop, graph)
        self.event_loop = asyncio.get_running_loop()

    def submit(self, parent: Task, call: Call) -> Any:
        task = self.accept(parent, call)
        try:
            on_loop = asyncio.get_running_loop() is self.event_loop
        except RuntimeError:  # a sync node, running in a worker thread
            on_loop = False
        if task.writes:
            fut = done_future(task)
            return asyncio.wrap_future(fut) if on_loop else fut
        if on_loop:
            fut = asyncio.ensure_future(self.run(task))
        else:
            fut = asyncio.run_coroutine_threadsafe(self.run(task), self.event_loop)
        self.futures.append(fut)
        return fut

    async def run(self, task: Task) -> Any:
        wanted = caching.wanted([task])  # looked up here, on the event loop
        if wanted and self.apply_cached(task, wanted, await self.graph.cache.aget(tuple(wanted))):
            return next((v for c, v in task.writes if c == RETURN), None)
        try:
            await arun_task(task, self.graph)
        except (asyncio.CancelledError, Exception) as exc:  # or its caller was cancelled
            return self.finish_call(task, exc)
        result = self.finish_call(task, None)
        if entry := caching.finished_entry(task, task.writes):  # before the caller goes on
            await self.graph.cache.aset(entry)
        return result

    async def step(self, tasks: list[Task]) -> None:
        try:
            await arun_step(tasks, self.commit, self.graph)
        finally:
            while self.futures:  # a call may make calls of its own
                futures, self.futures = self.futures, []
                await asyncio.gather(*map(asyncio.wrap_future, futures), return_exceptions=True)
