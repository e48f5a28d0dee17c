"""The harness side of the reliability tests: start children, read the log, inspect the database.

``ChildRunner`` runs crash_child.py jobs (forked from a pre-imported server, or each in a fresh
interpreter with ``RELIABILITY_FRESH=1``). ``Store`` reads what a saver really committed, by SQL,
without the saver. ``record`` keeps the printed figures (conftest.py shows them at the end and
writes them to test-artifacts/reliability.txt). Next: test_crash_resume.py.
"""

from __future__ import annotations

import contextlib
import json
import operator
import os
import select
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Callable, Iterator, NamedTuple, TypedDict

CHILD = str(Path(__file__).with_name("crash_child.py"))
ARTIFACT = Path(__file__).resolve().parents[2] / "test-artifacts" / "reliability.txt"
FIGURES: list[str] = []


def record(line: str) -> None:
    """A measured figure: printed now (pytest -s), summarised at the end, kept in the artifact."""
    print(line)
    FIGURES.append(line)
    ARTIFACT.parent.mkdir(exist_ok=True)
    with ARTIFACT.open("a") as f:
        f.write(line + "\n")


# --- running children ---------------------------------------------------------------------------
class Outcome(NamedTuple):
    """How a child ended: killed by a signal (0 if not) or its exit code."""

    pid: int
    signal: int
    code: int | None

    @property
    def finished(self) -> bool:
        return self.signal == 0 and self.code == 0

    @property
    def killed(self) -> bool:
        return self.signal == signal.SIGKILL


