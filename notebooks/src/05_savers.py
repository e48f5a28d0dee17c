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


def run(saver, thread="course-05"):
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
    for thread in ("course-05", "course-05-grow"):  # clean threads on every run
        pg_saver.delete_thread(thread)
except Exception as err:  # no server: say so in one line and carry on with SQLite only
    print(f"Postgres not available ({type(err).__name__}); the comparison below uses SQLite only.")
    pg_saver = None
if pg_saver is not None:
    pg_graph, _ = run(pg_saver)
    pg_view = StorageView(pg_graph, config)
    print(pg_view)

# %% [markdown]
# ## The same thread, side by side
# Each panel is one saver; each bar is what one checkpoint added to storage: its row (blue), the
# channel values stored for the first time with it (orange), and the writes its tasks saved (green).

# %%
from lgcheckpoint.course_pictures import storage_side_by_side

views = {"InMemorySaver": memory_view, "SqliteSaver": sqlite_view}
if pg_saver is not None:
    views["PostgresSaver"] = pg_view
storage_side_by_side(views)

# %% [markdown]
# Same history, very different bytes. SQLite repeats the 20 kB `manual` in every checkpoint row.
# The in-memory saver and Postgres store a channel's value **once per version**, in a blob shared by
# every checkpoint that has that version — and `manual` has a single version. Yet the count below
# says 3 copies, not 1: the input is stored too. The input checkpoint (step -1) holds the whole input
# dict as the value of `__start__` (copy 1), the `__start__` task saved its write of `manual` as a
# pending write before its step ended (copy 2), and then `manual`'s one version became a blob
# (copy 3). SQLite has the same two input copies plus one per later checkpoint: 2 + 6 = 8.

# %%
assert sqlite_view.blobs_shared == 0 and len(sqlite_view.per_checkpoint) == 7
for name, view in [("memory", memory_view), ("sqlite", sqlite_view)] + (
        [("postgres", pg_view)] if pg_saver is not None else []):
    copies = stored_bytes(view) // 20_000  # the 20 kB `manual` dominates every byte count
    print(f"{name:<9} holds `manual` {copies} times; {view.blobs_shared:>2} blob references shared")
assert next(iter(sqlite_graph.checkpointer.list(config))).checkpoint["channel_values"]["step"] == 5

# %% [markdown]
# The rows as stored, for SQLite (a table, in a live kernel):

# %%
# NBVAL_IGNORE_OUTPUT
sqlite_view  # a table of rows and bytes per checkpoint (the numbers vary with random version suffixes)

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
print(history(sqlite_graph.checkpointer)[0])

# %% [markdown]
# ## Housekeeping: `copy_thread`, `prune`, `delete_thread`
# Threads pile up. Every saver has three verbs to manage them: `copy_thread(src, dst)` duplicates a
# thread's checkpoints and writes under a new id (try something on a copy); `prune(threads,
# strategy="keep_latest")` keeps only each thread's latest checkpoint (no more time travel there,
# but the thread still resumes); `delete_thread(thread)` removes everything of a thread.

# %%
saver = sqlite_graph.checkpointer


def count(thread):
    return len(list(saver.list({"configurable": {"thread_id": thread}})))


saver.copy_thread("course-05", "course-05-copy")
print("after copy_thread:  original", count("course-05"), "| copy", count("course-05-copy"))
saver.prune(["course-05-copy"], strategy="keep_latest")
print("after prune:        copy", count("course-05-copy"), "| its state:",
      sqlite_graph.get_state({"configurable": {"thread_id": "course-05-copy"}}).values["step"])
saver.delete_thread("course-05-copy")
print("after delete_thread: copy", count("course-05-copy"), "| original", count("course-05"))

