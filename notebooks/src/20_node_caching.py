# %% [markdown]
# # 20 · Node caching vs resuming from pending writes
#
# A slow or paid call, such as a web search or a model call, should not be paid for twice. That
# can happen two ways: a crash or an interrupt makes a resumed run repeat a step, or another
# thread asks the same question again. LangGraph answers each with a different mechanism, and
# mixing them up leads to the wrong fix.
#
# Two mechanisms skip a node that already did its work, and they are easy to confuse:
#
# | | resuming (chapter 10) | node caching |
# |---|---|---|
# | skips | a task of the **same step of the same thread** that finished before a crash or interrupt | any task whose node has a `CachePolicy` and whose **input** was seen before, in any thread |
# | keyed by | thread, checkpoint id, task id | node (`module.function`, name) and a hash of the input |
# | lives in | the saver's writes table (`checkpoint_writes` / `writes`) | the cache (`InMemoryCache`, or the `cache` table of a `SqliteCache` file) |
# | forgotten | never (it is the thread's history) | after `ttl` seconds, or `graph.clear_cache()` |
#
# Here one graph uses both: `fetch` is slow and cached; `review` asks a human with `interrupt()`.
# Both run in the same super-step.

# %%
import operator
import sqlite3
import tempfile
from pathlib import Path
from typing import Annotated, TypedDict

from lgcheckpoint.cache.sqlite import SqliteCache
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.types import CachePolicy, Command, interrupt

folder = Path(tempfile.mkdtemp())
runs = []  # (label, node) for every real execution


class Report(TypedDict):
    topic: str
    facts: Annotated[list[str], operator.add]


def fetch(state: Report) -> dict:
    runs.append((label, "fetch"))
    return {"facts": [f"3 facts about {state['topic']}"]}


def review(state: Report) -> dict:
    runs.append((label, "review"))
    return {"facts": [f"reviewed: {interrupt('publish?')}"]}


builder = StateGraph(Report)
builder.add_node("fetch", fetch, cache_policy=CachePolicy(key_func=lambda s: s["topic"]))
builder.add_node("review", review)
builder.add_edge(START, "fetch")
builder.add_edge(START, "review")
conn = sqlite3.connect(folder / "checkpoints.sqlite", check_same_thread=False)
cache = SqliteCache(path=str(folder / "cache.sqlite"))
graph = builder.compile(checkpointer=SqliteSaver(conn), cache=cache)

label = "t1: first run"
first = {"configurable": {"thread_id": "t1"}}
for chunk in graph.stream({"topic": "owls", "facts": []}, first, stream_mode="updates"):
    print(chunk)

# %% [markdown]
# `fetch` finished; `review` stopped at its interrupt. Both facts about `fetch` are now stored
# twice, in two places with two purposes: as a **pending write** of the thread's checkpoint (so a
# resume does not run it again), and as a **cache entry** keyed by its input (so any run with the
# same topic does not run it again).

# %%
def writes_rows(config):
    """The writes table's rows of the thread's latest checkpoint, with task names."""
    snap = graph.get_state(config)
    names = {t.id: t.name for t in snap.tasks}
    rows = conn.execute("SELECT task_id, idx, channel FROM writes WHERE thread_id = ? AND "
                        "checkpoint_id = ?", (config["configurable"]["thread_id"],
                                              snap.config["configurable"]["checkpoint_id"]))
    return sorted((names[task], idx, channel) for task, idx, channel in rows)


def cache_rows():
    return sqlite3.connect(folder / "cache.sqlite").execute(
        "SELECT ns, key, encoding, length(val) FROM cache").fetchall()


for row in writes_rows(first):
    print("writes table:", *row)
for row in cache_rows():
    print("cache table: ", *row)

# %% [markdown]
# ## Resuming reuses the pending writes
# Answering the interrupt resumes thread `t1`: the step's tasks are prepared again, `fetch` finds
# its saved writes and is not run — no cache lookup is needed for that.

# %%
label = "t1: resume"
for chunk in graph.stream(Command(resume="yes"), first, stream_mode="updates"):
    print(chunk)

# %% [markdown]
# `fetch`'s update comes back with `'__metadata__': {'cached': True}`: LangGraph marks *every*
# write it did not compute in this run that way — both reused pending writes and cache hits.
#
# ## A new thread hits the cache
# Thread `t2` has no checkpoints, so there are no pending writes to reuse. But its `fetch` gets the
# same topic: its key is in the cache, and the cached writes are applied (and saved as `t2`'s own
# pending writes, so `t2`'s history reads exactly as if `fetch` had run).

# %%
label = "t2: same topic"
second = {"configurable": {"thread_id": "t2"}}
for chunk in graph.stream({"topic": "owls", "facts": []}, second, stream_mode="updates"):
    print(chunk)
label = "t3: new topic"
third = {"configurable": {"thread_id": "t3"}}
graph.invoke({"topic": "bats", "facts": []}, third)
print(runs)

# %% [markdown]
# The picture puts the four runs side by side: what ran, what came from pending writes, what came
# from the cache. `review` has no cache policy, and an interrupted task is never cached anyway: a
# cache hit would skip the question.

# %%
import matplotlib.pyplot as plt
from matplotlib.patches import Patch

from lgcheckpoint.course_pictures import DPI, FONT, GREY
from lgcheckpoint.viz import palette

how = {  # what each run did per node, from `runs` and the streams above
    "t1: first run": {"fetch": "ran", "review": "ran (interrupted)"},
    "t1: resume": {"fetch": "pending writes", "review": "ran"},
    "t2: same topic": {"fetch": "cache", "review": "ran (interrupted)"},
    "t3: new topic": {"fetch": "ran", "review": "ran (interrupted)"},
}
fills = {"ran": palette.BLUE, "ran (interrupted)": palette.ORANGE,
         "pending writes": palette.GREEN, "cache": palette.YELLOW}
