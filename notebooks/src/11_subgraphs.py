# %% [markdown]
# # 11 · Subgraphs and checkpoint namespaces
#
# Real agents are built from smaller ones: a research agent inside a planner, a tool-calling loop
# inside a support bot. When the inner one stops for a human or crashes, the resume must find the
# inner graph's state as well as the outer one's, in the same database, without the two colliding.
#
# A compiled graph can be a node of another graph. Its checkpoints go to the *same* saver and the
# same thread, but under their own **namespace**: `checkpoint_ns = "<node>:<task id>"` (`:` is
# `NS_END`; nested subgraphs join namespaces with `|`, `NS_SEP`). The root graph's namespace is
# `""`. So a checkpoint has a three-part address — `thread_id`, `checkpoint_ns`, `checkpoint_id` —
# and each subgraph checkpoint's metadata `parents` maps the enclosing namespaces to the checkpoint
# each one was at when the subgraph ran.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt
from lgcheckpoint.viz import LineageGraph


class State(TypedDict, total=False):
    request: str
    answer: str


def research(state):
    return {"answer": f"notes on {state['request']}"}


def check_notes(state):
    ok = interrupt(f"approve notes: {state['answer']}?")
    return {"answer": state["answer"] + (" (approved)" if ok else " (rejected)")}


inner = StateGraph(State)
inner.add_node("research", research)
inner.add_node("check", check_notes)
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
# ## Both namespaces, drawn
# The lineage reads every namespace of the thread. The root graph's checkpoints come first; the
# dashed box is the `team` subgraph's own history (its checkpoints are numbered `c0…` again:
# they are a separate sequence). The dotted edge starts at the root checkpoint the subgraph ran
# under — `c1`, whose `team` task is the one that is waiting — which is exactly what `parents`
# records. Both `c1` and the subgraph's `c2` carry the orange interrupt border: the question was
# asked inside, and the parent's task is waiting on it.

# %%
LineageGraph(graph, config)

# %% [markdown]
# The same facts as rows: listing all checkpoints of the thread shows both namespaces (task ids
# shortened to `team:…`).

# %%
def short(ns):
    return "|".join(part.split(":")[0] + ":…" for part in ns.split("|")) if ns else '""'


def ns_then_time(t):
    return t.config["configurable"]["checkpoint_ns"] != "", t.checkpoint["id"]


for t in sorted(saver.list(config), key=ns_then_time):
    ns = t.config["configurable"]["checkpoint_ns"]
    print(f"ns={short(ns):<8} step={t.metadata['step']:>2} source={t.metadata['source']:<5} "
          f"parents={[short(k) for k in t.metadata.get('parents', {})]}")

# %% [markdown]
# ## Resume: the answer reaches the node inside the subgraph
# `Command(resume=True)` goes to the root graph; the waiting `team` task runs the subgraph again,
# which loads *its* latest checkpoint (by its namespace) and re-runs `check`, where `interrupt()`
# now returns `True`. The picture grows in both namespaces.

# %%
print(graph.invoke(Command(resume=True), config))
LineageGraph(graph, config)

# %% [markdown]
# ## Nested subgraphs
# One level deeper: if `research` is itself a compiled graph, its checkpoints live under
# `team:<id>|research:<id>` — the path of tasks from the root, joined by `|`.

# %%
search = StateGraph(State)
search.add_node("search", lambda s: {"answer": f"hits for {s['request']}"})
search.add_edge(START, "search")
search.add_edge("search", END)
team2 = StateGraph(State)
team2.add_node("research", search.compile())
team2.add_node("write", lambda s: {"answer": s["answer"] + " (written up)"})
team2.add_edge(START, "research")
team2.add_edge("research", "write")
team2.add_edge("write", END)
top = StateGraph(State)
top.add_node("team", team2.compile())
top.add_edge(START, "team")
top.add_edge("team", END)
nested_saver = InMemorySaver()
nested = top.compile(checkpointer=nested_saver)
nested_cfg = {"configurable": {"thread_id": "nested"}}
print(nested.invoke({"request": "channels"}, nested_cfg))
for ns in sorted({t.config["configurable"]["checkpoint_ns"] for t in nested_saver.list(nested_cfg)}):
    print(f"{short(ns):<22} depth {ns.count('|') + 1 if ns else 0}")

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Which chunks come from inside?
# Stream `graph` on a new thread `"sub-2"` with `stream(..., subgraphs=True, stream_mode="updates")`.
# Each chunk is `(namespace, update)`; the namespace is a tuple of `"node:task id"` parts, empty for
# the root. Collect the node names that updated *inside* `team` in a list `inside` (in order).

# %%
inside = []  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: inside and set(inside) <= set(inner.nodes)
                 and graph.get_state({"configurable": {"thread_id": "sub-2"}}).next,
                 "stream on thread 'sub-2'; keep the update's node names when the namespace "
                 "tuple is not empty")


check_1()

# %% [solution]
for ns, chunk in graph.stream({"request": "channels"}, {"configurable": {"thread_id": "sub-2"}},
                              subgraphs=True, stream_mode="updates"):
    print([short(n) for n in ns], list(chunk))
    if ns:
        inside += [node for node in chunk if not node.startswith("__")]
print(inside)  # research; then check stops at its interrupt (the __interrupt__ chunk)
check_1()

# %% [markdown]
# ### Exercise 2 · Why a task id in the namespace?
# Build a root graph whose `team` node (a subgraph without an interrupt: compile `review_free`,
# below; each run appends " notes" to `answer`) runs **twice** in a loop: after `team`, go back to
# `team` once, then end.
# Run it on `saver` with thread `"loop"` and store the set of namespaces that thread's checkpoints
# live under in `loop_namespaces`. How many are there, and why can't the namespace be just `"team"`?

# %%
review_free = StateGraph(State)
review_free.add_node("research", lambda s: {"answer": s.get("answer", "") + " notes"})
review_free.add_edge(START, "research")
review_free.add_edge("research", END)
loop_namespaces = set()  # your answer


# %% [check]
def check_2():
    saved = {t.config["configurable"]["checkpoint_ns"]
             for t in saver.list({"configurable": {"thread_id": "loop"}})}
    return check(lambda: loop_namespaces == saved and len(saved) > 2,
                 "team must run twice on thread 'loop'; collect "
                 "t.config['configurable']['checkpoint_ns'] over saver.list(...)")


check_2()

# %% [solution]
looped = StateGraph(State)
looped.add_node("team", review_free.compile())
looped.add_edge(START, "team")
looped.add_conditional_edges("team", lambda s: END if s["answer"].count("notes") == 2 else "team")
loop_graph = looped.compile(checkpointer=saver)
loop_graph.invoke({"request": "loops", "answer": ""}, {"configurable": {"thread_id": "loop"}})
loop_namespaces = {t.config["configurable"]["checkpoint_ns"]
                   for t in saver.list({"configurable": {"thread_id": "loop"}})}
print(sorted(short(ns) for ns in loop_namespaces), len(loop_namespaces), "namespaces")
# each run of team is its own task with its own history; "team" alone would mix them up
check_2()

# %% [markdown]
# ## Read it in the source
# `make_task` builds a task's namespace from its parent's (`|`, then `:` and the task id);
# `Pregel.get_state`
# with `subgraphs=True` follows the waiting task into the child's namespace; the lineage's
# `lineage_dot` draws one cluster per namespace and the dotted `parents` edge.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/algo.py: make_task", "pregel/state.py: StateReading.get_state",
            "viz/lineage.py: lineage_dot")
