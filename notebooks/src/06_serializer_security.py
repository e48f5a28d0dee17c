# %% [markdown]
# # 06 · The serializer, and why loading a checkpoint must be safe
#
# A saver never sees Python objects. The serializer turns each value into a **(type tag, bytes)**
# pair and back; the saver stores the two as columns. `JsonPlusSerializer` writes the same bytes
# as LangGraph's, so databases move between the two libraries.

# %%
import dataclasses
import datetime
import sqlite3
import tempfile
from pathlib import Path

import ormsgpack

from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.serde.msgpack_ext import EXT_CODES
from lgcheckpoint.errors import UnsafeTypeError

serde = JsonPlusSerializer()
for value in [None, b"raw", {"city": "Kyoto", "days": 3}, datetime.date(2026, 11, 30)]:
    tag, payload = serde.dumps_typed(value)
    print(f"{tag:<8} {payload[:40]!r}")

# %% [markdown]
# Values msgpack cannot represent travel as **extension types**: a code saying *how* to rebuild the
# object and the `(module, name)` saying *what* to rebuild.

# %%
for code, shape in EXT_CODES.items():
    print(code, shape)

# %% [markdown]
# ## The allow-list
# "Rebuild the class named in the bytes" is exactly what an attacker wants: a tampered row could
# name `os.system`. So lgcheckpoint builds only an allow-list of types: safe standard-library
# value types, the types of your graph's state schema (added when you `compile`), and what you pass.

# %%
@dataclasses.dataclass
class Booking:
    hotel: str
    nights: int


stored = serde.dumps_typed(Booking("Ryokan", 2))
try:
    serde.loads_typed(stored)
except UnsafeTypeError as err:
    print("refused:", err)

allowed = JsonPlusSerializer(allowed_msgpack_modules=[Booking])
print("allowed:", allowed.loads_typed(stored))

# %% [markdown]
# Viewers that read a database written elsewhere use an **inspection mode**: a refused type comes
# back as an inert placeholder that shows what it is, instead of being built.

# %%
print(JsonPlusSerializer(inspect=True).loads_typed(stored))

# %% [markdown]
# ## An attack, reproduced on a deliberately naive saver
# Two published LangGraph vulnerabilities chain together: **CVE-2025-67644** — the SQLite saver
# pasted metadata *filter keys* into SQL — and **CVE-2026-28277** — loading a checkpoint rebuilt any
# type the bytes named. Here is a 20-line saver with both mistakes.

# %%
class NaiveSaver:
    """DON'T DO THIS: filter keys pasted into SQL, and a loader that calls whatever it is told."""

    def __init__(self, path):
        self.conn = sqlite3.connect(path)
        self.conn.execute("CREATE TABLE IF NOT EXISTS checkpoints (id TEXT, metadata TEXT, blob BLOB)")

    def put(self, cid, metadata, value):
        self.conn.execute("INSERT INTO checkpoints VALUES (?, ?, ?)", (cid, metadata, ormsgpack.packb(value)))

    def list(self, filter):
        where = " AND ".join(f"json_extract(metadata, '$.{key}') = ?" for key in filter)  # injection!
        rows = self.conn.execute(f"SELECT id, blob FROM checkpoints WHERE {where}", list(filter.values()))
        return [(cid, self.load(blob)) for cid, blob in rows]

    def load(self, blob):
        def build(code, data):  # rebuilds ANY (module, name) -- code execution
            module, name, arg = ormsgpack.unpackb(data)
            return getattr(__import__(module), name)(arg)
        return ormsgpack.unpackb(blob, ext_hook=build)


naive = NaiveSaver(str(Path(tempfile.mkdtemp()) / "naive.sqlite"))
naive.put("c1", '{"user": "alice"}', {"plan": "Kyoto"})
print(naive.list({"user": "alice"}))

# %% [markdown]
# The attacker controls only a *filter key* (say, a search box in an admin page). The key closes the
# SQL string and appends a `UNION SELECT` that forges a row whose blob names `builtins.print` — a
# harmless stand-in for `os.system`.

# %%
forged = ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(["builtins", "print", "PWNED: code ran on load"])))
evil_key = "user') = ? UNION SELECT 'forged', X'" + forged.hex() + "' --"
print(naive.list({evil_key: "anything"}))

# %% [markdown]
# The forged row came back, and loading it *ran code* (the `PWNED` line above was printed by the
# loader). Now the same key against lgcheckpoint's `SqliteSaver`: filter keys are bound as
# parameters, never pasted into SQL, so the key is just an odd metadata name that matches nothing.

# %%
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.graph import END, START, StateGraph
from typing import TypedDict


class S(TypedDict):
    plan: str


b = StateGraph(S)
b.add_node("plan", lambda s: {"plan": "Kyoto"})
b.add_edge(START, "plan")
b.add_edge("plan", END)
with SqliteSaver.from_conn_string(str(Path(tempfile.mkdtemp()) / "safe.sqlite")) as saver:
    g = b.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t"}, "metadata": {"user": "alice"}}
    g.invoke({"plan": ""}, cfg)
    print("normal filter:", len(list(saver.list(None, filter={"user": "alice"}))), "checkpoints")
    print("attack filter:", len(list(saver.list(None, filter={evil_key: "anything"}))), "checkpoints")

# %% [markdown]
# And even if an attacker could write the database directly, loading the forged bytes is refused
# before anything is imported or called:

# %%
try:
    serde.loads_typed(("msgpack", forged))
except UnsafeTypeError as err:
    print("refused:", err)

# %% [markdown]
# ## Exercises
# 1. Build a payload that names `os.system` and check that `serde.loads_typed` refuses it.
# 2. Put `Booking` in a graph's state schema and check that a saver can load it without any
#    `allowed_msgpack_modules` — why does that work?

# %% [solution]
payload = ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(["os", "system", "echo hi"])))
try:
    serde.loads_typed(("msgpack", payload))
except UnsafeTypeError as err:
    print("refused os.system")


class Trip(TypedDict):
    booking: Booking


tb = StateGraph(Trip)
tb.add_node("book", lambda s: {"booking": Booking("Ryokan", 3)})
tb.add_edge(START, "book")
tb.add_edge("book", END)
from lgcheckpoint.checkpoint.memory import InMemorySaver

tg = tb.compile(checkpointer=InMemorySaver())
c = {"configurable": {"thread_id": "b"}}
tg.invoke({"booking": Booking("none", 0)}, c)
print(tg.get_state(c).values["booking"])
# compile() adds the types named in the state schema to the saver's allow-list.
