# %% [markdown]
# # 18 · DeltaChannel: store the writes, not the list
#
# A chat thread's `messages` grows by one message per step. A reducer channel
# (`Annotated[list, operator.add]`) is stored **whole** in every checkpoint that changes it, so
# 500 steps store 1 + 2 + … + 500 messages: the bytes grow with the *square* of the steps.
# Chapter 05's Postgres saver shares a value between checkpoints only while its version stays
# the same; a list that changes every step gets a new version, and a new blob, every step.
#
# LangGraph 1.2's `DeltaChannel` (beta) answers differently. Its value is **never** in a
# checkpoint, except as a full `DeltaSnapshot` every `snapshot_frequency` updates. The writes
# that build it are saved anyway — they are the pending writes of chapter 07 — so loading a
# checkpoint takes the nearest snapshot among its ancestors and **replays** the writes saved
# after it through the reducer. The counters that decide when to snapshot live in the metadata:
# `counters_since_delta_snapshot = {channel: (updates, supersteps)}`.

# %%
import operator
import os
import tempfile
from pathlib import Path
from typing import Annotated, TypedDict

import matplotlib.pyplot as plt

from lgcheckpoint.channels import DeltaChannel
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.course import check, show_source
from lgcheckpoint.course_pictures import DPI, FONT, MAX_WIDTH
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.viz import StorageView, load_history
from lgcheckpoint.viz.palette import STRONG_BLUE, STRONG_ORANGE, STRONG_RED

STEPS = 498  # turns; with the input checkpoint and START's step: 500 checkpoints


def extend(messages: list, writes: list) -> list:
    """A DeltaChannel reducer gets the value and ALL writes of a batch: (value, [w1, w2, ...])."""
    return [*messages, *(m for write in writes for m in write)]


def chat(reducer, steps=STEPS):
    """One node that adds a ~40-byte message per step."""
    class State(TypedDict):
        messages: Annotated[list, reducer]
        turn: int

    builder = StateGraph(State)
    builder.add_node("talk", lambda s: {"messages": [f"turn {s['turn']:03}: " + "words " * 4],
                                        "turn": s["turn"] + 1})
    builder.add_edge(START, "talk")
    builder.add_conditional_edges("talk", lambda s: END if s["turn"] >= steps else "talk")
    return builder


def run(builder, saver, thread):
    """Invoke a fresh thread; return the compiled graph and the thread's config."""
    config = {"configurable": {"thread_id": thread}, "recursion_limit": STEPS + 10}
    saver.delete_thread(thread)
    graph = builder.compile(checkpointer=saver)
    graph.invoke({"messages": [], "turn": 0}, config)
    return graph, config


def stored_mb(saver, config):
    """Megabytes stored after each checkpoint (rows + writes + new blobs), oldest first."""
    total, out = 0, []
    for row in StorageView(saver, config).per_checkpoint:
        total += row.checkpoint + row.writes + row.blob_bytes
        out.append(total / 1e6)
    return out


tmp = Path(tempfile.mkdtemp())
sqlite_cm = SqliteSaver.from_conn_string(str(tmp / "course18.sqlite"))
saver = sqlite_cm.__enter__()
plain_graph, plain_config = run(chat(operator.add), saver, "c18-add")
delta_graph, delta_config = run(chat(DeltaChannel(extend, snapshot_frequency=50)), saver,
                                "c18-delta")
same = plain_graph.get_state(plain_config).values == delta_graph.get_state(delta_config).values
print("the same state either way:", same)

# %% [markdown]
# ## What each checkpoint stores
# Around a snapshot the delta thread's checkpoints hold `messages` once, as a `DeltaSnapshot`
# (every 50 updates), and otherwise not at all; the metadata counts the updates since then.

# %%
for t in list(saver.list(delta_config))[::-1][48:53]:
    stored = t.checkpoint["channel_values"].get("messages")
    shown = f"DeltaSnapshot({len(stored.value)} messages)" if stored is not None else "—"
    print(f"step {t.metadata['step']:>3}: messages stored = {shown:<28} counters = "
          f"{t.metadata.get('counters_since_delta_snapshot')}")

