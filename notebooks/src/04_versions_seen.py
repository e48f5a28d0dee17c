# %% [markdown]
# # 04 · Channel versions and `versions_seen`: why `next` is what it is
#
# When an agent stops — for a crash, a deploy, a person to answer — and resumes in another process,
# nothing remembers which node was about to run: the resumed run must work it out from the
# checkpoint alone, and get the same answer the original run would have. Versions and
# `versions_seen` are what make that possible, and they are what you read when `next` surprises you.
#
# The scheduler's whole rule fits in one sentence:
#
# > a node runs in the next super-step if one of its **trigger channels** has a version newer than
# > the version recorded for that node in `versions_seen` (and the channel holds a value).
#
# Every write to a channel gives it a new version (in LangGraph: one more than the highest version
# in the checkpoint). When a node runs, the versions of its triggers are copied into
# `versions_seen[node]`. This chapter shows both tables for the tour graph of chapter 00.

# %%
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.course_pictures import versions_moving
from lgcheckpoint.tour import build_tour_graph
from lgcheckpoint.viz import VersionsSeenMatrix, load_history

graph = build_tour_graph(InMemorySaver())
config = {"configurable": {"thread_id": "versions"}}
graph.invoke({"destination": "Kyoto", "days": 3}, config)
history = load_history(graph, config)
print(graph.get_state(config).next)

# %% [markdown]
# ## Versions move with every write
# Columns are checkpoints (oldest first), rows are channels, and a cell is the channel's version at
# that checkpoint; yellow cells changed in the step that made that checkpoint. Note the edge channels
# (`branch:to:…`, `join:…`): they are written like any state key, and their versions are what wake
# nodes up. The last row is the **join** in front of `review`: it moves when the two research nodes
# write to it, in the step that ends at `c3`.

# %%
versions_moving(history)

# %% [markdown]
# ## What each node has seen, at the checkpoint where `review` fires
# At `c3` the research step has just finished. The matrix has one row per node and one column per
# channel; a cell is the version the node saw when it last ran (blank: never), and the top row is
# each channel's version now. A **red** cell is a trigger channel that moved past what the node saw and holds a
# value: that node fires. **Orange**: moved past it, but the channel is empty (consumed), so it
# cannot fire. **Blue**: the node is up to date with that trigger.

# %%
fires = next(s for s in history.steps if "review" in s.triggered)
print("review fires at", fires.key)
VersionsSeenMatrix(graph, config, key=fires.key)

# %% [markdown]
# `review` has never seen `join:check_weather+find_hotels:review` (0), and the join now has
# version 4 because both research nodes wrote to it: so `review` is next. The same reasoning, as
# data, from the history model every viewer shares:

# %%
for node, triggers in fires.triggered.items():
    for t in triggers:
        print(f"{node} runs: {t.channel} is at version {t.current}, {node} saw {t.seen}")
assert fires.next == ["review"]

# %% [markdown]
# The same matrix as text, `seen/current` per cell (`!` = fires, the red cells; `*` = moved, but
# the channel is empty, the orange cells):

# %%
print(VersionsSeenMatrix(graph, config, key=fires.key).text())

# %% [markdown]
# ## `updated_channels`: the scan it spares
# Applying the rule literally means asking *every* node, at every step, whether one of its
# triggers moved. The graph already knows the inverse map, `trigger_to_nodes` (channel → the nodes
# it wakes), and the step that just ended knows which channels it changed. So the loop asks only
# the nodes subscribed to a changed channel; the rest cannot have become ready. A checkpoint stores
# that set as `updated_channels` (checkpoint format v4), so a run that **resumes** from it can take
# the same short cut on its first step. `may_run` in `pregel/algo.py` is the whole short cut:

# %%
from lgcheckpoint.pregel import algo

print(f"{'step':>4}  {'updated_channels':<58} nodes asked (of {len(graph.nodes)})")
for saved in reversed(list(graph.checkpointer.list(config))):
    updated = saved.checkpoint["updated_channels"]
    asked = list(algo.may_run(graph.nodes, set(updated), graph.trigger_to_nodes))
    print(f"{saved.metadata['step']:>4}  {', '.join(updated):<58} {asked}")

