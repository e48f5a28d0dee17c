# %% [markdown]
# # 14 · An agent that waits for a human
#
# A customer-support agent reads a message, looks up the order and may **refund money**. Nobody
# wants a model to move money alone, so a refund waits for a person — who may answer in a minute or
# tomorrow, from another machine. Nothing in memory can wait that long; a checkpoint can. This
# chapter puts together what the course taught:
#
# | the agent needs | the mechanism | chapter |
# |---|---|---|
# | stop before a risky tool and ask | `interrupt()` + `Command(resume=...)` | 08 |
# | ask only when something is missing | a dynamic interrupt | 08 |
# | let a person fix a tool call before it runs | `interrupt_before` + `update_state` | 08, 09 |
# | survive the wait, in another process | a SQLite checkpointer, pending writes | 05, 07, 10 |
# | answer a past question differently | time travel: fork, then resume | 09 |
# | see what happened | the lineage, the approval panel | 09, 08 |
#
# The agent lives in `lgcheckpoint/demos/approval_agent.py` (about 100 lines). Its "model" is a
# few deterministic rules — no API key, no network, the same answer every run — but it behaves like
# a tool-calling model: each turn it returns a message and either a tool call or a final answer.
# With a real chat model the messages are LangChain's: chapter 21 (a chat agent's memory) shows
# what a checkpoint stores for them and how a thread forks by overwriting a message's id.

# %%
from lgcheckpoint.demos.approval_agent import ORDERS, RISKY_TOOLS, build_approval_agent, fake_model

print("orders:", ORDERS)
print("risky tools:", RISKY_TOOLS)
print(fake_model([{"role": "user", "content": "My order #1042 arrived with a torn sole."}]))

# %% [markdown]
# The graph: `agent` calls the model; `review` stops a risky tool call for a person (and lets safe
# ones through); `tools` runs the call and hands the result back to `agent`, until the model
# answers without a tool call.

# %%
from lgcheckpoint.viz import GraphDrawing

GraphDrawing(build_approval_agent())

# %% [markdown]
# ## 1 · A refund waits for approval
# The checkpointer is a SQLite **file**: the approval will come from another process.

# %%
import sqlite3
import tempfile
from pathlib import Path

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.types import Command

db = Path(tempfile.mkdtemp()) / "support.sqlite"
agent = build_approval_agent(SqliteSaver(sqlite3.connect(db, check_same_thread=False)))
ticket = {"configurable": {"thread_id": "ticket-1"}}


def transcript(state):
    for m in state["messages"]:
        print(f"{m['role']:>9}: {m['content']}")


out = agent.invoke({"messages": [{"role": "user", "content":
                                  "My order #1042 arrived with a torn sole. I want a refund."}]},
                   ticket)
transcript(out)
print("\nwaiting for:", out["__interrupt__"][0].value)

# %% [markdown]
# The lookup went through `review` without stopping (not risky); the refund did not. The run has
# **ended** — `invoke` returned — and the question is a pending write on the head checkpoint. The
# approval panel shows what is pending, and the lineage where: the orange border is the waiting
# `review` task.

# %%
from lgcheckpoint.viz import HITLPanel, LineageGraph

HITLPanel(agent, ticket)

# %%
LineageGraph(agent, ticket)

# %% [markdown]
# ## 2 · The supervisor answers from another process
# A supervisor decides that a torn sole is worth 60 EUR, not the full price. Their tool is another
# program: it opens the same file, builds the same graph, and resumes the thread with corrected
# arguments — `Command(resume={"amount": 60.0})`. We run it as a real separate Python process.

# %%
import subprocess
import sys

supervisor = f"""
import sqlite3
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.demos import build_approval_agent
from lgcheckpoint.types import Command
agent = build_approval_agent(SqliteSaver(sqlite3.connect({str(db)!r}, check_same_thread=False)))
out = agent.invoke(Command(resume={{"amount": 60.0}}), {{"configurable": {{"thread_id": "ticket-1"}}}})
print("supervisor process:", out["messages"][-1]["content"])
"""
done = subprocess.run([sys.executable, "-c", supervisor], capture_output=True, text=True,
                      check=False)
print((done.stdout or done.stderr).strip())

