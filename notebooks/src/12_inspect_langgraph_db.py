# %% [markdown]
# # 12 · Inspecting a database written by LangGraph
#
# lgcheckpoint's savers use LangGraph's table layouts and its serializer writes the same bytes, so a
# database written by LangGraph opens here — and every viewer works on it. The file
# `data/langgraph_support.sqlite` was written by **LangGraph 1.2's own `SqliteSaver`**
# (`tools/make_langgraph_fixture.py` regenerates it when LangGraph is installed): a support
# ticket with langchain chat messages, an interrupt for a refund approval, and a fork.
#
# The same works from a terminal: `lgcheckpoint inspect notebooks/data/langgraph_support.sqlite`.

# %%
import shutil
import sqlite3
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.viz import ChannelVersionTable, LineageGraph, StorageView, VersionsSeenMatrix, load_history

path = Path(tempfile.mkdtemp()) / "support.sqlite"
shutil.copy("data/langgraph_support.sqlite", path)  # work on a copy: the course file stays pristine
conn = sqlite3.connect(path, check_same_thread=False)
print([row[0] for row in conn.execute("SELECT name FROM sqlite_master WHERE type='table' ORDER BY name")])

# %% [markdown]
# ## Loading safely: inspection mode
# The state holds `langchain_core` message objects. lgcheckpoint does not import langchain, and
# its serializer will not build a type it was not told to trust. For looking at foreign data there
# is an **inspection mode**: unknown types come back as inert `Opaque` placeholders that show module,
# name and fields — nothing is imported or constructed.

# %%
saver = SqliteSaver(conn, serde=JsonPlusSerializer(inspect=True))
config = {"configurable": {"thread_id": "ticket-42"}}
latest = saver.get_tuple(config)
for message in latest.checkpoint["channel_values"]["messages"]:
    print(message)

# %% [markdown]
# ## The lineage of the thread
# Checkpoints as a tree: the fork at `update` starts a second branch; the interrupt is marked.

# %%
lineage = LineageGraph(saver, config)
print(lineage)
print(lineage.details(lineage.history[-1].key))

# %%
lineage

# %% [markdown]
# ## Versions, and why `next` was what it was

# %%
print(ChannelVersionTable(saver, config))
history = load_history(saver, config)
waiting = [s for s in history.steps if s.interrupts]
print(len(waiting), "checkpoints carry an interrupt; the first asked:", waiting[0].interrupts[0].value)

# %%
print(VersionsSeenMatrix(saver, config).text())

# %% [markdown]
# ## As stored
# LangGraph's SQLite layout: one `checkpoints` row per checkpoint with all values inline, and the
# pending writes in `writes`.

# %%
print(StorageView(saver, config))

# %% [markdown]
# ## Exercises
# 1. Which branch did the fork create? Print the steps of `history.branch_steps()` for the head.
# 2. What would happen if you opened the file with a plain `JsonPlusSerializer()` (no inspection)?

# %% [solution]
print([(s.step, s.source) for s in history.branch_steps()])
from lgcheckpoint.errors import InvalidCheckpointError

try:
    SqliteSaver(conn).get_tuple(config)
except InvalidCheckpointError as err:  # the saver names the row; the cause names the refused type
    print(type(err.__cause__).__name__, "-", str(err.__cause__).split(" from ")[0])
