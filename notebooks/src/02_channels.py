# %% [markdown]
# # 02 · Channels and reducers
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
# 1. Give `topic` a reducer that keeps the longer string, so the graph above no longer fails.
# 2. What does `facts` hold after invoking the first graph twice on the same thread? Why?

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
print(ok.compile().invoke({"topic": "x", "facts": []}))
# 2: the reducer also folds the new input into the stored list: the old facts stay and new ones are added.
print(len(graph.invoke({"topic": "pregel", "facts": []}, config)["facts"]))
