"""A chat thread (MessagesState, ids, tools, RemoveMessage, an interrupt, a fork by a message id)
on both libraries: each reads the SQLite file and the Postgres database the other wrote, with the
same whole history, and both write the same history.

Reading compares exactly (the same rows: the same ids, timestamps and message objects); writing
compares the normalised histories, as every differential test does. Node messages carry ids:
without them LangGraph's saved writes race its reducer (tests/test_messages.py shows ours do not).
"""

from __future__ import annotations

import contextlib
import importlib
import pprint

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage

from tests.differential.harness import Normaliser, assert_same, diff, dump_saver, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.test_savers import fresh_postgres, saver_of

MESSAGES_MODULE = {"langgraph": "langgraph.graph.message", "ours": "lgcheckpoint.messages"}
THREAD = "chat"


def chat_graph(lib, saver):
    """chat -> tools -> chat ..., or chat -> review (asks) + note in parallel."""
    message = importlib.import_module(MESSAGES_MODULE[lib.name])

    class State(message.MessagesState):
        approved: str

    def chat(state):
        last, n = state["messages"][-1], len(state["messages"])
        if isinstance(last, HumanMessage) and last.content.startswith("search"):
            call = {"name": "search", "args": {"q": last.content[7:]}, "id": f"call-{n}"}
            return {"messages": [AIMessage("", tool_calls=[call], id=f"ai-{n}")]}
        return {"messages": [AIMessage(f"echo {last.content}", id=f"ai-{n}")]}

    def tools(state):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(f"cats: {call['args']['q']}", tool_call_id=call["id"],
                                         id=f"tool-{call['id']}")]}

    def route(state):
        last = state["messages"][-1]
        if getattr(last, "tool_calls", None):
            return "tools"
        return ["review", "note"] if "refund" in last.content else lib.END

    def review(state):
        answer = lib.interrupt({"question": "refund?"})
        return {"approved": answer, "messages": [AIMessage(f"refund: {answer}", id="ai-review")]}

    graph = lib.StateGraph(State)
    graph.add_node("chat", chat)
    graph.add_node("tools", tools)
    graph.add_node("review", review)
    graph.add_node("note", lambda s: {"messages": [AIMessage("noted", id="ai-note")]})
    graph.add_edge(lib.START, "chat")
    graph.add_conditional_edges("chat", route, ["tools", "review", "note", lib.END])
    graph.add_edge("tools", "chat")
    return graph.compile(checkpointer=saver)


def chat_thread(run):
    """The conversation: a tool call, an interrupt beside a pending write, a removal, a fork
    that overwrites the first message by its id, and REMOVE_ALL_MESSAGES."""
    remove_all = importlib.import_module(MESSAGES_MODULE[run.lib.name]).REMOVE_ALL_MESSAGES
    graph, config = chat_graph(run.lib, run.saver()), {"configurable": {"thread_id": THREAD}}
    run.invoke(graph, {"messages": [HumanMessage("hi", id="h1")]}, config)
    run.invoke(graph, {"messages": [("user", "search tabby")]}, config)  # an id is given
    run.invoke(graph, {"messages": [HumanMessage("a refund please", id="h3")]}, config)
    run.invoke(graph, run.Command(resume="yes"), config)
    run.update_state(graph, config, {"messages": [RemoveMessage(id="ai-review")]}, "note")
    # time travel: overwrite the first message by its id on the first turn's checkpoint, run on
    first = [s for s in graph.get_state_history(config) if s.next == ("chat",)][-1]
    fork = run.update_state(graph, first.config, {"messages": [HumanMessage("hello", id="h1")]})
    run.invoke(graph, None, fork)
    run.invoke(graph, {"messages": [RemoveMessage(id=remove_all), HumanMessage("anew", id="h9")]},
               config)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def saver_factory(request):
    return saver_of(request.param, request)


def test_chat_thread_same_history_as_langgraph(saver_factory):
    assert_same("chat_thread", record(chat_thread, LANGGRAPH, saver_factory),
                record(chat_thread, OURS, saver_factory))


class Exact(Normaliser):
    """Plain data without placeholders: reading the same rows must give the same values."""

    def text(self, s: str) -> str:
        return s


def reading(lib, saver) -> str:
    """Everything a library reads of the thread: history, latest state, every stored tuple."""
    graph, config = chat_graph(lib, saver), {"configurable": {"thread_id": THREAD}}
    seen = {"history": list(graph.get_state_history(config)),
            "state": graph.get_state(config),
            "stored": dump_saver(lambda thread: list(saver.list({"configurable": {
                "thread_id": thread}})), [THREAD])}
    return pprint.pformat(Exact()(seen), width=110)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def shared_store(request):
    """lib -> a saver of that library on ONE storage both libraries open (emptied first)."""
    if request.param == "sqlite":
        path = request.getfixturevalue("sqlite_path")
        return lambda lib: lib.SqliteSaver.from_conn_string(path)
    uri = request.getfixturevalue("postgres_uri")
    with contextlib.ExitStack() as stack:
        stack.enter_context(fresh_postgres(OURS, uri))  # tables made, emptied

    @contextlib.contextmanager
    def open_postgres(lib):
        with lib.PostgresSaver.from_conn_string(uri) as saver:
            yield saver

    return open_postgres


@pytest.mark.parametrize("writer", [LANGGRAPH, OURS], ids=["langgraph writes", "ours writes"])
def test_each_library_reads_the_others_chat_thread(writer, shared_store):
    record(chat_thread, writer, shared_store)
    reader = OURS if writer is LANGGRAPH else LANGGRAPH
    with shared_store(writer) as saver:
        by_writer = reading(writer, saver)
    with shared_store(reader) as saver:
        by_reader = reading(reader, saver)
    assert by_reader == by_writer, diff(by_writer, by_reader, writer.name, reader.name)
