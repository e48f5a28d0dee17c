# %% [markdown]
# # 05 · Three savers, one contract
#
# Running an agent for real means choosing where its checkpoints live: in memory for a test, a
# SQLite file for one machine, Postgres for many workers. The choice decides what survives a
# restart, how many processes can share a thread, how much disk a long thread costs, and whether
# an `asyncio` server stalls while a checkpoint is written. This chapter compares the three on
# one thread, so you can choose knowing what each does.
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
# ## `put` writes only what moved: `new_versions`
# That sharing is not found by comparing values. With each checkpoint the loop hands `put` a fourth
# argument, `new_versions`: only the channels whose version changed since the previous checkpoint
# it saved. A saver with a blob table writes blobs for those channels and no others; the checkpoint
# row just names every channel's version, and loading looks the versions up. Below, a saver that
# records what `put` was given, on the same thread:

# %%
class RecordingSaver(InMemorySaver):
    """An InMemorySaver that keeps each put's new_versions (channel names only)."""

    def __init__(self):
        super().__init__()
        self.puts = []

    def put(self, config, checkpoint, metadata, new_versions):
        self.puts.append((metadata["step"], sorted(new_versions)))
        return super().put(config, checkpoint, metadata, new_versions)


recording = RecordingSaver()
run(recording)
for step, channels in recording.puts:
    print(f"put at step {step:>2}: new_versions = {channels}")
blob_rows = [k for k in recording.blobs if k[0] == "course-05"]
print("blobs of `manual`:", sum(chan == "manual" for _, _, chan, _ in blob_rows),
      "| blobs of `step`:", sum(chan == "step" for _, _, chan, _ in blob_rows))
assert [channels for step, channels in recording.puts if "manual" in channels] == [
    ["__start__", "branch:to:tick", "manual", "step"]]

# %% [markdown]
# `manual` is in `new_versions` once, at step 0, when the input wrote it; `step` moves every step,
# and `__start__` moves twice: written by the input, then emptied once its task ran. Postgres does
# the same in its own table, `checkpoint_blobs`, except that small values (`step`, the edge
# markers) stay inline in the checkpoint's JSONB: only the big values that moved get a row — the
# input once, `manual` once, for seven checkpoints:

# %%
if pg_saver is not None:
    with pg_saver.conn.cursor() as cur:
        rows = cur.execute("SELECT channel, version, type, length(blob) FROM checkpoint_blobs "
                           "WHERE thread_id = 'course-05' ORDER BY channel").fetchall()
    print(f"{'channel':<10} {'version (counter)':<18} {'type':<8} bytes")
    for channel, version, tag, size in rows:
        print(f"{channel:<10} {int(version[:32]):<18} {tag:<8} {size}")
    assert [r[0] for r in rows] == ["__start__", "manual"]

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
# ## Who keeps each saver safe, side by side
# Every saver must survive being called from several threads at once: a step's tasks run in a
# thread pool and each saves its writes with `put_writes` as soon as it finishes. Each saver gets
# there its own way, and none of them is the thread guard of chapter 16:
#
# | | keeps one call whole | across threads | across processes |
# |---|---|---|---|
# | `InMemorySaver` | a `threading.Lock` around each verb | yes, the lock | no: the dicts live in one process |
# | `SqliteSaver` | one transaction per call | one connection, a `threading.Lock` so threads take turns | yes, one writer at a time: WAL + a 30 s busy timeout |
# | `PostgresSaver` | one statement per call, atomic | a pool lends each thread a connection (one connection: a lock) | yes: transactions, and upserts that make a repeated write harmless |
# | thread guard (ch. 16) | a whole **run** on a thread | one run per thread | yes: a lock file beside SQLite, an advisory lock in Postgres |
#
# The savers keep *each call* whole; two runs that both resume the same head are still two valid
# sequences of calls, and the savers store both (a fork). Only the guard prevents that. Here eight
# threads save writes for eight tasks at the same moment, on each saver; every write lands:

# %%
import threading
from concurrent.futures import ThreadPoolExecutor


