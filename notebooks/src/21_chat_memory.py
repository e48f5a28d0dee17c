# %% [markdown]
# # 21 · A chat agent's memory
#
# A chat agent "remembers" a conversation because every message it has seen sits in a
# checkpoint. There is no other memory: the next turn loads the thread's latest checkpoint, hands
# the model the list of messages in it, and saves the longer list in a new checkpoint. So
# everything the course showed about checkpoints applies to chat — and chat adds one idea:
# **a message has an id**, and the `messages` channel merges by it.
#
# | you want to | the mechanism | section |
# |---|---|---|
# | keep the conversation across turns | `MessagesState`: a reducer channel (`add_messages`) | 1 |
# | know what the database holds | each message is a pydantic model, ext code 5 | 2 |
# | ask a past question differently | overwrite a message by its id: a fork | 3 |
# | stop the memory growing | `RemoveMessage`, trimming, a running summary | 4 |
# | show the answer as it is written, then ask | `stream_mode="messages"`, then `interrupt()` | 5 |
#
# Everything runs offline: the "model" is langchain-core's `GenericFakeChatModel` with a few
# rules instead of a network call. You need the messages extra
# (`pip install "lgcheckpoint[messages]"`), which brings langchain-core.

# %%
import re
import sqlite3
import tempfile
from pathlib import Path

import ormsgpack
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, trim_messages
from langchain_core.outputs import ChatGeneration, ChatResult

from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.course import check, show_source
from lgcheckpoint.course_pictures import bar_chart
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.messages import MessagesState, add_messages
from lgcheckpoint.prebuilt import ToolNode, tools_condition
from lgcheckpoint.types import Command, interrupt
from lgcheckpoint.viz import Conversation, LineageGraph


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def reply(messages: list) -> AIMessage:
    """The model's rules: a sum calls the `add` tool, a tool result is announced, "what did I
    ask?" is answered from the conversation, anything else is echoed."""
    last = messages[-1]
    asked = [m.content for m in messages if m.type == "human"]
    if last.type == "tool":
        return AIMessage(f"The answer is {last.content}.")
    if numbers := re.findall(r"\d+", last.content):
        a, b = (int(n) for n in numbers[:2])
        return AIMessage("", tool_calls=[{"name": "add", "args": {"a": a, "b": b},
                                          "id": f"call-{len(messages)}"}])
    if "what did i ask" in last.content.lower():
        return AIMessage("You asked: " + " / ".join(asked[:-1]))
    return AIMessage(f"You said: {last.content}")


class RuleModel(GenericFakeChatModel):
    """GenericFakeChatModel answering by `reply` (it still streams its answer word by word)."""

    messages: object = iter(())

    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        return ChatResult(generations=[ChatGeneration(message=reply(messages))])

    def bind_tools(self, tools, **kwargs):
        return self  # a real model would be told the tools' schemas here


model = RuleModel().bind_tools([add])


def agent(state: MessagesState):
    return {"messages": [model.invoke(state["messages"])]}


def route(state: MessagesState):
    """tools_condition (a tool call? run it : END), and END once the list was cleared."""
    return tools_condition(state) if state["messages"] else END


def build(saver):
    builder = StateGraph(MessagesState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route, ["tools", END])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=saver)


db = str(Path(tempfile.mkdtemp()) / "chat.sqlite")
saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
graph = build(saver)

# %% [markdown]
# ## 1 · Two turns of one thread
# Each `invoke` adds one human message. The first asks for a sum: the model calls the tool, the
# tool answers, the model announces it. The second turn starts from the checkpoint the first one
# left, so the model sees all five earlier messages and can say what was asked:

# %%
config = {"configurable": {"thread_id": "chat-1"}}
graph.invoke({"messages": [HumanMessage("add 3 and 4", id="q-1")]}, config)
graph.invoke({"messages": [HumanMessage("what did I ask?", id="q-2")]}, config)
Conversation(graph, config)

# %% [markdown]
# That is the conversation the head checkpoint holds: role, content, the tool call with its call
# id, which call a tool message answers, and every message's **id**. We gave the questions ids
# (`q-1`, `q-2`); the model's messages carry the id langchain gave its run (`lc_run--…`), and
# the tool's message, which came without one, got a fresh uuid from the reducer.
#
# The `messages` channel is a `BinaryOperatorAggregate` (chapter 02) whose operator is
# `add_messages`. It does not just append: a message with a new id is appended, a message with an
# id already in the list **replaces** it, and a `RemoveMessage(id=...)` **drops** it.

