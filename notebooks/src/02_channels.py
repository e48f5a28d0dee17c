# %% [markdown]
# # 02 · Channels and reducers
#
# Two nodes running in parallel both add to the same list; another overwrites a field. Without a
# rule for combining writes, the state would depend on which thread finished first, and a resumed
# run could compute a different state than the original one. A channel is that rule, one per state
# key, and it is also what a checkpoint stores.
#
# Every key of the state is a **channel**. A node never changes the state directly: it *writes* to
# channels, and the channel decides what its new value is at the end of the super-step.
#
# | state field | channel | what a write does |
# |---|---|---|
# | `x: int` | `LastValue` | replaces the value; two writes in one step are an error |
# | `x: Annotated[list, operator.add]` | `BinaryOperatorAggregate` | folds every write into the value with the reducer |
#
# The graph adds channels of its own for the edges — you will meet them in the checkpoint.

# %%
import operator
from typing import Annotated, TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.errors import InvalidUpdateError
from lgcheckpoint.graph import END, START, StateGraph


class State(TypedDict):
    topic: str                                  # LastValue
    facts: Annotated[list[str], operator.add]   # BinaryOperatorAggregate(operator.add)


def wiki(state):
    return {"facts": [f"wiki: {state['topic']}"]}


def news(state):
    return {"facts": [f"news: {state['topic']}"]}


builder = StateGraph(State)
builder.add_node("wiki", wiki)
builder.add_node("news", news)
builder.add_edge(START, "wiki")
builder.add_edge(START, "news")
builder.add_edge(["wiki", "news"], END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "channels"}}
print(graph.invoke({"topic": "pregel", "facts": []}, config))
first_run = len(list(graph.get_state_history(config)))  # checkpoints after one invoke

# %% [markdown]
# Both writes to `facts` happened in the same super-step, and `operator.add` folded them into the
# list in a fixed order (tasks are sorted by name at the boundary), never in the order they finished —
# so a rerun gives the same list. Now the channels the *graph* created, as stored in the latest checkpoint:

# %%
saved = graph.checkpointer.get_tuple(config)
for channel in sorted(saved.checkpoint["channel_versions"]):
    print(channel)

# %% [markdown]
# * `__start__` carries the input into the graph;
# * `branch:to:wiki` and `branch:to:news` are the edges out of `START`: writing to them is what
#   *triggers* a node;
# * `topic` and `facts` are the state keys. An edge like `add_edge(["a", "b"], "c")` would add a
#   `join:a+b:c` channel that waits for both `a` and `b` (chapter 01 has one).
#
# ## Versions move with every write
# Each channel carries a **version**. A write at a step boundary gives the channel a new version
# — one more than the highest version in the checkpoint — and a node is triggered when a channel it
# listens to moves. Below, each column is a checkpoint of the thread and each cell is the version a
# channel had there; yellow cells changed in the step that made that checkpoint:
#
# * `c0` (step -1): the input is written to `__start__` only;
# * `c1` (step 0): the `__start__` task wrote `topic`, `facts` and the two edges `branch:to:…`;
# * `c2` (step 1): `wiki` and `news` both wrote `facts` — one new version for two writes, because
#   a channel's value (and version) changes once per step, whatever the number of writers.
#
# Two moves have no writer: `__start__` at `c1` and the `branch:to:…` channels at `c2`. A trigger
# channel is *consumed* once the node it woke has run (it is cleared, so it cannot wake the node
# again), and clearing is a change too, so it gets a new version.

# %%
from lgcheckpoint.course_pictures import versions_moving
from lgcheckpoint.viz import load_history

versions_moving(load_history(graph, config))

# %% [markdown]
# ## Two writes to a LastValue channel
# If two parallel nodes both write `topic`, the channel cannot pick one: the step fails with a
# clear error that names the channel and the fix.

# %%
def rename_a(state):
    return {"topic": "A"}


def rename_b(state):
    return {"topic": "B"}


bad = StateGraph(State)
bad.add_node("a", rename_a)
bad.add_node("b", rename_b)
bad.add_edge(START, "a")
bad.add_edge(START, "b")
try:
    bad.compile().invoke({"topic": "x", "facts": []})
except InvalidUpdateError as err:
    print(type(err).__name__, "-", str(err).splitlines()[0])

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · A reducer of your own
# Give `topic` a reducer that keeps the longer string, so two parallel writers no longer fail:
# build a graph whose nodes `a` and `b` write `"AAA"` and `"B"` to `topic` in the same step, and
# keep its result (`.invoke({"topic": "x", "facts": []})`) in `fixed`.

# %%
fixed = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    check(lambda: fixed["topic"] == "AAA",
          "class Fixed(TypedDict): topic: Annotated[str, longer] -- with longer(a, b) returning "
          "the longer string; then the graph with nodes a and b from START")


check_1()

# %% [solution]
def longer(a: str, b: str) -> str:
    return a if len(a) >= len(b) else b


class Fixed(TypedDict):
    topic: Annotated[str, longer]
    facts: Annotated[list[str], operator.add]


ok = StateGraph(Fixed)
ok.add_node("a", lambda s: {"topic": "AAA"})
ok.add_node("b", lambda s: {"topic": "B"})
ok.add_edge(START, "a")
ok.add_edge(START, "b")
fixed = ok.compile().invoke({"topic": "x", "facts": []})
print(fixed)
check_1()

# %% [markdown]
# ### Exercise 2 · The same thread, twice
# Invoke the first graph a second time on the same `config` with the same input, and put the number
# of entries of `facts` afterwards in `n_facts`. Why is it not 2?

# %%
n_facts = None  # your answer

# %% [check]
def check_2():
    check(lambda: len(list(graph.get_state_history(config))) > first_run
          and n_facts == len(graph.get_state(config).values["facts"]),
          "graph.invoke({'topic': 'pregel', 'facts': []}, config), then count the facts")


check_2()

# %% [solution]
n_facts = len(graph.invoke({"topic": "pregel", "facts": []}, config)["facts"])
print(n_facts, "facts: the reducer folds the new input ([]) and the new writes into the stored list;")
print("the thread keeps its state between runs -- a new thread_id would start from nothing")
check_2()

# %% [markdown]
# ## Read it in the source
# `LastValue.update` refuses a second write in one step; `BinaryOperatorAggregate.update` folds
# writes with the reducer; `apply_writes` hands each channel its writes and bumps its version.

# %%
from lgcheckpoint.course import show_source

show_source("channels/base.py: LastValue.update", "channels/base.py: BinaryOperatorAggregate.update",
            "pregel/algo.py: apply_writes")
