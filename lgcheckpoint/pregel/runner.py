"""Running one step's tasks, and the ordered queue of saver calls: sync and async twins.

This is the only place where sync and async differ. A lone task runs inline in the caller's
thread (no pool hop: most steps have one task); several run in a thread pool (sync) or as
asyncio tasks (async). Each finished task is committed right away, in the caller's thread, so
its writes are queued for saving before the step ends. Next: pregel/__init__.py (invoke, stream).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import queue
import random
import threading
import time
from dataclasses import replace
from typing import Any, Callable

from lgcheckpoint.constants import NS_END, NS_SEP
from lgcheckpoint.errors import GraphInterrupt, InvalidUpdateError, ParentCommand
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.node import branch_writes
from lgcheckpoint.types import Command, RetryPolicy, Send, current_task

Commit = Callable[[Task, "BaseException | None"], None]


# --- one task ------------------------------------------------------------------------------
def node_args(task: Task, fn: Callable, value: Any, wants_config: bool, wants_writer: bool
              ) -> tuple[tuple, dict]:
    kwargs: dict = {}
    if wants_config:
        kwargs["config"] = task_config(task)
    if wants_writer:
        kwargs["writer"] = task.config.get("configurable", {}).get("__lg_writer", lambda _: None)
    return (value,), kwargs


def task_config(task: Task) -> dict:
    """The config a node sees: the run's config plus where this task runs."""
    conf = task.config["configurable"]
    ns = conf.get("checkpoint_ns", "")
    return {**task.config, "metadata": {
        **task.config.get("metadata", {}), "thread_id": conf.get("thread_id"),
        "langgraph_step": conf.get("__lg_step"), "langgraph_node": task.name,
        "langgraph_triggers": task.triggers, "langgraph_path": task.path[:3],
        "langgraph_checkpoint_ns": task.ns},
        "configurable": {**conf, "checkpoint_ns": task.ns, "checkpoint_id": None,
                         "checkpoint_map": {**conf.get("checkpoint_map", {}),
                                            ns: conf.get("__lg_checkpoint_id")},
                         "__lg_task_id": task.id}}


def finish_writes(task: Task, result: Any, known_nodes: Any) -> None:
    """Collect the writes a node's return value implies (updates, gotos, edges)."""
    node = task.node
    task.writes.extend(node.update_writes(result))
    task.writes.extend(node.control_writes(result))
    task.writes.extend(node.static_writes())
    check_sends(task, known_nodes)


def branch_input(task: Task, branch: Any) -> Any:
    """A conditional edge sees the state including this task's own writes."""
    state = task.local_read(branch.reads)
    if branch.mapper is not None:
        return branch.mapper(state)
    return {**task.input, **state} if isinstance(task.input, dict) else state


def add_branch_writes(task: Task, branch: Any, result: Any, known_nodes: Any) -> None:
    task.writes.extend(branch_writes(branch.destinations(result)))
    check_sends(task, known_nodes)


def check_sends(task: Task, known_nodes: Any) -> None:
    for chan, value in task.writes:
        if isinstance(value, Send) and value.node not in known_nodes:
            raise InvalidUpdateError(
                f"Node '{task.name}' sent a packet to unknown node '{value.node}': "
                f"Send(node=...) must name one of {sorted(n for n in known_nodes if n[:2] != '__')}")


def retry_delay(policy: RetryPolicy, attempts: int) -> float:
    delay = min(policy.max_interval, policy.initial_interval * policy.backoff_factor ** (attempts - 1))
    return delay + random.uniform(0, 1) if policy.jitter else delay


def retry_policy_for(policies: Any, exc: Exception, attempts: int) -> RetryPolicy | None:
    """The first policy that wants this error retried and has attempts left, if any."""
    for policy in policies:
        on = policy.retry_on
        wanted = on(exc) if callable(on) and not isinstance(on, type) else isinstance(
            exc, tuple(on) if isinstance(on, (list, tuple)) else on)
        if wanted:
            return policy if attempts < policy.max_attempts else None
    return None


