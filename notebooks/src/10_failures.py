# %% [markdown]
# # 10 · Failures and pending writes
#
# A step makes three calls in parallel and one of them times out. Rerunning the whole step would
# repeat the two that succeeded: pay for them twice, or send the same message twice. LangGraph
# saves each finished task's result at once, so a resume runs only what failed.
#
# When one task of a super-step fails, the step never reaches its boundary, so no new checkpoint is
# written. But the tasks that *did* finish are not lost: each task's writes were saved with
# `put_writes` the moment it finished — the **pending writes** of the last checkpoint. The failed
# task gets an `ERROR` pending write instead.
#
# Resuming with `invoke(None, config)` reloads the checkpoint, sees which tasks already have
# writes, applies them, and runs **only the failed task**. We use a SQLite saver this time, so we
# can also look at the rows it stored.

# %%
import operator
import sqlite3
from typing import Annotated, TypedDict

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.viz import LineageGraph

calls = {"flights": 0, "hotels": 0, "summary": 0}
hotels_down = True


class Trip(TypedDict):
    quotes: Annotated[list[str], operator.add]


def flights(trip):
    calls["flights"] += 1
    return {"quotes": ["flight: 420 EUR"]}


def hotels(trip):
    calls["hotels"] += 1
    if hotels_down:
        raise ConnectionError("hotel API is down")
    return {"quotes": ["hotel: 95 EUR/night"]}


def summary(trip):
    calls["summary"] += 1
    return {"quotes": [f"total quotes: {len(trip['quotes'])}"]}


builder = StateGraph(Trip)
builder.add_node("flights", flights)
builder.add_node("hotels", hotels)
builder.add_node("summary", summary)
builder.add_edge(START, "flights")
builder.add_edge(START, "hotels")
builder.add_edge(["flights", "hotels"], "summary")
builder.add_edge("summary", END)
conn = sqlite3.connect(":memory:", check_same_thread=False)
saver = SqliteSaver(conn)
graph = builder.compile(checkpointer=saver)
config = {"configurable": {"thread_id": "fail"}}

try:
    graph.invoke({"quotes": []}, config)
except ConnectionError as err:
    print("the run failed:", err)

# %% [markdown]
# ## What survived
# `next` lists only `hotels`: `flights` already has its writes. The snapshot's `tasks` still shows
# both — `hotels` with its error.

# %%
snap = graph.get_state(config)
print("next:", snap.next)
for task in snap.tasks:
    print(f"{task.name:<8} error={task.error!r}")

# %% [markdown]
# The lineage draws it. The head `c1` is the checkpoint both tasks ran from; its red border and the
# line `ERROR in hotels` come from the failed task's `__error__` write. `waiting: hotels` is what is
# left to do: `flights` is in `next` of the step but has saved its writes already.

# %%
lineage = LineageGraph(graph, config)
lineage

# %% [markdown]
# Selecting a checkpoint (a click in `lineage.widget()`, or `details` in code) lists what each task
# saved: `flights` wrote its quote and its vote on the `join:flights+hotels:summary` barrier
# (chapter 02) — the sibling's finished work, kept; `hotels` saved only its error.

# %%
print(lineage.details("c1"))

# %% [markdown]
# ## The special write slots
# A pending write is a row `(thread, namespace, checkpoint, task, idx, channel, value)`. A task's
# ordinary writes get `idx` 0, 1, 2… in the order it made them. Four channels are not state but
# facts *about* the task, and each gets a fixed **negative** slot (`WRITES_IDX_MAP`), the same in
# every saver:
#
# | channel | idx | written when | what it holds |
# |---|---|---|---|
# | `__error__` (ERROR) | -1 | the task raised | the exception |
# | `__scheduled__` (SCHEDULED) | -2 | — reserved: neither lgcheckpoint nor LangGraph's open-source runtime writes it | — |
# | `__interrupt__` (INTERRUPT) | -3 | the task called `interrupt()` | the `Interrupt`s it asked |
# | `__resume__` (RESUME) | -4 | `Command(resume=...)` answered it | the answers, in order |
#
# Negative slots never collide with ordinary ones, and they are **replaced** on a second write (a
# retry's newer error, a second answer), while an ordinary write is **kept** as first saved — the
# same task must not write two different values. Here are the rows as SQLite holds them:

# %%
names = {t.id: t.name for t in snap.tasks}  # task ids are random: show node names
c1_id = snap.config["configurable"]["checkpoint_id"]


