"""The database goes away or fills up mid-run (issue 16, part 2).

Each fault is set off by a node, at a known point of a four-step run (a -> b -> c -> d):

- Postgres: the saver's connection is killed (``pg_terminate_backend``); the server is restarted
  (a private throwaway cluster made by this test, never the shared server).
- SQLite: the disk fills (a small tmpfs mounted by the test, as root); the file is read-only;
  another process holds the write lock longer than the busy timeout.

Every time: the run fails with a clear lgcheckpoint error (not a driver traceback from the saver's
background thread), nothing half-written is visible (one chain, no orphan writes, SQLite's
``PRAGMA integrity_check`` ok), and once the cause is gone a plain ``invoke(None, config)``
finishes with the final state of an uninterrupted run. A saver on a psycopg_pool pool recovers by
itself for the next run. Faults that need root skip loudly elsewhere and fail under CI.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import operator
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, TypedDict

import pytest

from lgcheckpoint.checkpoint.errors import StoreUnavailableError
from lgcheckpoint.checkpoint.memory import InMemorySaver
from tests.reliability.helpers import Store, chain_problems, record

PAD = 200_000  # node b writes this many characters: enough pages to meet a full disk
FAULTS: dict[str, Callable[[], None]] = {}  # node name -> what to break when it next runs
NODES = ("a", "b", "c", "d")


class Doc(TypedDict, total=False):
    value: int
    log: Annotated[list, operator.add]
    pad: str


def step(name: str) -> Callable[[Doc], Doc]:
    def run(doc: Doc) -> Doc:
        if (fault := FAULTS.pop(name, None)) is not None:
            fault()
        out: Doc = {"value": doc["value"] * 2 + 1, "log": [name]}
        if name == "b":
            out["pad"] = "x" * PAD
        return out
    return run


def chain_graph(saver: Any) -> Any:
    from lgcheckpoint.graph import END, START, StateGraph

    builder = StateGraph(Doc)
    for name in NODES:
        builder.add_node(name, step(name))
    builder.add_edge(START, "a")
    for first, then in itertools.pairwise(NODES):
        builder.add_edge(first, then)
    builder.add_edge("d", END)
    return builder.compile(checkpointer=saver)


EXPECTED = chain_graph(InMemorySaver()).invoke({"value": 1}, {"configurable": {"thread_id": "x"}})


def must_be_root(what: str) -> None:
    if os.geteuid() != 0:
        reason = f"NOT ROOT: cannot {what}; this fault runs as root (CI does)"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)


def run_into_fault(graph: Any, config: dict, durability: str) -> BaseException:
    """Run the thread from its input; the fault must stop it with an error."""
    with pytest.raises(Exception) as caught:  # the type is checked by the caller
        graph.invoke({"value": 1}, config, durability=durability)
    return caught.value


def assert_clear(error: BaseException, kind: type, *words: str) -> None:
    """An lgcheckpoint error (or the plain-words one the saver already had), saying what to do."""
    assert isinstance(error, kind), f"{type(error).__module__}.{type(error).__name__}: {error}"
    assert type(error).__module__.startswith("lgcheckpoint") or kind in (PermissionError,
                                                                         TimeoutError)
    for word in words:
        assert word in str(error), (word, str(error))


def assert_intact(kind: str, target: str, thread: str) -> int:
    """One chain, no write without its checkpoint, a sound file; returns the checkpoint count."""
    store = Store(kind, target)
    assert store.integrity() == "ok"
    assert store.orphan_writes(thread) == 0
    saver_cm = sqlite_saver(target) if kind == "sqlite" else postgres_saver(target)
    with saver_cm as saver:
        history = list(saver.list({"configurable": {"thread_id": thread}}))
        assert chain_problems(history) == [], chain_problems(history)
        for saved in history:  # every checkpoint reads back whole
            assert saver.get_tuple(saved.config).checkpoint["id"] == saved.checkpoint["id"]
    return len(history)


def assert_resumes(graph: Any, config: dict) -> float:
    started = time.monotonic()
    final = graph.invoke(None, config)
    assert final == EXPECTED, {k: (str(v)[:40]) for k, v in final.items()}
    return (time.monotonic() - started) * 1000


@contextlib.contextmanager
def sqlite_saver(path: str, busy_ms: int | None = None):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    with SqliteSaver.from_conn_string(path) as saver:
        if busy_ms is not None:
            saver.setup()
            saver.conn.execute(f"PRAGMA busy_timeout={busy_ms}")
        yield saver


@contextlib.contextmanager
def postgres_saver(uri: str):
    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    with PostgresSaver.from_conn_string(uri) as saver:
        yield saver


# --- Postgres: a connection killed, a server restarted ------------------------------------------
def kill_backends(uri: str) -> None:
    """pg_terminate_backend every other session on the test's database (the saver's among them)."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = "
                      "current_database() AND pid <> pg_backend_pid()")


