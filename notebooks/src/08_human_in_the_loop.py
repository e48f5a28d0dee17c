# %% [markdown]
# # 08 · Human in the loop: interrupts, breakpoints, edits
#
# An agent about to send an email, spend money or delete data should ask first, and the person may
# answer in a minute or next week, from another machine. Keeping a Python call waiting that long
# is not possible; saving the question in a checkpoint and ending the run is.
#
# `interrupt(value)` inside a node stops the whole graph and hands `value` to a person. The run
# ends; nothing waits in memory. What makes it resumable is the checkpoint: the node's task is
# still `next`, and an `INTERRUPT` pending write records what it asked. `Command(resume=answer)`
# starts a new run that re-executes the node, and this time `interrupt()` *returns* the answer.
#
# This chapter shows the four ways a graph waits for a person: an interrupt a node asks, a static
# **breakpoint** before or after a node (`interrupt_before` / `interrupt_after`), **editing the
# state** at a breakpoint, and a **dynamic** interrupt that only some inputs trigger.

# %%
from typing import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, interrupt
from lgcheckpoint.viz import HITLPanel, LineageGraph

runs = []


class Post(TypedDict, total=False):
    draft: str
    status: str


def write(post):
    return {"draft": post.get("draft") or "Checkpoints make agents durable."}


def approve(post):
    runs.append("approve")  # counts executions: the node runs again on resume
    verdict = interrupt({"question": "Publish this?", "draft": post["draft"]})
    return {"status": "published" if verdict == "yes" else f"rejected: {verdict}"}


def publish_graph(approve_node=approve, **breakpoints):
    builder = StateGraph(Post)
    builder.add_node("write", write)
    builder.add_node("approve", approve_node)
    builder.add_edge(START, "write")
    builder.add_edge("write", "approve")
    builder.add_edge("approve", END)
    return builder.compile(checkpointer=InMemorySaver(), **breakpoints)


graph = publish_graph()
config = {"configurable": {"thread_id": "hitl"}}
result = graph.invoke({}, config)
print(result["__interrupt__"][0].value)

# %% [markdown]
# The run stopped. The snapshot says who is waiting and for what:

# %%
snap = graph.get_state(config)
print("next:", snap.next)
print("interrupts:", [i.value for i in snap.interrupts])
print("task:", snap.tasks[0].name, [i.value for i in snap.tasks[0].interrupts])
assert snap.next == ("approve",)

# %% [markdown]
# The question is stored as a pending write on the latest checkpoint, under the special channel
# `__interrupt__` (index -3 in `WRITES_IDX_MAP`, chapter 10 explains the slots). The lineage draws
# it: the head checkpoint `c2` waits for `approve`, and its orange border and the line
# `INTERRUPT in approve` come from that write.

# %%
saved = graph.checkpointer.get_tuple(config)
for _task_id, channel, value in saved.pending_writes:
    print(channel, [(type(i).__name__, i.value) for i in value])
LineageGraph(graph, config)

# %% [markdown]
# ## The approval panel
# `HITLPanel` is the approval panel of `lgcheckpoint.viz`: it lists the pending interrupts of a
# thread; in a live kernel, `HITLPanel(graph, config).widget()` adds *approve / reject / edit*
# buttons and the lineage, redrawn after each answer. Its static view (below) is what a saved
# notebook shows. The same panel answers from code: `panel.resume(answer)` is
# `graph.invoke(Command(resume=answer), config)`.

# %%
panel = HITLPanel(graph, config)
panel

# %% [markdown]
# ## Resume
# The node runs again from its first line; `interrupt()` now returns `"yes"`.

# %%
print(panel.resume("yes"))
print("approve ran", runs.count("approve"), "times")
assert graph.get_state(config).next == ()
panel.lineage

# %% [markdown]
# The answer is saved too: besides its `__interrupt__` write, checkpoint `c2` now holds a
# `__resume__` write (the answer) and the task's real write, `status`; the new head `c3` applied
# it. Nothing is pending, so the panel has nothing left to answer:

# %%
print(panel, "| next:", graph.get_state(config).next)
try:
    panel.resume("yes")  # a second answer to a finished thread is refused, not silently run
except ValueError as refused:
    print("refused:", refused)

# %% [markdown]
# ## Breakpoints: `interrupt_before` and `interrupt_after`
# Without touching the nodes, `compile(interrupt_before=[...])` stops *before* a node runs and
# `compile(interrupt_after=[...])` stops *after* it ran (its writes are in the checkpoint).
# `invoke(None, config)` continues. A breakpoint writes no `__interrupt__`: the run simply stops at
# a checkpoint whose `next` is not empty.

# %%
before = publish_graph(interrupt_before=["approve"])
after = publish_graph(interrupt_after=["write"])
for name, g in [("before approve", before), ("after write", after)]:
    cfg = {"configurable": {"thread_id": name}}
    g.invoke({}, cfg)
    state = g.get_state(cfg)
    print(f"{name:<14} next={state.next} draft set: {'draft' in state.values}"
          f" | interrupts: {state.interrupts}")

