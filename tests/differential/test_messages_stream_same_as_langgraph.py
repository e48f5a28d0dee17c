"""stream_mode="messages" beside LangGraph: a chat model's tokens from inside nodes, @task calls,
subgraphs and Runnable nodes, with the same chunks and the same metadata.

Each scenario runs on both libraries with langchain-core's offline fake chat models
(``GenericFakeChatModel`` streams one token per whitespace-separated piece); a chunk is compared
as (namespace, message class, content, message id, metadata), with generated ids and task ids
numbered by first appearance. Read with lgcheckpoint/pregel/messages_stream.py.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import re
import subprocess
import sys
import textwrap
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel, GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda

PACKAGES = {"langgraph": "langgraph", "ours": "lgcheckpoint"}
NAMES = {  # name -> module under the package (ours: its own layout)
    "StateGraph": ("graph", "graph"), "START": ("graph", "graph"),
    "MessagesState": ("graph.message", "messages"), "push_message": ("graph.message", "messages"),
    "InMemorySaver": ("checkpoint.memory", "checkpoint.memory"),
    "entrypoint": ("func", "func"), "task": ("func", "func"),
    "interrupt": ("types", "types"), "Command": ("types", "types"),
}
UUID = re.compile(r"lc_run--[0-9a-f-]{36}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-"
                  r"[0-9a-f]{12}|\b[0-9a-f]{32}\b")
THREAD = {"configurable": {"thread_id": "1"}}
HI = {"messages": [HumanMessage("hi", id="h1")]}


def lib(name: str) -> SimpleNamespace:
    """One library's names, for code written once for both."""
    index = 0 if name == "langgraph" else 1
    return SimpleNamespace(**{n: getattr(importlib.import_module(
        f"{PACKAGES[name]}.{mods[index]}"), n) for n, mods in NAMES.items()})


def talker(text: str = "hello there friend", **kw: Any) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=itertools.cycle([AIMessage(text)]), **kw)


