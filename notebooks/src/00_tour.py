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
from lgcheckpoint.viz import (
    ChannelVersionTable,
    GraphDrawing,
    HITLPanel,
    LineageGraph,
    StorageView,
    SuperStepPlayer,
    VersionsSeenMatrix,
)

db = Path(tempfile.mkdtemp()) / "tour.sqlite"
saver_cm = SqliteSaver.from_conn_string(str(db))
graph = build_tour_graph(saver_cm.__enter__())
GraphDrawing(graph)

# %% [markdown]
# ## A thread, named by `thread_id`
# Every run of a graph that has a checkpointer belongs to a **thread**: the `thread_id` in the
# config is the key under which the saver files every checkpoint of that conversation. The same
# `thread_id` continues where the thread stopped; a new one starts from nothing. Any string will do
# (non-strings are turned into strings); pick something from your domain — `user-42:chat-7`, an
# order id, a workflow run id, a UUID. A graph with a checkpointer refuses to run without one:

# %%
try:
    graph.invoke({"destination": "Kyoto", "days": 3})
except ValueError as err:
    print(err)
print(graph.get_state({"configurable": {"thread_id": "never-used"}}).values, "<- a new thread is empty")

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
# moved past that (a red cell). At the interrupted checkpoint of the first round, `review` was next:

# %%
first_wait = next(s for s in LineageGraph(graph, config).history.steps if s.interrupts)
VersionsSeenMatrix(graph, config, key=first_wait.key)

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
# * 13 write your own saver · 14 an agent that waits for a human · 15 the studio
# * 16 two humans · 17 the functional API · 18 the delta channel · 19 managed values
# * 20 node caching
# * 21 a chat agent's memory: LangChain messages in checkpoints — ids, a fork by a message id,
#   trimming and summaries, tokens then an interrupt
#
# ## Exercises
# Each exercise has a cell for your answer and a **check** cell: run it to see `right` or
# `not yet` with a hint. The solution is the closed **Solution** block below the check: open it
# when you are stuck, copy its code into your answer cell and run it. Run All never runs a
# solution, so after Run All every check says `not yet` until you answer it.

# %% [markdown]
# ### Exercise 1 · Finish the second trip
# Resume `trip-2` with `Command(resume="approve")` and keep the bookings the run returns in
# `bookings_2`.

# %%
bookings_2 = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    check(lambda: bool(bookings_2) and graph.get_state(other).next == (),
                 "resume trip-2 with graph.invoke(Command(resume='approve'), other) "
                 "and keep out['bookings']")


check_1()

# %% [solution]
bookings_2 = graph.invoke(Command(resume="approve"), other)["bookings"]
print(bookings_2)
check_1()

# %% [markdown]
# ### Exercise 2 · Count the checkpoints
# How many checkpoints did `trip-1` write (`n_checkpoints`), and how many of them carry an
# interrupt (`n_waiting`)? Use `graph.get_state_history(config)`; a snapshot's `interrupts` field
# is non-empty when the graph was waiting for a human there.

# %%
n_checkpoints, n_waiting = None, None  # your answer

# %% [check]
def check_2():
    saved = list(graph.checkpointer.list(config))  # counted another way: the saver's own list
    waiting = sum(any(w[1] == "__interrupt__" for w in t.pending_writes) for t in saved)
    check(lambda: (n_checkpoints, n_waiting) == (len(saved), waiting),
                 "count the snapshots of get_state_history, and those whose .interrupts is non-empty")


check_2()

# %% [solution]
snapshots = list(graph.get_state_history(config))
n_checkpoints, n_waiting = len(snapshots), sum(1 for s in snapshots if s.interrupts)
print(n_checkpoints, "checkpoints,", n_waiting, "with an interrupt")
check_2()

# %% [markdown]
# ## Read it in the source
# The tour graph itself, and the two functions a stop and a resume go through: `interrupt()` raises
# inside the node the first time and returns the human's answer when the run is resumed.

# %%
from lgcheckpoint.course import show_source

show_source("tour.py: build_tour_graph", "types.py: interrupt")
