# %% [markdown]
# # 09 · Time travel: replay and fork
#
# Checkpoints are never overwritten; each one points at its parent. So the history of a thread is
# a tree, and any checkpoint can be a starting point:
#
# * **replay** — `invoke(None, {"configurable": {"thread_id": t, "checkpoint_id": old}})` runs
#   again from `old`; the new checkpoints hang under it, a new branch;
# * **fork** — `update_state(old_config, values)` writes a new checkpoint (source `update`) as a
#   child of `old`, with your change applied as if a node had written it.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph


class Trip(TypedDict, total=False):
    city: str
    plan: str
    booked: str


builder = StateGraph(Trip)
builder.add_node("plan", lambda t: {"plan": f"3 days in {t['city']}"})
builder.add_node("book", lambda t: {"booked": f"hotel for: {t['plan']}"})
builder.add_edge(START, "plan")
builder.add_edge("plan", "book")
builder.add_edge("book", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "travel"}}
print(graph.invoke({"city": "Kyoto"}, config))


def tree():
    """Print every checkpoint of the thread: step, source, what runs next, and the values."""
    for s in reversed(list(graph.get_state_history(config))):
        print(f"step {s.metadata['step']:>2} {s.metadata['source']:<6} next={s.next!s:<12} {s.values}")


tree()

# %% [markdown]
# ## Fork: change the past
# Pick the checkpoint *before* `plan` ran and pretend the input said Osaka. Without `as_node`, the
# update counts as a write by the node that ran last before that checkpoint (here, the input), so
# `plan` is still next — and now plans Osaka.

# %%
before_plan = next(s for s in graph.get_state_history(config) if s.next == ("plan",))
fork_config = graph.update_state(before_plan.config, {"city": "Osaka"})
forked = graph.get_state(fork_config)
print("fork source:", forked.metadata["source"], "| parent is the old checkpoint:",
      forked.parent_config["configurable"]["checkpoint_id"] == before_plan.config["configurable"]["checkpoint_id"])
print(graph.invoke(None, fork_config))

# %% [markdown]
# The old branch is still there. `get_state_history` lists both branches, newest first:

# %%
tree()

# %% [markdown]
# ## Replay
# Invoking with an old `checkpoint_id` and no input re-runs everything after it.

# %%
print(graph.invoke(None, before_plan.config))
print(len(list(graph.get_state_history(config))), "checkpoints in the thread now")
tree()

# %% [markdown]
# Replay first writes a copy of the old checkpoint (source `fork`, step 1) and runs on from it, so
# the replayed steps form a third branch — nothing that happened before is lost.
#
# ## Exercises
# 1. How many checkpoints does each branch add? Count the ones whose parent is `before_plan`.
# 2. Fork from the final checkpoint of the first run with `{"booked": "cancelled"}`: what is `next` afterwards?

# %% [solution]
pid = before_plan.config["configurable"]["checkpoint_id"]
children = [s for s in graph.get_state_history(config)
            if s.parent_config and s.parent_config["configurable"]["checkpoint_id"] == pid]
print(len(children), "children of the checkpoint before plan")
last_of_first_run = list(graph.get_state_history(config))[-4]
cfg = graph.update_state(last_of_first_run.config, {"booked": "cancelled"})
print(graph.get_state(cfg).next)