def writes_rows():
    """The rows of the writes table that belong to c1, by task name and idx."""
    query = "SELECT task_id, idx, channel, type FROM writes WHERE checkpoint_id = ?"
    return sorted((names[task_id], idx, channel, kind)
                  for task_id, idx, channel, kind in conn.execute(query, (c1_id,)))


for row in writes_rows():
    print("{:<8} idx={:>2}  {:<28} {}".format(*row))

# %% [markdown]
# The same rows as a picture: one row of slots per task, the special slots on the left.

# %%
import matplotlib.pyplot as plt
from matplotlib.patches import Rectangle

SLOT_NAMES = {-4: "RESUME", -3: "INTERRUPT", -2: "SCHEDULED", -1: "ERROR"}


def draw_slots(rows, title):
    tasks = list(dict.fromkeys(r[0] for r in rows))
    slots = list(range(-4, 1 + max(r[1] for r in rows)))
    _, ax = plt.subplots(figsize=(8.2, 0.9 + 0.8 * len(tasks)), layout="constrained")
    for y, task in enumerate(tasks):
        for x, idx in enumerate(slots):
            hit = [r for r in rows if r[0] == task and r[1] == idx]
            colour = ("#fecaca" if idx == -1 else "#fde68a" if idx < 0 else "#bbf7d0") if hit \
                else "#f3f4f6"
            ax.add_patch(Rectangle((x, -y), 0.95, 0.8, color=colour))
            label = hit[0][2].replace("join:flights+hotels:summary", "join:…:summary") if hit else ""
            ax.text(x + 0.47, -y + 0.4, label, ha="center", va="center",
                    fontsize=11 if len(label) < 12 else 9.5)
        ax.text(-0.1, -y + 0.4, task, ha="right", va="center", fontsize=13, weight="bold")
    ax.set_xticks([x + 0.47 for x in range(len(slots))],
                  [f"{i}\n{SLOT_NAMES.get(i, '')}" for i in slots], fontsize=11)
    ax.set_xlim(-1.3, len(slots))
    ax.set_ylim(-len(tasks) + 0.8, 0.9)
    ax.set_yticks([])
    ax.set_title(title, fontsize=13)
    for side in ["left", "right", "top"]:
        ax.spines[side].set_visible(False)
    plt.show()


draw_slots(writes_rows(), "Pending writes of c1 by task and idx (special slots < 0)")

# %% [markdown]
# ## Resume: only the failed task runs again

# %%
hotels_down = False
print(graph.invoke(None, config))
print(calls)
assert calls == {"flights": 1, "hotels": 2, "summary": 1}

# %% [markdown]
# `flights` ran once in total: its writes were replayed from the checkpoint's pending writes.
# `hotels` saved its real writes at idx 0 and 1 *beside* its old error in slot -1 — the lineage now
# says `ERROR in hotels (retried ok)` on `c1`, and the run went on to `c2` and `c3`.

# %%
lineage.refresh()

# %% [markdown]
# ## When a node has an error handler
# A node can name a handler: `add_node("hotels", hotels, error_handler=fallback)`. When the node
# fails (after its retries), the handler runs **in the same step**, on the node's input, with a
# `NodeError` saying who failed and how. Its return value is written like any node's; the failed
# node's own edges are not taken, so the handler routes on with `Command(goto=...)`.
#
# Our handler crashes the first time, so we can see what a resume runs again.

# %%
from lgcheckpoint.errors import NodeError
from lgcheckpoint.types import Command

handled_calls = {"hotels": 0, "ask_later": 0}
handler_crashes = True


def hotels_api(trip):
    handled_calls["hotels"] += 1
    raise ConnectionError("hotel API is down")


def ask_later(trip, error: NodeError):
    handled_calls["ask_later"] += 1
    print(f"handler got: node={error.node} error={error.error}")
    if handler_crashes:
        raise RuntimeError("handler crashed too")
    return Command(update={"quotes": ["hotel: ask again later"]}, goto="summary")


handled = StateGraph(Trip)
handled.add_node("hotels", hotels_api, error_handler=ask_later)
handled.add_node("summary", summary)
handled.add_edge(START, "hotels")
handled.add_edge("summary", END)
handled_graph = handled.compile(checkpointer=saver)
handled_cfg = {"configurable": {"thread_id": "handled"}}

try:
    handled_graph.invoke({"quotes": []}, handled_cfg)
except RuntimeError as err:
    print("the run failed:", err)
print(handled_calls)

