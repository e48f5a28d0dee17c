"""Benchmark: PostgresSaver put / put_writes / get_tuple speed and storage, ours vs LangGraph's.

    python bench/bench_postgres_saver.py [--n 500] [--repeats 3] [--big-steps 500] \
        [--serde own|same]
                                         [--sync-commit on|off] [--savers sync,async]

Speed: a thread of ``--n`` checkpoints (5 channels, 2 written per step: small dicts and one short
str), one ``put_writes`` of 3 writes per checkpoint, then ``get_tuple`` of each checkpoint by id.
Each measurement runs in a fresh subprocess on its own schema; the two libraries' subprocesses
alternate so background load hits both alike; figures are medians (operations per second).
``--serde same`` gives both savers LangGraph's JsonPlusSerializer, so only the saver code differs.
``--savers`` picks the front doors timed: PostgresSaver (sync) and AsyncPostgresSaver (async).

Storage: ``--big-steps`` puts whose 1 MB channel never changes (random base64, so TOAST cannot
compress it away) plus a small counter that does; then pg_total_relation_size of the three
tables. LangGraph keeps a str inline in every checkpoint's JSONB; we keep every value in one blob
per version. A dict channel is stored once by both. Needs a server (LGCHECKPOINT_POSTGRES_URI).
"""

from __future__ import annotations

import argparse
import base64
import gc
import json
import os
import statistics
import subprocess
import sys
import time
import uuid

URI = os.environ.get("LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres")
TABLES = ("checkpoints", "checkpoint_blobs", "checkpoint_writes")


def saver_class(impl: str, aio: bool = False):
    package = "lgcheckpoint" if impl == "ours" else "langgraph"
    if aio:
        return __import__(f"{package}.checkpoint.postgres.aio", fromlist=["x"]).AsyncPostgresSaver
    return __import__(f"{package}.checkpoint.postgres", fromlist=["x"]).PostgresSaver


