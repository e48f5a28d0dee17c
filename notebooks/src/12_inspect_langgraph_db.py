# %% [markdown]
# # 12 · Inspecting a database written by LangGraph
#
# Your agent runs on LangGraph in production, and one conversation went wrong. Its database is the
# record of what happened, and you want to read it without changing the application or its
# dependencies. Because lgcheckpoint reads the same tables and bytes, you can point its viewers at
# a copy of that file.
#
# lgcheckpoint's savers use LangGraph's table layouts and its serializer writes the same bytes, so a
# database written by LangGraph opens here — and every viewer works on it. The file
# `data/langgraph_support.sqlite` was written by **LangGraph 1.2's own `SqliteSaver`**
# (`tools/make_langgraph_fixture.py` regenerates it when LangGraph is installed): a support
# ticket with langchain chat messages, the customer as a record of the support desk's own code, an
# interrupt for a refund approval, and a fork.
#
# The same works from a terminal: `lgcheckpoint inspect notebooks/data/langgraph_support.sqlite`.

# %%
import shutil
import sqlite3
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.viz import (
    ChannelVersionTable, LineageGraph, StorageView, VersionsSeenMatrix, load_history,
)

path = Path(tempfile.mkdtemp()) / "support.sqlite"
shutil.copy("data/langgraph_support.sqlite", path)  # work on a copy: the course file stays pristine
conn = sqlite3.connect(path, check_same_thread=False)
print([row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")])

# %% [markdown]
# ## Loading safely: inspection mode
# The state holds `langchain_core` message objects, which are on LangGraph's safe list: they are
# built (with the `messages` extra, lgcheckpoint's only use of langchain-core). It also holds a
# `Customer`, a class of the support desk's own code (`support_desk.Customer`), and the serializer
# will not build a type it was not told to trust. For looking at foreign data there is an
# **inspection mode**: unknown types come back as inert `Opaque` placeholders that show module,
# name and fields — nothing is imported or constructed.

# %%
saver = SqliteSaver(conn, serde=JsonPlusSerializer(inspect=True))
config = {"configurable": {"thread_id": "ticket-42"}}
latest = saver.get_tuple(config)
print(latest.checkpoint["channel_values"]["customer"])
for message in latest.checkpoint["channel_values"]["messages"]:
    print(repr(message))

# %% [markdown]
# ## The lineage of the thread
# Checkpoints as a tree: the interrupt for the refund approval is marked on `c2` (orange border);
# someone later went back to `c2` and forked with `update_state` (`c5`, green), and the forked
# branch runs on to the head `c7`. The old branch `c3`–`c4` is still there. (The fork `c5` carries
# an interrupt too: `approve_refund` asked again on the new branch.)

# %%
lineage = LineageGraph(saver, config)
lineage

# %% [markdown]
# ## Versions: the whole table
# One row per checkpoint, one column per channel; a cell holds the channel's version at that
# checkpoint, and a highlighted cell is one that checkpoint wrote (its version moved). Read the fork
# here: at `c2` the ticket was classified `billing` and a person approved the refund (`c3` writes
# `refund`). The fork `c5` (source `update`) rewrote `category` — to `fraud` — as if `triage` had
# written it, so it also bumps `branch:to:approve_refund`: `approve_refund` asks again on the new
# branch, is answered "no", and `c6` writes `refund` (now `False`). `messages` keeps version 3 at
# `c5`: the fork starts from `c2`'s values, not from the old branch's.

# %%
ChannelVersionTable(saver, config)

# %% [markdown]
# ## Why `next` was what it was, where something fires
# At the head nothing runs next, so its matrix would show no red cell. At `c2` the graph stopped
# to ask a person: `approve_refund` is next because its trigger channel `branch:to:approve_refund`
# moved past the version the node last saw (`versions_seen`) and holds a value — the red cell.
# Orange cells moved too but hold no value (an edge that fired earlier and was consumed).

# %%
history = load_history(saver, config)
asking = next(s for s in history.steps if s.interrupts)
print(asking.key, "asked:", asking.interrupts[0].value)
matrix = VersionsSeenMatrix(saver, config, key=asking.key)
print(matrix.text())
matrix

# %% [markdown]
# ## As stored
# LangGraph's SQLite layout: one `checkpoints` row per checkpoint with **all** channel values inline
# in the checkpoint blob, and the pending writes in `writes`. The view shows the bytes per
# checkpoint, then each table's rows (ids labelled with their `cN`, blobs as sizes).

# %%
storage = StorageView(saver, config)
storage

# %% [markdown]
# The bytes per checkpoint, drawn: because SQLite keeps every value inside each checkpoint row, the
# growing `messages` list is stored again in every checkpoint (Postgres and the in-memory saver
# store each channel version once as a blob and share it — chapter 05).

# %%
import matplotlib.pyplot as plt

rows = storage.per_checkpoint
fig, ax = plt.subplots(figsize=(8, 3.2))
keys = [r.key for r in rows]
ax.bar(keys, [r.checkpoint for r in rows], color="#2563eb", label="checkpoint row (values inline)")
ax.bar(keys, [r.writes for r in rows], bottom=[r.checkpoint for r in rows], color="#f59e0b",
       label="pending writes")
ax.set_ylabel("bytes", fontsize=12)
ax.tick_params(labelsize=12)
ax.legend(fontsize=11, loc="upper left")
ax.set_title("LangGraph's SqliteSaver: bytes stored per checkpoint", fontsize=13)
plt.tight_layout()
plt.show()

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Where did the fork start?
# Store the key (`"c0"`…) of the checkpoint the fork branched from in `fork_parent`. Use `history`:
# every `Step` has `parent`, `children` and `source`.

# %%
fork_parent = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: len(history[fork_parent].children) > 1,
                 "the fork's parent is the checkpoint with two children; "
                 "or follow .parent from the step whose source is 'update'")


check_1()

# %% [solution]
forked = next(s for s in history.steps if s.source == "update")
fork_parent = forked.parent
print(forked.key, "was forked from", fork_parent, "whose children are", history[fork_parent].children)
check_1()

# %% [markdown]
# ### Exercise 2 · Without inspection mode
# Open the same file with a plain `SqliteSaver(conn)` (its default serializer, no `inspect=True`)
# and call `get_tuple(config)`. Keep the exception you get in `refusal`. Which type did the
# serializer refuse to build, and why is refusing the right default?

# %%
refusal = None  # your answer

# %% [check]
from lgcheckpoint.errors import InvalidCheckpointError


def check_2():
    return check(lambda: isinstance(refusal, InvalidCheckpointError)
                 and "support_desk.Customer" in str(refusal.__cause__),
                 "catch the error of SqliteSaver(conn).get_tuple(config) as refusal")


check_2()

# %% [solution]
try:
    SqliteSaver(conn).get_tuple(config)
except InvalidCheckpointError as err:  # the saver names the row; the cause names the refused type
    refusal = err
    print(type(err.__cause__).__name__, "-", str(err.__cause__).split(" from ")[0])
# building a type named in a file runs that type's code: only an allowlist keeps a file inert
check_2()

# %% [markdown]
# ## Read it in the source
# `ExtDecoder.build` is where a stored type is either built (allowlisted), refused, or — in
# inspection mode — returned as an inert `Opaque`; `to_tuple` turns a SQLite row and its writes
# back into a `CheckpointTuple`; `StorageView.count_bytes` walks the rows to size each checkpoint.

# %%
from lgcheckpoint.course import show_source

show_source("checkpoint/serde/msgpack_ext.py: ExtDecoder.build", "checkpoint/sqlite/sql.py: to_tuple",
            "viz/storage.py: StorageView.count_bytes")
