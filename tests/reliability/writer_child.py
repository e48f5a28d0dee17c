"""The concurrency workload: graph runs on a worker's own thread and on one thread shared by all.

Each worker loops for a bounded time: a run on its own thread_id, then a run on the shared one
(so runs of different workers interleave on it). The savers record every put / put_writes that
returned (``acked``) so the test can check each one is in the database afterwards.
Used in-process by test_concurrency.py and as a script for the two-process test:
``python writer_child.py KIND TARGET PREFIX SECONDS THREADS FIRST_WORKER OUT.json``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # as a script: the repo root

from tests.reliability.helpers import small_graph  # noqa: E402

Key = tuple  # ("put", thread, checkpoint) or ("write", thread, checkpoint, task)


def recording(saver_cls: type) -> type:
    """The saver class, adding to ``self.acked`` each put / put_writes that returned."""

    class Recording(saver_cls):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.acked: set[Key] = set()  # set.add is atomic; sync and async verbs may both record

        def _put_key(self, config: dict, checkpoint: dict) -> Key:
            return ("put", config["configurable"]["thread_id"], checkpoint["id"])

        def _write_key(self, config: dict, task_id: str) -> Key:
            conf = config["configurable"]
            return ("write", conf["thread_id"], conf["checkpoint_id"], task_id)

        def put(self, config, checkpoint, metadata, new_versions):
            saved = super().put(config, checkpoint, metadata, new_versions)
            self.acked.add(self._put_key(config, checkpoint))
            return saved

        def put_writes(self, config, writes, task_id, task_path=""):
            super().put_writes(config, writes, task_id, task_path)
            self.acked.add(self._write_key(config, task_id))

        async def aput(self, config, checkpoint, metadata, new_versions):
            saved = await super().aput(config, checkpoint, metadata, new_versions)
            self.acked.add(self._put_key(config, checkpoint))
            return saved

        async def aput_writes(self, config, writes, task_id, task_path=""):
            await super().aput_writes(config, writes, task_id, task_path)
            self.acked.add(self._write_key(config, task_id))

        if hasattr(saver_cls, "put_writes_and_checkpoint"):  # ours: both in one commit
            def put_writes_and_checkpoint(self, task, config, checkpoint, metadata, new_versions):
                saved = super().put_writes_and_checkpoint(
                    task, config, checkpoint, metadata, new_versions)
                self.acked.add(self._write_key(task.config, task.task_id))
                self.acked.add(self._put_key(config, checkpoint))
                return saved

        if hasattr(saver_cls, "aput_writes_and_checkpoint"):
            async def aput_writes_and_checkpoint(self, task, config, checkpoint, metadata,
                                                 new_versions):
                saved = await super().aput_writes_and_checkpoint(
                    task, config, checkpoint, metadata, new_versions)
                self.acked.add(self._write_key(task.config, task.task_id))
                self.acked.add(self._put_key(config, checkpoint))
                return saved

    return Recording


def work(saver: Any, prefix: str, worker: int, seconds: float, errors: list) -> int:
    """Run graphs until the deadline; returns how many runs finished."""
    graph, runs = small_graph(saver), 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for thread_id in (f"{prefix}-own-{worker}", f"{prefix}-shared"):
            try:
                out = graph.invoke({"value": runs, "log": []},
                                   {"configurable": {"thread_id": thread_id}})
                assert out["value"] == (runs + 1) * 2, out
                runs += 1
            except Exception as exc:  # noqa: BLE001 - every error is counted, none may happen
                errors.append(f"worker {worker} on {thread_id}: {exc!r}")
    return runs


async def awork(saver: Any, prefix: str, worker: int, seconds: float, errors: list) -> int:
    """Async twin of work (ainvoke on an async saver)."""
    graph, runs = small_graph(saver), 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for thread_id in (f"{prefix}-own-{worker}", f"{prefix}-shared"):
            try:
                out = await graph.ainvoke({"value": runs, "log": []},
                                          {"configurable": {"thread_id": thread_id}})
                assert out["value"] == (runs + 1) * 2, out
                runs += 1
            except Exception as exc:  # noqa: BLE001
                errors.append(f"async worker {worker} on {thread_id}: {exc!r}")
    return runs


def sync_saver(kind: str, target: str) -> Any:
    """A recording saver with its own connection (SQLite) or a pool (Postgres)."""
    if kind == "sqlite":
        import sqlite3

        from lgcheckpoint.checkpoint.sqlite import SqliteSaver

        return recording(SqliteSaver)(sqlite3.connect(target, check_same_thread=False, timeout=30))
    from psycopg_pool import ConnectionPool

    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    pool = ConnectionPool(target, min_size=1, max_size=8, open=True,
                          kwargs={"autocommit": True, "prepare_threshold": 0})
    return recording(PostgresSaver)(pool)


def close(saver: Any) -> None:
    saver.conn.close()


def run_threads(kind: str, target: str, prefix: str, seconds: float, threads: int,
                first: int = 0) -> tuple[set, list, int]:
    """``threads`` workers in this process (SQLite: a connection each; Postgres: one pool)."""
    savers = [sync_saver(kind, target) for _ in range(threads if kind == "sqlite" else 1)]
    errors: list[str] = []
    runs: list[int] = []
    workers = [threading.Thread(target=lambda i=i: runs.append(
        work(savers[i % len(savers)], prefix, first + i, seconds, errors))) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    acked = set().union(*(s.acked for s in savers))
    for s in savers:
        close(s)
    return acked, errors, sum(runs)


async def run_tasks(saver: Any, prefix: str, seconds: float, tasks: int) -> tuple[list, int]:
    errors: list[str] = []
    runs = await asyncio.gather(*(awork(saver, prefix, i, seconds, errors) for i in range(tasks)))
    return errors, sum(runs)


if __name__ == "__main__":
    kind, target, prefix, seconds, threads, first, out = sys.argv[1:]
    acked, errors, runs = run_threads(kind, target, prefix, float(seconds), int(threads),
                                      int(first))
    Path(out).write_text(json.dumps({"acked": sorted(acked), "errors": errors, "runs": runs}))
