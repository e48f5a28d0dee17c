"""Benchmark: InMemorySaver put, put_writes, get_tuple on a 2,000-checkpoint thread vs LangGraph.

    python bench/bench_memory_saver.py [--checkpoints 2000] [--repeats 5]

Each implementation runs in its own fresh subprocess (no shared caches or warmed-up imports), with
``gc.collect(); gc.freeze()`` before timing; each figure is the median over all runs, and the
subprocesses of the two implementations alternate so background load hits both alike. The same
checkpoints (5 channels, 2 of them written per step, like a small graph) are fed to both savers.
``serde=same`` gives both savers LangGraph's JsonPlusSerializer, so only the saver code differs.
Time is the thread's CPU time (``time.thread_time``): these savers do no I/O, so that is their whole
cost, and unlike wall time it does not count the time other processes on a busy machine take.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import sys
import time


def make_saver(impl: str, serde: str):
    if impl == "ours":
        from lgcheckpoint.checkpoint.memory import InMemorySaver
    else:
        from langgraph.checkpoint.memory import InMemorySaver
    if serde == "same":
        from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
        return InMemorySaver(serde=JsonPlusSerializer())
    return InMemorySaver()


def workload(n: int) -> list[tuple[dict, dict]]:
    """n (checkpoint, new_versions) pairs; ids made in order, as a run makes them."""
    from lgcheckpoint.pregel.checkpoint import empty_checkpoint  # v=4, what a run writes

    steps, versions = [], {f"ch{i}": 1 for i in range(5)}
    values = {f"ch{i}": {"messages": [f"m{i}"] * 3} for i in range(5)}
    for step in range(n):
        changed = {f"ch{step % 5}", f"ch{(step + 1) % 5}"} if step else set(versions)
        for ch in changed:
            versions[ch] += 1
            values[ch] = {"messages": [f"m{step}"] * 3, "step": step}
        cp = empty_checkpoint()
        cp.update(channel_values=dict(values), channel_versions=dict(versions),
                  versions_seen={"node": dict(versions)}, updated_channels=sorted(changed))
        steps.append((cp, {ch: versions[ch] for ch in changed}))
    return steps


def run_once(impl: str, serde: str, n: int) -> dict[str, float]:
    """Ops per second for put, put_writes, get_tuple(latest) and get_tuple(by id) on one fresh
    saver (each checkpoint gets one task's two writes, which get_tuple then loads)."""
    saver, steps = make_saver(impl, serde), workload(n)
    config = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    saved = []
    latest = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
    clock = time.thread_time
    gc.collect()
    gc.freeze()
    started = clock()
    for cp, new_versions in steps:
        config = saver.put(config, cp, {"source": "loop", "step": 0, "parents": {}}, new_versions)
        saved.append(config)
    put = n / (clock() - started)
    started = clock()
    for step, cfg in enumerate(saved):
        saver.put_writes(cfg, [("ch0", {"messages": ["w"], "step": step}), ("ch1", step)], "task")
    put_writes = n / (clock() - started)
    started = clock()
    for _ in range(n):
        saver.get_tuple(latest)
    get_latest = n / (clock() - started)
    by_id = [{"configurable": {"thread_id": "t", "checkpoint_ns": "", "checkpoint_id": cp["id"]}}
             for cp, _ in steps]
    started = clock()
    for cfg in by_id:
        saver.get_tuple(cfg)
    get_by_id = n / (clock() - started)
    gc.unfreeze()
    return {"put": put, "put_writes": put_writes, "get_tuple latest": get_latest,
            "get_tuple by id": get_by_id}


def child(impl: str, serde: str, n: int, repeats: int) -> None:
    print(json.dumps([run_once(impl, serde, n) for _ in range(repeats)]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=5, help="runs per subprocess")
    parser.add_argument("--rounds", type=int, default=3, help="subprocesses per implementation")
    parser.add_argument("--child", nargs=2, metavar=("IMPL", "SERDE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(*args.child, args.checkpoints, args.repeats)

    print(f"{args.checkpoints} checkpoints on one thread; ops/s, median of "
          f"{args.rounds} subprocesses x {args.repeats} runs, alternating implementations")
    for serde in ("default", "same"):
        runs: dict[str, list[dict[str, float]]] = {"ours": [], "langgraph": []}
        for _ in range(args.rounds):  # alternate, so a noisy neighbour hurts both alike
            for impl in runs:
                out = subprocess.run(
                    [sys.executable, __file__, "--child", impl, serde,
                     "--checkpoints", str(args.checkpoints), "--repeats", str(args.repeats)],
                    check=True, capture_output=True, text=True).stdout
                runs[impl] += json.loads(out)
        median = {impl: {op: statistics.median(r[op] for r in rs) for op in rs[0]}
                  for impl, rs in runs.items()}
        best = {impl: {op: max(r[op] for r in rs) for op in rs[0]} for impl, rs in runs.items()}
        print(f"\nserde={serde}")
        print(f"  {'operation':18} {'lgcheckpoint':>13} {'LangGraph':>11} {'ratio':>7}"
              f" {'best-run ratio':>15}")
        for op, ours in median["ours"].items():
            theirs = median["langgraph"][op]
            best_ratio = best["ours"][op] / best["langgraph"][op]  # less sensitive to load
            print(f"  {op:18} {ours:13,.0f} {theirs:11,.0f} {ours / theirs:6.2f}x"
                  f" {best_ratio:14.2f}x")


if __name__ == "__main__":
    main()
