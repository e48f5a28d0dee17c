# %% [markdown]
# # 19 · Managed values: computed each step, never saved
#
# Every run has a **recursion limit**: at most that many super-steps, then `GraphRecursionError`.
# A loop that must stop by itself (an agent that keeps calling tools) wants to know how close the
# limit is. LangGraph hands it that fact as a **managed value**: a state key annotated
# `RemainingSteps` or `IsLastStep` is *not a channel*. The runtime computes it for each task from
# two numbers — the step the task runs in and the step the run stops at — and puts it into the
# node's input. Nothing writes it, no checkpoint stores it.
#
# | annotation | value a node sees | from |
# |---|---|---|
# | `RemainingSteps` | `stop - step` | `stop = first step + recursion_limit + 1` |
# | `IsLastStep` | `step == stop - 1` | the same window |

# %%
import operator
from typing import Annotated, TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.managed import IsLastStep, RemainingSteps

seen = []  # (step, remaining_steps, is_last_step) as the node saw them


class Research(TypedDict):
    notes: Annotated[list[str], operator.add]
    remaining_steps: RemainingSteps
    is_last_step: IsLastStep


def think(state: Research, config) -> dict:
    step = config["metadata"]["langgraph_step"]
    seen.append((step, state["remaining_steps"], state["is_last_step"]))
    return {"notes": [f"idea {len(state['notes']) + 1}"]}


def keep_going(state: Research) -> str:
    # stop while there is still room for a final answer, instead of hitting the limit
    return "answer" if state["remaining_steps"] <= 2 else "think"


def answer(state: Research, config) -> dict:
    answered.append((config["metadata"]["langgraph_step"], state["remaining_steps"]))
    return {"notes": [f"answer from {len(state['notes'])} ideas"]}


answered = []  # (step, remaining_steps) of the answer node


builder = StateGraph(Research)
builder.add_node("think", think)
builder.add_node("answer", answer)
builder.add_edge(START, "think")
builder.add_conditional_edges("think", keep_going, ["think", "answer"])
builder.add_edge("answer", END)
graph = builder.compile(checkpointer=InMemorySaver())
config = {"configurable": {"thread_id": "research"}, "recursion_limit": 8}

result = graph.invoke({"notes": []}, config)
print(result["notes"])
for step, remaining, last in seen:
    print(f"step {step}: remaining_steps={remaining} is_last_step={last}")

# %% [markdown]
# Step 0 is the `__start__` task that copies the input into the state; `think` first runs in step
# 1. With `recursion_limit=8`, the run stops at step `-1 + 8 + 1 = 8`, so `think` sees 7, 6, 5 …
# and the conditional edge (it reads managed values too) sends control to `answer` while two steps
# are left. The result has no `remaining_steps` key: output never contains managed values.
#
# The picture: what each node saw at each step, and the step where `IsLastStep` is true.

# %%
import matplotlib.pyplot as plt

from lgcheckpoint.course_pictures import BLUE, DPI, FONT, GREY, YELLOW

steps = [s for s, _, _ in seen]
remaining = [r for _, r, _ in seen]
stop = seen[0][0] + seen[0][1]  # step + remaining_steps
fig, ax = plt.subplots(figsize=(7.5, 3.2), dpi=DPI)
bars = ax.bar(steps, remaining, color=BLUE, label="think")
ax.bar_label(bars, [f"{r}" for r in remaining], padding=3, fontsize=FONT)
done = ax.bar([s for s, _ in answered], [r for _, r in answered], color=YELLOW,
              edgecolor=GREY, label="answer")
ax.bar_label(done, [f"{r}" for _, r in answered], padding=3, fontsize=FONT)
ax.axvline(stop - 1, color=GREY, ls="--")
ax.text(stop - 0.9, max(remaining) * 0.8, "IsLastStep\nis True here", fontsize=FONT)
ax.set_xlim(0.4, stop + 0.6)
ax.set_ylim(0, max(remaining) + 1.2)
ax.set_xticks(range(1, stop + 1))
ax.set_xlabel("step (the run stops at step 8 = -1 + recursion_limit + 1)", fontsize=FONT)
ax.set_ylabel("remaining_steps", fontsize=FONT)
ax.legend(fontsize=FONT, loc="upper center")
ax.set_title("RemainingSteps as each node saw it (recursion_limit=8)", fontsize=FONT)
for side in ("top", "right"):
    ax.spines[side].set_visible(False)
