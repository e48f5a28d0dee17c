# %% [markdown]
# # 17 · The functional API: pending writes across an interrupt
#
# Not every workflow is a graph you draw. LangGraph's **functional API** lets you write plain
# Python — `@entrypoint` around a function, `@task` around the steps with side effects — and
# still get checkpoints, interrupts and resume. Underneath it is the same machinery as chapters
# 01–10:
#
# - an entrypoint is a Pregel graph with **one node** (the function) and three channels:
#   `__start__` (the input), `__end__` (what it returns), `__previous__` (what it saves for the
#   next run on the thread);
# - each **call** of a task is a PUSH task of the same super-step, and its result is saved at
#   once as a **pending write** on the channel `__return__`.
#
# When the entrypoint is interrupted and resumed, the function runs again from the top, but every
# task call that already finished returns its saved result instead of running. That is how
# LangGraph's durable-execution guide makes side effects safe to resume.

# %%
import sqlite3
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.course import check, show_source
from lgcheckpoint.course_pictures import task_runs
from lgcheckpoint.func import entrypoint, task
from lgcheckpoint.types import Command, interrupt
from lgcheckpoint.viz import LineageGraph

db = str(Path(tempfile.mkdtemp()) / "shop.sqlite")
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
runs = []  # every time a task body really runs, its name is appended
charges = []  # the side effect we must not repeat: money taken from a card


@task
def price(cart: list) -> int:
    runs.append("price")
    return sum(cart)


@task
def charge_card(amount: int) -> str:
    runs.append("charge_card")
    charges.append(amount)
    return f"receipt-{len(charges)}"


@task
def ask_to_ship(receipt: str) -> str:
    runs.append("ask_to_ship")
    return interrupt(f"{receipt}: ship it?")


@entrypoint(checkpointer=saver)
def checkout(cart: list) -> dict:
    total = price(cart).result()
    receipt = charge_card(total).result()
    answer = ask_to_ship(receipt).result()
    return {"total": total, "receipt": receipt, "shipped": answer == "yes"}


# %% [markdown]
# A task call returns a future: `.result()` waits for it (in `async def` code you `await` it).
# The first run prices the cart, charges the card, then stops at the question:

# %%
config = {"configurable": {"thread_id": "order-1"}}
first = checkout.invoke([20, 22], config)
print(first["__interrupt__"][0].value)
print("ran:", runs, " charges:", charges)

# %% [markdown]
# ## What was saved
# One checkpoint (`source="input"`) holds the input; everything the step did so far is in its
# **pending writes**, one group per task id (ids are random here, so we print the writes without
# them). The two finished calls saved their `__return__`; `ask_to_ship` and the
# entrypoint itself saved the `__interrupt__` that stopped them.

# %%
saved = saver.get_tuple(config)
print(saved.metadata, "channels:", saved.checkpoint["channel_values"])
print("tasks with writes:", len({task_id for task_id, _, _ in saved.pending_writes}))
for _task_id, channel, value in sorted(saved.pending_writes, key=lambda w: (w[1], str(w[2]))):
    shown = [i.value for i in value] if channel == "__interrupt__" else value
    print(f"{channel:<14} {shown!r}")

# %% [markdown]
# `get_state` shows the one node that will run again, `checkout`, waiting on the question:

# %%
snap = checkout.get_state(config)
print("next:", snap.next, " waiting:", [i.value for i in snap.interrupts])

# %% [markdown]
# ## Resume: which calls run again?
# `Command(resume="yes")` runs `checkout` from its first line. Its first call, `price(...)`, gets
# the same task id as last time (the id is a hash of the checkpoint, the step, the caller and the
# call's number), finds its saved `__return__`, and returns it without running. So does
# `charge_card` — the card is not charged twice. `ask_to_ship` had not finished: it runs again,
# and this time `interrupt()` returns the answer.

# %%
runs_before = list(runs)
print(checkout.invoke(Command(resume="yes"), config))
print("ran on resume:", runs[len(runs_before):], " charges:", charges)

# %%
asked = {"checkout", "ask_to_ship"}  # the two tasks whose writes above hold the __interrupt__
first_run = {name: "interrupted" if name in asked else "ran" for name in ["checkout", *runs_before]}
rerun = {"checkout", *runs[len(runs_before):]}  # the entrypoint's body always runs again
second_run = {name: "ran" if name in rerun else "saved result" for name in first_run}
task_runs({"invoke([20, 22])": first_run, "Command(resume='yes')": second_run},
          title="a finished call returns its saved __return__ instead of running")

