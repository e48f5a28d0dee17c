# %% [markdown]
# # 13 · Write your own saver
#
# Your checkpoints may have to live where no official saver goes: a key-value store your company
# already runs, an encrypted bucket, a test double. Writing a saver is how you get there, and it
# is also the fastest way to learn what a checkpoint really needs from its storage.
#
# The runtime never touches storage itself: it talks to a **saver** through a handful of verbs, and
# any object that keeps their contract can hold a graph's checkpoints. In this chapter you write one
# — on plain Python dicts — and LangGraph's own conformance suite (`langgraph-checkpoint-conformance`,
# the tests LangGraph runs on every official saver) grades it, here in the notebook.
#
# What the loop calls, and when:
#
# | verb | called | must |
# |---|---|---|
# | `get_tuple(config)` | when a run starts; by `get_state` | return the named checkpoint, or the thread's latest, with its pending writes |
# | `put_writes(config, writes, task_id)` | after each task, before the step ends | keep a task's writes with the checkpoint it ran from |
# | `put(config, checkpoint, metadata, new_versions)` | at each step boundary | store the checkpoint; return the config that names it |
# | `list(config, filter=, before=, limit=)` | by `get_state_history`, time travel | yield checkpoints newest first |
# | `delete_thread`, `copy_thread`, `prune`, `delete_for_runs` | by you, for housekeeping | what their names say |
#
# Like a real database, the saver stores every value as `(type tag, bytes)` from `self.serde`:
# nothing it keeps can be changed by the caller afterwards, and it never needs to know the types.

# %% [markdown]
# ## The skeleton
# `put`, `get_tuple` and the helper `load` are written for you. Checkpoints live in
# `self.checkpoints[(thread_id, checkpoint_ns)][checkpoint_id] = (checkpoint, metadata, parent_id)`
# and writes in `self.writes[(thread_id, checkpoint_ns, checkpoint_id)][(task_id, idx)] =
# (task_id, channel, value, task_path)`. Checkpoint ids are UUID v6, so the largest id is the latest.

# %%
from collections import defaultdict

from lgcheckpoint.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    CheckpointTuple,
    StringVersions,
    get_checkpoint_id,
    get_checkpoint_metadata,
    metadata_matches,
)


def address(config):
    """(thread_id, checkpoint_ns, checkpoint_id or None) from a config."""
    conf = config["configurable"]
    return conf["thread_id"], conf.get("checkpoint_ns", ""), conf.get("checkpoint_id")


def as_config(thread_id, ns, checkpoint_id):
    """The config that names one checkpoint."""
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                             "checkpoint_id": checkpoint_id}}


class DictSaver(StringVersions, BaseCheckpointSaver):
    """Checkpoints in two dicts; StringVersions gives channel versions LangGraph's string shape."""

    def __init__(self):
        super().__init__()  # sets self.serde, the serializer: value <-> (type tag, bytes)
        self.checkpoints = defaultdict(dict)  # (thread, ns) -> {id: (checkpoint, metadata, parent)}
        self.writes = defaultdict(dict)  # (thread, ns, id) -> {(task_id, idx): write}

    def put(self, config, checkpoint, metadata, new_versions):
        thread_id, ns, parent_id = address(config)  # config names the checkpoint this one follows
        self.checkpoints[(thread_id, ns)][checkpoint["id"]] = (
            self.serde.dumps_typed(checkpoint),
            self.serde.dumps_typed(get_checkpoint_metadata(config, metadata)),
            parent_id)
        return as_config(thread_id, ns, checkpoint["id"])

    def get_tuple(self, config):
        thread_id, ns, checkpoint_id = address(config)
        stored = self.checkpoints.get((thread_id, ns), {})
        checkpoint_id = checkpoint_id or max(stored, default=None)
        return self.load(thread_id, ns, checkpoint_id) if checkpoint_id in stored else None

    def load(self, thread_id, ns, checkpoint_id):
        checkpoint, metadata, parent_id = self.checkpoints[(thread_id, ns)][checkpoint_id]
        writes = self.writes.get((thread_id, ns, checkpoint_id), {}).values()
        return CheckpointTuple(
            config=as_config(thread_id, ns, checkpoint_id),
            checkpoint=self.serde.loads_typed(checkpoint),
            metadata=self.serde.loads_typed(metadata),
            parent_config=as_config(thread_id, ns, parent_id) if parent_id else None,
            pending_writes=[(task_id, channel, self.serde.loads_typed(value))
                            for task_id, channel, value, _ in writes])


print([verb for verb in ("put", "get_tuple", "put_writes", "list", "delete_thread")
       if verb in vars(DictSaver)], "are written; the rest still raise NotImplementedError")

# %% [markdown]
# ## Grade the skeleton
# `grade_saver` runs the suite on fresh `DictSaver()`s, one per capability (the suite is async: it
# runs in a worker thread with its own event loop, because the kernel already runs one).
# `check_saver` turns a grade into `right` / `not yet`. The skeleton already stores and loads
# checkpoints, but every capability needs more than that:

