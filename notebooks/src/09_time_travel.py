# %% [markdown]
# # 09 · Time travel: replay and fork
#
# An agent went wrong three steps ago: a bad search result, a wrong plan. Rerunning from scratch
# repeats every call and may not reproduce the mistake; what you want is to go back to the step
# before it, change one thing, and run again, while keeping the original history to compare with.
#
# Checkpoints are never overwritten; each one points at its parent. So the history of a thread is
# a **tree**, and any checkpoint can be a starting point:
#
# * **replay** — `invoke(None, {"configurable": {"thread_id": t, "checkpoint_id": old}})` runs
#   again from `old`; the new checkpoints hang under it, a new branch;
# * **fork** — `update_state(old_config, values)` writes a new checkpoint (source `update`) as a
#   child of `old`, with your change applied as if a node had written it.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.viz import LineageGraph


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

# %% [markdown]
# ## One checkpoint, as `get_state` reports it
# `get_state(config)` reads the latest checkpoint of the thread (or the one `checkpoint_id` names)
# and returns a `StateSnapshot` (chapter 03). Its fields are everything time travel needs:

# %%
snap = graph.get_state(config)
for field in snap._fields:
    print(f"{field:<13}", getattr(snap, field))

# %% [markdown]
# `values` are the channels as the state schema shows them; `next` the nodes the next super-step
# would run (empty: the run is finished); `config` the address of this checkpoint (thread,
# namespace, id) and `parent_config` the address of its parent; `metadata` says where it came from
# (`source`, `step`); `tasks` and `interrupts` describe what is pending. `get_state_history(config)`
# yields one snapshot per checkpoint, newest first. So far the history is a straight line:

# %%
LineageGraph(graph, config)

# %% [markdown]
# ## Fork: change the past
# Pick the checkpoint *before* `plan` ran (`c1`) and pretend the input said Osaka. Without
# `as_node`, the update counts as a write by the node that ran last before that checkpoint (here,
# the input), so `plan` is still next — and now plans Osaka.

# %%
before_plan = next(s for s in graph.get_state_history(config) if s.next == ("plan",))
fork_config = graph.update_state(before_plan.config, {"city": "Osaka"})
forked = graph.get_state(fork_config)
print("fork source:", forked.metadata["source"], "| parent is the old checkpoint:",
      forked.parent_config["configurable"]["checkpoint_id"] == before_plan.config["configurable"]["checkpoint_id"])
print(graph.invoke(None, fork_config))

# %% [markdown]
# The old branch is still there. The tree now has two branches below `c1`: the dashed edge starts
# the new one, whose first checkpoint (green) is the update. The thick border marks the head — the
# checkpoint `get_state(config)` reads when no `checkpoint_id` is given: the newest one.

# %%
LineageGraph(graph, config)

# %% [markdown]
# ## Replay
# Invoking with an old `checkpoint_id` and no input re-runs everything after it.

# %%
print(graph.invoke(None, before_plan.config))
print(len(list(graph.get_state_history(config))), "checkpoints in the thread now")
LineageGraph(graph, config)

# %% [markdown]
# Replay first writes a copy of the old checkpoint (source `fork`, violet) and runs on from it, so
# the replayed steps form a third branch — nothing that happened before is lost. Branch 0 is always
# the one that ends at the head; the others are numbered by their
# last checkpoint, newest first — so the first run's branch (`c2`, `c3`) is now branch 2.
#
# ## Paging through a long history
# Chapter 03 met `list(config, before=, limit=)`; for time travel it is how a viewer pages through
# thousands of checkpoints, newest first, without loading them all (`before` is a config whose
# checkpoint is the exclusive upper bound):

# %%
saver = graph.checkpointer
page1 = list(saver.list(config, limit=4))
page2 = list(saver.list(config, before=page1[-1].config, limit=4))
for name, page in [("page 1", page1), ("page 2", page2)]:
    print(name, [(t.metadata["step"], t.metadata["source"]) for t in page])

# %% [markdown]
# ## Pruning ends time travel
# Time travel reaches only as far back as checkpoints are kept. Chapter 05's housekeeping verbs
# decide that: on a copy of the thread (`copy_thread`), `prune(..., strategy="keep_latest")` keeps
# the latest checkpoint — the state survives — but every fork point is gone.