# %% [markdown]
# The lineage viewer reads the same thread: checkpoint `c0` (the input) carries the pending
# writes of all five tasks — the calls named after their functions, their `__return__` values,
# the interrupts and the answer — and `c1` is the checkpoint the finished step wrote. The viewer
# knows nothing about the functional API: it reads `saver.list()`, as it would for a thread
# LangGraph wrote.

# %%
LineageGraph(checkout, config)

# %% [markdown]
# ## `previous`: a thread remembers the last result
# The entrypoint saves its return value in `__previous__`; the next run on the thread receives it
# as the `previous` parameter. `entrypoint.final(value=..., save=...)` returns one thing and saves
# another.


# %%
@entrypoint(checkpointer=saver)
def tally(n: int, *, previous: int | None = None) -> entrypoint.final[int, int]:
    total = (previous or 0) + n
    return entrypoint.final(value=total, save=total)


tally_config = {"configurable": {"thread_id": "tally"}}
print([tally.invoke(n, tally_config) for n in (1, 2, 3)])
print(tally.get_state(tally_config).values)

# %% [markdown]
# ### Exercise 1 · Put the side effect in a task
# `careless_checkout` charges the card *in the entrypoint body*, not in a task. Run it to its
# question and resume it: the card is charged twice, because the entrypoint's own body runs
# again from the top. Write `safe_checkout` (thread `"order-3"`) that charges through the
# `charge_card` task instead, run it to the question and resume it with `"yes"`. Store how many
# charges that added in `safe_charges`.


# %%
@entrypoint(checkpointer=saver)
def careless_checkout(cart: list) -> dict:
    charges.append(sum(cart))  # a side effect outside any task: it runs on every resume
    return {"shipped": ask_to_ship("careless").result() == "yes"}


before = len(charges)
careless_config = {"configurable": {"thread_id": "order-2"}}
careless_checkout.invoke([5], careless_config)
careless_checkout.invoke(Command(resume="yes"), careless_config)
print("charges made by careless_checkout:", len(charges) - before)

safe_charges = None  # your answer

# %% [check]
def check_1():
    return check(lambda: safe_charges == 1,
                 "call charge_card(...).result() inside safe_checkout; count len(charges) "
                 "before the first invoke and after the resume")


check_1()

# %% [solution]
# Solution: the call's result is saved as a pending write, so the resume does not charge again.
@entrypoint(checkpointer=saver)
def safe_checkout(cart: list) -> dict:
    receipt = charge_card(sum(cart)).result()
    return {"shipped": ask_to_ship(receipt).result() == "yes"}


before = len(charges)
safe_config = {"configurable": {"thread_id": "order-3"}}
safe_checkout.invoke([5], safe_config)
safe_checkout.invoke(Command(resume="yes"), safe_config)
safe_charges = len(charges) - before
check_1()

# %% [markdown]
# ### Exercise 2 · Find the saved result
# After the first run of `checkout` on a new thread `"order-4"` (it stops at the question),
# read the saver's pending writes and store in `saved_total` the value `price` returned — the
# one `__return__` write that holds an `int`.

# %%
saved_total = None  # your answer

# %% [check]
def check_2():
    return check(lambda: saved_total == 7,
                 "invoke checkout([3, 4], ...) on thread order-4, then look through "
                 "saver.get_tuple(config).pending_writes for channel '__return__'")


check_2()

# %% [solution]
# Solution: pending writes are (task_id, channel, value); a call's result is on __return__.
order4 = {"configurable": {"thread_id": "order-4"}}
checkout.invoke([3, 4], order4)
saved_total = next(value for _task, channel, value in saver.get_tuple(order4).pending_writes
                   if channel == "__return__" and isinstance(value, int))
check_2()

# %% [markdown]
# A task call's id depends on its **number** among the calls its caller made: the n-th call of
# this run must be the n-th call of the last run. Code that calls tasks in an order that changes
# between runs (a random choice, the clock) breaks resume; keep that nondeterminism inside a task,
# where its result is saved.
#
# ## Read it in the source
# `entrypoint.__call__` builds the one-node graph; `EntrypointNode.result_writes` splits a return
# value into `__end__` and `__previous__`. A task call goes to `Calls.accept`, which makes the
# PUSH task with its deterministic id and hands it the writes it saved last time; `SyncCalls`
# runs it in the run's thread pool and commits its `__return__` as it finishes.

# %%
show_source("func.py: entrypoint.__call__", "func.py: EntrypointNode.result_writes",
            "pregel/calls.py: Calls.accept", "pregel/calls.py: SyncCalls.submit")
