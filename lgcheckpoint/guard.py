"""The thread guard: one run at a time on a thread, and no answer to a question already answered.

Two browser tabs approve the same request; a button is clicked twice; two workers pick up the same
thread. Without a guard both resumes run the approved node — its side effect happens twice — and
the thread forks. LangGraph's library does nothing about it (its hosted platform has "multitask
strategies"); lgcheckpoint guards every root run on a thread that has a checkpointer:

- ``"enqueue"`` (the default): a second run on a busy thread waits, then starts from the head the
  first run left — what a lock in any Python library does, so a correct program never sees an
  error it did not cause. LangGraph's platform defaults to ``"reject"``; a library call that
  fails because another call is running would surprise more than one that waits.
- ``"reject"``: the second run fails at once with ``ThreadBusyError`` naming the thread (for a UI
  that would rather say "someone else is answering" than wait).
- ``"off"``: no lock and no check; exactly LangGraph's behaviour.

Choose per graph (``graph.multitask_strategy = "reject"``) or per run
(``graph.invoke(..., multitask_strategy="reject")``). With the guard on, a stale answer is
refused: ``Command(resume=...)`` when no interrupt waits on the checkpoint it resumes (someone
answered first and the run moved on) raises ``StaleResumeError`` and writes nothing; LangGraph
would silently drop it. A fork made by ``update_state`` is not stale: its next task asks again, so
an answer sent to it is the new answer (time travel). Answer by interrupt id
(``Command(resume={interrupt.id: value})``) and a stale answer is caught even after the graph asked
a new question.

The loop is above this module: ``Pregel`` passes in how a saved checkpoint is restored
(``paused`` needs its next tasks). A lock lives for the run only: on Postgres it is held on a
connection the saver was given, never on one of its own.

The lock lives where the savers' processes meet (checkpoint/locks.py): a Postgres advisory lock,
a record lock beside a SQLite file, or only the in-process lock below for InMemory. Subgraph runs
inherit their parent's lock. Next: ``checkpoint/locks.py`` (the locks between processes).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

from lgcheckpoint.checkpoint import locks
from lgcheckpoint.constants import (
    CHECKPOINTER, CONF, CONTROL_WRITES, INTERRUPT, RESUME, TASK_ID,
)
from lgcheckpoint.errors import StaleResumeError, ThreadBusyError
from lgcheckpoint.types import Command, current_task

# pregel/state.py's restore: a saved checkpoint -> (checkpoint, channels, pending, next tasks)
Restore = Callable[[Any, Any], tuple]
STRATEGIES = ("enqueue", "reject", "off")
DEFAULT_STRATEGY = "enqueue"
POLL_SECONDS = (0.002, 0.05)  # a waiting run retries the lock: first after 2 ms, at most 50 ms

_held: dict[tuple, int] = {}  # (database, thread key) -> Python thread that holds it, this process
_held_lock = threading.Lock()
_locks: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # saver -> its file locks


class Claim:
    """One run's hold on its thread: the in-process entry and the cross-process lock."""

    def __init__(self, thread_id: str, strategy: str, saver: Any, lock: Any) -> None:
        self.thread_id, self.strategy, self.saver, self.lock = thread_id, strategy, saver, lock
        self.key = locks.thread_key(thread_id)
        self.slot = (lock.identity or ("saver", id(saver)), self.key)

    def try_acquire(self) -> bool:
        """Take the thread if nobody in this process or elsewhere has it."""
        with _held_lock:
            if self.slot in _held:
                return False
            _held[self.slot] = threading.get_ident()  # reserved while we ask the database
        try:
            if self.lock.try_lock(self.key):
                return True
        except BaseException:
            self._forget()
            raise
        self._forget()
        return False

    def busy(self) -> ThreadBusyError:
        return ThreadBusyError(
            f"thread {self.thread_id!r} is busy: another run is working on it "
            "(multitask_strategy='reject'); try again when it ends, or pass "
            "multitask_strategy='enqueue' to wait for it")

    def acquire(self) -> None:
        """Take the thread, waiting (enqueue) or failing at once (reject)."""
        delay = POLL_SECONDS[0]
        while not self.try_acquire():
            if self.strategy == "reject":
                raise self.busy()
            if _held.get(self.slot) == threading.get_ident():
                raise ThreadBusyError(
                    f"thread {self.thread_id!r} is held by an unfinished run in this same Python "
                    "thread (a stream() you have not read to the end?); waiting would never end: "
                    "finish or close() that stream first")
            time.sleep(delay)
            delay = min(delay * 2, POLL_SECONDS[1])

    async def aacquire(self) -> None:
        delay = POLL_SECONDS[0]
        while not await self.atry_acquire():
            if self.strategy == "reject":
                raise self.busy()
            await asyncio.sleep(delay)
            delay = min(delay * 2, POLL_SECONDS[1])

    async def atry_acquire(self) -> bool:
        """try_acquire in a worker thread; cancelled meanwhile, it gives back what it took."""
        attempt = asyncio.ensure_future(asyncio.to_thread(self.try_acquire))
        try:
            return await asyncio.shield(attempt)
        except asyncio.CancelledError:
            if await attempt:
                await asyncio.to_thread(self.release)
            raise

    def release(self) -> None:
        try:
            with contextlib.suppress(Exception):  # a lost session holds no lock any more
                self.lock.unlock(self.key)
        finally:
            self._forget()

    def _forget(self) -> None:
        with _held_lock:
            _held.pop(self.slot, None)

    def check_answer(self, input: Any, saved: Any, graph: Any, restore: Restore) -> None:
        """Refuse Command(resume=...) when no interrupt waits for it; nothing is written."""
        if not isinstance(input, Command) or input.resume is None:
            return
        waiting = waiting_interrupts(saved)
        resume = input.resume
        by_id = isinstance(resume, dict) and resume and all(
            isinstance(k, str) and len(k) == 32 for k in resume)
        answered = sorted(set(resume) - waiting) if by_id else []
        if waiting and not answered:
            return
        if not waiting and not by_id and (asks_again(saved) or paused(graph, saved, restore)):
            return  # time travel, or a breakpoint: the next task runs and may ask again
        where = saved.checkpoint["id"] if saved is not None else "none yet"
        what = (f"interrupt(s) {', '.join(answered)} no longer wait" if answered
                else "no interrupt waits for an answer")
        raise StaleResumeError(
            f"thread {self.thread_id!r}: {what} (checkpoint {where}): it was answered already "
            "and the run moved on. Nothing was written; read graph.get_state(config) and answer "
            "what it asks now")