# %% [markdown]
# ## Postgres: blob sharing
# The same plain reducer on our Postgres saver (it needs a server; `LGCHECKPOINT_POSTGRES_URI`,
# default the local one). Postgres stores a value once per version and lets every checkpoint
# with that version point at it — which saves nothing here, since `messages` changes every step.

# %%
uri = os.environ.get("LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres")
try:
    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    pg_cm = PostgresSaver.from_conn_string(uri)
    pg_saver = pg_cm.__enter__()
    pg_saver.setup()
except Exception as err:  # no server: say so in one line and carry on with SQLite only
    print(f"Postgres not available ({type(err).__name__}): the plot shows SQLite only.")
    pg_saver = None
curves = {"operator.add on SQLite": stored_mb(saver, plain_config),
          "DeltaChannel(every 50) on SQLite": stored_mb(saver, delta_config)}
if pg_saver is not None:
    _, pg_config = run(chat(operator.add), pg_saver, "c18-add")
    curves["operator.add on Postgres (blobs shared by version)"] = stored_mb(pg_saver, pg_config)
for name, mb in curves.items():
    print(f"{name:<52} {mb[-1]:6.2f} MB after {len(mb)} checkpoints")

# %% [markdown]
# ## Bytes stored, step by step
# The plain reducer's curve bends upward (quadratic) — on SQLite and on Postgres alike, the dashed
# line lies on the red one. The delta channel's grows in a straight line (each step adds one
# message, once, as a write), with a small step at each snapshot.

# %%
fig, ax = plt.subplots(figsize=(MAX_WIDTH, 3.8), dpi=DPI, layout="constrained")
for (name, mb), colour in zip(curves.items(), (STRONG_RED, STRONG_BLUE, STRONG_ORANGE)):
    ax.plot(range(-1, len(mb) - 1), mb, label=name, color=colour,
            linestyle="--" if "Postgres" in name else "-", linewidth=2)
ax.set_xlabel("step", fontsize=FONT)
ax.set_ylabel("MB stored so far", fontsize=FONT)
ax.tick_params(labelsize=FONT)
ax.legend(fontsize=FONT - 1, loc="upper left")
ax.set_title(f"One ~40-byte message per step, {STEPS + 2} checkpoints", fontsize=FONT)

plt.show()

# %% [markdown]
# ## What a load re-reads
# The price is paid when a checkpoint is **loaded** (`invoke` on the thread, `get_state`, a fork):
# the runtime asks the saver for `get_delta_channel_history(config=..., channels=["messages"])`,
# which walks the parents back to the nearest snapshot (the *seed*) and returns the writes saved
# since, oldest first. The viewers show this as `delta (snapshot cN + k writes)`; given the graph
# they rebuild the value with its reducer, as a load does.

# %%
head = saver.get_tuple(delta_config)
history = saver.get_delta_channel_history(config=head.config, channels=["messages"])["messages"]
print("seed:", type(history["seed"]).__name__, "with", len(history["seed"].value), "messages")
print("writes replayed on top:", len(history["writes"]))
steps = load_history(saver, delta_config, graph=delta_graph).steps
print("the viewer says:", steps[-1].values["messages"])
replayed = [getattr(s.values.get("messages"), "writes", 0) for s in steps]

fig, ax = plt.subplots(figsize=(MAX_WIDTH, 2.6), dpi=DPI, layout="constrained")
ax.fill_between(range(-1, len(replayed) - 1), replayed, step="post", color=STRONG_BLUE)
ax.set_xlabel("step of the checkpoint loaded", fontsize=FONT)
ax.set_ylabel("writes replayed", fontsize=FONT)
ax.tick_params(labelsize=FONT)
ax.set_title("Loading a checkpoint replays the writes since the last snapshot", fontsize=FONT)

plt.show()

# %% [markdown]
# `snapshot_frequency` trades one against the other: a snapshot costs a full copy of the list,
# a long gap costs replaying up to that many writes on every load. (LangGraph also snapshots a
# channel after 5000 super-steps without one, and whenever a branch starts from a checkpoint
# whose saved writes belong to another branch: a fork must never replay them.)
#
# ## Exercises