# %% [markdown]
# Back here, the thread has moved on — this process only reads the file:

# %%
transcript(agent.get_state(ticket).values)
print("next:", agent.get_state(ticket).next)

# %% [markdown]
# ## 3 · A dynamic interrupt: the agent asks the customer
# Without an order number the model cannot look anything up, so `agent` asks — `interrupt()` only
# on this condition. The answer joins the transcript as the customer's message, and the run goes on
# to the next question: the refund approval. This time the supervisor rejects it (any answer other
# than `"approve"` or a dict of arguments is a rejection with a reason).

# %%
ticket2 = {"configurable": {"thread_id": "ticket-2"}}
out = agent.invoke({"messages": [{"role": "user", "content": "I want a refund for my jacket."}]},
                   ticket2)
print("agent asks:", out["__interrupt__"][0].value)
out = agent.invoke(Command(resume="It is order 1043."), ticket2)
print("then:", out["__interrupt__"][0].value)
out = agent.invoke(Command(resume="the jacket is still in transit"), ticket2)
transcript(out)

# %% [markdown]
# Two questions, two different nodes: the lineage marks both waits (orange borders) on one line.

# %%
LineageGraph(agent, ticket2)

# %% [markdown]
# ## 4 · Edit a tool call at a breakpoint
# A new agent is best run in a cautious mode: stop before **every** tool call
# (`interrupt_before=["tools"]`), so a person sees what is about to run. Here the customer corrects
# themselves and the model picks the wrong number (it takes the last one it sees):

# %%
cautious = build_approval_agent(SqliteSaver(sqlite3.connect(db, check_same_thread=False)),
                                interrupt_before=["tools"])
ticket3 = {"configurable": {"thread_id": "ticket-3"}}
cautious.invoke({"messages": [{"role": "user", "content":
                               "Where is my rain jacket? Order 1043, not 1042 (those were boots)."}]},
                ticket3)
state = cautious.get_state(ticket3)
print("paused before:", state.next, "| proposed:", state.values["tool_call"])

# %% [markdown]
# A breakpoint asks nothing, so there is nothing to *answer*; instead the person **edits the state**.
# `update_state` writes a new checkpoint (source `update`) with the corrected `tool_call`, as if
# `review` had written it, and `invoke(None, ...)` continues from there.

# %%
cautious.update_state(ticket3, {"tool_call": {"name": "lookup_order", "args": {"order_id": "1043"}}},
                      as_node="review")
out = cautious.invoke(None, ticket3)
transcript(out)
LineageGraph(cautious, ticket3)

# %% [markdown]
# The green checkpoint is the edit. The transcript keeps the model's words ("#1042"): only the call
# was corrected, and the tool looked up 1043. The next tool call (none here: the model answered)
# would stop again before `tools`.
#
# ## 5 · Time travel: answer a past question differently
# Back to ticket 1. The customer calls: they would accept 100 EUR. Can we go back to the approval
# and answer again? A first, naive try — resume the old checkpoint where `review` waited:

# %%
from lgcheckpoint.errors import StaleResumeError

waiting = next(s for s in agent.get_state_history(ticket) if s.interrupts)
print("the old question:", waiting.interrupts[0].value["args"])
before = len(list(agent.get_state_history(ticket)))
try:
    agent.invoke(Command(resume={"amount": 100.0}), waiting.config)
except StaleResumeError:
    print("refused: that question was answered already;",
          "checkpoints written:", len(list(agent.get_state_history(ticket))) - before)

# %% [markdown]
# lgcheckpoint refuses it: the thread guard (chapter 16) sees that the interrupt at that checkpoint
# was answered already, and writes nothing. LangGraph has no such guard; with
# `multitask_strategy="off"` lgcheckpoint behaves exactly like LangGraph, so we can see what the
# naive try would have done there:

# %%
naive = agent.invoke(Command(resume={"amount": 100.0}), waiting.config, multitask_strategy="off")
print("naive replay:", naive["messages"][-2]["content"])