def parent_command_target(task: Task, exc: ParentCommand) -> bool:
    """True if a Command(graph=...) bubbling up from a subgraph is addressed to this task."""
    cmd = exc.command
    if cmd.graph in (task.ns, task.ns.split(NS_END)[0], task.name):
        return True
    if cmd.graph == Command.PARENT:  # address it to the graph that runs this task
        parts = task.ns.split(NS_SEP)
        exc.command = replace(cmd, graph=NS_SEP.join(parts[:-1]))
        exc.args = (exc.command,)
    return False


def run_task(task: Task, graph: Any) -> None:
    """Run a node with its retry policy; its writes end up in task.writes."""
    attempts = 0
    while True:
        task.writes.clear()
        token = current_task.set(task)
        try:
            return collect_writes(task, call_node(task), graph)
        except ParentCommand as exc:
            if not parent_command_target(task, exc):
                raise
            return collect_writes(task, exc.command, graph)
        except GraphInterrupt:
            raise
        except Exception as exc:
            attempts += 1
            if (policy := retry_policy_for(task.node.retry_policy, exc, attempts)) is None:
                raise
            time.sleep(retry_delay(policy, attempts))
        finally:
            current_task.reset(token)


def call_node(task: Task) -> Any:
    node = task.node
    if node.subgraph is not None:
        return node.subgraph.run_as_node(task, task.input)
    if node.func is None:
        return task.input
    if node.is_async:
        raise RuntimeError(f"Node '{task.name}' is async: run the graph with ainvoke/astream")
    args, kwargs = node_args(task, node.func, task.input, node.wants_config,
                             node.wants_writer)
    return node.func(*args, **kwargs)


def collect_writes(task: Task, result: Any, graph: Any) -> None:
    finish_writes(task, result, graph.nodes)
    for branch in task.node.branches:
        add_branch_writes(task, branch, call_plain(task, branch.path, branch_input(task, branch)),
                          graph.nodes)


def call_plain(task: Task, fn: Callable, value: Any) -> Any:
    from lgcheckpoint.pregel.node import accepts

    return fn(value, config=task_config(task)) if accepts(fn, "config") else fn(value)


async def arun_task(task: Task, graph: Any) -> None:
    """Async twin of run_task: awaits async nodes, runs sync ones in a worker thread."""
    attempts = 0
    while True:
        task.writes.clear()
        token = current_task.set(task)
        try:
            return await acollect_writes(task, await acall_node(task), graph)
        except ParentCommand as exc:
            if not parent_command_target(task, exc):
                raise
            return await acollect_writes(task, exc.command, graph)
        except GraphInterrupt:
            raise
        except Exception as exc:
            attempts += 1
            if (policy := retry_policy_for(task.node.retry_policy, exc, attempts)) is None:
                raise
            await asyncio.sleep(retry_delay(policy, attempts))
        finally:
            current_task.reset(token)


async def acall_node(task: Task) -> Any:
    node = task.node
    if node.subgraph is not None:
        return await node.subgraph.arun_as_node(task, task.input)
    if node.func is None:
        return task.input
    args, kwargs = node_args(task, node.func, task.input, node.wants_config,
                             node.wants_writer)
    if node.is_async:
        return await node.func(*args, **kwargs)
    ctx = contextvars.copy_context()
    return await asyncio.to_thread(ctx.run, node.func, *args, **kwargs)


async def acollect_writes(task: Task, result: Any, graph: Any) -> None:
    finish_writes(task, result, graph.nodes)
    for branch in task.node.branches:
        result = call_plain(task, branch.path, branch_input(task, branch))
        if asyncio.iscoroutine(result):
            result = await result
        add_branch_writes(task, branch, result, graph.nodes)


# --- one step --------------------------------------------------------------------------------
def raise_step_errors(errors: list[BaseException]) -> None:
    """A real error beats interrupts; all interrupts of a step surface together."""
    if real := [e for e in errors if not isinstance(e, GraphInterrupt)]:
        raise real[0]
    if errors:
        raise GraphInterrupt(tuple(i for e in errors for i in e.interrupts))


