"""What one subprocess of bench/scale.py measures: one library, one sweep, one size.

    python bench/scale_work.py '{"sweep": "thread", "package": "lgcheckpoint", ...}'

prints one JSON object {metric: seconds (or bytes, or steps/s)}. Every sweep builds its data
fast through the saver API (``put`` / ``put_writes`` with the commit flush switched off while
building: ``PRAGMA synchronous=OFF`` on SQLite, ``SET synchronous_commit=off`` on Postgres),
switches durability back on, then times what a user does. Each timing is the median of a few
repetitions after ``gc.collect(); gc.freeze()``. Next: bench/scale.py (the driver).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import operator
import os
import statistics
import sys
import time
import uuid
from typing import Annotated, Any, TypedDict

TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def lib(package: str, module: str, name: str) -> Any:
    """``package.module.name`` for either library (the same code drives both)."""
    return getattr(__import__(f"{package}.{module}", fromlist=[name]), name)


WALL, CPU = time.perf_counter, time.process_time


def timed(fn, repeats: int = 5, clock=WALL) -> float:
    """Median seconds of ``repeats`` calls of ``fn``.

    ``clock=CPU`` (this process's CPU time, all threads) where the library does all the work
    in-process (InMemory, no saver, SQLite reads): other load on the machine then hurts less.
    Wall time wherever a commit waits for the disk or Postgres does the work.
    """
    gc.collect()
    gc.freeze()
    times = []
    for _ in range(repeats):
        started = clock()
        fn()
        times.append(clock() - started)
    return statistics.median(times)


# --- savers: open one of a kind, flush off while building, on while timing ----------------------
@contextlib.contextmanager
def open_saver(package: str, kind: str, where: str):
    if kind == "memory":
        yield lib(package, "checkpoint.memory", "InMemorySaver")()
    elif kind == "sqlite":
        with lib(package, "checkpoint.sqlite", "SqliteSaver").from_conn_string(where) as saver:
            saver.setup()
            yield saver
    else:
        with lib(package, "checkpoint.postgres", "PostgresSaver").from_conn_string(where) as saver:
            saver.setup()
            yield saver


def durable(saver: Any, kind: str, on: bool) -> None:
    """Switch the commit flush (fsync / WAL flush) on or off for this saver's connection."""
    if kind == "sqlite":
        saver.conn.execute(f"PRAGMA synchronous={'FULL' if on else 'OFF'}")
    elif kind == "postgres":
        saver.conn.execute(f"SET synchronous_commit = {'on' if on else 'off'}")


def storage_bytes(saver: Any, kind: str, where: str) -> int | None:
    if kind == "sqlite":
        saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return os.path.getsize(where)
    if kind == "postgres":
        return total_relation_size(saver.conn)
    return None


def total_relation_size(conn: Any) -> int:
    with conn.cursor() as cur:
        cur.execute("SELECT " + " + ".join(f"pg_total_relation_size('{t}')" for t in TABLES))
        row = cur.fetchone()
    return int(row[0] if isinstance(row, tuple) else next(iter(row.values())))


# --- graphs ------------------------------------------------------------------------------------
class Counter(TypedDict):
    n: int


def counter_graph(package: str, saver: Any, loop_to: int | None = None):
    """START -> inc -> END; with ``loop_to``, inc loops until n reaches it (one step per turn)."""
    graph = lib(package, "graph", "StateGraph")(Counter)
    graph.add_node("inc", lambda s: {"n": s["n"] + 1})
    graph.add_edge(lib(package, "graph", "START"), "inc")
    end = lib(package, "graph", "END")
    if loop_to is None:
        graph.add_edge("inc", end)
    else:
        graph.add_conditional_edges("inc", lambda s: "inc" if s["n"] < loop_to else end)
    return graph.compile(checkpointer=saver)


def thread_config(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def build_thread(package: str, saver: Any, graph: Any, thread_id: str, length: int,
                 extra_metadata: dict | None = None, template: Any = None) -> Any:
    """A thread of ``length`` checkpoints shaped like the counter graph's, written directly.

    One real invoke gives the shape (or ``template``, the head of a thread built before); each
    further checkpoint changes ``n`` (a new version, as a step would) and carries one task's
    write, as every checkpoint of a real thread does. Returns the head, a template for the next.
    """
    config = thread_config(thread_id)  # a new thread: its first put has no parent
    if template is None:
        graph.invoke({"n": 0}, config)
        template = saver.get_tuple(config)
        config, length = template.config, length - 2  # the invoke wrote two (input, inc)
    checkpoint, uuid6 = template.checkpoint, lib(package, "checkpoint.base.id", "uuid6") \
        if package == "langgraph" else lib(package, "checkpoint.id", "uuid6")
    versions = dict(checkpoint["channel_versions"])
    for step in range(length):
        versions["n"] = saver.get_next_version(versions["n"], None)
        new = {**checkpoint, "id": str(uuid6(clock_seq=step % 16384)),
               "channel_values": {**checkpoint["channel_values"], "n": step},
               "channel_versions": dict(versions)}
        metadata = {"source": "loop", "step": step + 2, "parents": {}, **(extra_metadata or {})}
        if config["configurable"].get("checkpoint_id"):
            saver.put_writes(config, [("n", step)], str(uuid.uuid4()))
        config = saver.put(config, new, metadata, {"n": versions["n"]})
    return saver.get_tuple(config)


# --- sweeps ------------------------------------------------------------------------------------
def sweep_thread(spec: dict) -> dict:
    """A thread of ``size`` checkpoints: one more invoke, state, history, filter, delete, size."""
    package, kind, size, where = spec["package"], spec["saver"], spec["size"], spec["where"]
    with open_saver(package, kind, where) as saver:
        graph = counter_graph(package, saver)
        durable(saver, kind, False)
        build_thread(package, saver, graph, "long", size)
        durable(saver, kind, True)
        config = thread_config("long")
        write = CPU if kind == "memory" else WALL
        read = WALL if kind == "postgres" else CPU
        out = {
            "invoke": timed(lambda: graph.invoke({"n": 1}, config, durability="sync"), 5, write),
            "get_state": timed(lambda: graph.get_state(config), 9, read),
            "history_10": timed(lambda: list(graph.get_state_history(config, limit=10)), 9, read),
            # a thread without its namespace, as users often pass it: ten rows, newest first
            "list_10": timed(lambda: list(saver.list(
                {"configurable": {"thread_id": "long"}}, limit=10)), 9, read),
            "list_filter": timed(
                lambda: list(saver.list(config, filter={"step": size // 2})), 3, read),
            "history_all": timed(lambda: list(graph.get_state_history(config)), 1, read),
            "bytes": storage_bytes(saver, kind, where),
        }
        out["delete_thread"] = timed(lambda: saver.delete_thread("long"), 1, write)
        return out


def sweep_threads(spec: dict) -> dict:
    """``size`` threads of 3 checkpoints: a head lookup and a filter across all threads."""
    package, kind, size, where = spec["package"], spec["saver"], spec["size"], spec["where"]
    with open_saver(package, kind, where) as saver:
        graph = counter_graph(package, saver)
        durable(saver, kind, False)
        template = None
        for i in range(size):  # one real invoke for the shape, then puts only
            template = build_thread(package, saver, graph, f"t{i}", 3, {"user": f"u{i}"},
                                    template)
        durable(saver, kind, True)
        picks = iter([thread_config(f"t{(i * 7919) % size}") for i in range(10_000)])
        read = WALL if kind == "postgres" else CPU
        return {
            "get_tuple": timed(lambda: saver.get_tuple(next(picks)), 51, read),
            "list_filter": timed(lambda: list(saver.list(None, filter={"user": f"u{size // 2}"})),
                                 3, read),
        }


def sweep_fanout(spec: dict) -> dict:
    """One step of ``size`` Send tasks (each appends to a list): seconds per task."""
    package, size = spec["package"], spec["size"]

    class Fan(TypedDict):
        results: Annotated[list, operator.add]

    Send = lib(package, "types", "Send")
    graph = lib(package, "graph", "StateGraph")(Fan)
    graph.add_node("work", lambda x: {"results": [x]})
    graph.add_conditional_edges(lib(package, "graph", "START"),
                                lambda s: [Send("work", i) for i in range(size)])
    with open_saver(package, "memory", "") as saver:
        compiled = graph.compile(checkpointer=saver)
        compiled.invoke({"results": []}, thread_config("warm"))
        threads = iter(range(1000))
        per_invoke = timed(lambda: compiled.invoke({"results": []},
                                                   thread_config(f"f{next(threads)}")), 5, CPU)
    return {"per_task": per_invoke / size}


def sweep_width(spec: dict) -> dict:
    """``size`` channels, one changed per step: seconds per super-step (no saver, InMemory)."""
    steps = 20 if spec.get("quick") else 50
    return {kind: wide_step(spec["package"], spec["size"], kind, steps)
            for kind in ("none", "memory")}


def wide_step(package: str, size: int, kind: str, steps: int = 50) -> float:
    """CPU seconds per step of a loop that changes c0 of ``size`` int channels."""
    Wide = TypedDict("Wide", {f"c{i}": int for i in range(size)})
    graph = lib(package, "graph", "StateGraph")(Wide)
    graph.add_node("inc", lambda s: {"c0": s["c0"] + 1})
    graph.add_edge(lib(package, "graph", "START"), "inc")
    end = lib(package, "graph", "END")
    graph.add_conditional_edges("inc", lambda s: "inc" if s["c0"] < steps else end)
    saver = lib(package, "checkpoint.memory", "InMemorySaver")() if kind == "memory" else None
    compiled = graph.compile(checkpointer=saver)
    start = {f"c{i}": 0 for i in range(size)}
    threads = iter(range(1000))

    def run():
        config = {**thread_config(f"w{next(threads)}"), "recursion_limit": steps + 10}
        compiled.invoke(start, config)

    run()
    return timed(run, 5, CPU) / steps


def sweep_workers(spec: dict) -> dict:
    """One of several processes: counter loops on its own threads for ``seconds`` after "go".

    It says "ready" once imported, connected and warm, then waits for the driver's "go" on stdin,
    so slow imports on a loaded machine do not eat into the measured window.
    """
    package, where = spec["package"], spec["where"]
    with open_saver(package, "postgres", where) as saver:
        graph = counter_graph(package, saver, loop_to=20)
        graph.invoke({"n": 0}, thread_config(uuid.uuid4().hex), durability="sync")  # warm
        print("ready", flush=True)
        sys.stdin.readline()
        steps, started = 0, time.perf_counter()
        while time.perf_counter() < started + spec["seconds"]:
            graph.invoke({"n": 0}, thread_config(uuid.uuid4().hex), durability="sync")
            steps += 20
        return {"steps": steps, "elapsed": time.perf_counter() - started}


def sweep_concurrent(spec: dict) -> dict:
    """``size`` concurrent ainvoke (10 steps each) on one AsyncPostgresSaver over a pool."""
    package, size, where = spec["package"], spec["size"], spec["where"]
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    async def main() -> float:
        kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}
        async with AsyncConnectionPool(where, min_size=4, max_size=4, kwargs=kwargs,
                                       open=False) as pool:
            saver = lib(package, "checkpoint.postgres.aio", "AsyncPostgresSaver")(pool)
            await saver.setup()
            graph = counter_graph(package, saver, loop_to=10)
            run = lambda: graph.ainvoke(
                {"n": 0}, thread_config(uuid.uuid4().hex), durability="sync")
            await run()
            started = time.perf_counter()
            await asyncio.gather(*(run() for _ in range(size)))
            return size * 10 / (time.perf_counter() - started)

    return {"steps_per_s": asyncio.run(main())}


def sweep_floor(spec: dict) -> dict:
    """One durable step of the counter loop (durability="sync") vs one bare commit of its bytes.

    Also where a step's time goes: the loop alone (no saver), the step with the commit flush off
    (the saver's work without waiting for the disk or the WAL flush), and the same for the floor.
    """
    package, kind, where = spec["package"], spec["saver"], spec["where"]
    repeats = 3 if spec.get("quick") else 5
    threads = iter(range(10_000))
    with open_saver(package, kind, where) as saver:
        graph = counter_graph(package, saver, loop_to=50)
        run = lambda: graph.invoke(
            {"n": 0}, thread_config(f"d{next(threads)}"), durability="sync")
        run()
        out = {"step": timed(run, repeats) / 50}
        head = saver.get_tuple(thread_config("d0"))
        out["step_bytes"] = len(saver.serde.dumps_typed(head.checkpoint)[1]) + 64
        out["step_wal"] = wal_written(saver.conn, kind, run) / 50
        durable(saver, kind, on=False)
        out["step_no_flush"] = timed(run, repeats) / 50
    bare = counter_graph(package, None, loop_to=50)
    out["loop_only"] = timed(lambda: bare.invoke({"n": 0}), repeats) / 50
    out["floor"], out["floor_wal"] = bare_commit(kind, where, out["step_bytes"], repeats)
    out["floor_no_flush"], _ = bare_commit(kind, where, out["step_bytes"], repeats, flush=False)
    return out


def wal_written(conn: Any, kind: str, fn) -> int:
    """Bytes of write-ahead log that one call of ``fn`` adds: what a commit has to flush.

    SQLite: frames in the WAL after emptying it (a frame is a page plus a 24-byte header);
    Postgres: how far the server's WAL insert position moved (other sessions' work counts too,
    so measure on a quiet server).
    """
    if kind == "sqlite":
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        fn()
        frames = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1]
        return frames * (conn.execute("PRAGMA page_size").fetchone()[0] + 24)
    first = lambda row: next(iter(row.values())) if isinstance(row, dict) else row[0]
    position = "SELECT pg_current_wal_insert_lsn()::text AS lsn"
    before = first(conn.execute(position).fetchone())
    fn()
    after = first(conn.execute(position).fetchone())
    return int(first(conn.execute("SELECT pg_wal_lsn_diff(%s, %s) AS moved",
                                  (after, before)).fetchone()))


def bare_commit(kind: str, where: str, size: int, repeats: int,
                flush: bool = True) -> tuple[float, float]:
    """Median seconds of one committed INSERT of ``size`` bytes (the disk's price of a step), and
    the bytes of write-ahead log it adds."""
    payload = os.urandom(size)
    if kind == "sqlite":
        import sqlite3

        conn = sqlite3.connect(where + ".floor", isolation_level=None)
        conn.executescript("PRAGMA journal_mode=WAL; "
                           f"PRAGMA synchronous={'FULL' if flush else 'OFF'}; "
                           "CREATE TABLE IF NOT EXISTS f (b BLOB)")
        insert = lambda: conn.execute("INSERT INTO f VALUES (?)", (payload,))
    else:
        import psycopg

        conn = psycopg.connect(where, autocommit=True)
        conn.execute(f"SET synchronous_commit = {'on' if flush else 'off'}")
        conn.execute("CREATE TABLE IF NOT EXISTS floor_probe (b BYTEA)")
        insert = lambda: conn.execute(
            "INSERT INTO floor_probe VALUES (%s)", (payload,))
    insert()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(50):
            insert()
        times.append((time.perf_counter() - started) / 50)
    wal = wal_written(conn, kind, lambda: [insert() for _ in range(50)]) / 50
    conn.close()
    return statistics.median(times), wal


SWEEPS = {"thread": sweep_thread, "threads": sweep_threads, "fanout": sweep_fanout,
          "width": sweep_width, "workers": sweep_workers, "concurrent": sweep_concurrent,
          "floor": sweep_floor}

if __name__ == "__main__":
    job = json.loads(sys.argv[1])
    print(json.dumps(SWEEPS[job["sweep"]](job)))
