"""Durability: when a task's writes and a step's checkpoint reach the saver. Decided only here.

    durability | after a task finishes       | after a step ends        | at exit
    -----------+-----------------------------+--------------------------+-------------------------
    "sync"     | put_writes (the last task's | put; the run waits until | held writes go alone
               | wait to share the put)      | it is stored             |
    "async"    | the same, in the background | put, in the background   | wait for every call
    "exit"     | nothing (the loop keeps it) | nothing                  | the last checkpoint,
               |                             |                          | then its pending writes

Write first, publish last: calls run one after another in the order queued, so a checkpoint is
never stored before the writes that made it. The step's last writes are *held* and travel with
the step's put in one ``put_writes_and_checkpoint`` (one transaction on SQLite and Postgres); a
crash before that commit loses both, and the task reruns. After a failed call nothing later runs
(no checkpoint without its writes); the error surfaces at the next step. A finished task's
node-cache entry (pregel/caching.py) rides the same queue, so a run ends only once it is stored.
Next: pregel/runner.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from typing import Any, Callable, NamedTuple

from lgcheckpoint.cache.base import BaseCache
from lgcheckpoint.checkpoint.base import (
    BaseCheckpointSaver, ChannelVersions, Checkpoint, CheckpointMetadata, PutWrites, RunnableConfig,
)
from lgcheckpoint.pregel.node import accepts


class Put(NamedTuple):
    """The arguments of one ``put``: publish a checkpoint after the one ``config`` names."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    new_versions: ChannelVersions  # channels whose values changed since the last put


class SaveQueue:
    """What the loop hands over (a task's writes, a step's checkpoint) and when it is saved."""

    def __init__(self, saver: BaseCheckpointSaver | None, durability: str, prefix: str = ""
                 ) -> None:
        self.saver, self.durability = saver, durability
        if saver is not None:  # the saver's verbs: put, ... or, with prefix "a", aput, ...
            self.put_writes, self.put, self.put_writes_and_checkpoint = saver_verbs(saver, prefix)
        self.saves_steps = saver is not None and durability != "exit"
        self.saves_at_exit = saver is not None and durability == "exit"
        self.held: PutWrites | None = None  # the step's last writes, waiting for its put
        self.hold_lock = threading.Lock()  # tasks of a subgraph may commit from other threads
        self.error: BaseException | None = None  # the first failed call; later ones are skipped

    def after_task(self, writes: PutWrites, last_of_step: bool) -> None:
        """A task finished: save its writes now, or hold them for the step's put if last."""
        if not self.saves_steps:
            return
        with self.hold_lock:
            self.release()  # anything held goes first: the queue keeps the order of calls
            if last_of_step:
                self.held = writes
            else:
                self.submit(self.put_writes, *writes)

    def after_step(self, put: Put) -> None:
        """A step ended: publish its checkpoint (with the held writes, in one commit)."""
        if not self.saves_steps:
            return
        with self.hold_lock:
            held, self.held = self.held, None
        if held is None:
            self.submit(self.put, *put)
        else:
            self.submit(self.put_writes_and_checkpoint, held, *put)

    def at_exit(self, put: Put | None, writes: list[PutWrites]) -> None:
        """The run stops: held writes go alone; "exit" saves the last checkpoint, then writes."""
        with self.hold_lock:
            self.release()
        if self.saves_at_exit:
            if put is not None:
                self.submit(self.put, *put)
            for task_writes in writes:
                self.submit(self.put_writes, *task_writes)

    def release(self) -> None:
        """Send held writes on their own (no checkpoint follows them, e.g. the step failed)."""
        if self.held is not None:
            self.submit(self.put_writes, *self.held)
            self.held = None


def saver_verbs(saver: BaseCheckpointSaver, prefix: str) -> tuple[Callable, Callable, Callable]:
    """The saver's (a)put_writes, (a)put and the two in one commit, fitted to a user's subclass:
    a put_writes written before task_path existed does not get it (LangGraph checks the same),
    and when put_writes or put is overridden, the one-commit verb (which would skip the override)
    becomes the two calls in turn."""
    names = [prefix + verb for verb in ("put_writes", "put", "put_writes_and_checkpoint")]
    put_writes, put, both = (getattr(saver, name) for name in names)
    if not accepts(put_writes, "task_path"):
        plain = put_writes
        put_writes = lambda config, writes, task_id, task_path="": plain(config, writes, task_id)
    owner = [next(c for c in type(saver).__mro__ if name in vars(c)) for name in names]
    if issubclass(owner[2], owner[0]) and issubclass(owner[2], owner[1]):
        return put_writes, put, both

    def one_by_one(task: PutWrites, *step: Any) -> Any:
        put_writes(*task)
        return put(*step)

    async def aone_by_one(task: PutWrites, *step: Any) -> Any:
        await put_writes(*task)
        return await put(*step)

    return put_writes, put, aone_by_one if prefix else one_by_one


class SyncSaveQueue(SaveQueue):
    """Saver calls on one worker thread ("sync": inline, in the caller's thread)."""

    def __init__(self, saver: BaseCheckpointSaver | None, durability: str) -> None:
        super().__init__(saver, durability)
        self.worker = concurrent.futures.ThreadPoolExecutor(1) if durability != "sync" else None
        self.last: concurrent.futures.Future | None = None  # one worker: the last is done last

    def cache_set(self, cache: BaseCache, pairs: dict) -> None:
        """Store a finished task's writes in the node cache, queued like a save."""
        self.submit(cache.set, pairs)

    def submit(self, verb: Callable, *args: Any) -> None:
        if self.worker is None:
            self.call(verb, args)
        else:
            self.last = self.worker.submit(self.call, verb, args)

    def call(self, verb: Callable, args: tuple) -> None:
        if self.error is None:
            try:
                verb(*args)
            except BaseException as exc:  # kept, re-raised to the caller at flush
                self.error = exc

    def end_of_step(self) -> None:
        """"sync" waits for the step's saves; any durability stops at an earlier failure."""
        if self.durability == "sync" or self.error is not None:
            self.flush()

    def flush(self) -> None:
        """Wait until every queued call is done; raise the first saver error."""
        if self.last is not None:
            self.last.result()
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        """Flush and stop the worker (only the run that made the queue closes it)."""
        if self.worker is not None:
            self.worker.shutdown(wait=True)
        self.flush()


class AsyncSaveQueue(SaveQueue):
    """Async twin: each call is an asyncio task that first awaits the one queued before it."""

    def __init__(self, saver: BaseCheckpointSaver | None, durability: str) -> None:
        super().__init__(saver, durability, prefix="a")  # the saver's async verbs
        self.last: asyncio.Future | None = None
        self.loop = asyncio.get_running_loop()  # a child on another event loop cannot join

    def cache_set(self, cache: BaseCache, pairs: dict) -> None:
        self.submit(cache.aset, pairs)

    def submit(self, verb: Callable, *args: Any) -> None:
        self.last = asyncio.ensure_future(self.call(self.last, verb, args))

    async def call(self, previous: asyncio.Future | None, verb: Callable, args: tuple) -> None:
        if previous is not None:
            await previous
        if self.error is None:
            try:
                await verb(*args)
            except BaseException as exc:
                self.error = exc

    async def end_of_step(self) -> None:
        if self.durability == "sync" or self.error is not None:
            await self.flush()

    async def flush(self) -> None:
        if self.last is not None:
            await self.last
        if self.error is not None:
            raise self.error

    close = flush  # nothing to shut down: each call is an asyncio task