@pytest.mark.parametrize("durability", ["async", "sync"])
@pytest.mark.parametrize("conn_kind", ["connection", "pool"])
def test_postgres_connection_killed_mid_run(postgres_uri, conn_kind, durability):
    postgres_fault(postgres_uri, conn_kind, durability, "connection killed",
                   lambda: kill_backends(postgres_uri))


def wait_until_saved(uri: str, thread: str, count: int) -> None:
    """Until the thread has ``count`` checkpoints stored: with durability "async" the steps
    before the fault may still be queued on a loaded machine, and a thread with nothing stored
    has nothing to resume from."""
    import psycopg

    with psycopg.connect(uri, autocommit=True) as conn:
        for _ in range(1000):
            stored = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s",
                                  (thread,)).fetchone()[0]
            if stored >= count:
                return
            time.sleep(0.01)
    raise AssertionError(f"{count} checkpoints of {thread} were not stored within 10 s")


def postgres_fault(uri: str, conn_kind: str, durability: str, what: str,
                   fault: Callable[[], None]) -> None:
    from psycopg_pool import ConnectionPool

    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    with postgres_saver(uri) as saver:
        saver.setup()
    thread = f"pg-fault-{uuid.uuid4().hex[:8]}"
    config = {"configurable": {"thread_id": thread}}
    pool = ConnectionPool(uri, kwargs={"autocommit": True}, min_size=2, open=True) \
        if conn_kind == "pool" else None
    try:
        opened = contextlib.nullcontext(PostgresSaver(pool)) if pool else postgres_saver(uri)
        with opened as saver:
            FAULTS["c"] = lambda: (wait_until_saved(uri, thread, 3), fault())
            error = run_into_fault(chain_graph(saver), config, durability)
            assert_clear(error, StoreUnavailableError, "Postgres connection failed",
                         "graph.invoke(None, config)")
            count = assert_intact("postgres", uri, thread)
            if pool is not None:  # the same saver, the next run: the pool recovered by itself
                ms = assert_resumes(chain_graph(saver), config)
                fault()  # again, while the saver is idle: its next run must not even notice
                other = {"configurable": {"thread_id": thread + "-next"}}
                assert chain_graph(saver).invoke({"value": 1}, other) == EXPECTED
        if pool is None:  # one Connection died with the server session: a new saver resumes
            with postgres_saver(uri) as fresh:
                ms = assert_resumes(chain_graph(fresh), config)
    finally:
        if pool is not None:
            pool.close()
    record(f"fault postgres {what} mid-run ({conn_kind}, durability {durability}): "
           f"{type(error).__name__}; {count} checkpoints intact, 0 orphan writes; resumed to the "
           f"uninterrupted final state in {ms:.0f} ms"
           + ("; the same pooled saver ran on, and its next run after the same fault while "
              "idle succeeded" if pool else ""))


def private_cluster_binaries() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not found:
        reason = "NO POSTGRES BINARIES (/usr/lib/postgresql/*/bin/initdb): cannot make a private " \
                 "cluster to restart"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    return str(Path(found[-1]).parent)


class PrivateCluster:
    """A throwaway Postgres cluster on a free port: ours to restart (never the shared server)."""

    def __init__(self) -> None:
        self.bin = private_cluster_binaries()
        self.dir = tempfile.mkdtemp(prefix="lgc-pg-")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.uri = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        self.as_owner: list[str] = []
        if os.geteuid() == 0:  # initdb refuses root: run the cluster as the postgres user
            shutil.chown(self.dir, "postgres")
            self.as_owner = ["runuser", "-u", "postgres", "--"]
        self.run("initdb", "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust", "-N")
        self.pg_ctl("start")

    def run(self, program: str, *args: str) -> None:
        subprocess.run([*self.as_owner, f"{self.bin}/{program}", *args], check=True,
                       capture_output=True, timeout=120)

    def pg_ctl(self, action: str, *extra: str) -> None:
        self.run("pg_ctl", "-D", f"{self.dir}/data", "-w", "-l", f"{self.dir}/log", "-o",
                 f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off",
                 *extra, action)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.pg_ctl("stop", "-m", "immediate")
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def private_postgres():
    cluster = PrivateCluster()
    try:
        yield cluster
    finally:
        cluster.close()


@pytest.mark.parametrize("conn_kind", ["connection", "pool"])
def test_postgres_server_restarted_mid_run(private_postgres, conn_kind):
    postgres_fault(private_postgres.uri, conn_kind, "async", "server restarted",
                   lambda: private_postgres.pg_ctl("restart", "-m", "fast"))


# --- SQLite: a full disk, a read-only file, a lock held too long ---------------------------------
@pytest.fixture
def small_disk(tmp_path):
    must_be_root("mount a small tmpfs to fill")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount)], check=True)
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path, path: str, thread: str) -> Path:
    """Write a file until the disk says it is full; deleting it is the cure. With durability
    "async" the first checkpoints may still be on their way: wait for one, or there is nothing
    to resume from (that is the mode's promise, not a fault)."""
    deadline = time.monotonic() + 10
    while not Store("sqlite", path).checkpoint_ids(thread) and time.monotonic() < deadline:
        time.sleep(0.01)
    filler = folder / "filler"
    with open(filler, "wb", buffering=0) as f, contextlib.suppress(OSError):
        while True:
            f.write(b"\0" * 65536)
    return filler


