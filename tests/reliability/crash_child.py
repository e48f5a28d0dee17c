"""The process the crash harness kills: it runs (or resumes) one small graph on a real saver.

The graph has seven super-steps: ``a``, a fan-out to ``b1 b2 b3`` (run in parallel), the join
``c``, then ``d e f``. ``log`` is a reducer channel, ``value`` a plain one. Every node call appends
one fsync'd JSON line to an external log (opened ``O_APPEND``), and so does every ``put`` /
``put_writes`` the saver acknowledges, so the harness can count executions and acknowledged saves.

Kill points are *events*: a node starting, a node having logged, and every SQL statement (the
sqlite3 trace callback fires before each statement, COMMIT included; for psycopg a counting
cursor ticks before and after each ``execute``). At event ``kill_at`` the process SIGKILLs itself,
so a kill can land between an INSERT and its COMMIT. A job can also ``hold`` a node: it sleeps
there until the harness kills it from outside (the mid-step test: siblings wrote, one still runs).

Run one job in a fresh interpreter:  ``python crash_child.py '<job json>'``
or serve jobs, forking a child per job from this already-imported process (fast, and each child
still starts with nothing but imports in memory):  ``python crash_child.py --serve``.
Next: helpers.py (the harness side).
"""

from __future__ import annotations

import json
import operator
import os
import signal
import sys
import threading
import time
from typing import Annotated, Any, TypedDict

from lgcheckpoint.graph import END, START, StateGraph

FAN_OUT = ("b1", "b2", "b3")
NODES = ("a", *FAN_OUT, "c", "d", "e", "f")
INITIAL = {"value": 1, "log": []}


class State(TypedDict):
    value: int
    log: Annotated[list, operator.add]


class Job(TypedDict, total=False):
    saver: str  # "sqlite" or "postgres"
    target: str  # SQLite file path or Postgres URI
    thread_id: str
    durability: str  # "sync" or "async"
    log: str  # the external log file
    kill_at: int  # SIGKILL this process at this event (0: never)
    hold: str  # a node that sleeps until the harness kills the process
    api: str  # "sync" (invoke on SqliteSaver / PostgresSaver) or "async" (ainvoke on the a-savers)
    library: str  # "lgcheckpoint" (default) or "langgraph", the reference, for comparison
    sabotage: str  # a broken saver, to show the checks see it: "forget_pending" | "drop_writes"


# --- events and the external log ---------------------------------------------------------------
class Recorder:
    """Counts events (and dies at the chosen one); appends fsync'd lines to the log."""

    def __init__(self, log_path: str, kill_at: int) -> None:
        self.fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.kill_at, self.events, self.lock = kill_at, 0, threading.Lock()

    def tick(self, where: Any = "node") -> None:
        """One more event; at the chosen one, log where we are and die (now, or a moment later)."""
        with self.lock:
            self.events += 1
            if self.events != self.kill_at:
                return
            # odd kill points die up to 3 ms later, while the statement is in flight
            delay = (self.kill_at % 7) / 2000 if self.kill_at % 2 else 0.0
            self.log(kind="kill", at=str(where).strip()[:60], delay=delay)
            if not delay:
                os.kill(os.getpid(), signal.SIGKILL)
            threading.Timer(delay, os.kill, (os.getpid(), signal.SIGKILL)).start()

    def log(self, **fields: Any) -> None:
        os.write(self.fd, (json.dumps(fields) + "\n").encode())
        os.fsync(self.fd)  # on disk before the node goes on: the count survives the kill


REC: Recorder | None = None  # set per job (one job per process)


# --- the graph ----------------------------------------------------------------------------------
def node(name: str, hold: str | None) -> Any:
    """A node that logs its call, then updates the state (fan-out nodes only append to log)."""

    def run(state: State, config) -> dict:  # config unannotated: both runtimes pass it
        REC.tick(f"node {name}, not yet logged")
        conf = config["configurable"]
        task_id = conf.get("__lg_task_id") or conf.get("__pregel_task_id")  # ours / LangGraph's
        REC.log(kind="run", node=name, task=task_id,
                value=state["value"], pid=os.getpid())
        REC.tick(f"node {name}, logged")
        if name == hold:
            time.sleep(60)  # the harness kills us here
        if name in FAN_OUT:
            return {"log": [f"{name}:{state['value']}"]}
        return {"value": state["value"] * 3 + len(state["log"]), "log": [name]}

    return run