def open_saver(impl: str, uri: str, serde: str, aio: bool = False):
    """A (sync or async) context manager yielding a saver of one library, as its docs open one."""
    cls = saver_class(impl, aio)
    if serde != "same":
        return cls.from_conn_string(uri)
    import contextlib

    import psycopg
    from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
    from psycopg.rows import dict_row

    kwargs = {"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row}

    @contextlib.contextmanager
    def opened():
        with psycopg.connect(uri, **kwargs) as conn:
            yield cls(conn, serde=JsonPlusSerializer())

    @contextlib.asynccontextmanager
    async def opened_async():
        async with await psycopg.AsyncConnection.connect(uri, **kwargs) as conn:
            yield cls(conn, serde=JsonPlusSerializer())

    return opened_async() if aio else opened()


def schema_uri(uri: str, schema: str) -> str:
    """The bench database with its tables in one fresh schema."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    with psycopg.connect(uri, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        conn.execute(f"CREATE SCHEMA {schema}")
    return make_conninfo(uri, options=f"-csearch_path={schema}")


def make_checkpoint(step: int, values: dict, versions: dict) -> dict:
    from lgcheckpoint.pregel.checkpoint import empty_checkpoint  # v=4, what a run writes

    checkpoint = empty_checkpoint()
    checkpoint.update(
        channel_values=dict(values),
        channel_versions=dict(versions),
        versions_seen={"node": dict(versions)},
        updated_channels=sorted(values),
    )
    return checkpoint


# --- one measurement, in a subprocess ----------------------------------------------------------
def workload(saver, n: int) -> list[tuple[dict, dict]]:
    """``n`` checkpoints of 5 channels (4 small dicts and a short str), 2 changed per step."""
    versions: dict = {}
    values = {f"ch{i}": {"messages": [f"m{i}"] * 3} for i in range(4)} | {"name": "agent"}
    work = []
    for step in range(n):
        changed = [f"ch{step % 4}", "name"] if step else list(values)
        for ch in changed:
            versions[ch] = saver.get_next_version(versions.get(ch), None)
            values[ch] = (
                {"messages": [f"m{step}"] * 3, "step": step} if ch != "name" else f"s{step}"
            )
        work.append((make_checkpoint(step, values, versions), {c: versions[c] for c in changed}))
    gc.collect()
    gc.freeze()
    return work


def some_writes(i: int) -> list[tuple[str, object]]:
    return [("ch0", {"v": i}), ("ch1", "x"), ("branch:to:a", None)]


def speed(impl: str, uri: str, n: int, serde: str) -> dict:
    """put, put_writes and get_tuple per second on a fresh schema (PostgresSaver)."""
    uri = schema_uri(uri, f"bench_{impl}_{uuid.uuid4().hex[:6]}")
    with open_saver(impl, uri, serde) as saver:
        saver.setup()
        work = workload(saver, n)
        configs, parent = [], {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        t0 = time.perf_counter()
        for step, (checkpoint, new_versions) in enumerate(work):
            parent = saver.put(parent, checkpoint, {"source": "loop", "step": step}, new_versions)
            configs.append(parent)
        t1 = time.perf_counter()
        for i, config in enumerate(configs):
            saver.put_writes(config, some_writes(i), f"task{i}")
        t2 = time.perf_counter()
        for config in configs:
            assert saver.get_tuple(config) is not None
        t3 = time.perf_counter()
    return {"put": n / (t1 - t0), "put_writes": n / (t2 - t1), "get_tuple": n / (t3 - t2)}


async def speed_async(impl: str, uri: str, n: int, serde: str) -> dict:
    """The same as ``speed`` through AsyncPostgresSaver (aput, aput_writes, aget_tuple)."""
    uri = schema_uri(uri, f"bench_{impl}_{uuid.uuid4().hex[:6]}")
    async with open_saver(impl, uri, serde, aio=True) as saver:
        await saver.setup()
        work = workload(saver, n)
        configs, parent = [], {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        t0 = time.perf_counter()
        for step, (checkpoint, new_versions) in enumerate(work):
            parent = await saver.aput(
                parent, checkpoint, {"source": "loop", "step": step}, new_versions
            )
            configs.append(parent)
        t1 = time.perf_counter()
        for i, config in enumerate(configs):
            await saver.aput_writes(config, some_writes(i), f"task{i}")
        t2 = time.perf_counter()
        for config in configs:
            assert await saver.aget_tuple(config) is not None
        t3 = time.perf_counter()
    return {"put": n / (t1 - t0), "put_writes": n / (t2 - t1), "get_tuple": n / (t3 - t2)}


def storage(impl: str, uri: str, steps: int, kind: str) -> dict:
    """Bytes on disk after ``steps`` puts with an unchanging 1 MB channel (a str or a dict)."""
    uri = schema_uri(uri, f"store_{impl}_{kind}")
    text = base64.b64encode(os.urandom(786_432)).decode()  # 1 MiB of incompressible text
    big = text if kind == "str" else {"text": text}
    with open_saver(impl, uri, "own") as saver:
        saver.setup()
        versions = {"big": saver.get_next_version(None, None)}
        parent = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
        t0 = time.perf_counter()
        for step in range(steps):
            versions["step"] = saver.get_next_version(versions.get("step"), None)
            new = {"step": versions["step"]} | ({"big": versions["big"]} if step == 0 else {})
            checkpoint = make_checkpoint(step, {"big": big, "step": step}, versions)
            parent = saver.put(parent, checkpoint, {"step": step}, new)
        seconds = time.perf_counter() - t0
        assert saver.get_tuple(parent).checkpoint["channel_values"]["big"] == big
    import psycopg

    with psycopg.connect(uri) as conn:
        size = sum(
            conn.execute("SELECT pg_total_relation_size(%s::regclass)", (t,)).fetchone()[0]
            for t in TABLES
        )
    return {"bytes": size, "seconds": seconds}


# --- driver ---------------------------------------------------------------------------------------
def in_subprocess(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args], check=True, capture_output=True, text=True
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-steps", type=int, default=500)
    parser.add_argument("--serde", choices=["own", "same"], default="own")
    parser.add_argument("--uri", default=URI)
    parser.add_argument(
        "--sync-commit",
        choices=["on", "off"],
        default="on",
        help="off: commits skip the disk flush, so speed shows CPU and protocol costs",
    )
    parser.add_argument(
        "--savers",
        default="sync,async",
        help="comma-separated: sync (PostgresSaver), async (AsyncPostgresSaver)",
    )
    parser.add_argument("--child", nargs="*")
    args = parser.parse_args()
    if args.child:  # one measurement: print its JSON and exit
        what, impl, *rest = args.child
        if what == "speed":
            result = speed(impl, args.uri, int(rest[0]), rest[1])
        elif what == "speed_async":
            import asyncio

            result = asyncio.run(speed_async(impl, args.uri, int(rest[0]), rest[1]))
        else:
            result = storage(impl, args.uri, int(rest[0]), rest[1])
        print(json.dumps(result))
        return

    import psycopg

    db = f"lgc_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(args.uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{db}"')
        conn.execute(f'ALTER DATABASE "{db}" SET synchronous_commit = {args.sync_commit}')
    from psycopg.conninfo import make_conninfo

    server, args.uri = args.uri, make_conninfo(args.uri, dbname=db)
    try:
        for front in args.savers.split(","):
            what = "speed" if front == "sync" else "speed_async"
            runs: dict[str, list[dict]] = {"ours": [], "langgraph": []}
            for _ in range(args.repeats):
                for impl in runs:  # alternate, so background load hits both alike
                    runs[impl].append(
                        in_subprocess(what, impl, str(args.n), args.serde, "--uri", args.uri)
                    )
            print(
                f"speed ({front} saver): {args.n} checkpoints, median of {args.repeats} runs, "
                f"serde={args.serde}, synchronous_commit={args.sync_commit} (ops/s)"
            )
            print(f"  {'verb':<11}{'ours':>10}{'langgraph':>11}{'ours/lg':>9}")
            for verb in ("put", "put_writes", "get_tuple"):
                ours, lg = (statistics.median(r[verb] for r in runs[i]) for i in runs)
                print(f"  {verb:<11}{ours:>10.0f}{lg:>11.0f}{ours / lg:>8.2f}x")

        print(f"storage: {args.big_steps} puts, a 1 MB channel that never changes")
        print(
            f"  {'channel':<8}{'ours MB':>9}{'langgraph MB':>14}{'lg/ours':>9}"
            f"{'ours s':>8}{'lg s':>7}"
        )
        for kind in ("str", "dict"):
            ours, lg = (
                in_subprocess("storage", i, str(args.big_steps), kind, "--uri", args.uri)
                for i in ("ours", "langgraph")
            )
            print(
                f"  {kind:<8}{ours['bytes'] / 1e6:>9.1f}{lg['bytes'] / 1e6:>14.1f}"
                f"{lg['bytes'] / ours['bytes']:>8.1f}x{ours['seconds']:>8.1f}{lg['seconds']:>7.1f}"
            )
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')


if __name__ == "__main__":
    main()
