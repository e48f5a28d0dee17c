# %% [markdown]
# # 03 · Anatomy of a checkpoint
#
# A checkpoint is a plain dict. Every field has one job:
#
# | field | job |
# |---|---|
# | `v` | format version (LangGraph 1.2 writes 4) |
# | `id` | a UUID v6: unique, and sorting ids sorts checkpoints by time |
# | `ts` | when, for people (ISO 8601, UTC) |
# | `channel_values` | the value of every channel that was ever written |
# | `channel_versions` | the version of every channel: it grows on each write |
# | `versions_seen` | for each node, the channel versions it has already run on |
# | `updated_channels` | the channels written in the step that made this checkpoint |
#
# Around it, a saver returns a `CheckpointTuple`: the config that addresses it, the checkpoint,
# its metadata, the parent's config, and the pending writes made *after* it.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph


class State(TypedDict):
    question: str
    answer: str


builder = StateGraph(State)
builder.add_node("think", lambda s: {"answer": f"42 ({s['question']})"})
builder.add_edge(START, "think")
builder.add_edge("think", END)
saver = InMemorySaver()
graph = builder.compile(checkpointer=saver)
config = {"configurable": {"thread_id": "anatomy"}}
graph.invoke({"question": "meaning of life?"}, config)

saved = saver.get_tuple(config)
print(type(saved).__name__, saved._fields)

# %% [markdown]
# ## The checkpoint, field by field
# Versions are strings like `00000000000000000000000000000002.0.1234…` in the in-memory saver: the
# integer part is the version, the random suffix only makes each write's version unique.

# %%
def show(checkpoint):
    print("v               ", checkpoint["v"])
    print("id              ", checkpoint["id"])
    print("channel_values  ", checkpoint["channel_values"])
    print("channel_versions", {k: int(str(v).split(".")[0]) for k, v in checkpoint["channel_versions"].items()})
    print("versions_seen   ", {n: {k: int(str(v).split(".")[0]) for k, v in seen.items()}
                               for n, seen in checkpoint["versions_seen"].items()})
    print("updated_channels", checkpoint["updated_channels"])


show(saved.checkpoint)

# %% [markdown]
# ## Metadata: why this checkpoint exists
# `source` is `input` for the checkpoint that stores the input (step -1), `loop` for every
# super-step, `update` for `update_state`, `fork` for a copy. `parents` links a subgraph's
# checkpoint to the enclosing graph's (empty at the top level).

# %%
for t in saver.list(config):
    md = t.metadata
    print(f"step={md['step']:>2} source={md['source']:<5} parents={md['parents']} "
          f"parent={'yes' if t.parent_config else 'none'}")

# %% [markdown]
# ## The id encodes the time and the step
# A UUID v6 puts the timestamp first, so string order is time order. LangGraph also stores the
# step number in the 14-bit `clock_seq` field.

# %%
from uuid import UUID

ids = [t.checkpoint["id"] for t in saver.list(config)]
assert ids == sorted(ids, reverse=True), "list() is newest first, and ids sort by time"
for cid in reversed(ids):
    u = UUID(cid)
    print("version", u.version, " clock_seq & 0x3FFF =", u.clock_seq & 0x3FFF)

# %% [markdown]
# The input checkpoint has step -1, which is 16383 in 14 bits; the loop steps are 0 and 1.
#
# ## Exercises
# 1. Which channels does the final checkpoint's `versions_seen["think"]` mention, and why only those?
# 2. Make a checkpoint id yourself with `lgcheckpoint.checkpoint.id.uuid6(clock_seq=7)` and read the step back.

# %% [solution]
print(sorted(saved.checkpoint["versions_seen"]["think"]))  # only think's trigger channel
from lgcheckpoint.checkpoint.id import uuid6

assert uuid6(clock_seq=7).clock_seq & 0x3FFF == 7
