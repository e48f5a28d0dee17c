# %% [markdown]
# # 03 · Anatomy of a checkpoint
#
# When an agent misbehaves in production, the checkpoint is the one record of what it knew and
# what it was about to do — and the only thing a resumed run has to go on. Reading one field by
# field tells you why a run resumed where it did, which values a node will see, and what a saver
# has to store; every later chapter reads these fields.
#
# A checkpoint is a plain dict. Every field has one job:
#
# | field | job |
# |---|---|
# | `v` | format version (LangGraph 1.2 writes 4) |
# | `id` | a UUID v6: unique, and sorting ids sorts checkpoints by time |
# | `ts` | when, for people (ISO 8601, UTC) |
# | `channel_values` | the value of every channel that *holds* a value now (see below) |
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
# ## One checkpoint, drawn
# The latest checkpoint of this thread, as nested boxes: the `CheckpointTuple` the saver returned
# (blue) around the `Checkpoint` dict (orange). Every line below is read from `saved`:

# %%
from lgcheckpoint.course_pictures import checkpoint_anatomy

checkpoint_anatomy(saved)

# %% [markdown]
# ## The checkpoint, field by field
# Versions are strings like `00000000000000000000000000000002.0.1234…` in the in-memory saver: the
# integer part is the version, the random suffix only makes each write's version unique (the
# section after this one says why).

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
# Compare `channel_values` with `channel_versions`: `__start__` and `branch:to:think` have versions
# but **no value**. `channel_values` holds only the channels that hold a value at this boundary;
# a trigger channel is emptied once the node it woke has run (that emptying is why its version
# moved), and an empty channel is left out. Its version stays, so the scheduler still knows it moved.

# %%
absent = sorted(set(saved.checkpoint["channel_versions"]) - set(saved.checkpoint["channel_values"]))
print("versioned but empty:", absent)
assert absent == ["__start__", "branch:to:think"]

# %% [markdown]
# ## Where versions come from: `get_next_version`
# The loop never invents a version. For each channel a step changed it asks the saver,
# `saver.get_next_version(current, None)`, so the saver decides the format. The base class counts
# in integers; LangGraph's InMemory, SQLite and Postgres savers (and lgcheckpoint's, to read and
# continue the same threads) write **strings**: the counter padded to 32 digits, a dot, and a random
# float — `f"{counter:032}.{random.random():016}"`.

# %%
# NBVAL_IGNORE_OUTPUT
from lgcheckpoint.checkpoint.base import BaseCheckpointSaver

ints, strings = [None], [None]
for _ in range(3):
    ints.append(BaseCheckpointSaver().get_next_version(ints[-1]))
    strings.append(saver.get_next_version(strings[-1], None))
for i, s in zip(ints[1:], strings[1:]):
    print(f"{i!r:<3} {s!r}")

# %% [markdown]
# Why strings, and why padded: the scheduler compares versions with `>` (chapter 04), and text
# compares character by character, so unpadded numbers sort wrong. With 32 digits, text order is
# number order, and the random tail never decides between two different counters:

# %%
print(sorted(["9", "10", "11"]), " <- text order of plain numbers")
print([v[-2:] for v in sorted(f"{n:032}" for n in (9, 10, 11))], " <- padded: 09 < 10 < 11")
assert sorted(strings[1:]) == strings[1:]

# %% [markdown]
# Why the random tail: two branches of one thread can give a channel the *same* counter. Fork the
# head twice with `update_state` (chapter 09; on a copy of the thread, so the rest of this chapter
# reads the original) and each fork writes `answer` at counter 4 — with a different value. The in-memory and Postgres savers key a stored value by (thread, namespace,
# channel, **version**), and Postgres keeps the first row of a key (`ON CONFLICT DO NOTHING`):
# without the tail, the second fork would read the first fork's answer. With it, both survive:

# %%
# NBVAL_IGNORE_OUTPUT
saver.copy_thread("anatomy", "anatomy-forks")
head = saver.get_tuple({"configurable": {"thread_id": "anatomy-forks"}}).config
forks = [graph.update_state(head, {"answer": text}) for text in ("forty-two", "6 x 7")]
for fork in forks:
    version = saver.get_tuple(fork).checkpoint["channel_versions"]["answer"]
    print(f"{version[:4]}…{version[28:42]}…", "->", graph.get_state(fork).values["answer"])