# %% [markdown]
# ### Exercise 1 · A shorter gap
# Run `chat(DeltaChannel(extend, snapshot_frequency=10), steps=100)` on `saver` as thread
# `"c18-every10"` (use `run`). Put in `snapshots` how many of its checkpoints store a
# `DeltaSnapshot` (look at `channel_values` in `saver.list(config)`), and in `most_replayed` the
# most writes any of its checkpoints replays on load (the `.writes` of the values
# `load_history` shows). What would `snapshot_frequency=1` make of this thread?

# %%
snapshots = most_replayed = None  # your answer

# %% [check]
def check_1():
    every10 = {"configurable": {"thread_id": "c18-every10"}}
    stored = [t.checkpoint["channel_values"].get("messages") for t in saver.list(every10)]
    shown = [s.values.get("messages") for s in load_history(saver, every10).steps]
    check(lambda: len(stored) == 102 and snapshots == sum(v is not None for v in stored)
          and most_replayed == max(getattr(v, "writes", 0) for v in shown),
          "run(chat(DeltaChannel(extend, snapshot_frequency=10), steps=100), saver, "
          "'c18-every10'), then count the stored values and take the largest .writes")


check_1()

# %% [solution]
_, every10 = run(chat(DeltaChannel(extend, snapshot_frequency=10), steps=100), saver,
                 "c18-every10")
snapshots = sum("messages" in t.checkpoint["channel_values"] for t in saver.list(every10))
most_replayed = max(getattr(s.values.get("messages"), "writes", 0)
                    for s in load_history(saver, every10).steps)
print(f"{snapshots} snapshots in 102 checkpoints; a load replays at most {most_replayed} writes")
print("snapshot_frequency=1 stores the whole list at every step: operator.add's bytes again")
check_1()

# %% [markdown]
# ### Exercise 2 · Rebuild a value by hand
# Take the checkpoint of step 120 on the delta thread. Ask the saver for its history of
# `messages`, and rebuild the value yourself: the seed's `.value`, then `extend` over the
# writes' values (each write is `(task_id, channel, value)`). Put it in `rebuilt`.

# %%
rebuilt = None  # your answer

# %% [check]
def check_2():
    at_120 = next(t for t in saver.list(delta_config) if t.metadata["step"] == 120)
    check(lambda: rebuilt == delta_graph.get_state(at_120.config).values["messages"]
          and len(rebuilt) == 120,
          "saver.get_delta_channel_history(config=<step 120's config>, channels=['messages']), "
          "then extend(seed.value, [value for _, _, value in writes])")


check_2()

# %% [solution]
at_120 = next(t for t in saver.list(delta_config) if t.metadata["step"] == 120)
found = saver.get_delta_channel_history(config=at_120.config, channels=["messages"])["messages"]
rebuilt = extend(found["seed"].value, [value for _, _, value in found["writes"]])
print(len(found["seed"].value), "from the snapshot +", len(found["writes"]), "writes =",
      len(rebuilt), "messages")
check_2()

# %% [markdown]
# ## Read it in the source
# `DeltaChannel` stores nothing itself (`checkpoint()` is MISSING) and folds writes in batches
# (`replay_writes`). The loop calls `DeltaBook` (pregel/delta.py) once per phase -- `loaded`,
# `took_input`, `after_step`, `count`, `store`, `at_exit` -- and `DeltaBook.store` decides at
# each checkpoint which delta channels snapshot and resets their counters; `resolve` rebuilds
# the values when a checkpoint is loaded, from the saver's `get_delta_channel_history` — the
# contract's default walk (`DeltaHistoryWalk`, which `BaseCheckpointSaver` inherits) is in
# checkpoint/delta_history.py, SQLite's reads ancestors a page at a time (`HistoryRead`, in
# checkpoint/sqlite/history.py).

# %%
show_source("channels/delta.py: DeltaChannel.replay_writes", "pregel/delta.py: DeltaBook.store",
            "pregel/delta.py: resolve",
            "checkpoint/delta_history.py: DeltaHistoryWalk.get_delta_channel_history")