def build_graph(checkpointer: Any = None, hold: str | None = None,
                library: str = "lgcheckpoint") -> Any:
    if library == "langgraph":
        from langgraph.graph import StateGraph as Builder
    else:
        Builder = StateGraph
    builder = Builder(State)
    for name in NODES:
        builder.add_node(name, node(name, hold))
    builder.add_edge(START, "a")
    for b in FAN_OUT:
        builder.add_edge("a", b)
    builder.add_edge(list(FAN_OUT), "c")
    for src, dst in (("c", "d"), ("d", "e"), ("e", "f"), ("f", END)):
        builder.add_edge(src, dst)
    return builder.compile(checkpointer=checkpointer)


# --- savers that report what they acknowledged ----------------------------------------------------
def acked(saver_cls: type, sabotage: str = "") -> type:
    """The saver class, plus an fsync'd log line after every put/put_writes that returned."""

    class Acked(saver_cls):
        def get_tuple(self, config):
            found = super().get_tuple(config)
            if found and sabotage == "forget_pending":
                return found._replace(pending_writes=[])
            return found

        def put(self, config, checkpoint, metadata, new_versions):
            saved = super().put(config, checkpoint, metadata, new_versions)
            REC.log(kind="ack", verb="put", checkpoint=checkpoint["id"])
            return saved

        def put_writes(self, config, writes, task_id, task_path=""):
            if sabotage == "drop_writes":
                return
            super().put_writes(config, writes, task_id, task_path)
            REC.log(kind="ack", verb="put_writes", task=task_id,
                    checkpoint=config["configurable"]["checkpoint_id"])

        async def aput(self, config, checkpoint, metadata, new_versions):
            saved = await super().aput(config, checkpoint, metadata, new_versions)
            REC.log(kind="ack", verb="put", checkpoint=checkpoint["id"])
            return saved

        async def aput_writes(self, config, writes, task_id, task_path=""):
            if sabotage == "drop_writes":
                return
            await super().aput_writes(config, writes, task_id, task_path)
            REC.log(kind="ack", verb="put_writes", task=task_id,
                    checkpoint=config["configurable"]["checkpoint_id"])

        if hasattr(saver_cls, "put_writes_and_checkpoint"):  # ours: both in one commit
            def put_writes_and_checkpoint(self, task, config, checkpoint, metadata, new_versions):
                if sabotage == "drop_writes":
                    return self.put(config, checkpoint, metadata, new_versions)
                saved = super().put_writes_and_checkpoint(
                    task, config, checkpoint, metadata, new_versions)
                log_both(task, checkpoint)
                return saved

        if hasattr(saver_cls, "aput_writes_and_checkpoint"):
            async def aput_writes_and_checkpoint(self, task, config, checkpoint, metadata,
                                                 new_versions):
                if sabotage == "drop_writes":
                    return await self.aput(config, checkpoint, metadata, new_versions)
                saved = await super().aput_writes_and_checkpoint(
                    task, config, checkpoint, metadata, new_versions)
                log_both(task, checkpoint)
                return saved

    return Acked


def log_both(task: Any, checkpoint: dict) -> None:
    """Acknowledge a put_writes_and_checkpoint as what it stands for: put_writes, then put."""
    REC.log(kind="ack", verb="put_writes", task=task.task_id,
            checkpoint=task.config["configurable"]["checkpoint_id"])
    REC.log(kind="ack", verb="put", checkpoint=checkpoint["id"])