def run_step(tasks: list[Task], commit: Commit, graph: Any, pool_holder: list) -> None:
    """Run a step's tasks (inline if alone, else in threads); commit each as it finishes."""
    errors: list[BaseException] = []
    if len(tasks) == 1:
        try:
            run_task(tasks[0], graph)
            commit(tasks[0], None)
        except Exception as exc:
            commit(tasks[0], exc)
            errors.append(exc)
    elif tasks:
        if not pool_holder:
            pool_holder.append(concurrent.futures.ThreadPoolExecutor(thread_name_prefix="lgc"))
        futures = {pool_holder[0].submit(contextvars.copy_context().run, run_task, t, graph): t
                   for t in tasks}
        for fut in concurrent.futures.as_completed(futures):
            exc = fut.exception()
            commit(futures[fut], exc)
            if exc is not None:
                errors.append(exc)
    raise_step_errors(errors)


async def arun_step(tasks: list[Task], commit: Commit, graph: Any) -> None:
    """Async twin of run_step: a lone task is awaited inline, several run as asyncio tasks."""
    errors: list[BaseException] = []
    if len(tasks) == 1:
        try:
            await arun_task(tasks[0], graph)
            commit(tasks[0], None)
        except Exception as exc:
            commit(tasks[0], exc)
            errors.append(exc)
    elif tasks:
        running = {asyncio.ensure_future(arun_task(t, graph)): t for t in tasks}
        pending = set(running)
        while pending:
            done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
            for fut in [f for f in running if f in done]:  # a set has no order; tasks do
                commit(running[fut], exc := fut.exception())
                if exc is not None:
                    errors.append(exc)
    raise_step_errors(errors)


# --- the ordered queue of saver calls ------------------------------------------------------
class SyncSaves:
    """Saver calls in submission order on one background thread ('sync' runs them inline).

    After a failed call nothing later is attempted: a checkpoint whose writes did not land
    must not be published.
    """

    def __init__(self, saver: Any, durability: str) -> None:
        self.saver, self.inline = saver, durability == "sync"
        self.error: BaseException | None = None
        self.queue: queue.Queue | None = None

    def submit(self, verb: str, *args: Any) -> None:
        if self.inline:
            if self.error is None:
                self.call(verb, args)
            return
        if self.queue is None:
            self.queue = queue.Queue()
            threading.Thread(target=self.work, daemon=True, name="lgc-saves").start()
        self.queue.put((verb, args))

    def call(self, verb: str, args: tuple) -> None:
        try:
            getattr(self.saver, verb)(*args)
        except BaseException as exc:  # kept, re-raised to the caller at flush
            self.error = exc

    def work(self) -> None:
        while (item := self.queue.get()) is not None:
            if self.error is None:
                self.call(*item)
            self.queue.task_done()
        self.queue.task_done()

    def flush(self) -> None:
        """Wait until every queued call is done; raise the first saver error."""
        if self.queue is not None:
            self.queue.join()
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        if self.queue is not None:
            self.queue.put(None)
            self.queue.join()
            self.queue = None
        if self.error is not None:
            raise self.error


class AsyncSaves:
    """Async twin of SyncSaves: one asyncio task awaits the saver's a-verbs in order."""

    def __init__(self, saver: Any, durability: str) -> None:
        self.saver = saver
        self.error: BaseException | None = None
        self.queue: asyncio.Queue | None = None
        self.worker: asyncio.Task | None = None

    def submit(self, verb: str, *args: Any) -> None:
        if self.queue is None:
            self.queue = asyncio.Queue()
            self.worker = asyncio.ensure_future(self.work())
        self.queue.put_nowait((verb, args))

    async def work(self) -> None:
        while (item := await self.queue.get()) is not None:
            if self.error is None:
                try:
                    await getattr(self.saver, "a" + item[0])(*item[1])
                except BaseException as exc:
                    self.error = exc
            self.queue.task_done()
        self.queue.task_done()

    async def flush(self) -> None:
        if self.queue is not None:
            await self.queue.join()
        if self.error is not None:
            raise self.error

    async def close(self) -> None:
        if self.queue is not None:
            self.queue.put_nowait(None)
            await self.worker
            self.queue = None
        if self.error is not None:
            raise self.error