@pytest.mark.parametrize("durability", ["async", "sync"])
def test_sqlite_disk_fills_mid_run(small_disk, durability):
    path = str(small_disk / "cp.sqlite")
    thread, fillers = f"full-{durability}", []
    config = {"configurable": {"thread_id": thread}}
    with sqlite_saver(path) as saver:
        FAULTS["b"] = lambda: fillers.append(fill(small_disk, path, thread))
        error = run_into_fault(chain_graph(saver), config, durability)
    assert_clear(error, StoreUnavailableError, "full", "graph.invoke(None, config)")
    count = assert_intact("sqlite", path, thread)
    fillers[0].unlink()  # the cause goes away
    with sqlite_saver(path) as saver:
        ms = assert_resumes(chain_graph(saver), config)
    record(f"fault sqlite disk full mid-run (3 MB tmpfs, durability {durability}): "
           f"{type(error).__name__}; integrity_check ok, {count} checkpoints intact; resumed "
           f"after freeing space in {ms:.0f} ms")


@pytest.fixture
def read_only_view(tmp_path):
    """(writable folder, the same folder read-only): a bind mount as root, chmod otherwise."""
    rw, ro = tmp_path / "rw", tmp_path / "ro"
    rw.mkdir()
    if os.geteuid() == 0:  # root writes through chmod, so the file system must refuse
        ro.mkdir()
        subprocess.run(["mount", "--bind", str(rw), str(ro)], check=True)
        subprocess.run(["mount", "-o", "remount,bind,ro", str(ro)], check=True)
        yield rw, ro, lambda: None
        subprocess.run(["umount", "-l", str(ro)], check=False)
    else:
        yield rw, rw, lambda: (os.chmod(rw / "cp.sqlite", 0o444), os.chmod(rw, 0o555))
        os.chmod(rw, 0o755)


def test_sqlite_file_read_only(read_only_view):
    rw, ro, lock_down = read_only_view
    thread = "read-only"
    config = {"configurable": {"thread_id": thread}}
    with sqlite_saver(str(rw / "cp.sqlite")) as saver:  # a first step, then the run stops
        FAULTS["b"] = lambda: (_ for _ in ()).throw(KeyboardInterrupt("the user pressed ^C"))
        with pytest.raises(KeyboardInterrupt):
            chain_graph(saver).invoke({"value": 1}, config, durability="sync")
    lock_down()
    before = Store("sqlite", str(rw / "cp.sqlite")).counts(thread)
    with sqlite_saver(str(ro / "cp.sqlite")) as saver, pytest.raises(Exception) as caught:
        chain_graph(saver).invoke(None, config)
    assert_clear(caught.value, PermissionError, "read-only", "writable")
    if os.geteuid() != 0:
        os.chmod(rw, 0o755)
        os.chmod(rw / "cp.sqlite", 0o644)
    assert Store("sqlite", str(rw / "cp.sqlite")).counts(thread) == before
    count = assert_intact("sqlite", str(rw / "cp.sqlite"), thread)
    with sqlite_saver(str(rw / "cp.sqlite")) as saver:  # the same file, writable again
        ms = assert_resumes(chain_graph(saver), config)
    record(f"fault sqlite read-only file: {type(caught.value).__name__} on the first access, "
           f"nothing changed, integrity_check ok ({count} checkpoints); resumed on the writable "
           f"file in {ms:.0f} ms")


LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
"""


def test_sqlite_write_lock_held_longer_than_the_timeout(tmp_path):
    path = str(tmp_path / "cp.sqlite")
    thread = "locked"
    config = {"configurable": {"thread_id": thread}}
    lockers: list[subprocess.Popen] = []

    def hold_the_lock() -> None:
        proc = subprocess.Popen([sys.executable, "-c", LOCKER, path], text=True,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdout.readline().strip() == "locked"
        lockers.append(proc)

    try:
        with sqlite_saver(path, busy_ms=500) as saver:
            FAULTS["b"] = hold_the_lock
            started = time.monotonic()
            error = run_into_fault(chain_graph(saver), config, "async")
            waited = time.monotonic() - started
        assert_clear(error, TimeoutError, "database is locked", "busy timeout")
    finally:
        for proc in lockers:  # the other process lets go
            proc.communicate("\n", timeout=10)
    count = assert_intact("sqlite", path, thread)
    with sqlite_saver(path) as saver:
        ms = assert_resumes(chain_graph(saver), config)
    record(f"fault sqlite write lock held by another process > busy timeout (0.5 s): "
           f"{type(error).__name__} after {waited:.1f} s, integrity_check ok ({count} "
           f"checkpoints); resumed after it let go in {ms:.0f} ms")
