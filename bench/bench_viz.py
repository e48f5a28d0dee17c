"""Benchmark: the viewers on a 1,000-checkpoint thread (990 loop steps + 10 forks).

    python bench/bench_viz.py [--runtime langgraph|lgcheckpoint] [--saver memory|sqlite] [--repeats 3]

Targets (issue 6): history model + lineage SVG < 2 s; versions_seen matrix PNG < 0.5 s;
1,000-row version table HTML < 1 s. Each figure is the median of the repeats; the SVG cache is
cleared before every repeat so Graphviz really runs. Building the thread is not timed.
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import tempfile
import time
from typing import TypedDict

from lgcheckpoint.viz import ChannelVersionTable, LineageGraph, VersionsSeenMatrix, load_history
from lgcheckpoint.viz.render import dot_to_svg, find_engine

TARGETS = {"history + lineage svg": 2.0, "matrix png": 0.5, "table html (1,000 rows)": 1.0}


class State(TypedDict):
    count: int
    last: str


def build_thread(runtime: str, saver_kind: str, checkpoints: int):
    """A two-node loop a -> b -> a ... that stops after enough steps, then a few forks."""
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
    return saver, {"configurable": {"thread_id": "bench"}}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="langgraph", choices=["langgraph", "lgcheckpoint"])
    parser.add_argument("--saver", default="memory", choices=["memory", "sqlite"])
    parser.add_argument("--checkpoints", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    saver, config = build_thread(args.runtime, args.saver, args.checkpoints)
    history = load_history(saver, config)
    print(f"thread: {len(history)} checkpoints, {len({s.branch for s in history.steps})} branches, "
          f"{len(history.channels)} channels; runtime {args.runtime}, saver {args.saver}, "
          f"engine {find_engine()}")

    def lineage():
        dot_to_svg.cache_clear()
        LineageGraph(saver, config).svg()

    runs = {name: [] for name in TARGETS}
    for _ in range(args.repeats):
        runs["history + lineage svg"].append(timed(lineage))
        runs["matrix png"].append(timed(lambda: VersionsSeenMatrix(history).png()))
        runs["table html (1,000 rows)"].append(timed(lambda: ChannelVersionTable(history)._repr_html_()))
    failed = False
    for name, target in TARGETS.items():
        median = statistics.median(runs[name])
        ok = median < target
        failed |= not ok
        print(f"{name:<26} {median:7.3f} s   (target < {target} s)  {'ok' if ok else 'SLOW'}")
    raise SystemExit(1 if failed else 0)


if __name__ == "__main__":
    main()
