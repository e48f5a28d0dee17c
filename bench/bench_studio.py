"""Benchmark: open the Studio (model + widget) on a 1,000-checkpoint thread, and act on it.

    python bench/bench_studio.py [--runtime langgraph|lgcheckpoint] [--saver memory|sqlite]

Target (issue 13): the studio opens in < 2 s on a 1,000-checkpoint thread — its lineage shows
the newest 30 checkpoints and folds the rest. Also printed: one Step on that thread (re-read,
one super-step, redraw). The thread: a two-node loop of 988 steps, then 10 forks (as in
bench_viz.py); building it is not timed. Each figure is the median of the repeats.
"""

from __future__ import annotations

import argparse
import importlib
import sqlite3
import statistics
import tempfile
import time
from typing import TypedDict

from lgcheckpoint.viz import Studio
from lgcheckpoint.viz.render import dot_to_svg

TARGET = 2.0


class State(TypedDict):
    count: int
    last: str


def build_thread(runtime: str, saver_kind: str, checkpoints: int = 1000):
    """The compiled graph and the config of a thread of ``checkpoints`` checkpoints."""
    pkg = "langgraph" if runtime == "langgraph" else "lgcheckpoint"
    graph = importlib.import_module(f"{pkg}.graph")
    if saver_kind == "memory":
        saver = importlib.import_module(f"{pkg}.checkpoint.memory").InMemorySaver()
    else:
        module = importlib.import_module(f"{pkg}.checkpoint.sqlite")
        path = tempfile.mkdtemp() + "/bench.sqlite"
        saver = module.SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    forks, loop_steps = 10, checkpoints - 10 - 2
    g = graph.StateGraph(State)
    g.add_node("a", lambda s: {"count": s["count"] + 1, "last": "a"})
    g.add_node("b", lambda s: {"count": s["count"] + 1, "last": "b"})
    g.add_edge(graph.START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("b", lambda s: graph.END if s["count"] >= loop_steps else "a")
    app = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "bench"}, "recursion_limit": checkpoints + 10}
    app.invoke({"count": 0, "last": ""}, config)
    for old in [t.config for t in saver.list(config)][::97][:forks]:
        app.update_state(old, {"last": "forked"})
    return app, {"configurable": {"thread_id": "bench"}}


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", default="lgcheckpoint", choices=["langgraph", "lgcheckpoint"])
    parser.add_argument("--saver", default="memory", choices=["memory", "sqlite"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    graph, config = build_thread(args.runtime, args.saver)

    def open_studio():
        dot_to_svg.cache_clear()
        return Studio(graph, config).widget()

    opens = []
    for _ in range(args.repeats):
        opens.append(timed(open_studio))
    box = open_studio()
    steps = []
    for _ in range(args.repeats):  # the thread ended: each Step starts a short new run
        box.ui.input.value = '{"count": 995, "last": ""}'
        started = time.perf_counter()
        box.ui.step_button.click()
        steps.append(time.perf_counter() - started)
    opened = statistics.median(opens)
    print(f"thread: {len(box.ui.studio.history)} checkpoints; runtime {args.runtime}, "
          f"saver {args.saver}")
    print(f"studio open (model + widget) {opened:7.3f} s   (target < {TARGET} s)  "
          f"{'ok' if opened < TARGET else 'SLOW'}")
    print(f"one Step (re-read + step + redraw) {statistics.median(steps):7.3f} s")
    raise SystemExit(0 if opened < TARGET else 1)


if __name__ == "__main__":
    main()
