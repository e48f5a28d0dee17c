"""Many writers at once on one SQLite file and on Postgres: no error, nothing lost, list() sane.

Writers run graphs for a bounded time, each on its own thread and all on one shared thread
(different runs interleaving there): 8 threads in one process, 2 processes at once, and
asyncio.gather of many ainvoke on AsyncSqliteSaver / AsyncPostgresSaver. Every put / put_writes
a writer saw return must be in the database afterwards, and nothing else; a busy SQLite file
makes writers wait, never fail with "database is locked".
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.reliability import writer_child
from tests.reliability.helpers import Store, chain_problems, open_saver, record

SECONDS = 1.5  # per scenario; eight of them keep the file near ten seconds
CHECKPOINTS_PER_RUN = 4  # input, then the steps of START, a and b


@pytest.fixture(params=["sqlite", "postgres"])
def db(request, tmp_path) -> tuple[str, str]:
    kind = request.param
    target = (request.getfixturevalue("postgres_uri") if kind == "postgres"
              else str(tmp_path / "busy.sqlite"))
    with open_saver(kind, target) as saver:
        saver.setup()
    return kind, target


def verify(kind: str, target: str, prefix: str, acked: set, errors: list, runs: int) -> str:
    """No error, every acknowledged save present and nothing more, every thread's list sane."""
    assert errors == [], errors[:5]
    store = Store(kind, target)
    threads = {key[1] for key in acked}
    assert all(t.startswith(prefix) for t in threads)
    present = {("put", t, c) for t in threads for c in store.checkpoint_ids(t)}
    present |= {("write", t, c, task) for t in threads for c, task in store.write_keys(t)}
    lost = acked - present
    assert not lost, f"acknowledged but missing: {sorted(lost)[:5]}"
    assert present == acked, f"rows nobody acknowledged: {sorted(present - acked)[:5]}"
    puts = sum(1 for key in acked if key[0] == "put")
    assert puts == CHECKPOINTS_PER_RUN * runs
    with open_saver(kind, target) as saver:
        for thread_id in threads:
            history = list(saver.list({"configurable": {"thread_id": thread_id}}))
            assert not tree_problems(history), (thread_id, tree_problems(history)[:3])
            if "-own-" in thread_id:  # one writer: one chain
                assert not chain_problems(history), (thread_id, chain_problems(history)[:3])
    return (f"{runs} runs, {puts} puts + {len(acked) - puts} put_writes acknowledged, "
            "0 lost, 0 errors")


def tree_problems(history: list[Any]) -> list[str]:
    """Newest first, ids unique, every parent listed and exactly one step older."""
    ids = [t.config["configurable"]["checkpoint_id"] for t in history]
    steps = dict(zip(ids, (t.metadata["step"] for t in history)))
    problems = [] if ids == sorted(set(ids), reverse=True) else ["not newest first / duplicates"]
    for tup in history:
        if tup.parent_config is None:
            continue
        parent = tup.parent_config["configurable"]["checkpoint_id"]
        if steps.get(parent) != tup.metadata["step"] - 1:
            problems.append(f"{tup.config['configurable']['checkpoint_id']}: parent {parent} "
                            f"has step {steps.get(parent)}, not {tup.metadata['step'] - 1}")
    return problems


def test_eight_threads_in_one_process(db):
    kind, target = db
    prefix = f"threads-{uuid.uuid4().hex[:8]}"
    acked, errors, runs = writer_child.run_threads(kind, target, prefix, SECONDS, 8)
    record(f"concurrency {kind} 8 threads x {SECONDS}s: " + verify(kind, target, prefix, acked,
                                                                    errors, runs))


def test_two_processes_at_once(db, tmp_path):
    kind, target = db
    prefix = f"procs-{uuid.uuid4().hex[:8]}"
    outs = [tmp_path / f"writer-{i}.json" for i in range(2)]
    procs = [subprocess.Popen([sys.executable, writer_child.__file__, kind, target, prefix,
                               str(SECONDS), "2", str(i * 2), str(out)])
             for i, out in enumerate(outs)]
    for proc in procs:
        assert proc.wait(timeout=60) == 0
    results = [json.loads(Path(out).read_text()) for out in outs]
    acked = {tuple(key) for r in results for key in r["acked"]}
    errors = [e for r in results for e in r["errors"]]
    record(f"concurrency {kind} 2 processes x 2 threads x {SECONDS}s: " + verify(
        kind, target, prefix, acked, errors, sum(r["runs"] for r in results)))


async def test_async_saver_under_gather(db):
    kind, target = db
    if kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver as Saver
    else:
        from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver as Saver
    prefix = f"async-{uuid.uuid4().hex[:8]}"
    async with writer_child.recording(Saver).from_conn_string(target) as saver:
        errors, runs = await writer_child.run_tasks(saver, prefix, SECONDS, 16)
        acked = set(saver.acked)
    record(f"concurrency {kind} async, 16 tasks x {SECONDS}s: " + verify(
        kind, target, prefix, acked, errors, runs))


async def test_async_saver_calls_under_gather(db):
    """200 put_writes of different tasks on one checkpoint at once: all 200 land."""
    import asyncio

    from lgcheckpoint.checkpoint.base import empty_checkpoint
    from lgcheckpoint.checkpoint.id import uuid6

    kind, target = db
    if kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver as Saver
    else:
        from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver as Saver
    thread_id = f"calls-{uuid.uuid4().hex[:8]}"
    async with Saver.from_conn_string(target) as saver:
        config = await saver.aput({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}},
                                  {**empty_checkpoint(), "id": str(uuid6())}, {"step": -1}, {})
        await asyncio.gather(*(saver.aput_writes(config, [("value", i), ("log", [i])], f"task-{i}")
                               for i in range(200)))
        saved = await saver.aget_tuple(config)
    assert len(saved.pending_writes) == 400
    assert {t for t, _, _ in saved.pending_writes} == {f"task-{i}" for i in range(200)}