# %% [markdown]
# ## SQLite: one file, WAL, and a lock
# `SqliteSaver.setup()` switches the file to **WAL** (write-ahead log) mode: a writer appends to
# `course.sqlite-wal` instead of rewriting the file, so readers keep reading the last committed
# state while a write is in progress. There is still only **one writer at a time**: a second writer
# waits for the file's write lock (the saver sets a 30 s busy timeout, so it waits instead of
# failing). Inside one process, the saver's `threading.Lock` makes the threads that share its
# connection take turns. Below, a second connection reads *during* a write, and a second writer
# that will not wait is refused:

# %%
import sqlite3

print("journal_mode:", saver.conn.execute("PRAGMA journal_mode").fetchone()[0])
print("files:", sorted(p.name for p in tmp.iterdir()))
other = sqlite3.connect(str(tmp / "course.sqlite"), timeout=0)  # timeout=0: do not wait
with saver.lock:                                    # what every saver verb does first
    saver.conn.execute("BEGIN IMMEDIATE")           # take the write lock, as a put would
    saver.conn.execute("DELETE FROM writes WHERE thread_id = 'nobody'")
    print("a reader during the write sees", other.execute(
        "SELECT count(*) FROM checkpoints").fetchone()[0], "checkpoints")
    try:
        other.execute("DELETE FROM writes WHERE thread_id = 'nobody'")
    except sqlite3.OperationalError as err:
        print("a second writer:", err)
    saver.conn.rollback()
other.close()

# %% [markdown]
# ## Postgres: migrations and upserts
# `PostgresSaver.setup()` keeps a table `checkpoint_migrations` with the number of every schema
# change it has applied, and runs only the ones a database has not seen yet: a database written by
# an older version is upgraded in place, and running `setup()` twice does nothing.
#
# Saving is idempotent by **upserts**: a checkpoint row is `INSERT ... ON CONFLICT DO UPDATE`
# (saved again, it is replaced); a task's ordinary writes are `ON CONFLICT DO NOTHING` (a replayed
# task cannot change what the step already saved: the first write wins); special writes (an error,
# an interrupt) have fixed slots and `DO UPDATE` (a retry replaces the earlier error).

# %%
if pg_saver is not None:
    with pg_saver.conn.cursor() as cur:
        applied = cur.execute("SELECT count(*), max(v) FROM checkpoint_migrations").fetchone()
    print("migrations applied:", applied[0], "| latest:", applied[1])
    pg_saver.setup()  # nothing left to run
    head = pg_saver.get_tuple(config).config
    pg_saver.put_writes(head, [("step", 100)], task_id="demo-task")
    pg_saver.put_writes(head, [("step", 200)], task_id="demo-task")  # a replay of the same task
    print("ordinary write kept:", [w[2] for w in pg_saver.get_tuple(config).pending_writes
                                   if w[0] == "demo-task"])
    pg_saver.put_writes(head, [("__error__", "first failure")], task_id="demo-task")
    pg_saver.put_writes(head, [("__error__", "second failure")], task_id="demo-task")
    print("error write kept:   ", [w[2] for w in pg_saver.get_tuple(config).pending_writes
                                   if w[1] == "__error__"])

# %% [markdown]
# ## Async savers
# In an `asyncio` application, run the graph with `ainvoke` / `astream` and give it an async saver:
# `AsyncSqliteSaver` (on `aiosqlite`) or `AsyncPostgresSaver` (on psycopg's async connection). Their
# verbs are coroutines: `aget_tuple`, `alist`, `aput`, `aput_writes`. (lgcheckpoint's sync savers
# also answer the async verbs, by running the sync ones in a worker thread.) A notebook cell may
# `await` directly:

# %%
from lgcheckpoint.checkpoint.sqlite.aio import AsyncSqliteSaver