plt.show()

# %% [markdown]
# ## Not in any checkpoint
# The saved checkpoints have a channel for `notes` and the runtime's own channels — and no
# `remaining_steps`, no `is_last_step`: no value, no version. The channel-version table shows every
# channel the thread ever had.

# %%
from lgcheckpoint.viz import ChannelVersionTable

latest = graph.checkpointer.get_tuple(config).checkpoint
print("channel_values:  ", sorted(latest["channel_values"]))
print("channel_versions:", sorted(latest["channel_versions"]))
assert "remaining_steps" not in latest["channel_versions"]
ChannelVersionTable(graph, config)

# %% [markdown]
# Because nothing is stored, a resumed run counts afresh: its window starts at the step it resumes
# from, with the limit of the *new* call. A write to a managed key is not state either: LangGraph
# saves it as the task's pending write, then ignores it with a warning (we do the same, so the
# checkpoints agree).

# %% [markdown]
# ## Exercises

# %% [markdown]
# ### Exercise 1 · Stop on the last step
# Build a graph whose node `loop` appends `1` to `count` (a list with `operator.add`) and loops
# back to itself until `is_last_step` is true, then goes to `END`. Run it on thread `"last"` with
# `recursion_limit=5` and store the final `len(count)` in `loops`. It must finish without
# `GraphRecursionError`.

# %%
loops = None  # your answer
last_config = {"configurable": {"thread_id": "last"}, "recursion_limit": 5}

# %% [check]
from lgcheckpoint.course import check


def check_1():
    return check(lambda: loops == 4,
                 "route with `END if state['is_last_step'] else 'loop'`; the node runs in steps "
                 "1..4 when the limit is 5 (step 0 is __start__)")


check_1()


# %% [solution]
class Counter(TypedDict):
    count: Annotated[list[int], operator.add]
    is_last_step: IsLastStep


counter = StateGraph(Counter)
counter.add_node("loop", lambda state: {"count": [1]})
counter.add_edge(START, "loop")
counter.add_conditional_edges("loop", lambda s: END if s["is_last_step"] else "loop",
                              ["loop", END])
counter_graph = counter.compile(checkpointer=InMemorySaver())
loops = len(counter_graph.invoke({"count": []}, last_config)["count"])
print(loops)
check_1()

# %% [markdown]
# ### Exercise 2 · Every run gets a fresh window
# The thread `"research"` is already at a high step number. Start a **new** input on it with
# `recursion_limit=4` and record what `think` saw: store the list of `remaining_steps` values of
# that run in `fresh`. Does the thread's history shorten the window?

# %%
fresh = None  # your answer


# %% [check]
def check_2():
    return check(lambda: isinstance(fresh, list) and fresh and fresh[0] == 4 - 1,
                 "clear `seen`, invoke graph with {'notes': []} and a config with "
                 "recursion_limit=4, then take the remaining_steps column of `seen`")


check_2()

# %% [solution]
seen.clear()
graph.invoke({"notes": []}, {**config, "recursion_limit": 4})
fresh = [r for _, r, _ in seen]
print(seen)  # later step numbers, same window: stop is counted from this run's first step
check_2()

# %% [markdown]
# ## Read it in the source
# `managed.py` is the whole feature: two tiny managers and `read_managed`. `prepare_next_tasks`
# adds a node's managed values to its input after reading its channels, and `branch_state` does
# the same for a conditional edge — from the task's scratchpad, which knows `step` and `stop`.

# %%
from lgcheckpoint.course import show_source

show_source("managed.py: RemainingStepsManager", "managed.py: read_managed",
            "pregel/algo.py: prepare_next_tasks", "pregel/runner.py: branch_state")
