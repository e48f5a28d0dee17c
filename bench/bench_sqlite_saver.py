"""Our SqliteSaver against LangGraph's on a file: put, put_writes, get_tuple rates and storage.

Each (saver, measurement) runs in its own subprocess so neither warms the other's caches; timings
are medians of several rounds after ``gc.collect(); gc.freeze()``. Run:

    python bench/bench_sqlite_saver.py            # full run (~3 min, 0.5 GB of temporary files)
    python bench/bench_sqlite_saver.py --quick    # smaller, for a smoke test
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

# op@flags: nosync = no fsync per commit (what remains is CPU); lgserde = LangGraph's serializer in
# both savers, so only the saver code differs
# aput, aput_writes, aget_tuple: the same on each library's AsyncSqliteSaver (aiosqlite)
OPS = ("put", "put_writes", "put@nosync", "put_writes@nosync", "put@nosync@lgserde",
       "put_writes@nosync@lgserde", "get_tuple", "get_tuple@lgserde", "aput", "aput_writes",
       "aput@nosync", "aput_writes@nosync", "aget_tuple", "storage")
SAVERS = {"ours": "lgcheckpoint.checkpoint.sqlite", "langgraph": "langgraph.checkpoint.sqlite"}


def checkpoint(i: int, values: dict) -> dict:
    """A plain checkpoint dict, identical for both libraries (ids sort by i)."""
    return {"v": 4, "id": f"1f000000-0000-6000-8000-{i:012d}", "ts": "2026-01-01T00:00:00+00:00",
            "channel_values": values, "updated_channels": list(values),
            "channel_versions": {k: f"{i:032}.{0.5:016}" for k in values},
            "versions_seen": {"node": {k: f"{i:032}.{0.5:016}" for k in values}}}


SMALL = {"messages": [f"message {i} " * 8 for i in range(10)], "count": 7, "flag": True}


def run_worker(saver_name: str, op: str, n: int, rounds: int, path: str) -> dict:
    """Time one verb of one saver; returns ops/s per round (or bytes for storage)."""
    if op.startswith("a"):
        return asyncio.run(run_async_worker(saver_name, op, n, rounds, path))
    module = __import__(SAVERS[saver_name], fromlist=["SqliteSaver"])
    with module.SqliteSaver.from_conn_string(path) as saver:
        saver.setup()
        op, *flags = op.split("@")
        if "nosync" in flags:
            saver.conn.execute("PRAGMA synchronous=OFF")
        if "lgserde" in flags:
            from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

            saver.serde = JsonPlusSerializer()
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        if op == "storage":  # 500 puts of a checkpoint whose 1 MB channel never changes
            big = {"doc": "x" * 1_000_000, "step": 0}
            for i in range(n):
                cfg = saver.put(cfg, checkpoint(i, {**big, "step": i}), {"step": i}, {"step": 1})
            saver.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            return {"bytes": os.path.getsize(path)}
        saved = [cfg := saver.put(cfg, checkpoint(i, SMALL), {"source": "loop", "step": i}, {})
                 for i in range(n)]
        for c in saved:
            saver.put_writes(c, [("messages", "hi"), ("count", 1), ("branch:to:b", None)], "task-0")
        # no fsync to wait for: the cost is CPU (ours, the driver's, the kernel's for the writes),
        # so count the process's CPU time, which other processes on a busy machine do not inflate
        clock = time.process_time if "nosync" in flags or op == "get_tuple" else time.perf_counter
        gc.collect()
        gc.freeze()
        rates = []
        for r in range(rounds):
            start = clock()
            if op == "put":
                base = n * (r + 1)
                for i in range(n):
                    metadata = {"source": "loop", "step": i}
                    cfg = saver.put(cfg, checkpoint(base + i, SMALL), metadata, {})
            elif op == "put_writes":
                for c in saved:
                    saver.put_writes(c, [("messages", "hi"), ("count", 2)], f"task-{r + 1}")
            else:
                for c in saved:
                    assert saver.get_tuple(c) is not None
            rates.append(n / (clock() - start))
        return {"rates": rates}


async def run_async_worker(saver_name: str, op: str, n: int, rounds: int, path: str) -> dict:
    """run_worker's timed verbs on AsyncSqliteSaver (the same data, the same rounds)."""
    module = __import__(SAVERS[saver_name] + ".aio", fromlist=["AsyncSqliteSaver"])
    async with module.AsyncSqliteSaver.from_conn_string(path) as saver:
        await saver.setup()
        op, *flags = op.split("@")
        if "nosync" in flags:
            await saver.conn.execute("PRAGMA synchronous=OFF")
        cfg = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        saved = []
        for i in range(n):
            cfg = await saver.aput(cfg, checkpoint(i, SMALL), {"source": "loop", "step": i}, {})
            saved.append(cfg)
        for c in saved:
            await saver.aput_writes(c, [("messages", "hi"), ("count", 1), ("branch:to:b", None)],
                                    "task-0")
        gc.collect()
        gc.freeze()
        rates = []
        for r in range(rounds):
            start = time.perf_counter()
            if op == "aput":
                base = n * (r + 1)
                for i in range(n):
                    metadata = {"source": "loop", "step": i}
                    cfg = await saver.aput(cfg, checkpoint(base + i, SMALL), metadata, {})
            elif op == "aput_writes":
                for c in saved:
                    await saver.aput_writes(c, [("messages", "hi"), ("count", 2)], f"task-{r + 1}")
            else:
                for c in saved:
                    assert await saver.aget_tuple(c) is not None
            rates.append(n / (time.perf_counter() - start))
        return {"rates": rates}


def measure(saver_name: str, op: str, n: int, rounds: int) -> dict:
    """Run one worker in a fresh interpreter on a fresh file."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [saver_name, op, str(n), str(rounds), os.path.join(tmp, "bench.sqlite")]
        out = subprocess.run([sys.executable, __file__, "--worker", *args], capture_output=True,
                             text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(quick: bool) -> None:
    n, rounds, trials, big_puts = (200, 3, 1, 50) if quick else (500, 3, 5, 500)
    print(f"SqliteSaver on a file: {trials} alternating subprocess trials per saver x {rounds} "
          f"rounds x {n} ops (median of rounds); storage after {big_puts} puts of a 1 MB channel "
          "that never changes.\nput/put_writes wait for fsync (synchronous=FULL in both), so the "
          "disk sets them (wall time); @nosync and get_tuple: CPU time of the process; a*: the "
          "AsyncSqliteSaver (wall time: includes the hops to aiosqlite's thread); @lgserde: both "
          "savers use LangGraph's serializer.")
    print(f"{'measurement':<32}{'ours':>12}{'langgraph':>12}{'ours/langgraph':>16}")
    for op in OPS:
        if op == "storage":
            mine, theirs = (measure(s, op, big_puts, 1)["bytes"] / 1e6 for s in SAVERS)
            unit = "MB"
        else:  # alternate the savers so a drifting disk or a busy neighbour hits both alike
            rates: dict[str, list[float]] = {s: [] for s in SAVERS}
            for _ in range(trials):
                for s in SAVERS:
                    rates[s] += measure(s, op, n, rounds)["rates"]
            mine, theirs = (statistics.median(rates[s]) for s in SAVERS)
            unit = "ops/s"
        print(f"{op + ' (' + unit + ')':<32}{mine:>12.1f}{theirs:>12.1f}{mine / theirs:>15.2f}x")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        name, op, n, rounds, path = sys.argv[2:7]
        print(json.dumps(run_worker(name, op, int(n), int(rounds), path)))
    else:
        main(quick="--quick" in sys.argv)
