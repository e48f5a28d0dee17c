# %% [markdown]
# # 11 · Subgraphs and checkpoint namespaces
#
# A compiled graph can be a node of another graph. Its checkpoints go to the *same* saver and the
# same thread, but under their own **namespace**: `checkpoint_ns = "<node>:<task id>"` (nested
# subgraphs join namespaces with `|`). The root graph's namespace is `""`. Each subgraph
# checkpoint's metadata `parents` maps enclosing namespaces to their checkpoint ids.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt


class State(TypedDict, total=False):
    request: str
    answer: str


def research(state):
    return {"answer": f"notes on {state['request']}"}


def check(state):
    ok = interrupt(f"approve notes: {state['answer']}?")
    return {"answer": state["answer"] + (" (approved)" if ok else " (rejected)")}


inner = StateGraph(State)
inner.add_node("research", research)
inner.add_node("check", check)
inner.add_edge(START, "research")
inner.add_edge("research", "check")
inner.add_edge("check", END)

outer = StateGraph(State)
outer.add_node("team", inner.compile())      # the subgraph, as a node
outer.add_node("publish", lambda s: {"answer": s["answer"] + " -> published"})
outer.add_edge(START, "team")
outer.add_edge("team", "publish")
outer.add_edge("publish", END)
saver = InMemorySaver()
graph = outer.compile(checkpointer=saver)
config = {"configurable": {"thread_id": "sub"}}
out = graph.invoke({"request": "pregel"}, config)
print(out["__interrupt__"][0].value)

# %% [markdown]
# The interrupt inside the subgraph stopped the parent too. The parent's snapshot shows the
# waiting `team` task; with `subgraphs=True` the task carries the child's own snapshot.

# %%
snap = graph.get_state(config, subgraphs=True)
print("parent next:", snap.next)
child = snap.tasks[0].state
print("child next:", child.next, "| child ns starts with 'team:':",
      child.config["configurable"]["checkpoint_ns"].startswith("team:"))

# %% [markdown]
# ## Every namespace in the saver
# Listing all checkpoints of the thread shows both namespaces (task ids shortened to `team:…`).

# %%
def short(ns):
    return ns.split(":")[0] + ":…" if ns else '""'


def ns_then_time(t):
    return t.config["configurable"]["checkpoint_ns"] != "", t.checkpoint["id"]


for t in sorted(saver.list(config), key=ns_then_time):
    ns = t.config["configurable"]["checkpoint_ns"]
    print(f"ns={short(ns):<8} step={t.metadata['step']:>2} source={t.metadata['source']:<5} "
          f"parents={[short(k) for k in t.metadata.get('parents', {})]}")

# %% [markdown]
# ## Resume: the answer reaches the node inside the subgraph

# %%
print(graph.invoke(Command(resume=True), config))

# %% [markdown]
# ## Exercises
# 1. Stream the same graph on a new thread with `stream(..., subgraphs=True)` and print the
#    namespace of each chunk. Which chunks come from inside `team`?
# 2. Why does the child's namespace contain a task id and not just `team`?

# %% [solution]
for ns, chunk in graph.stream({"request": "channels"}, {"configurable": {"thread_id": "sub-2"}},
                              subgraphs=True, stream_mode="updates"):
    print([short(n) for n in ns], list(chunk))
# 2: the same node can run many times (loops, Send); each run needs its own checkpoint history.
