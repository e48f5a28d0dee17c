# %% [markdown]
# # 08 · Human in the loop: interrupt and resume
#
# `interrupt(value)` inside a node stops the whole graph and hands `value` to a person. The run
# ends; nothing waits in memory. What makes it resumable is the checkpoint: the node's task is
# still `next`, and an `INTERRUPT` pending write records what it asked. `Command(resume=answer)`
# starts a new run that re-executes the node, and this time `interrupt()` *returns* the answer.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt

runs = []


class Post(TypedDict, total=False):
    draft: str
    status: str


def write(post):
    return {"draft": "Checkpoints make agents durable."}


def approve(post):
    runs.append("approve")  # counts executions: the node runs again on resume
    verdict = interrupt({"question": "Publish this?", "draft": post["draft"]})
    return {"status": "published" if verdict == "yes" else f"rejected: {verdict}"}


builder = StateGraph(Post)
builder.add_node("write", write)
builder.add_node("approve", approve)
builder.add_edge(START, "write")
builder.add_edge("write", "approve")
builder.add_edge("approve", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "hitl"}}

result = graph.invoke({}, config)
print(result["__interrupt__"][0].value)

# %% [markdown]
# The run stopped. The snapshot says who is waiting and for what:

# %%
snap = graph.get_state(config)
print("next:", snap.next)
print("interrupts:", [i.value for i in snap.interrupts])
print("task:", snap.tasks[0].name, [i.value for i in snap.tasks[0].interrupts])
assert snap.next == ("approve",)

# %% [markdown]
# The question is stored as a pending write on the latest checkpoint, under the special channel
# `__interrupt__` (index -3 in `WRITES_IDX_MAP`).

# %%
saved = graph.checkpointer.get_tuple(config)
for _task_id, channel, value in saved.pending_writes:
    print(channel, [(type(i).__name__, i.value) for i in value])

# %% [markdown]
# ## Resume
# The node runs again from its first line; `interrupt()` now returns `"yes"`.

# %%
print(graph.invoke(Command(resume="yes"), config))
print("approve ran", runs.count("approve"), "times")
assert graph.get_state(config).next == ()

# %% [markdown]
# ## Breakpoints: `interrupt_before`
# Without touching the nodes, `compile(interrupt_before=[...])` stops before a node runs;
# `invoke(None, config)` continues.

# %%
paused = builder.compile(checkpointer=InMemorySaver(), interrupt_before=["approve"])
cfg = {"configurable": {"thread_id": "breakpoint"}}
paused.invoke({}, cfg)
print("stopped before:", paused.get_state(cfg).next)

# %% [markdown]
# ## Exercises
# 1. Resume the breakpoint thread above with `invoke(None, cfg)`: where does it stop next, and why?
# 2. Make `approve` ask two questions (two `interrupt()` calls). How many resumes does the run need?

# %% [solution]
out = paused.invoke(None, cfg)  # runs approve, which now asks its own question
print(out["__interrupt__"][0].value["question"])
paused.invoke(Command(resume="yes"), cfg)
print(paused.get_state(cfg).values["status"])
# 2: two -- the first resume answers interrupt #1 and stops at #2; answers are matched by position.
