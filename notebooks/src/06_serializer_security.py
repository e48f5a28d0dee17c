# %% [markdown]
# # 06 · The serializer, and why loading a checkpoint must be safe
#
# An agent's state is full of Python objects — messages, records, dates — and a checkpoint must
# turn them into bytes and, days later, back into objects. Loading is the dangerous half: a
# loader that rebuilds whatever type the bytes name lets anyone who can write one row of your
# database run code in your agent's process. This chapter shows how the serializer keeps both
# halves faithful and safe, and what the attack looks like when it is not.
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
# ## Why msgpack, not JSON
# JSON would be readable, but it knows only strings, numbers, lists and dicts. A checkpoint holds
# `bytes`, `datetime`s, sets, tuples, dataclasses, pydantic models: in JSON each would need a
# hand-made string form and a convention to turn it back. MessagePack is binary and has a place for
# exactly that: **extension types** (a code plus bytes), so `datetime` or a dataclass goes in as
# itself and comes back as itself. It is also smaller, and `ormsgpack` (written in Rust) is fast.
# (Postgres still keeps the checkpoint's *structure* as JSONB so SQL can query it; the values are
# msgpack blobs.)

# %%
import json
import time

state = {"when": datetime.datetime(2026, 11, 30, 9, 0), "tags": {"kyoto", "rail"},
         "photo": bytes(range(256)) * 8, "scores": [i / 7 for i in range(500)]}
try:
    json.dumps(state)
except TypeError as err:
    print("json.dumps:", err)
as_json = json.dumps({**state, "when": state["when"].isoformat(), "tags": sorted(state["tags"]),
                      "photo": state["photo"].hex()}).encode()  # by hand, and one-way
tag, packed = serde.dumps_typed(state)
back = serde.loads_typed((tag, packed))
print(f"json (hand-converted): {len(as_json)} B | msgpack: {len(packed)} B | round trip exact:",
      back == state)


def per_call(fn, n=200):
    start = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - start) / n * 1e6


from lgcheckpoint.course_pictures import bar_chart

bar_chart({"json.dumps (after converting by hand)": len(as_json), "ormsgpack (as is)": len(packed)},
          "bytes", "the same state, encoded")
bar_chart({"json.dumps": round(per_call(lambda: json.dumps(
              {**state, "when": state["when"].isoformat(), "tags": sorted(state["tags"]),
               "photo": state["photo"].hex()})), 1),
           "serde.dumps_typed": round(per_call(lambda: serde.dumps_typed(state)), 1)},
          "µs", "time to encode it, on this machine (varies from run to run)")

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
# ## Old checkpoints after the state schema changes
# Checkpoints outlive the code that wrote them. What happens when a thread saved by yesterday's
# code is loaded by today's?
#
# * a **state key removed**: its stored channel value is ignored (no channel reads it);
# * a **key added**: old checkpoints simply have no value for it yet;
# * a **dataclass field added with a default**: rebuilt, the default fills it;
# * a **field renamed or removed** (no default can fill it): the stored fields no longer fit the
#   class, and loading stops with an error that names the class and the stored fields — never a
#   silently wrong object.
#
# So: add fields with defaults, keep old names readable, and for an incompatible change finish the
# running threads first or start new `thread_id`s.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.errors import InvalidCheckpointError
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph


def one_node_graph(schema, update, saver):
    b = StateGraph(schema)
    b.add_node("book", lambda s: update)
    b.add_edge(START, "book")
    b.add_edge("book", END)
    return b.compile(checkpointer=saver)


class V1(TypedDict):
    city: str
    booking: Booking


shared = InMemorySaver()
thread = {"configurable": {"thread_id": "old-thread"}}
one_node_graph(V1, {"booking": Booking("Ryokan", 2)}, shared).invoke(
    {"city": "Kyoto", "booking": Booking("none", 0)}, thread)


@dataclasses.dataclass
class Booking:  # today's code: one more field, with a default
    hotel: str
    nights: int
    breakfast: bool = False


class V2(TypedDict, total=False):  # `city` is gone, `budget` is new
    booking: Booking
    budget: int


print("v2 reads:", one_node_graph(V2, {}, shared).get_state(thread).values)


@dataclasses.dataclass
class Booking:  # tomorrow's code: `nights` renamed to `stay`
    hotel: str
    stay: int


class V3(TypedDict, total=False):
    booking: Booking


try:
    one_node_graph(V3, {}, shared).get_state(thread)
except InvalidCheckpointError as err:
    print("v3:", err)

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
# ## The pickle fallback: `pickle_fallback=True`
# Some values have no msgpack form: a `fractions.Fraction`, an integer beyond 64 bits, an instance
# of a plain class. By default `dumps_typed` refuses them, and the error names two ways out: store
# a type the serializer knows, or turn on the **pickle fallback**. With it, whatever msgpack cannot
# encode is pickled and tagged `"pickle"`:

# %%
import fractions
import pickle
import textwrap

share = fractions.Fraction(1, 3)
try:
    serde.dumps_typed(share)
except TypeError as err:
    print("default:      ", str(err).split(". ")[0])
