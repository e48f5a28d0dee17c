# %% [markdown]
# # 16 · Two humans, one thread: the thread guard
#
# A reviewer clicks "approve" twice; two browser tabs answer the same question; two workers pick
# up the same thread. Each answer is a `Command(resume=...)`, and each starts a run that loads
# the thread's head, finds the question waiting, and runs the approving node. LangGraph's library
# lets all of them through: the side effect happens once per click and the thread forks.
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

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
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
published.clear()
outcomes = race("post-off", "off")
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
print("ran:", outcomes["ran"], " refused:", outcomes["refused: busy"] + outcomes["refused: stale"])
print("the node acted", len(published), "time; forks:", forks("post-reject"))

# %% [markdown]
# ## `enqueue` (the default): wait, then run on the head the first run left
# The others wait for the thread. When their turn comes the question has been answered, so each
# is refused as **stale** — and nothing is written.

# %%
published.clear()
outcomes = race("post-enqueue", "enqueue")
print(dict(outcomes))
print("the node acted", len(published), "time; forks:", forks("post-enqueue"))

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
# ## Where it lives
# - `lgcheckpoint/guard.py`: `guarded` wraps `Pregel.stream` (`aguarded`: `astream`);
#   `Claim.acquire` takes the thread (waits or refuses); `Claim.check_answer` refuses a stale
#   `Command(resume=...)` before the run writes anything.
# - `lgcheckpoint/checkpoint/locks.py`: `FileLocks` (SQLite), `AdvisoryLocks` (Postgres),
#   `thread_key` (the 64-bit hash of the thread).
#
# ## Exercises
# 1. The graph loops back and asks a *new* question after an answer. A plain
#    `Command(resume="yes")` sent late would answer the new question. How can a client make sure
#    its answer is for the question it saw?
# 2. Why is `enqueue` the default rather than `reject`?

# %% [solution]
# 1: answer by interrupt id. An id that no longer waits is refused as stale.
config = {"configurable": {"thread_id": "by-id"}}
asked = graph.invoke({"text": "v1"}, config)["__interrupt__"][0]
graph.invoke(Command(resume={asked.id: "yes"}), config)
graph.invoke({"text": "v2"}, config)  # a new question on the same thread
try:
    graph.invoke(Command(resume={asked.id: "yes"}), config)
except StaleResumeError as err:
    print("refused:", "no longer wait" in str(err))
# 2: a library call that waits for another call to finish is what a lock in any Python library
# does; a correct program never sees an error it did not cause. A UI that would rather tell the
# user "someone else is answering" passes multitask_strategy="reject".