# %% [markdown]
# In this straight line both stop at the same checkpoint. The difference is what you name: "after
# `write`" stops whatever follows `write`, on any path; "before `approve`" stops only `approve`.
#
# ## Editing the state at a breakpoint
# The point of stopping *before* a node: a person can change what it will see. `update_state`
# writes a new checkpoint (source `update`) as if a node had written the values; then `invoke(None)`
# runs `approve` on the edited draft. The lineage shows the edit as its own (green) checkpoint.

# %%
edit_cfg = {"configurable": {"thread_id": "edit"}}
before.invoke({}, edit_cfg)
before.update_state(edit_cfg, {"draft": "Checkpoints make agents durable — and debuggable."})
print(before.get_state(edit_cfg).metadata["source"], "| next:", before.get_state(edit_cfg).next)
out = before.invoke(None, edit_cfg)  # approve now asks about the edited draft
print(out["__interrupt__"][0].value["draft"])
LineageGraph(before, edit_cfg)

# %% [markdown]
# ## Dynamic interrupts
# A breakpoint stops every run. A *dynamic* interrupt is an `interrupt()` a node calls only when the
# state calls for it — here, only a draft that promises something needs a person.

# %%
def approve_if_risky(post):
    if "guarantee" in post["draft"]:
        verdict = interrupt({"question": "This draft makes a promise. Publish?", "draft": post["draft"]})
        return {"status": "published" if verdict == "yes" else f"rejected: {verdict}"}
    return {"status": "published (no review needed)"}


dynamic = publish_graph(approve_if_risky)
for draft in ["Checkpoints make agents durable.", "We guarantee zero data loss."]:
    cfg = {"configurable": {"thread_id": draft}}
    out = dynamic.invoke({"draft": draft}, cfg)
    print(f"{draft!r:<36} ->", out.get("status") or out["__interrupt__"][0].value["question"])

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Continue past the breakpoint
# The `"before approve"` thread of `before` is paused in front of `approve`. Continue it with
# `invoke(None, ...)`: it stops again — why? Answer the question it asks with `"yes"` and store the
# final `status` in `final_status`.

# %%
bp_cfg = {"configurable": {"thread_id": "before approve"}}
final_status = None  # your answer

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: before.get_state(bp_cfg).next == () and final_status == "published",
                 "invoke(None, bp_cfg) runs approve, which asks its own question: "
                 "answer it with Command(resume='yes')")


check_1()

# %% [solution]
out = before.invoke(None, bp_cfg)  # the breakpoint is passed; approve runs and calls interrupt()
print("stopped again at:", out["__interrupt__"][0].value["question"])
final_status = before.invoke(Command(resume="yes"), bp_cfg)["status"]
print(final_status)
check_1()

# %% [markdown]
# ### Exercise 2 · A node that asks twice
# Build a graph with `publish_graph(ask_twice)` where `ask_twice` calls `interrupt()` twice (a
# title, then tags) and returns `{"status": f"{title} / {tags}"}`. Run it on `twice_cfg`, then
# resume until `next` is empty, counting the resumes in `resumes_needed`. Where are both answers
# saved? (Look at the pending writes of the checkpoint the node ran from.)

# %%
twice_cfg = {"configurable": {"thread_id": "twice"}}
twice, resumes_needed = None, 0  # your answer


# %% [check]
def check_2():
    def resume_write():
        waiting = next(s for s in twice.get_state_history(twice_cfg) if s.next == ("approve",))
        writes = twice.checkpointer.get_tuple(waiting.config).pending_writes
        return next(v for _, c, v in writes if c == "__resume__" and isinstance(v, list))
    return check(lambda: twice.get_state(twice_cfg).next == ()
                 and resumes_needed == len(resume_write()),
                 "resume with Command(resume=...) until get_state(...).next == (); "
                 "count every resume")


check_2()


# %% [solution]
def ask_twice(post):
    title = interrupt("title?")
    tags = interrupt("tags?")  # reached only on the second run of the node
    return {"status": f"{title} / {tags}"}


twice = publish_graph(ask_twice)
twice.invoke({}, twice_cfg)
for answer in ["Durable agents", "checkpoints, pregel"]:
    twice.invoke(Command(resume=answer), twice_cfg)
    resumes_needed += 1
print(twice.get_state(twice_cfg).values["status"], "after", resumes_needed, "resumes")
# both answers sit in one __resume__ write on the same checkpoint: answers match by position
check_2()

# %% [markdown]
# ## Read it in the source
# `interrupt` counts the calls of one task run and returns the saved answer for each one it has;
# `PregelLoop.apply_command` saves `Command(resume=...)` as `__resume__` writes, which
# `command_writes` builds (`pregel/run_input.py`); `should_interrupt` is the breakpoint test,
# run before and after each super-step.

# %%
from lgcheckpoint.course import show_source

show_source("types.py: interrupt", "pregel/loop.py: PregelLoop.apply_command",
            "pregel/run_input.py: command_writes", "pregel/algo.py: should_interrupt")
