"""Benchmark: the runtime's per-super-step overhead, lgcheckpoint vs LangGraph.

    python bench/bench_runtime.py [--steps 200] [--runs 5] [--repeats 5]
                                  [--only none,memory,sqlite,postgres]

The graph is the smallest loop: one node increments a counter and a conditional edge sends it back
to itself until the counter reaches ``--steps``; so the figure is what the loop costs per
super-step (prepare tasks, run a trivial node, apply writes, and checkpoint if there is a saver).

Savers: none, InMemorySaver, SqliteSaver on a file and PostgresSaver (durability="sync" for those
two, so each step waits for its checkpoint). Each measurement runs in a fresh subprocess of one
package, with ``gc.collect(); gc.freeze()`` before timing; the two packages' subprocesses alternate
(A/B/A/B...) so background load hits both alike; figures are medians. Targets: ours/LangGraph
<= 0.5 without a saver and with memory, <= 0.6 with SQLite and Postgres.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from typing import TypedDict

PACKAGES = ["langgraph", "lgcheckpoint"]
TARGETS = {"none": 0.5, "memory": 0.5, "sqlite": 0.6, "postgres": 0.6}
POSTGRES = os.environ.get(
    "LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)


class Counter(TypedDict):
    n: int


def build(package: str, steps: int, checkpointer):
    """The counter loop, built with ``package``'s StateGraph (the same code for both)."""
    graph_mod = __import__(f"{package}.graph", fromlist=["StateGraph"])
    g = graph_mod.StateGraph(Counter)
    g.add_node("inc", lambda s: {"n": s["n"] + 1})
    g.add_edge(graph_mod.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < steps else graph_mod.END)
    return g.compile(checkpointer=checkpointer)


@contextlib.contextmanager
def open_saver(package: str, kind: str, where: str):
    """The package's saver of that kind, fresh for this subprocess."""
    if kind == "none":
        yield None
    elif kind == "memory":
        yield __import__(f"{package}.checkpoint.memory", fromlist=["x"]).InMemorySaver()
    elif kind == "sqlite":
        with __import__(
            f"{package}.checkpoint.sqlite", fromlist=["x"]
        ).SqliteSaver.from_conn_string(where) as s:
            yield s
    else:
        with __import__(
            f"{package}.checkpoint.postgres", fromlist=["x"]
        ).PostgresSaver.from_conn_string(where) as s:
            s.setup()
            yield s


def measure(package: str, kind: str, where: str, steps: int, runs: int) -> float:
    """µs per super-step: ``runs`` invokes of the loop on fresh threads, after one warm-up."""
    with open_saver(package, kind, where) as saver:
        graph = build(package, steps, saver)
        durability = {"durability": "sync"} if kind in ("sqlite", "postgres") else {}

        def once():
            config = {
                "configurable": {"thread_id": uuid.uuid4().hex},
                "recursion_limit": steps + 10,
            }
            assert graph.invoke({"n": 0}, config, **durability)["n"] == steps

        once()  # warm-up: imports, first-use caches, prepared statements
        gc.collect()
        gc.freeze()
        started = time.perf_counter()
        for _ in range(runs):
            once()
        return (time.perf_counter() - started) / (runs * steps) * 1e6


def worker(argv: list[str]) -> None:
    package, kind, where, steps, runs = argv
    print(json.dumps(measure(package, kind, where, int(steps), int(runs))))


def run_worker(package: str, kind: str, where: str, steps: int, runs: int) -> float | str:
    cmd = [sys.executable, __file__, "--worker", package, kind, where, str(steps), str(runs)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    if proc.returncode:
        return (proc.stderr.strip().splitlines() or ["failed"])[-1][:70]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@contextlib.contextmanager
def scratch_postgres():
    """A throwaway database for the Postgres rows, or None (with a reason) if no server."""
    try:
        import psycopg
        from psycopg.conninfo import conninfo_to_dict, make_conninfo

        name = f"lgc_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(POSTGRES, connect_timeout=3, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except Exception as exc:  # noqa: BLE001 - the row is reported as skipped, with the reason
        print(f"postgres: skipped ({exc})")
        yield None
        return
    try:
        yield make_conninfo(**{**conninfo_to_dict(POSTGRES), "dbname": name})
    finally:
        with psycopg.connect(POSTGRES, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--runs", type=int, default=5, help="invokes per measurement")
    ap.add_argument("--repeats", type=int, default=5, help="subprocesses per package and saver")
    ap.add_argument("--only", default="none,memory,sqlite,postgres")
    args = ap.parse_args()
    print(f"{args.steps}-step loop, {args.runs} invokes x {args.repeats} runs; median µs/step")
    print(
        f"{'saver':<10}{'langgraph':>12}{'ours':>12}{'ours/lg':>10}{'best/best':>10}{'target':>8}"
    )
    with tempfile.TemporaryDirectory() as tmp, scratch_postgres() as pg_uri:
        for kind in args.only.split(","):
            if kind == "postgres" and pg_uri is None:
                continue
            results: dict[str, list] = {p: [] for p in PACKAGES}
            for i in range(args.repeats):
                for package in PACKAGES if i % 2 == 0 else PACKAGES[::-1]:  # A/B, then B/A
                    where = (
                        pg_uri if kind == "postgres" else os.path.join(tmp, f"{package}-{i}.sqlite")
                    )
                    results[package].append(run_worker(package, kind, where, args.steps, args.runs))
            print_row(kind, results)


def print_row(kind: str, results: dict[str, list]) -> None:
    """Medians, and the ratio of best runs too (less sensitive to other load on the machine)."""
    failed = [v for values in results.values() for v in values if not isinstance(v, float)]
    if failed:
        print(f"{kind:<10}  failed: {failed[-1]}", flush=True)
        return
    lg, ours = (results[p] for p in PACKAGES)
    med_lg, med_ours = statistics.median(lg), statistics.median(ours)
    best = min(ours) / min(lg)
    print(
        f"{kind:<10}{med_lg:12.1f}{med_ours:12.1f}{med_ours / med_lg:10.2f}{best:10.2f}"
        f"{TARGETS[kind]:>8}",
        flush=True,
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2:])
    else:
        main()