# %%
import asyncio
from concurrent.futures import ThreadPoolExecutor

from langgraph.checkpoint.conformance import checkpointer_test, validate

from lgcheckpoint.course import check
from lgcheckpoint.course_pictures import conformance


def grade_saver(make_saver, capabilities=None):
    """Run the conformance suite on fresh savers; returns its CapabilityReport."""
    @checkpointer_test(name=make_saver.__name__)
    async def fresh_saver():
        yield make_saver()

    wanted = set(capabilities) if capabilities is not None else None
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, validate(fresh_saver, capabilities=wanted)).result()


def grades(report):
    """Capability -> (tests passed, tests failed)."""
    return {name: (r.tests_passed, r.tests_failed) for name, r in report.results.items()}


def check_saver(make_saver, capabilities, hint):
    """Prints right only if every test of each capability passed."""
    scores = grades(grade_saver(make_saver, capabilities))
    failing = [f"{name}: {scores[name][1]} of {sum(scores[name])} tests fail"
               for name in capabilities if scores[name][1] or not scores[name][0]]
    return check(not failing, f"{hint} ({'; '.join(failing)})")


skeleton = grades(grade_saver(DictSaver))
conformance(skeleton, "the skeleton, graded by langgraph-checkpoint-conformance")

# %% [markdown]
# ## Exercises
# Each exercise adds one method to `DictSaver`: write the function in the cell, run it (it attaches
# itself to the class), then run the check — it grades your saver on that capability.

# %% [markdown]
# ### Exercise 1 · `put_writes`
# Store each `(channel, value)` of `writes` under `(task_id, idx)` in
# `self.writes[(thread_id, checkpoint_ns, checkpoint_id)]`, as `(task_id, channel, typed value,
# task_path)`. Two rules: `idx` is the write's position, except for the special channels in
# `WRITES_IDX_MAP` (an error, an interrupt, ...) which always take their fixed negative slot; and
# a task that is replayed must not change its ordinary writes (keep the first), while a special
# write replaces the one in its slot.

# %%
def put_writes(self, config, writes, task_id, task_path=""):
    raise NotImplementedError("your code here")


DictSaver.put_writes = put_writes

# %% [check]
def check_1():
    check_saver(DictSaver, ["put_writes"],
                "loop over enumerate(writes); key = (task_id, WRITES_IDX_MAP.get(channel, idx)); "
                "skip a key already saved unless the channel is special")


check_1()

# %% [solution]
def put_writes(self, config, writes, task_id, task_path=""):
    thread_id, ns, checkpoint_id = address(config)
    saved = self.writes[(thread_id, ns, checkpoint_id)]
    for idx, (channel, value) in enumerate(writes):
        key = (task_id, WRITES_IDX_MAP.get(channel, idx))
        if key in saved and channel not in WRITES_IDX_MAP:
            continue
        saved[key] = (task_id, channel, self.serde.dumps_typed(value), task_path)


DictSaver.put_writes = put_writes
check_1()

# %% [markdown]
# ### Exercise 2 · `list`
# Yield `CheckpointTuple`s newest first (by checkpoint id). `config` may be `None` (every thread) and
# may name a `thread_id`, a `checkpoint_ns` and a `checkpoint_id`, each narrowing the search;
# `before` keeps only ids smaller than its `checkpoint_id`; `filter` keeps tuples whose metadata
# matches (`metadata_matches`); `limit` stops after that many.

# %%
def list_checkpoints(self, config, *, filter=None, before=None, limit=None):
    raise NotImplementedError("your code here")


DictSaver.list = list_checkpoints

# %% [check]
def check_2():
    check_saver(DictSaver, ["list"],
                "collect self.load(...) for every stored key that passes the config, before and "
                "filter tests; sort by checkpoint id, newest first; cut at limit")


check_2()

# %% [solution]
def list_checkpoints(self, config, *, filter=None, before=None, limit=None):
    conf = (config or {}).get("configurable", {})
    before_id = get_checkpoint_id(before) if before else None
    found = []
    for (thread_id, ns), stored in self.checkpoints.items():
        if "thread_id" in conf and thread_id != conf["thread_id"]:
            continue
        if "checkpoint_ns" in conf and ns != conf["checkpoint_ns"]:
            continue
        for checkpoint_id in stored:
            if conf.get("checkpoint_id") and checkpoint_id != conf["checkpoint_id"]:
                continue
            if before_id and checkpoint_id >= before_id:
                continue
            saved = self.load(thread_id, ns, checkpoint_id)
            if metadata_matches(saved.metadata, filter):
                found.append(saved)
    found.sort(key=lambda t: t.checkpoint["id"], reverse=True)
    return iter(found if limit is None else found[:limit])


DictSaver.list = list_checkpoints
check_2()

# %% [markdown]
# ### Exercise 3 · `delete_thread`
# Remove every checkpoint and every write of a thread, in all its namespaces.

# %%
def delete_thread(self, thread_id):
    raise NotImplementedError("your code here")