async with AsyncSqliteSaver.from_conn_string(str(tmp / "async.sqlite")) as asaver:
    agraph = builder.compile(checkpointer=asaver)
    final = await agraph.ainvoke(INPUT, config)
    print("ainvoke ->", final["step"], "| alist:", len([t async for t in asaver.alist(config)]),
          "checkpoints")

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · When every step changes the big value
# Change `tick` so that it also appends `"y"` to `manual`, and run that graph on thread
# `"course-05-grow"` on the SQLite saver and on the Postgres saver. Put the bytes each stored for that
# thread in `grow_bytes = {"sqlite": ..., "postgres": ...}` (use `stored_bytes(StorageView(...))`;
# `None` for Postgres if it is not available). How do they compare now, and why?

# %%
grow_bytes = None  # your answer

# %% [check]
from lgcheckpoint.course import check

grow = {"configurable": {"thread_id": "course-05-grow"}}


def check_1():
    def measured(saver):
        return stored_bytes(StorageView(saver, grow)) if saver is not None else None

    check(lambda: len(list(sqlite_graph.checkpointer.list(grow))) == 7
          and len({t.checkpoint["channel_values"]["manual"] for t in
                      list(sqlite_graph.checkpointer.list(grow))[:-1]}) == 6
          and grow_bytes == {"sqlite": measured(sqlite_graph.checkpointer),
                             "postgres": measured(pg_saver)},
          "a node returning {'step': ..., 'manual': state['manual'] + 'y'}, compiled once per saver, "
          "invoked with INPUT on `grow`; then measure both")


check_1()

# %% [solution]
def grow_tick(state):
    return {"step": state["step"] + 1, "manual": state["manual"] + "y"}


b2 = StateGraph(State)
b2.add_node("tick", grow_tick)
b2.add_edge(START, "tick")
b2.add_conditional_edges("tick", lambda s: END if s["step"] >= 5 else "tick")
grow_bytes = {}
for name, target in [("sqlite", sqlite_graph.checkpointer), ("postgres", pg_saver)]:
    if target is None:
        grow_bytes[name] = None
        continue
    b2.compile(checkpointer=target).invoke(INPUT, grow)
    grow_bytes[name] = stored_bytes(StorageView(target, grow))
    print(f"{name:<9} {grow_bytes[name] // 20_000} copies of `manual`")
print("every step makes a new version of `manual`, so Postgres stores one blob per step: sharing")
print("by version no longer saves anything, and both savers hold about one copy per checkpoint")
check_1()

# %% [markdown]
# ### Exercise 2 · Prune a thread
# Copy `course-05` to `course-05-pruned` on the SQLite saver, prune the copy to its latest
# checkpoint, and put in `pruned_steps` the `step` metadata of the checkpoints that are left.
# Can the pruned thread still show its state?

# %%
pruned_steps = None  # your answer

# %% [check]
def check_2():
    left = list(saver.list({"configurable": {"thread_id": "course-05-pruned"}}))
    check(lambda: len(left) == 1 and pruned_steps == [t.metadata["step"] for t in left]
          and count("course-05") == 7,
          "saver.copy_thread(...), then saver.prune([...], strategy='keep_latest'), then list it")


check_2()

# %% [solution]
saver.copy_thread("course-05", "course-05-pruned")
saver.prune(["course-05-pruned"], strategy="keep_latest")
pruned = {"configurable": {"thread_id": "course-05-pruned"}}
pruned_steps = [t.metadata["step"] for t in saver.list(pruned)]
print(pruned_steps, "| state still there:", sqlite_graph.get_state(pruned).values["step"])
check_2()

# %% [markdown]
# ## Read it in the source
# `InMemorySaver.put` stores each new channel version once, as a blob; SQLite's `insert_checkpoint`
# writes the checkpoint with its values inline; Postgres' `inline` decides which values stay in
# the checkpoint's JSONB and which become shared blobs.

# %%
from lgcheckpoint.course import show_source

show_source("checkpoint/memory.py: InMemorySaver.put", "checkpoint/sqlite/sql.py: insert_checkpoint",
            "checkpoint/postgres/sql.py: inline")
