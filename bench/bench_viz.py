"""Benchmark: the viewers on a long thread (default 10,000 checkpoints: loop steps + 10 forks).

    python bench/bench_viz.py [--runtime langgraph|lgcheckpoint] [--saver memory|sqlite]
                              [--checkpoints 10000] [--repeats 3]

Targets (issues 6 and 17): opening the lineage (read the newest checkpoints + SVG) < 2 s; the
version table (HTML and PNG) < 1 s; the versions_seen matrix PNG < 1 s, each opened from the saver
as a notebook does. Each figure is the median of the repeats; the Graphviz cache is cleared
before every repeat so the engine really runs. Building the thread is not timed.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import tempfile
import time
from typing import TypedDict

from lgcheckpoint.viz import ChannelVersionTable, LineageGraph, VersionsSeenMatrix, load_history
from lgcheckpoint.viz.history import VIEW_LIMIT
from lgcheckpoint.viz.lineage import MAX_NODES
from lgcheckpoint.viz.render import dot_to_svg, find_engine

TARGETS = {"lineage: open + svg": 2.0, "table: open + html + png": 1.0, "matrix: open + png": 1.0}


class State(TypedDict):
    count: int
    last: str


def build_thread(runtime: str, saver_kind: str, checkpoints: int):
    """A two-node loop a -> b -> a ... that stops after enough steps, then a few forks; returns
    the compiled graph (its ``checkpointer`` holds the thread) and the thread's config."""
    pkg = "langgraph" if runtime == "langgraph" else "lgcheckpoint"
    graph = importlib.import_module(f"{pkg}.graph")
    if saver_kind == "memory":
        saver = importlib.import_module(f"{pkg}.checkpoint.memory").InMemorySaver()
    else:
        import sqlite3

        module = importlib.import_module(f"{pkg}.checkpoint.sqlite")
        path = tempfile.mkdtemp() + "/bench.sqlite"
        saver = module.SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    forks, loop_steps = 10, checkpoints - 10 - 2  # minus forks, the input and __start__ checkpoints

    g = graph.StateGraph(State)
    g.add_node("a", lambda s: {"count": s["count"] + 1, "last": "a"})
    g.add_node("b", lambda s: {"count": s["count"] + 1, "last": "b"})
    g.add_edge(graph.START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", lambda s: graph.END if s["count"] >= loop_steps else "a")
    app = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "bench"}, "recursion_limit": checkpoints + 10}
    app.invoke({"count": 0, "last": ""}, config)
    olds = [t.config for t in saver.list(config)][::97][:forks]
    for old in olds:  # a fork: update an older checkpoint
        app.update_state(old, {"last": "forked"})
    return app, {"configurable": {"thread_id": "bench"}}


def timed(fn) -> tuple[float, float]:
    """(wall, CPU) seconds: on a shared machine the CPU time shows what waiting hides."""
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - start, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="langgraph", choices=["langgraph", "lgcheckpoint"])
    parser.add_argument("--saver", default="memory", choices=["memory", "sqlite"])
    parser.add_argument("--checkpoints", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    app, config = build_thread(args.runtime, args.saver, args.checkpoints)
    saver = app.checkpointer
    history = load_history(saver, config)
    print(f"thread: {len(history)} checkpoints, {len({s.branch for s in history.steps})} branches, "
          f"{len(history.channels)} channels; runtime {args.runtime}, saver {args.saver}, "
          f"engine {find_engine()}")

    def lineage():
        dot_to_svg.cache_clear()
        LineageGraph(saver, config).svg()

    def table():
        ChannelVersionTable(saver, config)._repr_mimebundle_()

    runs = {name: [] for name in TARGETS}
    VersionsSeenMatrix(history).png()  # import matplotlib once, outside the timings
    for _ in range(args.repeats):
        runs["lineage: open + svg"].append(timed(lineage))
        runs["table: open + html + png"].append(timed(table))
        runs["matrix: open + png"].append(timed(lambda: VersionsSeenMatrix(saver, config).png()))
    failed = False
    for name, target in TARGETS.items():
        median = statistics.median(wall for wall, _ in runs[name])
        cpu = statistics.median(c for _, c in runs[name])
        ok = median < target
        failed |= not ok
        print(f"{name:<26} {median:7.3f} s wall  {cpu:6.3f} s CPU  (target < {target} s)  "
              f"{'ok' if ok else 'SLOW'}")
    print(f"(viewers read the newest {VIEW_LIMIT:,} checkpoints; the lineage draws {MAX_NODES})")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
