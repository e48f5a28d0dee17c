# %% [markdown]
# # 07 · Durability modes: sync, async, exit
#
# `invoke(..., durability=...)` decides *when* checkpoints reach the saver:
#
# | mode | when a step's checkpoint is written | what a crash loses |
# |---|---|---|
# | `"sync"` | before the next step starts | nothing that finished |
# | `"async"` (default) | in the background, in order, while the next step runs | at most the step in flight |
# | `"exit"` | once, when the run ends (or stops at an interrupt or error) | everything since the run started |
#
# We count what each mode writes with a saver that records its calls, then simulate a crash.

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
# `sync` and `async` write the same things in the same order — `async` just does not wait for
# them. `exit` writes one checkpoint: the final one.
#
# ## A simulated crash
# Now the node raises at `n == 2`. What can a new process resume from?

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
          f"| latest n = {latest.checkpoint['channel_values'].get('n') if latest else None}")

# %% [markdown]
# With `sync`, every finished step is on disk and the error is a pending write on the last
# checkpoint. With `exit`, LangGraph still saves once on the way out of a failed run — but a
# real crash (the process killed) would leave nothing at all.
#
# ## Exercises
# 1. Run 200 steps in each mode and check that the final state is the same. Time them on your
#    machine (with a `SqliteSaver` file the gap is larger): which mode is fastest, and why?
# 2. In `async` mode, why must the checkpoint be *copied* before it is handed to the background writer?

# %% [solution]
import time

for mode in ["sync", "async", "exit"]:
    saver = InMemorySaver()
    b = StateGraph(S)
    b.add_node("step", lambda s: {"n": s["n"] + 1})
    b.add_edge(START, "step")
    b.add_conditional_edges("step", lambda s: END if s["n"] >= 200 else "step")
    g = b.compile(checkpointer=saver)
    t0 = time.perf_counter()
    g.invoke({"n": 0}, {"configurable": {"thread_id": "t"}, "recursion_limit": 500}, durability=mode)
    assert g.get_state({"configurable": {"thread_id": "t"}}).values["n"] == 200
# 2: the loop keeps mutating its channels in the next step; a live object could be saved half-updated.