# %%
saver.copy_thread("travel", "travel-copy")
copy_config = {"configurable": {"thread_id": "travel-copy"}}
print("copy:", len(list(graph.get_state_history(copy_config))), "checkpoints")
saver.prune(["travel-copy"], strategy="keep_latest")
kept = list(graph.get_state_history(copy_config))
print("after prune:", len(kept), "checkpoint, values", kept[0].values, "| parent:", kept[0].parent_config)
saver.delete_thread("travel-copy")

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · How much did each branch add?
# Three branches start at `before_plan` (`c1`). For each, count the checkpoints it added: its first
# checkpoint (a child of `c1`) and everything below it. Store the counts in a list `added`, one
# number per branch. (Hint: follow `parent_config` from every snapshot of `get_state_history` up
# until you meet `c1`.)

# %%
added = []  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    pid = before_plan.config["configurable"]["checkpoint_id"]
    history = list(graph.get_state_history(config))
    branches = [s for s in history if s.parent_config
                and s.parent_config["configurable"]["checkpoint_id"] == pid]
    by_id = {s.config["configurable"]["checkpoint_id"]: s for s in history}
    older, s = 1, before_plan  # c1 and its ancestors
    while s.parent_config:
        older, s = older + 1, by_id[s.parent_config["configurable"]["checkpoint_id"]]
    return check(lambda: len(added) == len(branches) and sum(added) == len(history) - older,
                 "one number per child of c1; together they count every checkpoint below c1")


check_1()

# %% [solution]
by_id = {s.config["configurable"]["checkpoint_id"]: s for s in graph.get_state_history(config)}
pid = before_plan.config["configurable"]["checkpoint_id"]


def branch_root(snapshot):
    """The child of c1 this checkpoint descends from (None if it is not below c1)."""
    while snapshot.parent_config:
        parent_id = snapshot.parent_config["configurable"]["checkpoint_id"]
        if parent_id == pid:
            return snapshot.config["configurable"]["checkpoint_id"]
        snapshot = by_id[parent_id]
    return None


roots = [branch_root(s) for s in by_id.values()]
added = [roots.count(root) for root in dict.fromkeys(r for r in roots if r)]
print(added, "checkpoints per branch")
check_1()

# %% [markdown]
# ### Exercise 2 · Cancel the first booking
# Fork from the **final checkpoint of the first run** (the Kyoto booking, `c3`) with
# `{"booked": "cancelled"}`. Keep the returned config in `cancel_config` and the new checkpoint's
# `next` in `next_after`. Why is `next` what it is?

# %%
cancel_config, next_after = None, None  # your answer


# %% [check]
def check_2():
    first_run_end = min((s for s in graph.get_state_history(config)
                         if s.values.get("booked", "").endswith("Kyoto") and not s.next),
                        key=lambda s: s.created_at)
    return check(lambda: graph.get_state(cancel_config).values["booked"] == "cancelled"
                 and graph.get_state(cancel_config).parent_config == first_run_end.config
                 and next_after == graph.get_state(cancel_config).next,
                 "update_state(<config of the first run's last checkpoint>, {'booked': 'cancelled'})")


check_2()

# %% [solution]
first_run_end = min((s for s in graph.get_state_history(config)
                     if s.values.get("booked", "").endswith("Kyoto") and not s.next),
                    key=lambda s: s.created_at)  # the oldest finished Kyoto checkpoint
cancel_config = graph.update_state(first_run_end.config, {"booked": "cancelled"})
next_after = graph.get_state(cancel_config).next
print(next_after)  # (): the update counts as a write by `book`, whose only edge goes to END
check_2()

# %% [markdown]
# ## Read it in the source
# `update_state` builds the fork (`update_as_nodes`): it applies your values as a write of
# `as_node` and saves a checkpoint (source `update`) whose parent is the one you named;
# `PregelLoop.apply_input` decides
# whether an `invoke` on an old checkpoint replays it (and first saves the `fork` copy);
# `Pregel.get_state_history` pages through the saver's `list`.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/update.py: update_as_nodes", "pregel/loop.py: PregelLoop.apply_input",
            "pregel/state.py: StateReading.get_state_history")