# %%
history = [HumanMessage("hi", id="1"), AIMessage("hello", id="2")]
print([m.content for m in add_messages(history, [HumanMessage("again")])])  # appended
print([m.content for m in add_messages(history, [AIMessage("HELLO", id="2")])])  # replaced
print([m.content for m in add_messages(history, [RemoveMessage(id="1")])])  # removed
print(f"a message without an id gets one: {add_messages([], [HumanMessage('x')])[0].id[:8]}…")

# %% [markdown]
# Each checkpoint of the thread holds the whole list so far; the lineage shows the thread's
# eight checkpoints (one `input` checkpoint per turn, then the loop's steps), and
# `lgcheckpoint inspect chat.sqlite` in a terminal prints, under each checkpoint, the messages it
# added (`+`), replaced (`~`) or dropped (`-`):

# %%
LineageGraph(graph, config)

# %% [markdown]
# ## 2 · What a checkpoint stores for a message
# The saver hands every value to the serializer, which answers `(type tag, bytes)`. A message is
# not a type msgpack knows, so it travels as an **extension type**: a code and a payload. Code 5
# means "a pydantic v2 model": the payload is `(module, class, fields, method)`, the fields being
# `model_dump()`. Let us unpack the bytes one level at a time, without building anything:

# %%
tag, data = saver.serde.dumps_typed(HumanMessage("add 3 and 4", id="q-1"))
print("type tag:", tag, "|", len(data), "bytes:", data[:24], "…")
ext = ormsgpack.unpackb(data, ext_hook=lambda code, payload: (code, payload))
print("ext code:", ext[0])
module, name, fields, method = ormsgpack.unpackb(ext[1])
print("module:", module, "| class:", name, "| rebuilt with:", method)
print("fields:", fields)

# %% [markdown]
# Loading reverses it, but only for classes on the allow-list (chapter 06): LangGraph's safe list
# holds langchain-core's message classes, so they load by default, and nothing else does. A
# message class of your own — here a subclass — is refused by name until you allow it:

# %%
from lgcheckpoint.checkpoint.errors import UnsafeTypeError  # noqa: E402


class MyMessage(HumanMessage):
    pass


try:
    saver.serde.loads_typed(saver.serde.dumps_typed(MyMessage("hi", id="m")))
except UnsafeTypeError as error:
    print("refused:", str(error)[:110], "…")

# %% [markdown]
# The checkpoint itself is one more msgpack value: its `channel_values["messages"]` is the list,
# each element such an extension. The bytes are the same as LangGraph's, so LangGraph reads a chat
# thread written here and the other way round.

# %%
saved = saver.get_tuple(config)
stored = saved.checkpoint["channel_values"]["messages"]
print(len(stored), "messages in the head checkpoint:", [type(m).__name__ for m in stored])

# %% [markdown]
# ## 3 · Ask a past question differently: a fork by a message id
# LangChain Academy's time-travel lesson forks a thread by **overwriting a message**. Take the
# checkpoint where the first question had just arrived, and write a new human message with the
# *same id*, `q-1`: `add_messages` replaces it instead of appending, `update_state` writes a new
# checkpoint whose parent is that old one, and the thread branches. Resuming from the fork runs
# the agent on the new question.

# %%
past = next(s for s in graph.get_state_history(config)
            if s.next == ("agent",) and len(s.values["messages"]) == 1)
print("forking at step", past.metadata["step"], "which holds:",
      [m.content for m in past.values["messages"]])
fork = graph.update_state(past.config, {"messages": [HumanMessage("add 30 and 12", id="q-1")]})
graph.invoke(None, fork)
print([m.content for m in graph.get_state(config).values["messages"]])

# %% [markdown]
# The lineage now has two branches from that checkpoint. The old branch is still there, whole:
# nothing was overwritten in the database, only in the new branch's state.

# %%
LineageGraph(graph, config)

# %% [markdown]
# At the checkpoint we forked from, the conversation viewer marks `q-1` as **replaced** (its id
# holds another message in a child checkpoint):

# %%
fork_point = LineageGraph(graph, config).history
forked = next(s for s in fork_point.steps if len(s.children) > 1)
Conversation(fork_point, key=forked.key)

# %% [markdown]
# ## 4 · Keep the memory short: trim, remove, summarise
# A thread that keeps every message grows without bound: every checkpoint stores the whole list,
# and every model call reads it. Three remedies, each changing a different thing:
#
# - **trimming** (`trim_messages`) changes what the *model sees* on one call; the checkpoint still
#   holds everything;
# - **`RemoveMessage`** changes what the *checkpoint holds*: the reducer drops those ids;
# - a **running summary** replaces old messages by a few sentences in another channel.
#
# Trimming is a function on a list. Here: keep the last 3 messages, counting one "token" a message.