trusting = JsonPlusSerializer(pickle_fallback=True)
tag, payload = trusting.dumps_typed(share)
print("with fallback:", tag, payload)
print("a big int:    ", trusting.dumps_typed(2**70)[0], "| a dict:", trusting.dumps_typed({"a": 1})[0])

# %% [markdown]
# Read the bytes: `fractions`, `Fraction`, `1`, `3`. A pickle is not data but a small **program**
# for the loader — "import `fractions.Fraction`, call it with (1, 3)" — and the loader runs
# whatever the program says. In a saver that keeps a whole checkpoint in one column (SQLite),
# one such value turns the **whole checkpoint** into a pickle, input included:

# %%
class Share(TypedDict):
    part: fractions.Fraction


halving = StateGraph(Share)
halving.add_node("halve", lambda s: {"part": s["part"] / 2})
halving.add_edge(START, "halve")
halving.add_edge("halve", END)
pickled_path = str(Path(tempfile.mkdtemp()) / "pickled.sqlite")
with SqliteSaver.from_conn_string(pickled_path) as trusting_saver:
    trusting_saver.serde = trusting
    print(halving.compile(checkpointer=trusting_saver).invoke({"part": share}, cfg))
    print("checkpoint rows by type:", trusting_saver.conn.execute(
        "SELECT type, count(*) FROM checkpoints GROUP BY type").fetchall())

# %% [markdown]
# **Why it is off by default.** Anyone who can write one row of the database — a leaked
# password, a shared file, the SQL injection above — can store a pickle whose program is
# `os.system(...)`, and the next `get_state` runs it. The allow-list does not help: it guards
# msgpack's type codes, and pickle never asks it. So a default serializer refuses to *load* a
# pickle even when it finds one, and says how to consent:

# %%
class Payload:
    def __reduce__(self):  # what pickle stores: "call print with this text" (os.system would do)
        return (print, ("PWNED: unpickling ran code",))


evil = ("pickle", pickle.dumps(Payload()))
try:
    serde.loads_typed(evil)
except UnsafeTypeError as err:
    print(textwrap.fill(f"default serializer: {err}", 96))
print("pickle_fallback=True:")
trusting.loads_typed(evil)

# %% [markdown]
# Turn the fallback on only for a database that only you write, and prefer the cure: make the
# value a dataclass, a pydantic model or a stdlib type (here: store the fraction as a
# `(numerator, denominator)` tuple). The same database opened without consent is refused, not run:

# %%
with SqliteSaver.from_conn_string(pickled_path) as cautious:
    try:
        cautious.get_tuple(cfg)
    except Exception as err:
        print(textwrap.fill(f"{type(err).__name__}: {err}", 96))

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Refuse `os.system`
# Build, with `ormsgpack`, the bytes of a msgpack payload whose extension names `("os", "system")`
# with the argument `"echo hi"` (like `forged` above), and put them in `payload`. Does
# `serde.loads_typed(("msgpack", payload))` run it?

# %%
payload = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def names_in(data):  # what (module, name) an ext payload asks for, read without building it
    found = []
    ormsgpack.unpackb(data, ext_hook=lambda code, inner: found.append(
        tuple(ormsgpack.unpackb(inner)[:2])))
    return found


def refused(data):
    try:
        serde.loads_typed(("msgpack", data))
    except UnsafeTypeError:
        return True
    return False


def check_1():
    check(lambda: ("os", "system") in names_in(payload) and refused(payload),
          "ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(['os', 'system', 'echo hi'])))")


check_1()

# %% [solution]
payload = ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb(["os", "system", "echo hi"])))
try:
    serde.loads_typed(("msgpack", payload))
except UnsafeTypeError as err:
    print("refused before anything was imported:", err)
check_1()

# %% [markdown]
# ### Exercise 2 · Types of the state schema are allowed
# Put today's `Booking` (the last one defined above) in a graph's state schema, run the graph on an
# `InMemorySaver` without any `allowed_msgpack_modules`, and keep the booking that
# `get_state(...).values` gives back in `loaded`. Why is it not refused?

# %%
loaded = None  # your answer

# %% [check]
def check_2():
    check(lambda: isinstance(loaded, Booking) and type(loaded) is Booking,
          "a TypedDict with `booking: Booking`, a node returning {'booking': Booking(...)}, "
          "compiled with checkpointer=InMemorySaver(); then graph.get_state(config).values['booking']")


check_2()

# %% [solution]
class Trip(TypedDict):
    booking: Booking


tg = one_node_graph(Trip, {"booking": Booking("Ryokan", 3)}, InMemorySaver())
c = {"configurable": {"thread_id": "b"}}
tg.invoke({"booking": Booking("none", 0)}, c)
loaded = tg.get_state(c).values["booking"]
print(loaded, "-- compile() added the types named in the state schema to the allow-list")
check_2()

# %% [markdown]
# ## Read it in the source
# `dumps_typed` / `loads_typed` are the serializer's two doors; `Allowlist.resolve` is where a
# stored `(module, name)` is checked before anything is imported.

# %%
from lgcheckpoint.course import show_source

show_source("checkpoint/serde/jsonplus.py: JsonPlusSerializer.dumps_typed",
            "checkpoint/serde/jsonplus.py: JsonPlusSerializer.loads_typed",
            "checkpoint/serde/allowlist.py: Allowlist.resolve")