def kind(lock):
    return "threading.Lock" if isinstance(lock, type(threading.Lock())) else type(lock).__name__


def hammer(target):
    """Eight tasks of one step save their writes at once; return how many writes were kept."""
    head = target.get_tuple(config).config
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: target.put_writes(head, [("step", i)], task_id=f"task-{i}"),
                      range(8)))
    return sum(w[0].startswith("task-") for w in target.get_tuple(config).pending_writes)


targets = {"InMemorySaver": (memory_graph.checkpointer, kind(memory_graph.checkpointer._lock)),
           "SqliteSaver": (saver, f"{kind(saver.lock)}, busy_timeout "
                           f"{saver.conn.execute('PRAGMA busy_timeout').fetchone()[0]} ms")}
pool = None
if pg_saver is not None:
    from psycopg_pool import ConnectionPool

    pool = ConnectionPool(uri, min_size=1, max_size=8, open=True,
                          kwargs={"autocommit": True, "prepare_threshold": 0})
    targets["PostgresSaver"] = (pg_saver, f"{kind(pg_saver.lock)} (one connection)")
    pooled = PostgresSaver(pool)
    targets["PostgresSaver+pool"] = (pooled, f"{kind(pooled.lock)}: each thread borrows a connection")
for name, (target, guard) in targets.items():
    print(f"{name:<19} kept {hammer(target)} of 8 concurrent writes | {guard}")
if pool is not None:
    pool.close()

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
# **The same SQL, awaited.** An async saver is its sync twin with `await` in front of every call to
# the connection: the statements come from the same `sql.py`. The lines of `put` that differ:

# %%
import difflib
import inspect

from lgcheckpoint.checkpoint.sqlite import SqliteSaver as SyncSqlite

sync_lines = inspect.getsource(SyncSqlite.put).splitlines()
async_lines = inspect.getsource(AsyncSqliteSaver.aput).splitlines()
for line in difflib.unified_diff(sync_lines, async_lines, "SqliteSaver.put",
                                 "AsyncSqliteSaver.aput", n=0, lineterm=""):
    print(line)

# %% [markdown]
# **When to use one.** In a program built on `asyncio` (a web server, a bot) the event loop serves
# every user from one thread. A sync saver's `put` blocks that thread for the whole database round
# trip, and every other user waits. An async saver gives the loop back while the database works;
# `ainvoke` / `astream` then run the graph without blocking. In a script, a notebook or a worker
# thread, the sync savers are simpler and as fast.
#
# **What breaks when you mix.** An async saver's connection belongs to the event loop it was made
# on. Its sync verbs still exist — for a *sync* node that runs in a worker thread during `ainvoke` —
# and they send the work to that loop and wait. Called on the loop's own thread they would wait for
# themselves forever, so they refuse; the same call from another thread works:

# %%
import asyncio
import textwrap

from lgcheckpoint.checkpoint.errors import SyncCallOnEventLoopError

async with AsyncSqliteSaver.from_conn_string(str(tmp / "async.sqlite")) as asaver:
    try:
        asaver.get_tuple(config)  # sync verb, on the loop's thread
    except SyncCallOnEventLoopError as err:
        print("on the loop:  ", type(err).__name__)
        print(textwrap.indent(textwrap.fill(str(err), 90), "    "))
    found = await asyncio.to_thread(asaver.get_tuple, config)  # the same verb, another thread
    print("from a thread:", found.metadata["step"], "(the last step)")
    try:
        builder.compile(checkpointer=asaver).invoke(None, config)  # sync invoke, same loop
    except SyncCallOnEventLoopError as err:
        print("graph.invoke: ", type(err).__name__, "- use ainvoke here")

# %% [markdown]
# The other direction is safe but slower: a sync `SqliteSaver` or `PostgresSaver` under `ainvoke`
# answers the async verbs by running its sync ones in a worker thread, so the loop is not blocked,
# at the cost of a thread hop per call. `AsyncPostgresSaver` is the same story on psycopg's
# `AsyncConnection` or `AsyncConnectionPool`, with `asyncio.Lock` where the sync saver has a `threading.Lock`.

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