assert [r for r in runs if r[1] == "fetch"] == [("t1: first run", "fetch"),
                                                 ("t3: new topic", "fetch")]
fig, ax = plt.subplots(figsize=(8.2, 3.2), dpi=DPI)
ax.set_title("Who did the work: the node, the thread's pending writes, or the cache",
             fontsize=FONT, pad=28)
for row, (run, cells) in enumerate(how.items()):
    for col, node in enumerate(["fetch", "review"]):
        ax.add_patch(plt.Rectangle((col * 2.2, -row), 2.1, 0.85, facecolor=fills[cells[node]],
                                   edgecolor=GREY))
        ax.text(col * 2.2 + 1.05, -row + 0.42, cells[node], ha="center", va="center",
                fontsize=FONT)
    ax.text(-0.1, -row + 0.42, run, ha="right", va="center", fontsize=FONT)
ax.set_xticks([1.05, 3.25], ["fetch (CachePolicy)", "review (interrupt)"], fontsize=FONT)
ax.xaxis.tick_top()
ax.set_xlim(-2.6, 6.9)
ax.set_ylim(-3.2, 1)
ax.set_yticks([])
ax.tick_params(length=0)
for side in ax.spines.values():
    side.set_visible(False)
ax.legend(handles=[Patch(facecolor=fills[k], edgecolor=GREY, label=k)
                   for k in ("ran", "pending writes", "cache")],
          loc="center right", fontsize=FONT, frameon=False)
plt.show()

# %% [markdown]
# ## Where each lives
# The pending writes of `t2` are ordinary rows of the saver's `writes` table — nothing in the
# checkpoint says "this came from a cache". The cache itself is another file, one row per
# (node, input); its namespace is `__pregel_ns_writes,<module.function>,<node>` and its key the
# xxh3-128 hash of what `key_func` returned. It stores the task's writes as LangGraph does (a
# `deque` of `(channel, value)`), so a cache file written by LangGraph serves lgcheckpoint and the
# other way round.

# %%
for row in cache_rows():
    print(row)
print(cache.get([(("__pregel_ns_writes", "__main__.fetch", "fetch"), row[1])
                 for row in cache_rows()]))

# %% [markdown]
# The viewers read the same place. `LineageGraph` rebuilds each task's input from the checkpoint it
# ran from, computes its cache key and looks it up: a task whose saved writes are the cache's
# entry for that input is shown as `(cached)` — in `t2`, and in `t1` too, whose run stored it.
# (It works the same for a graph compiled by LangGraph.)

# %%
from lgcheckpoint.viz import LineageGraph

print(LineageGraph(graph, second).details("c1"))

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Forget one node
# `graph.clear_cache(["fetch"])` forgets `fetch`'s entries. Clear them, run thread `"t4"` with the
# topic `"owls"` again, and store in `fetch_runs_after_clear` how many times `fetch` has run in
# total (count the `"fetch"` entries of `runs`).

# %%
fetch_runs_after_clear = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: fetch_runs_after_clear == 3
                 and sum(node == "fetch" for _, node in runs) == 3,
                 "call graph.clear_cache(['fetch']), invoke {'topic': 'owls', 'facts': []} on "
                 "thread t4, then count how often 'fetch' appears in runs")


check_1()

# %% [solution]
graph.clear_cache(["fetch"])
label = "t4: after clear_cache"
graph.invoke({"topic": "owls", "facts": []}, {"configurable": {"thread_id": "t4"}})
fetch_runs_after_clear = sum(node == "fetch" for _, node in runs)
print(runs)
check_1()

# %% [markdown]
# ### Exercise 2 · A key that ignores the noise
# `fetch`'s key is the topic alone: `facts` do not change it. Build `strict`, the same graph but
# with the **default** `CachePolicy()` (the key pickles the whole input), on a fresh
# `InMemoryCache`. Invoke it twice on two threads with the same topic but different `facts`
# (`[]` and `["old"]`), and store how often `fetch` ran in those two runs in `strict_runs`.

# %%
from lgcheckpoint.cache.memory import InMemoryCache

strict_runs = None  # your answer


# %% [check]
def check_2():
    return check(lambda: strict_runs == 2,
                 "add_node('fetch', fetch, cache_policy=CachePolicy()); two inputs that differ "
                 "in facts give two keys, so fetch runs twice")


check_2()

# %% [solution]
strict_builder = StateGraph(Report)
strict_builder.add_node("fetch", fetch, cache_policy=CachePolicy())
strict_builder.add_edge(START, "fetch")
strict = strict_builder.compile(cache=InMemoryCache())
before = len(runs)
label = "strict"
strict.invoke({"topic": "owls", "facts": []})
strict.invoke({"topic": "owls", "facts": ["old"]})
strict_runs = len(runs) - before
print(runs[before:])
check_2()

# %% [markdown]
# ## Read it in the source
# `pregel/caching.py` holds the rules: `cache_key` (namespace and hash), `call_key` (the same for
# a call of a `@task(cache_policy=...)` function: namespace `module.function` with no node name,
# hash of its arguments), `wanted` (which tasks to look up), `finished_entry` (what a finished
# task stores, and that errors and interrupts are not stored).
# `PregelLoop.apply_cached` gives hits their writes and saves them as pending writes; compare it
# with `reuse_pending_writes`, the resume path.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/caching.py: cache_key", "pregel/caching.py: call_key",
            "pregel/caching.py: finished_entry",
            "pregel/loop.py: PregelLoop.apply_cached", "pregel/algo.py: reuse_pending_writes")