# %% [markdown]
# It refunded **60 EUR again**. The old checkpoint already holds the supervisor's answer as a
# `__resume__` pending write (chapter 10), so the replayed `review` gets the *stored* answer, and
# `tools` ran once more. With a real payment API that is a second payment: replaying a thread
# re-runs its side effects, so tools like this must be idempotent (e.g. keyed by order) or guarded.
#
# The right way is a **fork**: `update_state(waiting.config, None)` makes a fresh child of that
# checkpoint (no stored answers), from which `review` asks again — and this time our
# `Command(resume=...)` is the answer.

# %%
fork = agent.update_state(waiting.config, None)
print("fork:", agent.get_state(fork).metadata["source"], "| next:", agent.get_state(fork).next)
out = agent.invoke(Command(resume={"amount": 100.0}), fork)
print("fork:", out["messages"][-2]["content"])

# %% [markdown]
# All three answers are in the thread, as three branches below `c5`, the checkpoint that asked: the
# supervisor's 60 (branch 2), the naive replay's second 60 (branch 1), and the fork's 100 — its
# first checkpoint green, the update — ending at the head.

# %%
lineage = LineageGraph(agent, ticket)
print(lineage)
lineage

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Approve half
# Run the agent (`agent`) on a new thread `half_cfg` with the message `"Refund my order #1043
# please."`, approve **half** of the proposed amount when the review asks (read the amount from the
# interrupt's value), and store the final assistant message's text in `final_reply`.

# %%
half_cfg = {"configurable": {"thread_id": "half"}}
final_reply = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    def refunded():
        tool_results = [m["content"] for m in agent.get_state(half_cfg).values["messages"]
                        if m["role"] == "tool"]
        return next(r for r in tool_results if r.startswith("refunded"))
    return check(lambda: agent.get_state(half_cfg).next == ()
                 and f"{ORDERS['1043']['total'] / 2:.2f} EUR" in refunded()
                 and final_reply == agent.get_state(half_cfg).values["messages"][-1]["content"],
                 "resume with Command(resume={'amount': <half of the asked amount>}) and keep "
                 "the last message's content")


check_1()

# %% [solution]
out = agent.invoke({"messages": [{"role": "user", "content": "Refund my order #1043 please."}]},
                   half_cfg)
asked = out["__interrupt__"][0].value["args"]["amount"]
out = agent.invoke(Command(resume={"amount": asked / 2}), half_cfg)
final_reply = out["messages"][-1]["content"]
print(final_reply)
check_1()

# %% [markdown]
# ### Exercise 2 · Which answers did ticket 1 get?
# Every answer to `review` is a `__resume__` pending write on the checkpoint the resumed run started
# from. Collect, from `agent.checkpointer.list(ticket)`, the amounts of all answers that were dicts
# (corrected arguments) given to **task** writes — skip the writes of the null task
# `"00000000-0000-0000-0000-000000000000"`, which keeps the raw `Command` value. Store them,
# sorted, in `answered_amounts`. Why does the supervisor's 60 appear only once although 60 EUR was
# refunded twice?

# %%
answered_amounts = None  # your answer


# %% [check]
def check_2():
    refunds = [m["content"] for s in agent.get_state_history(ticket)
               for m in s.values.get("messages", []) if m["content"].startswith("refunded")]
    return check(lambda: answered_amounts == sorted(answered_amounts)
                 and set(answered_amounts) == {float(r.split()[1]) for r in refunds},
                 "look at each tuple's pending_writes: (task_id, '__resume__', [answers...]); "
                 "keep answer['amount'] for dict answers")


check_2()

# %% [solution]
NULL_TASK = "00000000-0000-0000-0000-000000000000"
answered_amounts = sorted(answer["amount"]
                          for t in agent.checkpointer.list(ticket)
                          for task_id, channel, answers in t.pending_writes
                          if channel == "__resume__" and task_id != NULL_TASK
                          for answer in answers if isinstance(answer, dict))
print(answered_amounts)
# the naive replay did not add an answer: it re-read the stored one (and refunded 60 EUR again)
check_2()

# %% [markdown]
# ## Read it in the source
# The whole agent is one file. `fake_model` is the offline "model"; `agent` holds the dynamic
# interrupt (ask only when no order number is known); `review` is the approval: approve, reject, or
# corrected arguments.

# %%
from lgcheckpoint.course import show_source

show_source("demos/approval_agent.py: fake_model", "demos/approval_agent.py: agent",
            "demos/approval_agent.py: review")