def asks_again(saved: Any) -> bool:
    """A checkpoint update_state made (a fork of an old question) that holds no answer yet."""
    return saved is not None and saved.metadata.get("source") in ("update", "fork") and not any(
        channel == RESUME for _, channel, _ in saved.pending_writes or [])


def paused(graph: Any, saved: Any, restore: Restore) -> bool:
    """Stopped before its next tasks (a breakpoint or a crash): a resume continues the run."""
    if saved is None:
        return False
    finished = {str(t) for t, c, _ in saved.pending_writes or [] if c not in CONTROL_WRITES}
    return any(task_id not in finished for task_id in restore(graph, saved)[3])


def waiting_interrupts(saved: Any) -> set[str]:
    """Ids of the interrupts on a checkpoint whose task has not finished (still asking)."""
    writes = (saved.pending_writes or []) if saved is not None else []
    finished = {str(t) for t, c, _ in writes if c not in CONTROL_WRITES}
    return {getattr(i, "id", None) for t, c, v in writes
            if c == INTERRUPT and str(t) not in finished for i in v}


def strategy_of(graph: Any, chosen: str | None) -> str:
    strategy = chosen or getattr(graph, "multitask_strategy", None) or DEFAULT_STRATEGY
    if strategy not in STRATEGIES:
        raise ValueError(f"multitask_strategy must be one of {STRATEGIES}, got {strategy!r}")
    return strategy


