# %% [markdown]
# # 07 · Durability modes: sync, async, exit
#
# Each checkpoint costs a write to the database; each checkpoint *not* yet written is work a crash
# throws away. An agent that calls a model for seconds per step can afford to save every step; a
# tight loop of cheap steps may not. The durability mode is where you choose, and this chapter
# measures what each choice writes and what a killed process leaves behind.
#
# `invoke(..., durability=...)` decides *when* checkpoints reach the saver:
#
# | mode | when a step's checkpoint is written | what a crash loses |
# |---|---|---|
# | `"sync"` | before the next step starts | nothing that finished |
# | `"async"` (default) | in the background, in order, while the next step runs | at most the step in flight |
# | `"exit"` | once, when the run ends (or stops at an interrupt or error) | everything since the run started |
#
# First we count what each mode writes with a saver that records its calls; then we kill a real
# process in the middle of a run and open its SQLite file to see what survived.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph


class CountingSaver(InMemorySaver):
    """An InMemorySaver that logs every put and put_writes, in order."""

    def __init__(self):
        super().__init__()
        self.log = []

    def put(self, config, checkpoint, metadata, new_versions):
        self.log.append(f"put(step={metadata['step']})")
        return super().put(config, checkpoint, metadata, new_versions)

    def put_writes(self, config, writes, task_id, task_path=""):
        self.log.append("put_writes")
        return super().put_writes(config, writes, task_id, task_path)


class S(TypedDict):
    n: int


def build(saver, crash_at=None):
    def step(s):
        if s["n"] == crash_at:
            raise RuntimeError(f"crash at n={crash_at}")
        return {"n": s["n"] + 1}

    b = StateGraph(S)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if s["n"] >= 3 else "step")
    return b.compile(checkpointer=saver)


for mode in ["sync", "async", "exit"]:
    saver = CountingSaver()
    build(saver).invoke({"n": 0}, {"configurable": {"thread_id": mode}}, durability=mode)
    print(f"{mode:<5}", saver.log)

# %% [markdown]
# `sync` and `async` make the same calls in the same order: each task's writes (`put_writes`),
# then the checkpoint that applies them (`put`). `async` only does not *wait* for them: one
# background thread works through the calls in order while the next step already runs. `exit`
# writes one checkpoint, the final one.
#
# ## A real crash
# An exception is not a crash: Python still runs the code that saves on the way out. A crash is the
# process dying — `kill -9`, the machine losing power, the container evicted. We simulate exactly
# that: a small module runs the counter on a SQLite file and calls `os._exit(1)` (no cleanup, no
# `finally`) when `n` reaches 2, after 0.3 s of "work". We run it once per mode, each in its own
# process.

# %%
import subprocess
import sys
import tempfile
from pathlib import Path

workdir = Path(tempfile.mkdtemp())
(workdir / "durable_counter.py").write_text('''
"""Count to 3 on a SQLite file; with a crash step, the process dies when n reaches it."""
import os, sqlite3, sys, time
from typing import TypedDict
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.graph import END, START, StateGraph

class S(TypedDict):
    n: int

def build(path, crash_at=None):
    def step(s):
        if s["n"] == crash_at:
            time.sleep(0.3)   # the node works for a while ...
            os._exit(1)       # ... and the process dies: no except, no finally, no atexit
        return {"n": s["n"] + 1}
    b = StateGraph(S)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if s["n"] >= 3 else "step")
    return b.compile(checkpointer=SqliteSaver(sqlite3.connect(path, check_same_thread=False)))

if __name__ == "__main__":
    mode, path = sys.argv[1], sys.argv[2]
    build(path, crash_at=2).invoke({"n": 0}, {"configurable": {"thread_id": "t"}}, durability=mode)
''')

files = {}
for mode in ["sync", "async", "exit"]:
    files[mode] = workdir / f"{mode}.sqlite"
    done = subprocess.run([sys.executable, "durable_counter.py", mode, str(files[mode])],
                          cwd=workdir, capture_output=True, text=True, check=False)
    print(f"{mode:<5} process exit code {done.returncode}")

# %% [markdown]
# Three dead processes. What did each leave in its file? A new process would open it like this:

# %%
import sqlite3

from lgcheckpoint.checkpoint.sqlite import SqliteSaver

thread = {"configurable": {"thread_id": "t"}}
found = {}
for mode, path in files.items():
    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    tuples = list(saver.list(thread))[::-1]  # oldest first
    found[mode] = [(t.metadata["step"], t.checkpoint["channel_values"].get("n")) for t in tuples]
    print(f"{mode:<5} checkpoints (step, n): {found[mode]}")

# %% [markdown]
# The picture: one row per mode, one column per super-step of the run. A green cell is a checkpoint
# the new process finds (with the value of `n` in it), a grey cell was computed but is gone, and the
# red cross is where the process died (step 3, while the node computed `n = 3`). Step -1 is the
# input checkpoint: `n` is not set yet, the input waits in the `__start__` channel.

# %%
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