class Numbered:
    """Ids and task ids numbered by first appearance: equal shapes compare equal."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    def __call__(self, value: Any) -> Any:
        if isinstance(value, str):
            return UUID.sub(lambda m: self.seen.setdefault(m.group(), f"<{len(self.seen)}>"),
                            value)
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        if isinstance(value, dict):
            return {k: self(v) for k, v in value.items()}
        return value


def comparable(chunks: list, many: bool = False, subgraphs: bool = False) -> list:
    """Each chunk as plain data; a messages chunk as (class, content, id, metadata)."""
    number, out = Numbered(), []
    for chunk in chunks:
        ns = chunk[0] if subgraphs else ()
        chunk = chunk[1:] if subgraphs else (chunk,)
        mode, payload = chunk[0] if many else ("messages", chunk[0])
        if mode == "messages":
            message, metadata = payload
            payload = (type(message).__name__, message.content, message.id, metadata)
        elif mode in ("updates", "values"):
            payload = repr(payload)
        out.append(number((ns, mode, payload)))
    return out


def both(scenario, **kw: Any) -> None:
    """Run a scenario on both libraries; their comparable chunks must be equal."""
    results = {name: comparable(scenario(lib(name)), **kw) for name in PACKAGES}
    assert results["ours"] == results["langgraph"]
    assert results["ours"], "the scenario streamed nothing"


def chat_graph(lg, node, **compile_kw: Any):
    g = lg.StateGraph(lg.MessagesState)
    g.add_node("chat", node)
    g.add_edge(lg.START, "chat")
    return g.compile(checkpointer=lg.InMemorySaver(), **compile_kw)


# --- a model inside a node ----------------------------------------------------------------------
def test_a_node_calling_model_invoke_streams_its_tokens():
    def scenario(lg):
        model = talker()
        graph = chat_graph(lg, lambda s: {"messages": [model.invoke(s["messages"])]})
        return list(graph.stream(HI, THREAD, stream_mode="messages"))

    both(scenario)


def test_a_node_calling_model_stream_streams_each_token_once():
    def node(state, model=talker()):
        whole = None
        for chunk in model.stream(state["messages"]):
            whole = chunk if whole is None else whole + chunk
        return {"messages": [whole]}  # the same id as its tokens: not streamed again

    both(lambda lg: list(chat_graph(lg, node).stream(HI, THREAD, stream_mode="messages")))


def test_async_nodes_with_ainvoke_and_astream_stream_their_tokens():
    def scenario(lg):
        model = talker("one two")

        async def asks(state):
            return {"messages": [await model.ainvoke(state["messages"])]}

        async def streams(state):
            parts = [c async for c in model.astream(state["messages"])]
            return {"messages": [sum(parts[1:], parts[0])]}

        g = lg.StateGraph(lg.MessagesState)
        g.add_node("asks", asks)
        g.add_node("streams", streams)
        g.add_edge(lg.START, "asks")
        g.add_edge("asks", "streams")
        graph = g.compile(checkpointer=lg.InMemorySaver())

        async def run():
            return [c async for c in graph.astream(HI, THREAD, stream_mode="messages")]
        return asyncio.run(run())

    both(scenario)


def test_a_task_calling_the_model_streams_under_the_tasks_name():
    def scenario(lg):
        model = talker()

        @lg.task
        def answer(messages):
            return model.invoke(messages)

        @lg.entrypoint(checkpointer=lg.InMemorySaver())
        def workflow(messages):
            return answer(messages).result()

        return list(workflow.stream([HumanMessage("hi", id="h1")], THREAD,
                                    stream_mode="messages"))

    both(scenario)


@pytest.mark.parametrize("subgraphs", [False, True])
def test_a_subgraph_streams_its_tokens_only_with_subgraphs_true(subgraphs):
    """Without subgraphs=True its messages come whole when the parent's node returns."""
    def scenario(lg):
        model = talker()
        sub = lg.StateGraph(lg.MessagesState)
        sub.add_node("inner", lambda s: {"messages": [model.invoke(s["messages"])]})
        sub.add_node("whole", lambda s: {"messages": [AIMessage("made by hand", id="w1")]})
        sub.add_edge(lg.START, "inner")
        sub.add_edge("inner", "whole")
        graph = chat_graph(lg, sub.compile())
        return list(graph.stream(HI, THREAD, stream_mode="messages", subgraphs=subgraphs))

    both(scenario, subgraphs=subgraphs)


def test_a_model_tagged_nostream_arrives_whole_when_its_node_returns():
    def scenario(lg):
        quiet, loud = talker("quiet words", tags=["nostream"]), talker("loud words")
        graph = chat_graph(lg, lambda s: {"messages": [quiet.invoke(s["messages"]),
                                                       loud.invoke(s["messages"])]})
        return list(graph.stream(HI, THREAD, stream_mode="messages"))

    both(scenario)


def test_run_metadata_tags_and_a_model_that_does_not_stream():
    """The caller's metadata and tags reach the chunks; FakeMessagesListChatModel gives whole
    messages (no tokens), each streamed once."""
    def scenario(lg):
        model = FakeMessagesListChatModel(responses=[AIMessage("whole answer")], tags=["mine"])
        graph = chat_graph(lg, lambda s: {"messages": [model.invoke(s["messages"])]})
        config = {"configurable": {"thread_id": "1", "user": "u"}, "metadata": {"m": 1},
                  "tags": ["outer"]}
        return list(graph.stream(HI, config, stream_mode="messages"))

    both(scenario)


def test_messages_beside_other_modes_and_dedup_by_id():
    """A node handing back the input messages streams none of them; a new one once."""
    def scenario(lg):
        model = talker("a b")
        g = lg.StateGraph(lg.MessagesState)
        g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_node("echo", lambda s: {"messages": [*s["messages"],
                                                   AIMessage("new", id="n1")]})
        g.add_edge(lg.START, "chat")
        g.add_edge("chat", "echo")
        graph = g.compile(checkpointer=lg.InMemorySaver())
        return list(graph.stream(HI, THREAD, stream_mode=["messages", "updates", "values"]))

    both(scenario, many=True)