def open_saver(job: Job) -> Any:
    reference = job.get("library") == "langgraph"
    if job["saver"] == "sqlite":
        import sqlite3

        if reference:
            from langgraph.checkpoint.sqlite import SqliteSaver
        else:
            from lgcheckpoint.checkpoint.sqlite import SqliteSaver

        conn = sqlite3.connect(job["target"], check_same_thread=False, timeout=30)
        conn.set_trace_callback(REC.tick)  # called before each statement runs
        return acked(SqliteSaver, job.get("sabotage", ""))(conn)
    import psycopg
    from psycopg.rows import dict_row

    if reference:
        from langgraph.checkpoint.postgres import PostgresSaver
    else:
        from lgcheckpoint.checkpoint.postgres import PostgresSaver

    class CountingCursor(psycopg.Cursor):
        def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
            REC.tick(query)
            result = super().execute(query, *args, **kwargs)
            REC.tick(f"after {query}")
            return result

        def executemany(self, query: Any, *args: Any, **kwargs: Any) -> Any:
            REC.tick(query)
            result = super().executemany(query, *args, **kwargs)
            REC.tick(f"after {query}")
            return result

    conn = psycopg.Connection.connect(job["target"], autocommit=True, prepare_threshold=0,
                                      cursor_factory=CountingCursor, row_factory=dict_row)
    return acked(PostgresSaver, job.get("sabotage", ""))(conn)


async def open_async_saver(job: Job) -> Any:
    """The async twin of open_saver: AsyncSqliteSaver on aiosqlite, AsyncPostgresSaver."""
    if job["saver"] == "sqlite":
        import aiosqlite

        from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver

        conn = await aiosqlite.connect(job["target"], timeout=30)
        await conn.set_trace_callback(REC.tick)
        return acked(AsyncSqliteSaver, job.get("sabotage", ""))(conn)
    import psycopg
    from psycopg.rows import dict_row

    from lgcheckpoint.checkpoint.postgres.aio import AsyncPostgresSaver

    class CountingCursor(psycopg.AsyncCursor):
        async def execute(self, query: Any, *args: Any, **kwargs: Any) -> Any:
            REC.tick(query)
            result = await super().execute(query, *args, **kwargs)
            REC.tick(f"after {query}")
            return result

    conn = await psycopg.AsyncConnection.connect(
        job["target"], autocommit=True, prepare_threshold=0, cursor_factory=CountingCursor,
        row_factory=dict_row)
    return acked(AsyncPostgresSaver, job.get("sabotage", ""))(conn)


async def arun_job(job: Job) -> None:
    """run_job with ainvoke on an async saver."""
    saver = await open_async_saver(job)
    graph = build_graph(saver, job.get("hold"))
    config = {"configurable": {"thread_id": job["thread_id"]}}
    fresh = await saver.aget_tuple(config) is None
    result = await graph.ainvoke(INITIAL if fresh else None, config, durability=job["durability"])
    REC.log(kind="end", result=result, events=REC.events)
    await saver.conn.close()


def run_job(job: Job) -> None:
    """Start the thread, or continue it where the last process stopped; log the end."""
    global REC
    REC = Recorder(job["log"], job.get("kill_at", 0))
    REC.log(kind="start", pid=os.getpid(), kill_at=job.get("kill_at", 0))
    if job.get("api") == "async":
        import asyncio

        return asyncio.run(arun_job(job))
    saver = open_saver(job)
    graph = build_graph(saver, job.get("hold"), job.get("library", "lgcheckpoint"))
    config = {"configurable": {"thread_id": job["thread_id"]}}
    fresh = saver.get_tuple(config) is None  # killed before the input checkpoint was saved
    result = graph.invoke(INITIAL if fresh else None, config, durability=job["durability"])
    REC.log(kind="end", result=result, events=REC.events)


def serve() -> None:
    """Fork a child per job line on stdin; answer each with the child's exit status."""
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            try:
                run_job(json.loads(line))
                code = 0
            except BaseException as exc:  # noqa: BLE001 - reported to the harness, then exit 1
                print(f"child error: {exc!r}", file=sys.stderr, flush=True)
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"pid": pid, "signal": os.WTERMSIG(status) if os.WIFSIGNALED(status)
                          else 0, "code": os.WEXITSTATUS(status) if os.WIFEXITED(status)
                          else None}), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        import importlib

        for module in ("lgcheckpoint.checkpoint.postgres", "lgcheckpoint.checkpoint.sqlite",
                       "lgcheckpoint.checkpoint.postgres.aio", "lgcheckpoint.checkpoint.sqlite.aio",
                       "langgraph.graph", "langgraph.checkpoint.sqlite"):
            importlib.import_module(module)  # once, here, not in every forked child
        serve()
    else:
        run_job(json.loads(sys.argv[1]))