answer_blobs = sorted(v for (thread, ns, chan, v) in saver.blobs
                      if thread == "anatomy-forks" and chan == "answer")
print(len(answer_blobs), "stored values of `answer`, counters", [int(v[:32]) for v in answer_blobs])
assert [graph.get_state(f).values["answer"] for f in forks] == ["forty-two", "6 x 7"]

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
# ## Paging through a thread: `list(config, before=, limit=)`
# `list` yields newest first. `limit=n` stops after n; `before=` a checkpoint's config starts
# strictly older than it — together they page through a long thread without loading all of it.
# `filter=` keeps checkpoints whose metadata has the given key/value pairs.

# %%
newest = next(saver.list(config))
page = list(saver.list(config, before=newest.config, limit=1))
print("newest:", newest.metadata["step"], "| the one before it:", [t.metadata["step"] for t in page])
print("loop checkpoints:", [t.metadata["step"] for t in saver.list(config, filter={"source": "loop"})])

# %% [markdown]
# ## What `get_state` makes of a checkpoint: the `StateSnapshot`
# Applications rarely read checkpoints; they call `graph.get_state(config)`, which loads the tuple
# (`get_tuple`), rebuilds the channels and works out what would run next:
#
# | field | what it is |
# |---|---|
# | `values` | the state: the state keys' channel values |
# | `next` | the nodes the next super-step would run (empty: the thread is finished) |
# | `config` | the config of this checkpoint (with its `checkpoint_id`): pass it to resume or fork here |
# | `metadata` | the checkpoint's metadata (`source`, `step`, `parents`, ...) |
# | `created_at` | the checkpoint's `ts` |
# | `parent_config` | the config of the checkpoint before it |
# | `tasks` | the next step's tasks (`PregelTask`: id, name, error, interrupts, result) |
# | `interrupts` | the interrupts waiting for an answer at this checkpoint |
#
# `get_state_history(config)` yields one snapshot per checkpoint, newest first.

# %%
snap = graph.get_state(config)
for name in snap._fields:
    print(f"{name:<14}", repr(getattr(snap, name)))
first = list(graph.get_state_history(config))[-1]
print("\nthe input checkpoint would run:", first.next, "| tasks:", [t.name for t in first.tasks])

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · What `think` has seen
# Put in `seen_by_think` the set of channels that the final checkpoint's `versions_seen["think"]`
# mentions. Why only those?

# %%
seen_by_think = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    check(lambda: seen_by_think == set(graph.nodes["think"].triggers),
          "read saved.checkpoint['versions_seen']['think'] and keep its keys as a set")


check_1()

# %% [solution]
seen_by_think = set(saved.checkpoint["versions_seen"]["think"])
print(seen_by_think, "-- a node records only the versions of its trigger channels")
check_1()

# %% [markdown]
# ### Exercise 2 · One page of history
# Put in `older` the two checkpoints (as `CheckpointTuple`s) that come right before the newest one,
# newest first, with a single `saver.list(...)` call.

# %%
older = None  # your answer

# %% [check]
def check_2():
    ids = [t.checkpoint["id"] for t in saver.list(config)]
    check(lambda: [t.checkpoint["id"] for t in older] == ids[1:3],
          "saver.list(config, before=<the newest tuple's config>, limit=2)")


check_2()

# %% [solution]
older = list(saver.list(config, before=saver.get_tuple(config).config, limit=2))
print([t.metadata["step"] for t in older])
check_2()

# %% [markdown]
# ## Read it in the source
# `channel_values` copies the channels' values (and leaves empty channels out); `create_checkpoint`
# puts them in a new checkpoint at each boundary; `CheckpointTuple` is what a saver returns;
# `snapshot` turns one into a `StateSnapshot` for `get_state`.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/checkpoint.py: channel_values", "pregel/checkpoint.py: create_checkpoint",
            "checkpoint/base.py: CheckpointTuple", "pregel/state.py: snapshot")