# %%
everything = graph.get_state(config).values["messages"]
seen = trim_messages(everything, max_tokens=3, token_counter=len, strategy="last")
print(len(everything), "messages stored;", len(seen), "shown to the model:",
      [m.type for m in seen])

# %% [markdown]
# A running summary is a node that, once the conversation is long, writes a `summary` and a
# `RemoveMessage` for every message but the last two. The agent's prompt would start with the
# summary; the checkpoint keeps only what is recent.

# %%
class SummaryState(MessagesState):
    summary: str


def summarize(state: SummaryState):
    old = state["messages"][:-2]
    if not old:
        return {}
    told = " ".join(m.content for m in old if m.content)
    summary = (state.get("summary", "") + " | " + told).strip(" |")
    return {"summary": summary, "messages": [RemoveMessage(id=m.id) for m in old]}


def summarizing(saver):
    builder = StateGraph(SummaryState)
    builder.add_node("agent", agent)
    builder.add_node("tools", ToolNode([add]))
    builder.add_node("summarize", summarize)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", tools_condition, {"tools": "tools", END: "summarize"})
    builder.add_edge("tools", "agent")
    builder.add_edge("summarize", END)
    return builder.compile(checkpointer=saver)


short_graph = summarizing(saver)
questions = ["add 1 and 2", "add 3 and 4", "hello", "add 5 and 6", "what did I ask?"]
sizes = {"keeps everything": [], "running summary": []}
for name, g in [("keeps everything", graph), ("running summary", short_graph)]:
    thread = {"configurable": {"thread_id": f"long-{name}"}}
    for q in questions:
        g.invoke({"messages": [HumanMessage(q)]}, thread)
        sizes[name].append(len(saver.get_tuple(thread).checkpoint["channel_values"]["messages"]))
print(sizes)
print("summary:", short_graph.get_state(thread).values["summary"])

# %%
bar_chart({name: s[-1] for name, s in sizes.items()}, unit="messages",
          title=f"messages in the head checkpoint after {len(questions)} turns")

# %% [markdown]
# The summarising thread's checkpoints keep two messages, and its model forgot the early
# questions (it answers "what did I ask?" from the last two messages only: that is the price; a
# real agent puts the summary in its prompt). The conversation viewer marks the removed messages
# at the checkpoint before `summarize` ran, with the reason: a `RemoveMessage` in a pending write.

# %%
summary_history = LineageGraph(short_graph, thread).history
before = next(s for s in reversed(summary_history.steps) if s.next == ["summarize"])
Conversation(summary_history, key=before.key)

# %% [markdown]
# ## 5 · Tokens, then an interrupt
# A chat UI shows the answer while the model writes it. `stream_mode="messages"` yields each
# token a chat model produces inside a node, as `(message chunk, metadata)` — the metadata names
# the node (`langgraph_node`), the step and the checkpoint namespace. Our fake model streams its
# answer word by word, as a real one streams tokens.
#
# Now a person must approve the answer before it is sent. Where the `interrupt()` goes matters:
# a node that is interrupted runs **again from its first line** on resume (chapter 08). If the
# model call sits in the same node as the question, the resume calls the model again — and
# streams every token again (and pays for them again). In a node of its own, the model's answer
# is already in a checkpoint when the question is asked, and the resume only runs the question.

# %%
class RefundModel(RuleModel):
    def _generate(self, messages, stop=None, run_manager=None, **kwargs):
        answer = AIMessage("Your refund of 40 EUR is ready to send.")
        return ChatResult(generations=[ChatGeneration(message=answer)])


refund_model = RefundModel()


def answer_and_ask(state: MessagesState):  # one node: the model call, then the question
    reply = refund_model.invoke(state["messages"])
    verdict = interrupt("send this answer?")
    return {"messages": [reply, AIMessage(f"({verdict})")]}


def answer(state: MessagesState):
    return {"messages": [refund_model.invoke(state["messages"])]}


def ask(state: MessagesState):
    return {"messages": [AIMessage(f"({interrupt('send this answer?')})")]}


def refund_graph(*nodes):
    builder = StateGraph(MessagesState)
    for node in nodes:
        builder.add_node(node)
    builder.add_edge(START, nodes[0].__name__)
    for a, b in zip(nodes, nodes[1:]):
        builder.add_edge(a.__name__, b.__name__)
    return builder.compile(checkpointer=saver)


