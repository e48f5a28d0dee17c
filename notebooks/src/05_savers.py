# %% [markdown]
# # 05 · Three savers, one contract
#
# `InMemorySaver`, `SqliteSaver` and `PostgresSaver` offer the same few verbs — `get_tuple`, `list`,
# `put`, `put_writes` — so the runtime does not care where checkpoints go. What differs is **how
# they store a checkpoint**:
#
# * **InMemory** keeps dicts shaped like tables: `storage`, `writes`, and `blobs` keyed by
#   (thread, namespace, channel, version) — an unchanged channel is stored once;
# * **SQLite** stores each checkpoint as *one* blob with all its channel values inline, plus a
#   `writes` table (LangGraph's layout);
# * **Postgres** stores the checkpoint as JSONB, with small values (like `step`) inline in it, and
#   the others in `checkpoint_blobs`, keyed by version, so unchanged values are shared between
#   checkpoints.
#
# We run the same thread — a graph that keeps a large, never-changing `manual` channel — on all three.

# %%
import os
import tempfile
from pathlib import Path
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.viz import StorageView


class State(TypedDict):
    manual: str   # 20 kB that no node ever changes
    step: int


def tick(state):
    return {"step": state["step"] + 1}


builder = StateGraph(State)
builder.add_node("tick", tick)
builder.add_edge(START, "tick")
builder.add_conditional_edges("tick", lambda s: END if s["step"] >= 5 else "tick")
INPUT = {"manual": "x" * 20_000, "step": 0}


def run(saver, thread="same-thread"):
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": thread}}
    graph.invoke(INPUT, config)
    return graph, config


def stored_bytes(view):
    """Bytes the saver stored for the thread: checkpoint rows, pending writes and new blobs."""
    return sum(row.checkpoint + row.writes + row.blob_bytes for row in view.per_checkpoint)


memory_graph, config = run(InMemorySaver())
memory_view = StorageView(memory_graph, config)
print(memory_view)

# %% [markdown]
# ## SQLite: values inline
# Each of the 7 checkpoints carries its own copy of `manual`.

# %%
tmp = Path(tempfile.mkdtemp())
sqlite_cm = SqliteSaver.from_conn_string(str(tmp / "course.sqlite"))
sqlite_graph, _ = run(sqlite_cm.__enter__())
sqlite_view = StorageView(sqlite_graph, config)
print(sqlite_view)

# %% [markdown]
# ## Postgres: values shared by version
# The Postgres part needs a server; it uses `LGCHECKPOINT_POSTGRES_URI` (default: the local one).

# %%
uri = os.environ.get("LGCHECKPOINT_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres")
try:
    from lgcheckpoint.checkpoint.postgres import PostgresSaver

    pg_cm = PostgresSaver.from_conn_string(uri)
    pg_saver = pg_cm.__enter__()
    pg_saver.setup()
    pg_saver.delete_thread("same-thread")  # a clean thread on every run of this notebook
except Exception as err:  # no server: say so in one line and carry on with SQLite only
    print(f"Postgres not available ({type(err).__name__}); the comparison below uses SQLite only.")
    pg_saver = None
if pg_saver is not None:
    pg_graph, _ = run(pg_saver)
    pg_view = StorageView(pg_graph, config)
    print(pg_view)

# %% [markdown]
# Same history, very different bytes: the SQLite file holds `manual` once per checkpoint; Postgres
# (like the in-memory saver) holds it once per *version* (the other copies are in the input's
# pending writes). The rows as stored, for SQLite:

# %%
# NBVAL_IGNORE_OUTPUT
sqlite_view  # a table of rows and bytes per checkpoint (the numbers vary with random version suffixes)

# %%
assert sqlite_view.blobs_shared == 0 and len(sqlite_view.per_checkpoint) == 7

# %%
for name, view in [("memory", memory_view), ("sqlite", sqlite_view)] + (
        [("postgres", pg_view)] if pg_saver is not None else []):
    copies = stored_bytes(view) // 20_000  # the 20 kB `manual` dominates every byte count
    print(f"{name:<9} holds `manual` {copies} times; {view.blobs_shared:>2} blob references shared")
assert next(iter(sqlite_graph.checkpointer.list(config))).checkpoint["channel_values"]["step"] == 5

# %% [markdown]
# ## The same history everywhere
# The savers store differently but return the same checkpoints:

# %%
def history(saver):
    return [(t.metadata["step"], t.metadata["source"], sorted(t.checkpoint["channel_values"]))
            for t in saver.list(config)]


assert history(memory_graph.checkpointer) == history(sqlite_graph.checkpointer)
if pg_saver is not None:
    assert history(pg_saver) == history(sqlite_graph.checkpointer)
    pg_saver.delete_thread("same-thread")
print(history(sqlite_graph.checkpointer)[0])

# %% [markdown]
# ## Exercises
# 1. Change `tick` so it also appends to `manual`. How do the SQLite and Postgres sizes compare now?
# 2. Why can SQLite not share blobs the way Postgres does, while staying readable by LangGraph?

# %% [solution]
def grow(state):
    return {"step": state["step"] + 1, "manual": state["manual"] + "y"}


b2 = StateGraph(State)
b2.add_node("tick", grow)
b2.add_edge(START, "tick")
b2.add_conditional_edges("tick", lambda s: END if s["step"] >= 5 else "tick")
g2 = b2.compile(checkpointer=InMemorySaver())
g2.invoke(INPUT, {"configurable": {"thread_id": "grow"}})
print(StorageView(g2, {"configurable": {"thread_id": "grow"}}).blobs_shared, "shared blob references")
# 2: LangGraph's SQLite layout has no blobs table: a checkpoint row must hold every value itself.