# --- Runnables as nodes and edges -----------------------------------------------------------
def test_a_prompt_piped_into_a_model_is_a_node():
    prompt = ChatPromptTemplate.from_messages([("system", "be brief"), ("placeholder",
                                                                       "{messages}")])

    def scenario(lg):
        agent = prompt | talker() | (lambda reply: {"messages": [reply]})
        return list(chat_graph(lg, agent).stream(HI, THREAD, stream_mode=["messages",
                                                                           "values"]))

    both(scenario, many=True)


def test_runnable_nodes_and_paths_run_sync_and_async():
    def scenario(lg):
        g = lg.StateGraph(lg.MessagesState)
        g.add_node("agent", RunnableLambda(lambda s: {"messages": [AIMessage("x", id="x1")]}))
        g.add_node("after", RunnableLambda(lambda s: {"messages": [AIMessage("y", id="y1")]}))

        async def route(state):
            return "after"
        g.add_edge(lg.START, "agent")
        g.add_conditional_edges("agent", RunnableLambda(
            lambda s: "after", afunc=route, name="route"), ["after"])
        graph = g.compile()

        async def run():
            return [c async for c in graph.astream(HI, stream_mode="updates")]
        return [("updates", c) for c in [*graph.stream(HI, stream_mode="updates"),
                                         *asyncio.run(run())]]

    both(scenario, many=True)


def test_a_dict_node_and_the_drawing_of_a_runnable_node():
    """A dict is a RunnableParallel node; get_graph() names a Runnable node by its own id."""
    def scenario(lg):
        g = lg.StateGraph(lg.MessagesState)
        g.add_node("agent", {"messages": RunnableLambda(lambda s: [AIMessage("p", id="p1")])})
        g.add_node("piped", RunnableLambda(lambda s: s) | (lambda s: {"messages": []}))
        g.add_edge(lg.START, "agent")
        g.add_edge("agent", "piped")
        graph = g.compile()
        return [("values", graph.invoke(HI)), ("values", graph.get_graph().to_json())]

    both(scenario, many=True)


# --- interrupts and push_message ------------------------------------------------------------
def test_tokens_then_an_interrupt_then_the_resume():
    """The Academy's streaming lesson: a model streams, a later node asks a human."""
    def scenario(lg):
        model = talker()

        def review(state):
            answer = lg.interrupt("ok?")
            return {"messages": [AIMessage(f"reviewed: {answer}", id="r1")]}

        g = lg.StateGraph(lg.MessagesState)
        g.add_node("chat", lambda s: {"messages": [model.invoke(s["messages"])]})
        g.add_node("review", review)
        g.add_edge(lg.START, "chat")
        g.add_edge("chat", "review")
        graph = g.compile(checkpointer=lg.InMemorySaver())
        modes = ["messages", "updates"]
        return [*graph.stream(HI, THREAD, stream_mode=modes),
                *graph.stream(lg.Command(resume="yes"), THREAD, stream_mode=modes)]

    both(scenario, many=True)


def test_push_message_streams_now_and_writes_the_state():
    def scenario(lg):
        def node(state):
            lg.push_message(AIMessage("pushed", id="p1"))
            lg.push_message(AIMessage("only streamed", id="p2"), state_key=None)
            return {"messages": [AIMessage("returned", id="r1")]}

        return list(chat_graph(lg, node).stream(HI, THREAD, stream_mode=["messages", "values"]))

    both(scenario, many=True)


# --- without the extra --------------------------------------------------------------------------
def test_without_langchain_core_the_messages_mode_says_which_extra_to_install():
    code = """
        import sys
        sys.modules["langchain_core"] = None  # as if langchain-core were not installed
        from lgcheckpoint import StateGraph, START
        graph = StateGraph(dict)
        graph.add_node("a", lambda s: s)
        graph.add_edge(START, "a")
        graph = graph.compile()
        print(list(graph.stream({}, stream_mode="updates")))
        try:
            list(graph.stream({}, stream_mode="messages"))
        except ImportError as exc:
            print(exc)
    """
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("[{'a': {}}]\n" 'stream_mode="messages" (chat model tokens) needs '
                             'langchain-core: pip install "lgcheckpoint[messages]"\n')
