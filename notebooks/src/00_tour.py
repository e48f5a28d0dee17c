# %% [markdown]
# # 00 · A tour: a travel planner that waits for your approval
#
# This course takes apart how LangGraph makes long-running agents **durable**: every super-step of
# a graph ends in a *checkpoint*, so a run can stop — for a crash, or for a human — and resume later,
# even in another process. lgcheckpoint is a compact re-implementation of that machinery that
# writes the same checkpoints as LangGraph 1.2, plus viewers that show what is inside them.
#
# The tour runs a travel planner on a SQLite file: it drafts a plan, researches weather and hotels
# in parallel, **stops for your approval**, and books — or redrafts if you reject.

# %%
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.tour import build_tour_graph
from lgcheckpoint.types import Command
from lgcheckpoint.viz import (ChannelVersionTable, GraphDrawing, HITLPanel, LineageGraph,
                              StorageView, SuperStepPlayer, VersionsSeenMatrix)

db = Path(tempfile.mkdtemp()) / "tour.sqlite"
saver_cm = SqliteSaver.from_conn_string(str(db))
graph = build_tour_graph(saver_cm.__enter__())
GraphDrawing(graph)

# %% [markdown]
# ## Run until the graph asks a human

# %%
config = {"configurable": {"thread_id": "trip-1"}}
result = graph.invoke({"destination": "Kyoto", "days": 3}, config)
print(result["__interrupt__"][0].value)
snapshot = graph.get_state(config)
print("waiting at:", snapshot.next)
assert snapshot.next == ("review",)

# %% [markdown]
# The process could exit now: everything needed to continue is in `tour.sqlite`. The **lineage**
# shows the checkpoints written so far — one per super-step — with the interrupt marked:

# %%
LineageGraph(graph, config)

# %% [markdown]
# ## Answer: reject once, then approve
# `Command(resume=...)` starts a new run from the last checkpoint; `interrupt()` returns the answer.

# %%
out = graph.invoke(Command(resume="add a rest day"), config)
print(out["plan"], "->", out["__interrupt__"][0].value["question"])
out = graph.invoke(Command(resume="approve"), config)
print(out["bookings"])

# %% [markdown]
# The same answers can come from a panel of buttons (approve / reject / edit) in a live kernel:

# %%
# NBVAL_IGNORE_OUTPUT
other = {"configurable": {"thread_id": "trip-2"}}
graph.invoke({"destination": "Lisbon", "days": 2}, other)
panel = HITLPanel(graph, other)
panel.widget()

# %%
assert [i.value["plan"] for i in panel.interrupts] == ["2-day trip to Lisbon"]
print(panel)

# %% [markdown]
# ## What the checkpoints hold
# **Channel versions**: every write gives a channel a new version. Yellow cells changed in that step.

# %%
table = ChannelVersionTable(graph, config)
print(table)
table

# %% [markdown]
# **versions_seen**: what each node saw the last time it ran. A node fires when a trigger channel
# moved past that (`!`). At the interrupted checkpoint of the first round, `review` was next:

# %%
first_wait = next(s for s in LineageGraph(graph, config).history.steps if s.interrupts)
matrix = VersionsSeenMatrix(graph, config, key=first_wait.key)
print(matrix.text())

# %% [markdown]
# **Super-step player**: step through the history; each frame highlights the tasks of that step on
# the graph.

# %%
# NBVAL_IGNORE_OUTPUT
SuperStepPlayer(graph, config).widget()

# %%
player = SuperStepPlayer(graph, config, index=3)  # the step where the research ran in parallel
frame = player.frames[3]
print("tasks:", frame.ran, "| versions moved:", [(c, a, b) for c, a, b in frame.moved])
player

# %% [markdown]
# **As stored**: SQLite keeps each checkpoint in one row, values inline, and every task's writes in
# `writes`.

# %%
print(StorageView(graph, config))

# %% [markdown]
# ## Where next
# * 01 super-steps · 02 channels · 03 checkpoint anatomy · 04 versions_seen
# * 05 savers · 06 serializer and security · 07 durability modes
# * 08 human in the loop · 09 time travel · 10 failures · 11 subgraphs · 12 a LangGraph database
#
# ## Exercises
# 1. Resume `trip-2` with `Command(resume="approve")` and check its bookings.
# 2. How many checkpoints did `trip-1` write, and how many of them carry an interrupt?

# %% [solution]
print(graph.invoke(Command(resume="approve"), other)["bookings"])
steps = LineageGraph(graph, config).history.steps
print(len(steps), "checkpoints,", sum(1 for s in steps if s.interrupts), "with an interrupt")
