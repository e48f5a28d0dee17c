# %% [markdown]
# # 15 · The studio: drive a thread live — step, break, fork, answer
#
# Debugging an agent by rerunning it end to end and reading logs is slow: every run repeats the
# calls before the bug, and a print shows one moment, not how the state got there. Driving the
# thread one super-step at a time, with the state in view at each checkpoint, shows where it goes
# wrong.
#
# The viewers of the earlier chapters replay a thread that already ran. The **studio** drives one
# while you watch: one super-step at a time, stopping at breakpoints, going back to an older
# checkpoint to replay or fork it, and answering interrupts. It is a debugger for a graph — and
# every button is one ordinary call on the compiled graph:
#
# | button | the call it makes |
# |---|---|
# | **Step** | `graph.invoke(None, config, interrupt_after=<every node>)` — stops after one super-step |
# | **Run** | `graph.invoke(None, config, interrupt_before=B, interrupt_after=A)` — your breakpoints |
# | **approve / reject / edit** | `graph.invoke(Command(resume=answer), config, ...)` |
# | **replay from here** | `graph.invoke(None, <config of that checkpoint>, ...)` |
# | **fork here** | `graph.update_state(<config of that checkpoint>, values, as_node=...)` |
#
# So what the studio writes is exactly what those calls write; the tests check this against
# LangGraph too. We use the travel planner of the tour, on a SQLite file.

# %%
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.demos import build_travel_planner
from lgcheckpoint.viz import Refused, Studio

db = Path(tempfile.mkdtemp()) / "studio.sqlite"
saver_cm = SqliteSaver.from_conn_string(str(db))  # stays open: the widget below uses it
graph = build_travel_planner(saver_cm.__enter__())
config = {"configurable": {"thread_id": "trip"}}
studio = Studio(graph, config, input={"destination": "Kyoto", "days": 3})
studio

# %% [markdown]
# ## Step: exactly one super-step
# An empty thread starts from the input. The first step writes the input checkpoint (step -1) and
# runs `__start__`, which copies the input into the state channels (step 0). Each later step runs
# the nodes whose trigger channels moved past what they had seen — the `versions_seen` rule of
# chapter 04. The picture shows the topology with the nodes that ran (red), the edges they fired,
# the nodes that run next (blue), and the lineage beside it.

# %%
studio.step({"destination": "Kyoto", "days": 3})
studio.step()
print(studio.frame_text())
studio

# %% [markdown]
# `draft_plan` ran and wrote `plan` plus two routing channels; both researchers run next because
# their `branch:to:…` channel is now at a version they have not seen. The studio shows those rows
# of `versions_seen` (seen / current; red = runs next) for the selected checkpoint:

# %%
print({node: [(t.channel, t.seen, t.current) for t in why]
       for node, why in studio.shown.triggered.items()})

# %% [markdown]
# ## The live widget
# In a running notebook, `studio.widget()` is the same thing with buttons: **Step**, **Run**, a
# toggle per node for a breakpoint *before* or *after* it (or click a node in the drawing), the
# lineage where a click selects a checkpoint, the forms to fork and to answer interrupts. Keys:
# `s` step, `r` run, `n`/`p` next/previous checkpoint. (Saved notebooks cannot show widgets, which
# is why this chapter also draws each state as a picture.)
#
# Outside Jupyter, the same widget is a web page for a projector:
# `lgcheckpoint studio travel_planner --db trip.sqlite` serves it with Voilà.

# %%
studio.widget()

# %% [markdown]
# ## Breakpoints, then the interrupt
# A breakpoint *before* `book` stops the run in front of it. Run goes through the research step and
# then stops at `review`, which asks a human with `interrupt()`:

# %%
studio.toggle_breakpoint("book", "before")
studio.run()
print(studio.message)
print([i.value for i in studio.pending])

# %% [markdown]
# While an interrupt is pending, stepping would only run `review` again and ask again, so the
# studio refuses — and writes nothing:

# %%
try:
    studio.step()
except Refused as refusal:
    print(refusal)

# %%
studio.answer("approve")
print(studio.message)
studio

# %% [markdown]
# ## Every action re-reads the thread first
# The widget above was drawn a while ago. If anything else moves the thread — another cell, another
# process, a colleague — the studio notices: an action made on an out-of-date view is refused,
# with the reason, and the view is redrawn. That is the fix for the approval panel of chapter 00,
# which used to answer a question that had already been answered.

# %%
drawn = studio.drawn_head
graph.invoke(None, config)  # someone else continues the thread (book runs)
try:
    studio.answer("reject", expected_head=drawn)
except Refused as refusal:
    print(refusal)

# %% [markdown]
# ## Time travel: fork an old checkpoint and continue it
# Select the checkpoint where the plan was drafted and fork it as if `draft_plan` had planned five
# days. The fork is a new checkpoint (source `update`) under the old one: the lineage branches.
# Stepping now continues the newest checkpoint — the fork.

# %%
drafted = next(s for s in studio.history.steps if "plan" in s.updated_channels)
studio.fork(drafted.key, {"days": 5, "plan": "5-day trip to Kyoto"}, as_node="draft_plan")
studio.step()
print(studio.message)
studio

# %% [markdown]
# ### Exercise 1 · Replay from the first loop checkpoint
# Replay the thread from checkpoint `c1` (the one `__start__` wrote) with `studio.replay(...)`:
# the graph runs again from there, on a third branch, until the `review` interrupt.
# Keep the number of branches of the lineage afterwards in `branches`
# (each `Step` of `studio.history.steps` has a `.branch`).

# %%
branches = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    check(lambda: branches == len({s.branch for s in studio.history.steps}) == 3
          and bool(studio.pending),
          "call studio.replay('c1'), then count the distinct s.branch values")


check_1()

# %% [solution]
studio.replay("c1")
branches = len({s.branch for s in studio.history.steps})
print(branches, studio.message)
check_1()

# %% [markdown]
# ## A long thread stays usable
# The lineage shows the newest 30 checkpoints (`page_size`); older ones fold into one box and the
# *older* / *newer* buttons page through them. A 1,000-checkpoint thread opens in well under two
# seconds (measured by `bench/bench_studio.py`).

# %%
print(studio.pages, "page(s) of", studio.page_size, "checkpoints;", len(studio.history), "in all")
studio

# %% [markdown]
# ## Read it in the source
# `Studio.step` and `Studio.run` are one `invoke` each, with the breakpoints passed per call;
# `Studio._check` is the re-read-and-refuse rule every action goes through; `Studio.fork` is
# `update_state` on the selected checkpoint.

# %%
from lgcheckpoint.course import show_source

show_source("viz/studio.py: Studio.step", "viz/studio.py: Studio._check",
            "viz/studio.py: Studio.fork")
