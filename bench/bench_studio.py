"""Benchmark: open the Studio (model + widget) on a 1,000-checkpoint thread, and act on it.

    python bench/bench_studio.py [--runtime langgraph|lgcheckpoint] [--saver memory|sqlite]

Target (issue 13): the studio opens in < 2 s on a 1,000-checkpoint thread — its lineage shows
the newest 30 checkpoints and folds the rest. Also printed: one Step on that thread (re-read,
one super-step, redraw). The thread: a two-node loop of 988 steps, then 10 forks (as in
bench_viz.py); building it is not timed. Each figure is the median of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench_viz import build_thread  # bench/ is on the path: the scripts run from there
from lgcheckpoint.viz import Studio
from lgcheckpoint.viz.render import dot_to_svg

TARGET = 2.0


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
    graph, config = build_thread(args.runtime, args.saver, 1000)

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