# %% [markdown]
# The lineage names both tasks of the step. `hotels` failed and its error was **handled**; the
# handler `__error_handler__hotels` (the node `add_node` made for it) then failed too, and that
# stopped the run: the red border. No new checkpoint: `c1` is still the head, `next` still `hotels`.

# %%
handled_lineage = LineageGraph(handled_graph, handled_cfg)
handled_lineage

# %% [markdown]
# In the writes table, `hotels` saved its error at -1 and, beside it, `__error_source_node__` =
# `"hotels"`: the mark "this error went to a handler". It is not a reserved slot (it is not in
# `WRITES_IDX_MAP`): it takes the ordinary idx 1, as the task's second write. The handler's crash
# is saved under the handler's own task.

# %%
head = handled_lineage.history.head
handled_names = {t.task_id: t.name for t in head.tasks}  # named by the viewer: ids are random


def handled_rows():
    """The head checkpoint's rows of the writes table, by task name and idx."""
    query = "SELECT task_id, idx, channel, type FROM writes WHERE checkpoint_id = ?"
    return sorted((handled_names[task_id], idx, channel, kind)
                  for task_id, idx, channel, kind in conn.execute(query, (head.checkpoint_id,)))


for row in handled_rows():
    print("{:<24} idx={:>2}  {:<22} {}".format(*row))
print(handled_lineage.details(head.key))

# %% [markdown]
# ### Resume: the handler runs again, not the node
# On resume, the saved `__error_source_node__` tells the loop that `hotels` already failed and was
# handed over: `hotels` does not run again, its handler does, with the error as the saver kept it
# (its text). This time the handler routes on to `summary`.

# %%
handler_crashes = False
print(handled_graph.invoke(None, handled_cfg))
print(handled_calls)
assert handled_calls == {"hotels": 1, "ask_later": 2}

# %% [markdown]
# The handler's task now has its writes (the quote, and the route to `summary`) beside its old
# crash: `retried ok`. `hotels`' error stays `handled`, and the run went on to `c2` and `c3`.

# %%
handled_lineage.refresh()

# %% [markdown]
# The super-step player tells the step `c1` → `c2` in words: both tasks ran, only the handler's
# writes became changes, and `hotels` is named as the task whose error went to the handler.

# %%
from lgcheckpoint.viz import SuperStepPlayer

print(SuperStepPlayer(handled_graph, handled_cfg).frame_text(2))

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Retries inside a step
# Give a node `RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)`. First make it fail
# only on its **first** call; then make it fail on **every** call. For each run (its own thread on
# `saver`), count the `__error__` pending writes over all checkpoints of the thread: store them in
# `errors_flaky` and `errors_down`. What does the difference tell you about where retries happen?

# %%
from lgcheckpoint.types import RetryPolicy

flaky_cfg = {"configurable": {"thread_id": "flaky"}}
down_cfg = {"configurable": {"thread_id": "down"}}
errors_flaky, errors_down = None, None  # your answer

# %% [check]
from lgcheckpoint.course import check


def error_writes(thread):
    cfg = {"configurable": {"thread_id": thread}}
    return sum(c == "__error__" for t in saver.list(cfg) for _, c, _ in t.pending_writes)


def check_1():
    return check(lambda: [errors_flaky, errors_down] == [error_writes("flaky"), error_writes("down")]
                 and errors_flaky < errors_down,
                 "run both graphs on threads flaky_cfg and down_cfg, then count the pending "
                 "writes whose channel is '__error__' in saver.list(cfg)")


check_1()

# %% [solution]
def hotel_graph(fail_times):
    attempts = []

    def hotels_retrying(trip):
        attempts.append(1)
        if len(attempts) <= fail_times:
            raise ConnectionError(f"blip {len(attempts)}")
        return {"quotes": ["hotel: 95 EUR/night"]}

    b = StateGraph(Trip)
    retry = RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False)
    b.add_node("hotels", hotels_retrying, retry_policy=retry)
    b.add_edge(START, "hotels")
    b.add_edge("hotels", END)
    return b.compile(checkpointer=saver)


print(hotel_graph(1).invoke({"quotes": []}, flaky_cfg))
try:
    hotel_graph(99).invoke({"quotes": []}, down_cfg)
except ConnectionError as err:
    print("gave up:", err)
errors_flaky, errors_down = error_writes("flaky"), error_writes("down")
for cfg in (flaky_cfg, down_cfg):
    for t in saver.list(cfg):
        print(cfg["configurable"]["thread_id"], t.metadata["step"],
              [(c, v) for _, c, v in t.pending_writes if c == "__error__"])