class ChildRunner:
    """Runs crash_child jobs one at a time; a job that outlives ``timeout`` fails the test."""

    def __init__(self, timeout: float = 60.0) -> None:
        self.fresh = os.environ.get("RELIABILITY_FRESH") == "1"
        self.timeout = timeout
        self.server: subprocess.Popen | None = None
        if not self.fresh:
            self.server = subprocess.Popen([sys.executable, CHILD, "--serve"], text=True,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def run(self, job: dict, until: Callable[[], int | None] | None = None) -> Outcome:
        """Run a job; ``until`` (polled) may return a pid to SIGKILL from outside."""
        if self.fresh:
            proc = subprocess.Popen([sys.executable, CHILD, json.dumps(job)])
            self._watch(lambda: proc.poll() is not None, until, job)
            proc.wait()
            rc = proc.returncode
            return Outcome(proc.pid, -rc if rc < 0 else 0, rc if rc >= 0 else None)
        self.server.stdin.write(json.dumps(job) + "\n")
        self.server.stdin.flush()
        self._watch(lambda: bool(select.select([self.server.stdout], [], [], 0)[0]), until, job)
        return Outcome(**json.loads(self.server.stdout.readline()))

    def _watch(self, done: Callable[[], bool], until: Any, job: dict) -> None:
        deadline = time.monotonic() + self.timeout
        while not done():
            if until is not None and (pid := until()):
                os.kill(pid, signal.SIGKILL)
                until = None
            if time.monotonic() > deadline:
                for pid in started_pids(job["log"])[-1:]:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                raise AssertionError(f"child hung for {self.timeout}s on job {job}")
            time.sleep(0.002)

    def close(self) -> None:
        if self.server is not None:
            self.server.stdin.close()
            self.server.wait(timeout=10)


def read_log(path: str) -> list[dict]:
    """The external log: one JSON object per line (a torn last line cannot happen: one write)."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def started_pids(path: str) -> list[int]:
    return [e["pid"] for e in read_log(path) if e["kind"] == "start"]


def segments(log: list[dict]) -> list[list[dict]]:
    """The log split per process (each starts with its 'start' line)."""
    out: list[list[dict]] = []
    for entry in log:
        if entry["kind"] == "start":
            out.append([])
        out[-1].append(entry)
    return out


# --- what the database really holds ----------------------------------------------------------
class Store:
    """Reads committed rows of one saver's tables directly (the saver is what we test)."""

    def __init__(self, kind: str, target: str) -> None:
        self.kind, self.target = kind, target

    @contextlib.contextmanager
    def _cursor(self) -> Iterator[Any]:
        if self.kind == "sqlite":
            conn = sqlite3.connect(self.target, timeout=30)
            try:
                yield conn
            finally:
                conn.close()
        else:
            import psycopg

            with psycopg.connect(self.target, autocommit=True) as conn:
                yield conn

    def rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        if self.kind == "postgres":
            sql = sql.replace("?", "%s").replace(" writes ", " checkpoint_writes ")
        with self._cursor() as conn:
            return [tuple(r) for r in conn.execute(sql, params).fetchall()]

    def execute(self, sql: str, params: tuple = ()) -> int:
        """Run one committed change (a tampering UPDATE); returns the rows it touched."""
        if self.kind == "postgres":
            sql = sql.replace("?", "%s")
        with self._cursor() as conn:
            count = conn.execute(sql, params).rowcount
            conn.commit()
        return count

    def checkpoint_ids(self, thread_id: str) -> set[str]:
        return {r[0] for r in self.rows(
            "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ?", (thread_id,))}

    def write_keys(self, thread_id: str) -> set[tuple[str, str]]:
        """(checkpoint_id, task_id) of every committed write of the thread."""
        return {(r[0], r[1]) for r in self.rows(
            "SELECT DISTINCT checkpoint_id, task_id FROM writes WHERE thread_id = ?", (thread_id,))}

    def orphan_writes(self, thread_id: str) -> int:
        """Writes whose checkpoint does not exist: a write saved before (or without) its parent."""
        return self.rows(
            "SELECT count(*) FROM writes w WHERE w.thread_id = ? AND NOT EXISTS (SELECT 1 FROM "
            "checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns "
            "AND c.checkpoint_id = w.checkpoint_id)", (thread_id,))[0][0]

    def integrity(self) -> str:
        if self.kind == "sqlite":
            return self.rows("PRAGMA integrity_check")[0][0]
        return "ok"  # the server owns its pages; the chain and orphan checks cover our rows

    def count(self, table: str, thread_id: str | None = None) -> int:
        if self.kind == "postgres" and table == "writes":
            table = "checkpoint_writes"
        where = " WHERE thread_id = ?" if thread_id is not None else ""
        return self.rows(f"SELECT count(*) FROM {table}{where}",
                         (thread_id,) if thread_id is not None else ())[0][0]

    def counts(self, thread_id: str | None = None) -> dict[str, int]:
        """Rows per table (a thread's, or all): compare before and after a refused call."""
        tables = ["checkpoints", "writes"]
        if self.kind == "postgres":
            tables.append("checkpoint_blobs")
        return {t: self.count(t, thread_id) for t in tables}


@contextlib.contextmanager
def open_saver(kind: str, target: str) -> Iterator[Any]:
    """One of our savers on the target, for checks through the public API."""
    if kind == "sqlite":
        from lgcheckpoint.checkpoint.sqlite import SqliteSaver

        with SqliteSaver.from_conn_string(target) as saver:
            yield saver
    else:
        from lgcheckpoint.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(target) as saver:
            yield saver


def chain_problems(tuples: list[Any]) -> list[str]:
    """What breaks 'one chain': newest first, each parent the next one, steps decreasing."""
    problems = []
    for newer, older in zip(tuples, tuples[1:]):
        parent = (newer.parent_config or {}).get("configurable", {}).get("checkpoint_id")
        if parent != older.config["configurable"]["checkpoint_id"]:
            problems.append(f"{newer.config['configurable']['checkpoint_id']} has parent {parent},"
                            f" not the next one {older.config['configurable']['checkpoint_id']}")
        if newer.metadata["step"] <= older.metadata["step"]:
            problems.append(f"steps not decreasing: {newer.metadata['step']} then "
                            f"{older.metadata['step']}")
    if tuples and tuples[-1].parent_config is not None:
        problems.append("the oldest checkpoint has a parent that is not listed")
    return problems


# --- a small graph for the API-level tests -----------------------------------------------------
class Small(TypedDict):
    value: int
    log: Annotated[list, operator.add]


def small_graph(saver: Any) -> Any:
    """START -> a -> b -> END over {value, log}: enough checkpoints and writes to attack."""
    from lgcheckpoint.graph import END, START, StateGraph

    builder = StateGraph(Small)
    builder.add_node("a", lambda s: {"value": s["value"] + 1, "log": ["a"]})
    builder.add_node("b", lambda s: {"value": s["value"] * 2, "log": ["b"]})
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", END)
    return builder.compile(checkpointer=saver)
