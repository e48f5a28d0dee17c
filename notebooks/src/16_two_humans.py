# %% [markdown]
# # 16 · Two humans, one thread: the thread guard
#
# A reviewer clicks "approve" twice; two browser tabs answer the same question; two workers pick
# up the same thread. Each answer is a `Command(resume=...)`, and each starts a run that loads
# the thread's head, finds the question waiting, and runs the approving node. LangGraph's library
# lets all of them through: the side effect happens once per click and the thread forks. The
# savers' own locks and transactions (chapter 05, side by side) do not stop it: they keep each
# *call* whole, and two runs are two valid sequences of calls.
#
# lgcheckpoint holds a **thread guard** around every run: one run at a time on a thread, across
# processes (a Postgres advisory lock, a record lock beside a SQLite file), and a stale answer is
# refused. Here four humans answer at the same instant — as threads, so the chapter stays small;
# the tests do the same with four processes on SQLite and on Postgres.

# %%
import sqlite3
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import TypedDict

import matplotlib.pyplot as plt

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.course import check, show_source
from lgcheckpoint.errors import StaleResumeError, ThreadBusyError
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt

published = []  # the side effect: what the approving node did, one entry per execution


class Post(TypedDict, total=False):
    text: str
    answer: str


def review(post: Post) -> Post:
    answer = interrupt({"publish?": post["text"]})
    time.sleep(0.3)  # acting takes a moment: the other humans click meanwhile
    published.append(answer)
    return {"answer": answer}


builder = StateGraph(Post)
builder.add_node("review", review)
builder.add_edge(START, "review")
builder.add_edge("review", END)
db = str(Path(tempfile.mkdtemp()) / "posts.sqlite")
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
graph = builder.compile(checkpointer=saver)

# %% [markdown]
# `race` asks the question on a fresh thread, then lets four humans answer at once with a given
# `multitask_strategy`, and reports how each answer ended.


# %%
def race(thread_id: str, strategy: str) -> Counter:
    config = {"configurable": {"thread_id": thread_id}}
    graph.invoke({"text": "Checkpoints make agents durable."}, config)
    outcomes, start = Counter(), threading.Barrier(4)

    def human(who: int) -> None:
        start.wait()
        try:
            graph.invoke(Command(resume=f"yes from {who}"), config, multitask_strategy=strategy)
            outcomes["ran"] += 1
        except ThreadBusyError:
            outcomes["refused: busy"] += 1
        except StaleResumeError:
            outcomes["refused: stale"] += 1

    humans = [threading.Thread(target=human, args=(i,)) for i in range(4)]
    for h in humans:
        h.start()
    for h in humans:
        h.join()
    return outcomes


def forks(thread_id: str) -> int:
    """Checkpoints that share a parent with another one: where the thread split."""
    parents = Counter(t.parent_config["configurable"]["checkpoint_id"]
                      for t in saver.list({"configurable": {"thread_id": thread_id}})
                      if t.parent_config)
    return sum(n - 1 for n in parents.values())


# %% [markdown]
# ## Without the guard: LangGraph's behaviour
# `multitask_strategy="off"` turns the guard off. All four answers run the node.

# %%
acted = {}  # strategy -> how many times the approving node acted on one question
published.clear()
outcomes = race("post-off", "off")
acted["off"] = len(published)
print(dict(outcomes))
print("the node acted more than once:", len(published) > 1)
print("the thread forked:", forks("post-off") > 0)

# %% [markdown]
# ## `reject`: the second run fails at once
# The first answer takes the thread; the others get `ThreadBusyError` naming the thread, without
# waiting (a late one that arrives after the first finished is refused as stale instead).

# %%
published.clear()
outcomes = race("post-reject", "reject")
acted["reject"] = len(published)
print("ran:", outcomes["ran"], " refused:", outcomes["refused: busy"] + outcomes["refused: stale"])
print("the node acted", len(published), "time; forks:", forks("post-reject"))

# %% [markdown]
# ## `enqueue` (the default): wait, then run on the head the first run left
# The others wait for the thread. When their turn comes the question has been answered, so each
# is refused as **stale** — and nothing is written.

# %%
published.clear()
outcomes = race("post-enqueue", "enqueue")
acted["enqueue"] = len(published)
print(dict(outcomes))
print("the node acted", len(published), "time; forks:", forks("post-enqueue"))

# %% [markdown]
# Four clicks on one question, three ways:

# %%
fig, ax = plt.subplots(figsize=(5, 2.2))
ax.barh(list(acted), list(acted.values()), color=["#c44", "#4a4", "#4a4"])
ax.set_xlabel("times the approving node acted (4 humans answered)")
ax.set_xlim(0, 4.5)
plt.tight_layout()
plt.show()

# %% [markdown]
# A stale answer says what happened and what to do:

# %%
config = {"configurable": {"thread_id": "post-enqueue"}}
before = len(list(saver.list(config)))
try:
    graph.invoke(Command(resume="yes, again"), config)
except StaleResumeError as err:
    print(str(err).split(" (checkpoint")[0])
    print("...", str(err).split(": it was ")[1])
print("checkpoints before and after:", before, len(list(saver.list(config))))

# %% [markdown]
# ## Across processes
# Threads of one process share an in-process lock; other processes meet at the database. For a
# SQLite file that is a byte-range lock in a file beside it (the operating system drops it when
# the process dies, even by SIGKILL); for Postgres a session advisory lock keyed by a hash of the
# thread id; InMemory needs only the in-process lock.

# %%
print(sorted(p.name for p in Path(db).parent.iterdir() if "threadlock" in p.name))

# %% [markdown]
# ### Exercise 1 · Answer the question you saw
# The graph can ask again on the same thread (here: a new input asks a new question). A plain
# `Command(resume="yes")` sent late would answer the *new* question. Answer by interrupt id
# instead: run thread `"by-id"` to its question, answer it by id, start it again with new input,
# then send the same answer by id once more and store the error you get in `late_error`.

# %%
late_error = None  # your answer

# %% [check]
def check_1():
    return check(lambda: isinstance(late_error, StaleResumeError)
                 and "no longer wait" in str(late_error),
                 "answer with Command(resume={interrupt.id: value}); the second time, catch "
                 "StaleResumeError")


check_1()

# %% [solution]
# Solution: an interrupt id that no longer waits is refused as stale, even while a new one waits.
by_id = {"configurable": {"thread_id": "by-id"}}
asked = graph.invoke({"text": "v1"}, by_id)["__interrupt__"][0]
graph.invoke(Command(resume={asked.id: "yes"}), by_id)
graph.invoke({"text": "v2"}, by_id)  # a new question on the same thread
try:
    graph.invoke(Command(resume={asked.id: "yes"}), by_id)
except StaleResumeError as err:
    late_error = err
check_1()

# %% [markdown]
# Why is `enqueue` the default rather than `reject`? A library call that waits for another call
# to finish is what a lock in any Python library does: a correct program never sees an error it
# did not cause. A UI that would rather say "someone else is answering" passes
# `multitask_strategy="reject"`.
#
# ## Read it in the source
# `guarded` wraps `Pregel.stream` (`aguarded`: `astream`) and holds the thread for the whole run;
# `Claim.acquire` takes it (waits or refuses); `Claim.check_answer` refuses a stale
# `Command(resume=...)` before the run writes anything. `checkpoint/locks.py` has the locks other
# processes see: `FileLocks` (SQLite) and `AdvisoryLocks` (Postgres).

# %%
show_source("guard.py: guarded", "guard.py: Claim.acquire", "guard.py: Claim.check_answer",
            "checkpoint/locks.py: FileLocks.try_lock")