# retries run inside the task: only a task that gives up saves an __error__ write, and one only
check_1()

# %% [markdown]
# ### Exercise 2 · Replace or keep?
# `probe_cfg` below is a fresh checkpoint on `saver`. Call `saver.put_writes(probe_cfg, writes,
# "probe-task")` four times: `[("quotes", "a")]`, `[("quotes", "b")]`, `[("__error__", "x")]`,
# `[("__error__", "y")]`. Then read `saver.get_tuple(probe_cfg).pending_writes` and store what is
# kept for task `"probe-task"` as a dict `kept = {channel: value}`.

# %%
from lgcheckpoint.checkpoint.base import empty_checkpoint

probe_cfg = saver.put({"configurable": {"thread_id": "probe", "checkpoint_ns": ""}},
                      empty_checkpoint(), {"source": "input", "step": -1}, {})
kept = {}  # your answer


# %% [check]
def check_2():
    saved = {c: v for t, c, v in saver.get_tuple(probe_cfg).pending_writes if t == "probe-task"}
    return check(lambda: kept == saved and set(kept) == {"quotes", "__error__"},
                 "make the four put_writes calls, then build kept from get_tuple(probe_cfg)"
                 ".pending_writes")


check_2()

# %% [solution]
for writes in ([("quotes", "a")], [("quotes", "b")], [("__error__", "x")], [("__error__", "y")]):
    saver.put_writes(probe_cfg, writes, "probe-task")
kept = {c: v for t, c, v in saver.get_tuple(probe_cfg).pending_writes if t == "probe-task"}
print(kept)  # quotes: the first write is kept (idx 0); __error__: the latest replaces slot -1
check_2()

# %% [markdown]
# ### Exercise 3 · One handler for every node
# `set_node_defaults(error_handler=fn)` gives every node without its own handler the same one (the
# node `__default_error_handler__`). Build a graph on thread `defaults_cfg` where `flights` and
# `hotels` both run from `START` and both always raise; give it one default handler that returns
# `{"quotes": [f"{error.node}: ask later"]}`. Run it, then store in `sources` the sorted list of the
# `__error_source_node__` values saved on the thread, and in `defaults_out` what `invoke` returned.

# %%
defaults_cfg = {"configurable": {"thread_id": "defaults"}}
sources, defaults_out = None, None  # your answer


# %% [check]
def saved_sources(cfg):
    return sorted(v for t in saver.list(cfg) for _, c, v in t.pending_writes
                  if c == "__error_source_node__")


def check_3():
    return check(lambda: sources == saved_sources(defaults_cfg) == ["flights", "hotels"]
                 and sorted(defaults_out["quotes"]) == ["flights: ask later", "hotels: ask later"],
                 "call set_node_defaults(error_handler=...) on the builder, run the graph on "
                 "defaults_cfg, then collect the '__error_source_node__' pending writes")


check_3()

# %% [solution]
def down(name):
    def node(trip):
        raise ConnectionError(f"{name} API is down")
    return node


def ask_later_for_all(trip, error: NodeError):
    return {"quotes": [f"{error.node}: ask later"]}


both = StateGraph(Trip)
both.add_node("flights", down("flights"))
both.add_node("hotels", down("hotels"))
both.add_edge(START, "flights")
both.add_edge(START, "hotels")
both.set_node_defaults(error_handler=ask_later_for_all)
defaults_out = both.compile(checkpointer=saver).invoke({"quotes": []}, defaults_cfg)
sources = saved_sources(defaults_cfg)
print(defaults_out, sources)  # each failed node's task marked its error; one handler took both
check_3()

# %% [markdown]
# ## Read it in the source
# `PregelLoop.commit` turns how a task ended into writes (its own, or `__error__`);
# `InMemorySaver.put_writes` shows the slot rule in two lines (negative slots replace, others keep
# the first); `reuse_pending_writes` hands finished tasks their saved writes back on resume, so they
# do not run again. `handler_task` makes a failed task's handler task, and `resumed_handlers` runs
# the handler (not the node) again on resume.

# %%
from lgcheckpoint.course import show_source

show_source("pregel/loop.py: PregelLoop.commit", "checkpoint/memory.py: InMemorySaver.put_writes",
            "pregel/algo.py: reuse_pending_writes", "pregel/handlers.py: handler_task",
            "pregel/handlers.py: resumed_handlers")
