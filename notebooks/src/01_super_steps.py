# %% [markdown]
# # 01 · Super-steps: how a graph runs
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
# 1. Add a node `audit` that also runs after `fetch`, in parallel with `left` and `right`.
#    How many tasks does the super-step after `fetch` have now? Check it with `get_state_history`.
# 2. Without a reducer on `log`, what error do you expect when `left` and `right` both write? Why?

# %% [solution]
b2 = StateGraph(State)
for name in ["fetch", "left", "right", "audit", "merge"]:
    b2.add_node(name, node(name))
b2.add_edge(START, "fetch")
for name in ["left", "right", "audit"]:
    b2.add_edge("fetch", name)
b2.add_edge(["left", "right", "audit"], "merge")
g2 = b2.compile(checkpointer=InMemorySaver())
cfg2 = {"configurable": {"thread_id": "ex1"}}
g2.invoke({"log": []}, cfg2)
steps = [s.next for s in list(g2.get_state_history(cfg2))[::-1]]
print(steps)
assert ("left", "right", "audit") in steps  # tasks are listed in the order nodes were added
# 2: an InvalidUpdateError -- a plain (LastValue) channel accepts one write per step.