steps = [-1, 0, 1, 2]
fig, ax = plt.subplots(figsize=(8, 2.8))
for row, mode in enumerate(["sync", "async", "exit"]):
    saved = dict(found[mode])
    for col, step in enumerate(steps):
        kept = step in saved
        ax.add_patch(Rectangle((col, -row), 0.92, 0.8, color="#16a34a" if kept else "#d1d5db"))
        text = ("input" if step == -1 else f"n = {saved[step]}") if kept else "lost"
        ax.text(col + 0.46, -row + 0.4, text, ha="center", va="center", fontsize=13,
                color="white" if kept else "#374151")
    ax.text(len(steps) + 0.46, -row + 0.4, "✗", ha="center", va="center", fontsize=22,
            color="#dc2626")
    ax.text(-0.1, -row + 0.4, mode, ha="right", va="center", fontsize=14, weight="bold")
ax.set_xticks([c + 0.46 for c in range(len(steps) + 1)],
              [f"step {s}" for s in steps] + ["step 3\n(crash)"], fontsize=12)
ax.set_xlim(-1.1, len(steps) + 1)
ax.set_ylim(-2.1, 0.9)
ax.set_yticks([])
ax.set_title("What a new process finds after a crash", fontsize=14)
for side in ["left", "right", "top"]:
    ax.spines[side].set_visible(False)
plt.tight_layout()
plt.show()

# %% [markdown]
# `sync` kept every finished step. `async` kept the same here: the dying node worked for 0.3 s, so
# the background writer had long finished the checkpoint before it. Had the process died within
# the few milliseconds of that write, the last step would be missing too — that is "at most the step
# in flight". `exit` kept **nothing**: it would have saved once on the way out, and a killed process
# never gets there.
#
# ## An exception is not a crash
# The same node now *raises* at `n == 2`, in this process. The run ends through Python's normal
# error path, so even `exit` gets to save once on the way out — with the error recorded as an
# `__error__` pending write.

# %%
for mode in ["sync", "exit"]:
    saver = CountingSaver()
    cfg = {"configurable": {"thread_id": mode}}
    try:
        build(saver, crash_at=2).invoke({"n": 0}, cfg, durability=mode)
    except RuntimeError:
        pass
    latest = saver.get_tuple(cfg)
    print(f"{mode:<5} saved steps: {[t.metadata['step'] for t in saver.list(cfg)][::-1]}",
          f"| latest n = {latest.checkpoint['channel_values'].get('n')}",
          f"| pending writes: {[w[1] for w in latest.pending_writes]}")

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · What each mode writes, at scale
# Count to 200 in each mode with a `CountingSaver` (use `build`'s graph shape, but stop at 200,
# and pass `"recursion_limit": 500` in the config). Store the number of `put` calls per mode in a
# dict `puts = {"sync": ..., "async": ..., "exit": ...}` and each run's final `n` in `finals`.

# %%
puts, finals = {}, {}  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: finals == {"sync": 200, "async": 200, "exit": 200}
                 and puts["sync"] == puts["async"] > 200 and puts["exit"] == 1,
                 "every mode must reach n = 200; count the log entries that start with 'put('")


check_1()

# %% [solution]
for mode in ["sync", "async", "exit"]:
    saver = CountingSaver()
    b = StateGraph(S)
    b.add_node("step", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if s["n"] >= 200 else "step")
    g = b.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": mode}, "recursion_limit": 500}
    finals[mode] = g.invoke({"n": 0}, cfg, durability=mode)["n"]
    puts[mode] = sum(entry.startswith("put(") for entry in saver.log)
print(puts, finals)  # exit saves 200x fewer checkpoints: the fastest, and the least durable
check_1()

# %% [markdown]
# ### Exercise 2 · Resume after the crash
# A new process opens `files["sync"]` (the SQLite file the killed `sync` process left) and resumes
# the thread: build the graph with `durable_counter.build(path)` (no crash this time) and call
# `invoke(None, thread)`. Store the final `n` in `resumed_n`, and in `reran` how many super-steps
# this resume ran (count the checkpoints before and after).

# %%
sys.path.insert(0, str(workdir))
import durable_counter

resumed_n, reran = None, None  # your answer

# %% [check]
def check_2():
    return check(lambda: resumed_n == 3 and 0 < reran < 4,
                 "resume with invoke(None, thread) on a graph built on files['sync']; "
                 "reran = checkpoints after - checkpoints before")


check_2()

# %% [solution]
graph = durable_counter.build(str(files["sync"]))
before = len(list(graph.get_state_history(thread)))
resumed_n = graph.invoke(None, thread)["n"]
reran = len(list(graph.get_state_history(thread))) - before
print(f"n = {resumed_n}; the resume ran {reran} step(s) instead of 4")
check_2()

# %% [markdown]
# ## Read it in the source
# `SaveQueue` in `pregel/saves.py` is the one owner of durability: its docstring is the table
# durability x (after a task / after a step / at exit), and `after_step` publishes a step's
# checkpoint together with the writes it held back (one commit). `SyncSaveQueue` is the ordered
# queue: inline for `sync`, one background thread for `async`. `PregelLoop.save_checkpoint` is
# where the loop hands each step's checkpoint over.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/saves.py: SaveQueue", "pregel/saves.py: SyncSaveQueue",
            "pregel/loop.py: PregelLoop.save_checkpoint")