# %% [markdown]
# Each step asks one or two nodes instead of six. When a checkpoint does not record the set
# (`updated_channels` is `None`, as in one written before format v4), `may_run` returns every node and
# the rule is applied to all of them — the same answer, found the slow way. The cost of the slow way
# grows with the graph: on a chain of 200 nodes, one super-step per node, the scan asks all 201
# nodes (`__start__` is one) each of the 202 times the loop plans a step. We count the calls of `should_run` (the one-sentence rule) with the short cut, and with
# it switched off:

# %%
# NBVAL_IGNORE_OUTPUT
import time
from typing import TypedDict

from lgcheckpoint.graph import END, START, StateGraph


class Counter(TypedDict):
    n: int


chain = StateGraph(Counter)
for i in range(200):
    chain.add_node(f"n{i}", lambda s: {"n": s["n"] + 1})
    chain.add_edge(START if i == 0 else f"n{i - 1}", f"n{i}")
chain.add_edge("n199", END)
chain = chain.compile()
real_should_run, real_may_run = algo.should_run, algo.may_run


def measure(label):
    calls = [0]

    def counting(*args):
        calls[0] += 1
        return real_should_run(*args)

    algo.should_run = counting
    try:
        start = time.perf_counter()
        chain.invoke({"n": 0}, {"recursion_limit": 500})
        took = time.perf_counter() - start
    finally:
        algo.should_run = real_should_run
    print(f"{label:<32} should_run called {calls[0]:>6} times   {took * 1000:5.0f} ms")
    return calls[0]


with_shortcut = measure("with updated_channels")
algo.may_run = lambda nodes, updated, index: real_may_run(nodes, None, index)  # forget it
try:
    without = measure("scanning every node")
finally:
    algo.may_run = real_may_run

# %% [markdown]
# 201 questions against 40,602 (201 nodes × 202 plans): the scan grows with nodes × steps, the
# short cut with the nodes that can actually run — here one per step. (The times are from this
# machine; they vary, the counts do not.)

# %%
assert with_shortcut == 201 and without == 201 * 202, (with_shortcut, without)

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · One checkpoint earlier
# At the checkpoint *before* `c3` (`history[-2]`), which nodes were triggered, and by which
# channels? Put the answer in `triggered_before` as `{node: [channel, ...]}`.

# %%
triggered_before = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def triggers_by_hand():  # the rule applied by hand to the raw checkpoint, to compare with
    cp = graph.checkpointer.get_tuple(history[-2].config).checkpoint
    moved = {}
    for name, node in graph.nodes.items():
        seen = cp["versions_seen"].get(name, {})
        chans = [c for c in node.triggers if c in cp["channel_values"]
                 and cp["channel_versions"].get(c, "") > seen.get(c, "")]
        if chans:
            moved[name] = chans
    return moved


def check_1():
    check(lambda: {n: sorted(c) for n, c in triggered_before.items()}
          == {n: sorted(c) for n, c in triggers_by_hand().items()},
          "history[-2].triggered maps each node to its Trigger records; keep t.channel of each")


check_1()

# %% [solution]
prev = history[-2]
triggered_before = {node: [t.channel for t in ts] for node, ts in prev.triggered.items()}
print(triggered_before)
check_1()

# %% [markdown]
# ### Exercise 2 · When the join fires
# Resume the thread (`Command(resume="approve")` from `lgcheckpoint.types`) and reload the history.
# Which checkpoint key (`"c0"`, `"c1"`, ...) is the first one where `book` fires? Put it in `book_at`.

# %%
book_at = None  # your answer

# %% [check]
def check_2():
    h = load_history(graph, config)
    check(lambda: "book" in h[book_at].triggered
          and all("book" not in s.triggered for s in h.steps[:h[book_at].index]),
          "resume, then history = load_history(graph, config) and look for 'book' in step.triggered")


check_2()

# %% [solution]
from lgcheckpoint.types import Command

graph.invoke(Command(resume="approve"), config)
history = load_history(graph, config)
book_at = next(s.key for s in history.steps if "book" in s.triggered)
print("book fires at", book_at, "triggered by", [t.channel for t in history[book_at].triggered["book"]])
check_2()

# %% [markdown]
# ## Read it in the source
# `should_run` is the one-sentence rule above; `prepare_next_tasks` applies it to the nodes
# `may_run` names;
# `NamedBarrierValue` is the join: available only when every named writer has written.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/algo.py: should_run", "pregel/algo.py: prepare_next_tasks",
            "pregel/algo.py: may_run",
            "channels/base.py: NamedBarrierValue")
