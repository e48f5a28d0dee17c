# %% [markdown]
# # 04 · Channel versions and `versions_seen`: why `next` is what it is
#
# The scheduler's whole rule fits in one sentence:
#
# > a node runs in the next super-step if one of its **trigger channels** has a version newer than
# > the version recorded for that node in `versions_seen`.
#
# Every write to a channel gives it a new version (in LangGraph: one more than the highest version
# in the checkpoint). When a node runs, the versions of its triggers are copied into
# `versions_seen[node]`. This chapter shows both tables for the tour graph of chapter 00.

# %%
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.tour import build_tour_graph
from lgcheckpoint.viz import ChannelVersionTable, VersionsSeenMatrix, load_history

graph = build_tour_graph(InMemorySaver())
config = {"configurable": {"thread_id": "versions"}}
graph.invoke({"destination": "Kyoto", "days": 3}, config)
print(graph.get_state(config).next)

# %% [markdown]
# ## Versions move with every write
# Rows are checkpoints (oldest first), columns are channels, and a cell is the channel's version at
# that checkpoint. Yellow cells changed in that step. Note the edge channels (`branch:to:…`,
# `join:…`): they are written like any state key, and their versions are what wakes nodes up.

# %%
table = ChannelVersionTable(graph, config)
print(table)
table

# %% [markdown]
# ## What each node has seen
# For the latest checkpoint, the matrix has one row per node and one column per channel:
# `seen/current`. A `!` marks a trigger channel that moved past what the node saw — that node fires.
# A `*` marks a channel that moved but cannot fire (its value was consumed, like `__start__`).

# %%
matrix = VersionsSeenMatrix(graph, config)
print(matrix.text())

# %% [markdown]
# `review` has never seen `join:check_weather+find_hotels:review` (0), and the join now has
# version 4 because both research nodes wrote to it: so `review` is next. The same reasoning, as
# data, from the history model every viewer shares:

# %%
head = load_history(graph, config)[-1]
for node, triggers in head.triggered.items():
    for t in triggers:
        print(f"{node} runs: {t.channel} is at version {t.current}, {node} saw {t.seen}")
assert head.next == ["review"]

# %% [markdown]
# The static image of the matrix (yellow = moved, red = fires):

# %%
matrix

# %% [markdown]
# ## Exercises
# 1. Look at the checkpoint *before* the last one (`load_history(graph, config)[-2]`). Which nodes
#    were triggered there, and by which channels?
# 2. Why does the join channel have to reach both writers before `review` fires? (Hint: what does
#    `NamedBarrierValue` count?)

# %% [solution]
prev = load_history(graph, config)[-2]
print({node: [t.channel for t in ts] for node, ts in prev.triggered.items()})
# 2: a join channel is "available" only after every named source has written to it, so a single
#    research node finishing bumps the version but does not make the channel fire.