def root_thread(graph: Any, config: Any) -> tuple[Any, str, dict] | None:
    """(saver, thread id, the config the run loads) for a root run with a checkpointer."""
    conf = (config or {}).get(CONF) if isinstance(config, dict) else None
    if current_task.get(None) is not None or not isinstance(conf, dict) or TASK_ID in conf:
        return None  # a subgraph runs under its parent's claim
    saver = conf.get(CHECKPOINTER) if graph.checkpointer is None else graph.checkpointer
    if saver in (None, True, False) or conf.get("thread_id") is None:
        return None  # the run itself explains a missing thread id
    thread_id = str(conf["thread_id"])
    # a root run always runs the root graph (pregel/__init__.py: _prepare)
    checkpoint_id = None if conf.get("checkpoint_ns") else conf.get("checkpoint_id")
    load = {CONF: {"thread_id": thread_id, "checkpoint_ns": "",
                   **({"checkpoint_id": checkpoint_id} if checkpoint_id else {})}}
    return saver, thread_id, load


def claim_for(saver: Any, thread_id: str, strategy: str, lock: Any) -> Claim:
    if lock is None:
        lock = locks.NoLocks()  # a saver we do not know: guarded within this process only
    return Claim(thread_id, strategy, saver, lock)


def sync_locks(saver: Any) -> Any:
    """The saver's cross-process locks (on a closed connection: none; the run says so)."""
    if saver in _locks:
        return _locks[saver]
    try:
        return keep(saver, locks.locks_for(saver))
    except Exception:  # noqa: BLE001 - the run's first saver call reports it in plain words
        return locks.NoLocks()


async def async_locks(saver: Any) -> Any:
    if saver in _locks:
        return _locks[saver]
    try:
        path = ""
        if type(getattr(saver, "conn", None)).__module__.startswith("aiosqlite"):
            async with saver.conn.execute("PRAGMA database_list") as cursor:
                path = (await cursor.fetchone())[2]
        return keep(saver, locks.locks_for(saver, sqlite_path=path))
    except Exception:  # noqa: BLE001 - as in sync_locks
        return locks.NoLocks()


def keep(saver: Any, lock: Any) -> Any:
    """Remember a file lock per saver (found by a query); a Postgres one refers to its saver,
    which a cache keyed by the saver must not hold, and costs nothing to make per run."""
    if not isinstance(lock, locks.AdvisoryLocks):
        _locks[saver] = lock
    return lock


def guarded(stream: Callable[..., Iterator[Any]], restore: Restore
            ) -> Callable[..., Iterator[Any]]:
    """Wrap Pregel.stream: hold the thread for the whole run (see the module docstring)."""

    @functools.wraps(stream)
    def run(graph: Any, input: Any, config: Any = None, *, multitask_strategy: str | None = None,
            **kwargs: Any) -> Iterator[Any]:
        strategy = strategy_of(graph, multitask_strategy)
        found = root_thread(graph, config) if strategy != "off" else None
        if found is None:
            yield from stream(graph, input, config, **kwargs)
            return
        saver, thread_id, load = found
        claim = claim_for(saver, thread_id, strategy, sync_locks(saver))
        claim.acquire()
        try:
            if isinstance(input, Command) and input.resume is not None:
                claim.check_answer(input, saver.get_tuple(load), graph, restore)
            yield from stream(graph, input, config, **kwargs)
        finally:
            claim.release()

    return run


def aguarded(astream: Callable[..., AsyncIterator[Any]], restore: Restore
             ) -> Callable[..., AsyncIterator[Any]]:
    """Async twin of guarded, for Pregel.astream."""

    @functools.wraps(astream)
    async def run(graph: Any, input: Any, config: Any = None, *,
                  multitask_strategy: str | None = None, **kwargs: Any) -> AsyncIterator[Any]:
        strategy = strategy_of(graph, multitask_strategy)
        found = root_thread(graph, config) if strategy != "off" else None
        claim = None
        if found is not None:
            saver, thread_id, load = found
            claim = claim_for(saver, thread_id, strategy, await async_locks(saver))
            await claim.aacquire()
        inner = astream(graph, input, config, **kwargs)
        try:
            if claim is not None and isinstance(input, Command) and input.resume is not None:
                claim.check_answer(input, await saver.aget_tuple(load), graph, restore)
            async for chunk in inner:
                yield chunk
        finally:
            await inner.aclose()  # as ``yield from`` would: the run saves what it did
            if claim is not None:
                await asyncio.to_thread(claim.release)

    return run
