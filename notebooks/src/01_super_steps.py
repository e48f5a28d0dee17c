# %% [markdown]
# # 01 · Super-steps: how a graph runs
#
# When an agent crashes, or stops to ask a person, you need to know exactly what it finished and
# what a resume will do again. LangGraph answers that by construction: nodes run in super-steps,
# and a checkpoint is taken only between two of them, so "where the run is" is always a step
# boundary and a resume never starts in the middle of a node's work.
#
# LangGraph does not call your nodes one after another like a script. It runs them in
# **super-steps**, the Bulk Synchronous Parallel model of Google's Pregel:
#
# 1. **plan** — find every node whose input channels changed since it last ran;
# 2. **execute** — run all of them, in parallel; their writes are *not* visible to each other yet;
# 3. **update** — at the step boundary, apply all writes to the channels at once, then save a checkpoint.
#
# A checkpoint is therefore always taken *between* steps, never in the middle of one.
# This chapter watches that happen on a small graph with a fan-out and a join.

# %%
import operator
from typing import Annotated, TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph

calls = []  # which node ran, in order


class State(TypedDict):
    log: Annotated[list[str], operator.add]  # a reducer: writes from parallel nodes are added up


def node(name):
    def run(state: State) -> State:
        calls.append(name)
        return {"log": [name]}
    return run


builder = StateGraph(State)
for name in ["fetch", "left", "right", "merge"]:
    builder.add_node(name, node(name))
builder.add_edge(START, "fetch")
builder.add_edge("fetch", "left")      # fan-out: left and right are triggered by the same write
builder.add_edge("fetch", "right")
builder.add_edge(["left", "right"], "merge")  # join: merge waits for both
builder.add_edge("merge", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "steps"}}
graph.invoke({"log": []}, config)

# %% [markdown]
# ## One checkpoint per super-step
# `get_state_history` lists the checkpoints newest first. Reversed, each line is one step boundary:
# `step` is the super-step that produced it (`-1` is the input), `next` is what the *following*
# step will run.

# %%
history = list(graph.get_state_history(config))[::-1]
for snap in history:
    print(f"step {snap.metadata['step']:>2}  source={snap.metadata['source']:<5}  next={snap.next}")

# %% [markdown]
# The same history as a picture: each blue line is a checkpoint, and the yellow boxes right of it are
# the tasks of the super-step that starts there. The next checkpoint is taken only when every box of
# the step has finished.

# %%
from lgcheckpoint.course_pictures import super_steps
from lgcheckpoint.viz import load_history

super_steps(load_history(graph, config))

# %% [markdown]
# `left` and `right` appear together in one `next`: they are two **tasks of the same super-step**.
# Neither sees the other's write; both writes land at the boundary, which is why `log` needs a
# reducer (`operator.add`). The join `merge` runs only in the step after both finished.

# %%
assert [s.next for s in history] == [("__start__",), ("fetch",), ("left", "right"), ("merge",), ()]
print("final log:", history[-1].values["log"])

# %% [markdown]
# ## Stream the steps as they happen
# `stream_mode="values"` yields the whole state after every super-step: the two parallel writes of
# `left` and `right` arrive together, in one chunk, because they were applied at one boundary.

# %%
for chunk in graph.stream({"log": []}, {"configurable": {"thread_id": "steps-2"}}, stream_mode="values"):
    print(chunk)

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · A third parallel task
# Build `g2`: the same graph plus a node `audit` that also runs after `fetch`, in parallel with
# `left` and `right`, and that `merge` also waits for. Run it on `cfg2`. How many tasks does the
# super-step after `fetch` have now? (`get_state_history` will tell you.)

# %%
g2, cfg2 = None, {"configurable": {"thread_id": "ex1"}}  # your answer: build and run g2

# %% [check]
from lgcheckpoint.course import check


def check_1():
    check(lambda: "audit" in g2.nodes
          and any(len(s.next) == 3 for s in g2.get_state_history(cfg2))
          and g2.get_state(cfg2).values["log"][-1] == "merge",
          "add audit with add_edge('fetch', 'audit'), join it in add_edge([...], 'merge'), "
          "compile with a checkpointer and invoke on cfg2")


check_1()

# %% [solution]
b2 = StateGraph(State)
for name in ["fetch", "left", "right", "audit", "merge"]:
    b2.add_node(name, node(name))
b2.add_edge(START, "fetch")
for name in ["left", "right", "audit"]:
    b2.add_edge("fetch", name)
b2.add_edge(["left", "right", "audit"], "merge")
g2 = b2.compile(checkpointer=InMemorySaver())
g2.invoke({"log": []}, cfg2)
print([s.next for s in list(g2.get_state_history(cfg2))[::-1]])  # 3 tasks in the second step
check_1()

# %% [markdown]
# ### Exercise 2 · Without a reducer
# Declare `log` as a plain `list[str]` (no reducer), run the fan-out graph, and keep the exception
# in `caught`. Why can the step not finish?

# %%
caught = None  # your answer

# %% [check]
from lgcheckpoint.errors import InvalidUpdateError


def check_2():
    check(lambda: isinstance(caught, InvalidUpdateError) and "log" in str(caught),
          "a State with `log: list[str]`, the same edges, invoke inside try/except and keep the error")


check_2()

# %% [solution]
class Plain(TypedDict):
    log: list[str]  # LastValue: one value per step


def plain_node(name):  # no `state: State` annotation: that would bring State's reducer back
    return lambda state: {"log": [name]}


b3 = StateGraph(Plain)
for name in ["fetch", "left", "right", "merge"]:
    b3.add_node(name, plain_node(name))
b3.add_edge(START, "fetch")
b3.add_edge("fetch", "left")
b3.add_edge("fetch", "right")
b3.add_edge(["left", "right"], "merge")
try:
    b3.compile().invoke({"log": []})
except InvalidUpdateError as err:
    caught = err
print(str(caught).splitlines()[0])
print("left and right write `log` in the same step; a LastValue channel keeps one value per step")
check_2()

# %% [markdown]
# ## Read it in the source
# `PregelLoop.run` is the super-step loop on one screen; `tick` is one step's plan; and
# `prepare_next_tasks` decides which nodes the next step runs.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/loop.py: PregelLoop.run", "pregel/loop.py: PregelLoop.tick",
            "pregel/algo.py: prepare_next_tasks")