DictSaver.delete_thread = delete_thread

# %% [check]
def check_3():
    check_saver(DictSaver, ["delete_thread"],
                "delete the keys of self.checkpoints and self.writes whose first item is thread_id")


check_3()

# %% [solution]
def delete_thread(self, thread_id):
    for table in (self.checkpoints, self.writes):
        for key in [k for k in table if k[0] == thread_id]:
            del table[key]


DictSaver.delete_thread = delete_thread
check_3()

# %% [markdown]
# ### Exercise 4 · The housekeeping verbs
# Complete the saver with `copy_thread(source, target)` (same checkpoint ids, under the new thread),
# `prune(thread_ids, strategy="keep_latest")` (keep each namespace's latest checkpoint; `"delete"`
# removes the threads) and `delete_for_runs(run_ids)` (drop the checkpoints whose metadata
# `run_id` is one of them, with their writes). Then the suite should give **all eight**
# capabilities full marks.

# %%
def copy_thread(self, source_thread_id, target_thread_id):
    raise NotImplementedError("your code here")


def prune(self, thread_ids, *, strategy="keep_latest"):
    raise NotImplementedError("your code here")


def delete_for_runs(self, run_ids):
    raise NotImplementedError("your code here")


DictSaver.copy_thread, DictSaver.prune = copy_thread, prune
DictSaver.delete_for_runs = delete_for_runs

# %% [check]
def check_4():
    check_saver(DictSaver, ["put", "put_writes", "get_tuple", "list", "delete_thread",
                            "delete_for_runs", "copy_thread", "prune"],
                "copy both tables' keys of the source thread; for prune and delete_for_runs, "
                "drop chosen checkpoint ids with their writes")


check_4()

# %% [solution]
def copy_thread(self, source_thread_id, target_thread_id):
    for (thread_id, ns), stored in list(self.checkpoints.items()):
        if thread_id == source_thread_id:
            self.checkpoints[(target_thread_id, ns)].update(stored)
    for (thread_id, ns, checkpoint_id), writes in list(self.writes.items()):
        if thread_id == source_thread_id:
            self.writes[(target_thread_id, ns, checkpoint_id)].update(writes)


def drop(self, thread_id, ns, checkpoint_ids):
    for checkpoint_id in checkpoint_ids:
        del self.checkpoints[(thread_id, ns)][checkpoint_id]
        self.writes.pop((thread_id, ns, checkpoint_id), None)


def prune(self, thread_ids, *, strategy="keep_latest"):
    for thread_id in thread_ids:
        if strategy == "delete":
            self.delete_thread(thread_id)
            continue
        for (t, ns), stored in list(self.checkpoints.items()):
            if t == thread_id:
                self.drop(t, ns, [c for c in stored if c != max(stored)])


def delete_for_runs(self, run_ids):
    for (thread_id, ns), stored in list(self.checkpoints.items()):
        self.drop(thread_id, ns, [c for c, (_, metadata, _) in stored.items()
                                  if self.serde.loads_typed(metadata).get("run_id") in run_ids])


DictSaver.copy_thread, DictSaver.prune = copy_thread, prune
DictSaver.drop, DictSaver.delete_for_runs = drop, delete_for_runs
check_4()

# %% [markdown]
# ## Your saver under a real graph
# Graded or not, a saver is for running graphs. The travel planner of chapter 00 on your
# `DictSaver`: it stops for approval, resumes, and the viewers read your saver through `list`.
# It needs every verb: until you have solved the exercises above, it says which verb is missing
# (Run All runs no solution), and after them it draws the thread your saver holds.

# %%
from IPython.display import display

from lgcheckpoint.tour import build_tour_graph
from lgcheckpoint.types import Command
from lgcheckpoint.viz import LineageGraph

mine = DictSaver()
graph = build_tour_graph(mine)
config = {"configurable": {"thread_id": "my-saver"}}
try:
    graph.invoke({"destination": "Kyoto", "days": 3}, config)
    print("waiting at:", graph.get_state(config).next)
    print(graph.invoke(Command(resume="approve"), config)["bookings"])
    print(len(mine.checkpoints[("my-saver", "")]), "checkpoints in your dict")
    display(LineageGraph(graph, config))
except NotImplementedError as unfinished:
    print(f"not yet: a verb of your DictSaver says {unfinished!r}; solve the exercises above, "
          "then run this cell again")

# %% [markdown]
# And the final grade of the whole saver:

# %%
conformance(grades(grade_saver(DictSaver)), "your DictSaver, graded")

# %% [markdown]
# ## Read it in the source
# lgcheckpoint's `InMemorySaver` is this saver grown up: the same verbs, plus channel values stored
# once per version (chapter 05) and an index of the latest checkpoint. Compare its `put_writes` and
# `list` with yours, and read the contract they implement.

# %%
from lgcheckpoint.course import show_source

show_source("checkpoint/memory.py: InMemorySaver.put_writes", "checkpoint/memory.py: InMemorySaver.list",
            "checkpoint/base.py: metadata_matches")