def watch(graph, value, config):
    """Stream a run: its tokens (with the node that made them) and where it stopped."""
    tokens, stopped = [], None
    for mode, chunk in graph.stream(value, config, stream_mode=["messages", "updates"]):
        if mode == "messages":
            message, metadata = chunk
            tokens.append((metadata["langgraph_node"], message.content))
        elif "__interrupt__" in chunk:
            stopped = chunk["__interrupt__"][0].value
    return tokens, stopped


tokens_again = {}
for design, graph_of_design in [("model and interrupt in one node", refund_graph(answer_and_ask)),
                                ("model, then interrupt in its own node", refund_graph(answer, ask))]:
    thread = {"configurable": {"thread_id": f"refund-{len(tokens_again)}"}}
    first, stopped = watch(graph_of_design, {"messages": [HumanMessage("refund please")]}, thread)
    print(f"{design}:\n  first run: {''.join(t for _, t in first)!r} -> stopped: {stopped!r}")
    resumed, _ = watch(graph_of_design, Command(resume="yes"), thread)
    print(f"  resumed:   streamed {len(resumed)} from {sorted({node for node, _ in resumed})}: "
          f"{''.join(t for _, t in resumed)!r}")
    tokens_again[design] = len(resumed)

# %%
bar_chart(tokens_again, unit="", title="message chunks streamed again when the person answers")

# %% [markdown]
# The first run streams the same tokens in both designs, then stops: the stream ends with the
# interrupt, and the thread waits in a checkpoint. Answering tells them apart: the one-node design
# runs the model again (every token again, and a real model might write a *different* answer than
# the one the person approved); the two-node design streams only the node's new message.

# %% [markdown]
# ## Exercises
# Each has a cell for your answer and a **check**; the solution is the collapsed cell below it.

# %% [markdown]
# ### Exercise 1 · Correct an answer by its id
# On thread `chat-1`, the head's last message is the model's answer. Replace it — same id,
# new content `"Corrected."` — with `graph.update_state`, then store the contents of the head's
# messages in `contents`.

# %%
contents = None  # your answer

# %% [check]
def check_1():
    return check(lambda: contents is not None and contents[-1] == "Corrected."
                 and len(contents) == len(everything),
                 "update_state(config, {'messages': [AIMessage('Corrected.', id=last.id)]}): "
                 "the same id replaces, so the count stays the same")


check_1()

# %% [solution]
# Solution: a message with an id already in the list replaces it (no new message).
last = graph.get_state(config).values["messages"][-1]
graph.update_state(config, {"messages": [AIMessage("Corrected.", id=last.id)]})
contents = [m.content for m in graph.get_state(config).values["messages"]]
check_1()

# %% [markdown]
# ### Exercise 2 · Forget everything
# `RemoveMessage` has a special id, `REMOVE_ALL_MESSAGES` (from `lgcheckpoint.messages`), that
# clears the list. On a new thread `"forget"`, run `graph` with `"add 2 and 2"`, then clear the
# messages with `update_state`, and store the number of messages in the head checkpoint's
# `channel_values` in `left`, and the number of checkpoints of the thread in `count`.

# %%
left, count = None, None  # your answer

# %% [check]
def check_2():
    return check(lambda: left == 0 and count == 6,
                 "update_state(forget, {'messages': [RemoveMessage(id=REMOVE_ALL_MESSAGES)]}); "
                 "the thread keeps its five earlier checkpoints and gains one")


check_2()

# %% [solution]
# Solution: clearing is one more write; the checkpoints before it still hold the messages.
from lgcheckpoint.messages import REMOVE_ALL_MESSAGES  # noqa: E402

forget = {"configurable": {"thread_id": "forget"}}
graph.invoke({"messages": [HumanMessage("add 2 and 2")]}, forget)
graph.update_state(forget, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES)]})
left = len(saver.get_tuple(forget).checkpoint["channel_values"]["messages"])
count = len(list(graph.get_state_history(forget)))
check_2()

# %% [markdown]
# ## Read it in the source
# `merge` is `add_messages`' work: ids first (`give_ids`), then "remove all", then replace,
# append or drop by id. `encode_pydantic_v2` is the whole of how a message is stored (ext code 5,
# the fields of `model_dump()`). `transcript` is how the viewers and `inspect` read a checkpoint's
# messages back as a conversation, marking what the next step removes or replaces. Tokens reach
# `stream_mode="messages"` through `MessagesHandler.on_llm_new_token`, a langchain callback the
# run puts in the config of every node it starts.

# %%
show_source("messages.py: merge", "messages.py: give_ids",
            "checkpoint/serde/msgpack_ext.py: encode_pydantic_v2",
            "viz/conversation.py: transcript",
            "pregel/messages_stream.py: MessagesHandler.on_llm_new_token")
