# %% [markdown]
# # 10 · Failures and pending writes
#
# When one task of a super-step fails, the step never reaches its boundary, so no new checkpoint is
# written. But the tasks that *did* finish are not lost: each task's writes were saved with
# `put_writes` the moment it finished — the **pending writes** of the last checkpoint. The failed
# task gets an `ERROR` pending write instead.
#
# Resuming with `invoke(None, config)` reloads the checkpoint, sees which tasks already have
# writes, applies them, and runs **only the failed task**.

# %%
from typing import Annotated, TypedDict
import operator

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph

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
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "fail"}}

try:
    graph.invoke({"quotes": []}, config)
except ConnectionError as err:
    print("the run failed:", err)

# %% [markdown]
# ## What survived
# `next` lists only `hotels`: `flights` already has its writes. The snapshot's `tasks` still shows
# both — `hotels` with its error — and the saver holds their pending writes (including `flights`'
# vote on the `join:flights+hotels:summary` channel).

# %%
snap = graph.get_state(config)
print("next:", snap.next)
for task in snap.tasks:
    print(f"{task.name:<8} error={task.error!r}")
saved = graph.checkpointer.get_tuple(config)
names = {t.id: t.name for t in snap.tasks}
for task_id, channel, value in saved.pending_writes:
    print(f"pending write  {names.get(task_id, '?'):<8} {channel:<10} {value!r}")

# %% [markdown]
# ## Resume: only the failed task runs again

# %%
hotels_down = False
print(graph.invoke(None, config))
print(calls)
assert calls == {"flights": 1, "hotels": 2, "summary": 1}

# %% [markdown]
# `flights` ran once in total: its write was replayed from the checkpoint's pending writes.
#
# ## Exercises
# 1. Give `hotels` a `RetryPolicy(max_attempts=3, initial_interval=0.01)` and make it fail only on its
#    first call. How many checkpoints does the thread get, and is there an `__error__` write?
# 2. Why must pending writes be saved *before* the checkpoint that applies them?

# %% [solution]
from lgcheckpoint.types import RetryPolicy

attempts = []


def flaky(trip):
    attempts.append(1)
    if len(attempts) == 1:
        raise ConnectionError("blip")
    return {"quotes": ["hotel: 95 EUR/night"]}


b = StateGraph(Trip)
b.add_node("hotels", flaky, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
b.add_edge(START, "hotels")
b.add_edge("hotels", END)
g = b.compile(checkpointer=InMemorySaver())
c = {"configurable": {"thread_id": "retry"}}
print(g.invoke({"quotes": []}, c), len(attempts), "attempts")
print(len(list(g.get_state_history(c))), "checkpoints")
# 2: a crash between the two would otherwise lose finished work or publish a state whose inputs are gone.
