"""lgcheckpoint.messages against LangGraph's langgraph.graph.message, and what storing messages
takes: the safe list, the optional extra, and ids that the saved writes and the state agree on."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import subprocess
import sys
import textwrap
import uuid
from typing import Annotated

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer as LangGraphSerializer
from langgraph.graph import message as lg_message
from pydantic import BaseModel

from lgcheckpoint import START, Command, InMemorySaver, StateGraph, interrupt
from lgcheckpoint import messages as ours
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.sqlite import SqliteSaver
from lgcheckpoint.errors import InvalidCheckpointError, UnsafeTypeError


class ForeignMessage(HumanMessage):
    """A message class outside LangGraph's safe list (a user's own subclass)."""


def plain(value):
    """Messages as comparable data, generated ids numbered by first appearance."""
    names: dict[str, str] = {}

    def name(i):
        try:
            uuid.UUID(i)
        except (TypeError, ValueError):
            return i
        return names.setdefault(i, f"generated-{len(names)}")

    def walk(v):
        if isinstance(v, list):
            return [walk(x) for x in v]
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items()}
        if hasattr(v, "model_dump"):
            return {**v.model_dump(), "id": name(v.id), "class": type(v).__name__}
        return v

    return walk(value)


def outcome(add_messages, left, right, **kw):
    """What one library's add_messages returns or raises, on its own copy of the inputs."""
    try:
        return plain(add_messages(copy.deepcopy(left), copy.deepcopy(right), **kw))
    except Exception as exc:  # noqa: BLE001 - the error itself is compared
        return type(exc).__name__, str(exc)


H1, A2 = HumanMessage("Hello", id="1"), AIMessage("Hi there!", id="2")
CASES = {
    "append": ([H1], [A2], {}),
    "single values": (H1, A2, {}),
    "replace by id": ([H1, A2], [HumanMessage("Hello again", id="1")], {}),
    "missing ids": ([HumanMessage("a")], [AIMessage("b"), HumanMessage("c")], {}),
    "duplicate ids in right": ([H1], [AIMessage("x", id="2"), AIMessage("y", id="2")], {}),
    "remove": ([H1, A2], [RemoveMessage(id="1")], {}),
    "remove then re-add": ([H1, A2], [RemoveMessage(id="1"), HumanMessage("back", id="1")], {}),
    "remove twice": ([H1, A2], [RemoveMessage(id="1"), RemoveMessage(id="1")], {}),
    "remove unknown": ([H1], [RemoveMessage(id="9")], {}),
    "remove what right added": ([H1], [AIMessage("x", id="3"), RemoveMessage(id="3")], {}),
    "remove all": ([H1, A2], [RemoveMessage(id=ours.REMOVE_ALL_MESSAGES)], {}),
    "remove all, then new": (
        [H1], [A2, RemoveMessage(id=ours.REMOVE_ALL_MESSAGES), HumanMessage("new")], {}),
    "remove all twice": ([H1], [RemoveMessage(id=ours.REMOVE_ALL_MESSAGES), A2,
                                RemoveMessage(id=ours.REMOVE_ALL_MESSAGES), H1], {}),
    "message-likes": ([{"role": "assistant", "content": "Hi", "id": "2"}],
                      [("user", "Thanks"), "plain text", {"role": "system", "content": "s"}], {}),
    "chunks": ([AIMessageChunk("a", id="1")], [AIMessageChunk("b", id="2"), H1], {}),
    "tool messages": ([AIMessage("", id="a", tool_calls=[
        {"name": "search", "args": {"q": "x"}, "id": "call1"}])],
        [ToolMessage("found", tool_call_id="call1", id="t")], {}),
    "empty": ([], [], {}),
    "openai format": ([SystemMessage("s", id="0")], [HumanMessage(
        [{"type": "text", "text": "look"}, {"type": "image", "source_type": "base64",
                                            "data": "1234", "mime_type": "image/jpeg"}],
        id="1")], {"format": "langchain-openai"}),
    "openai format with tool calls": ([], [AIMessage("", id="a", tool_calls=[
        {"name": "f", "args": {}, "id": "c"}]), ToolMessage("r", tool_call_id="c", id="t")],
        {"format": "langchain-openai"}),
    "unknown format": ([H1], [A2], {"format": "anthropic"}),
    "left only": ([H1], None, {}),
    "right only": (None, [H1], {}),
}


@pytest.mark.parametrize("case", list(CASES))
def test_add_messages_same_as_langgraph(case):
    left, right, kw = CASES[case]
    assert outcome(ours.add_messages, left, right, **kw) == outcome(
        lg_message.add_messages, left, right, **kw)


def test_add_messages_gives_ids_in_place_and_returns_a_new_list():
    left = [HumanMessage("a")]
    merged = ours.add_messages(left, [])
    assert merged == left and merged is not left and left[0].id is not None


def test_add_messages_with_only_options_is_a_reducer():
    reducer = ours.add_messages(format="langchain-openai")
    assert reducer([H1], [A2]) == lg_message.add_messages(format="langchain-openai")([H1], [A2])
    assert reducer.stamp_write is ours.add_messages.stamp_write  # ids given as writes are made


class PydanticState(BaseModel):
    messages: Annotated[list[AnyMessage], ours.add_messages]


class LangGraphPydanticState(BaseModel):
    messages: Annotated[list[AnyMessage], lg_message.add_messages]


def chat_graph(state_graph, schema):
    def reply(state):
        said = state.messages if isinstance(state, BaseModel) else state["messages"]
        return {"messages": [("assistant", f"{len(said)} so far")]}

    graph = state_graph(schema)
    graph.add_node("reply", reply)
    graph.add_edge(START, "reply")
    return graph.compile()


@pytest.mark.parametrize("schema", ["MessagesState", "pydantic"])
def test_messages_state_runs_as_in_langgraph(schema):
    from langgraph.graph import StateGraph as LangGraphStateGraph

    ours_schema, lg_schema = {"MessagesState": (ours.MessagesState, lg_message.MessagesState),
                              "pydantic": (PydanticState, LangGraphPydanticState)}[schema]
    given = {"messages": [("user", "meow"), HumanMessage("hi", id="h")]}
    assert plain(chat_graph(StateGraph, ours_schema).invoke(copy.deepcopy(given))) == plain(
        chat_graph(LangGraphStateGraph, lg_schema).invoke(copy.deepcopy(given)))


def test_message_graph_is_deprecated_and_runs_as_in_langgraph():
    def build(cls):
        with pytest.warns(DeprecationWarning, match="MessageGraph is deprecated"):
            graph = cls()
        graph.add_node("reply", lambda msgs: [AIMessage(f"{len(msgs)} so far")])
        graph.set_entry_point("reply")
        graph.set_finish_point("reply")
        return graph.compile()

    given = [("user", "one"), ("user", "two")]
    assert plain(build(ours.MessageGraph).invoke(given)) == plain(
        build(lg_message.MessageGraph).invoke(given))


def test_public_names_of_langgraphs_module_resolve_or_are_refused_by_name():
    public = {n for n in dir(lg_message) if not n.startswith("_")
              and getattr(getattr(lg_message, n), "__module__", None) == lg_message.__name__}
    public |= set(lg_message.__all__) | {"Messages", "REMOVE_ALL_MESSAGES"}
    for name in sorted(public):
        if name in ours.NOT_YET:
            with pytest.raises(ImportError, match=f"{name} is not implemented yet"):
                getattr(ours, name)
        else:
            assert hasattr(ours, name), name


# --- the optional extra ------------------------------------------------------------------------


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_core_imports_and_runs_without_importing_langchain(tmp_path):
    result = run_python(f"""
        import sys
        import lgcheckpoint, lgcheckpoint.graph, lgcheckpoint.pregel, lgcheckpoint.func
        from lgcheckpoint import StateGraph, START
        from lgcheckpoint.checkpoint.sqlite import SqliteSaver
        with SqliteSaver.from_conn_string({str(tmp_path / 'db.sqlite')!r}) as saver:
            graph = StateGraph(dict)
            graph.add_node("a", lambda s: s)
            graph.add_edge(START, "a")
            graph.compile(checkpointer=saver).invoke({{}}, {{"configurable": {{"thread_id": "1"}}}})
        print(sorted(m for m in sys.modules if m.startswith(("langchain", "langgraph"))))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_without_langchain_core_a_messages_name_says_which_extra_to_install():
    result = run_python("""
        import sys
        sys.modules["langchain_core"] = None  # as if langchain-core were not installed
        import lgcheckpoint
        try:
            from lgcheckpoint.messages import add_messages
        except ImportError as exc:
            print(exc)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ('chat messages need langchain-core: '
                             'pip install "lgcheckpoint[messages]"\n')


def test_langgraph_graph_offers_the_message_names_through_the_swap_table():
    """lgcheckpoint.graph never imports messages (no knot); `langgraph.graph.X` is served here."""
    from lgcheckpoint.swap import MOVED

    for name in ("add_messages", "MessagesState", "MessageGraph"):
        assert MOVED[f"langgraph.graph.{name}"] == "lgcheckpoint.messages"
        assert name in lg_message.__all__


# --- storage: LangGraph's bytes, LangGraph's safe list -------------------------------------------

STORED = [
    HumanMessage("hi", id="h", name="ada"),
    AIMessage("", id="a", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "c"}],
              usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}),
    ToolMessage("found", tool_call_id="c", id="t", artifact={"k": [1, 2]}),
    SystemMessage("be brief", id="s"),
    AIMessageChunk("par", id="k"),
    RemoveMessage(id="h"),
]


def test_messages_are_stored_as_langgraph_stores_them_and_load_by_default():
    for message in STORED:
        typed = JsonPlusSerializer().dumps_typed({"messages": [message]})
        assert typed == LangGraphSerializer().dumps_typed({"messages": [message]})
        loaded = JsonPlusSerializer().loads_typed(typed)["messages"][0]
        assert type(loaded) is type(message) and loaded == message


def test_a_message_type_outside_langgraphs_safe_list_is_refused_on_load(tmp_path):
    foreign = ForeignMessage("hi", id="f")
    typed = JsonPlusSerializer().dumps_typed([foreign])
    with pytest.raises(UnsafeTypeError, match="ForeignMessage"):
        JsonPlusSerializer().loads_typed(typed)
    # stored by a saver, read back by one with the default serializer: refused the same
    config = {"configurable": {"thread_id": "1", "checkpoint_ns": ""}}
    with SqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")) as saver:  # default serde
        checkpoint = {"v": 4, "id": str(uuid.uuid4()), "ts": "2026-01-01T00:00:00+00:00",
                      "channel_values": {"messages": [foreign]},
                      "channel_versions": {"messages": 1}, "versions_seen": {}}
        saver.put(config, checkpoint, {"step": 0}, {"messages": 1})
        with pytest.raises(InvalidCheckpointError, match="ForeignMessage.*not on the .*allow-list"):
            saver.get_tuple(config)


# --- ids: the saved write holds what the state holds ---------------------------------------------

def fan_out(saver, width=6):
    """START -> width parallel nodes, each writing a message without an id."""
    graph = StateGraph(ours.MessagesState)
    for i in range(width):
        graph.add_node(f"n{i}", lambda state, i=i: {"messages": [AIMessage(f"from {i}")]})
        graph.add_edge(START, f"n{i}")
    return graph.compile(checkpointer=saver)


@pytest.mark.parametrize("durability", ["sync", "async"])  # "exit" saves no step's writes
@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_every_saved_message_write_has_the_id_the_state_holds(kind, durability, tmp_path):
    """LangGraph 1.2 saves writes in the background while add_messages gives the same objects
    their ids: about 4 in 5 of these writes are saved without one. Every one must have it."""
    with contextlib.ExitStack() as stack:
        saver = InMemorySaver() if kind == "memory" else stack.enter_context(
            SqliteSaver.from_conn_string(str(tmp_path / "db.sqlite")))
        assert_writes_hold_state_ids(saver, durability)


def test_every_saved_message_write_has_the_id_the_state_holds_async():
    assert_writes_hold_state_ids(InMemorySaver(), "async", run_async=True)


def assert_writes_hold_state_ids(saver, durability, run_async=False):
    app, checked = fan_out(saver), 0
    for run in range(25):
        config = {"configurable": {"thread_id": str(run)}}
        given = {"messages": [HumanMessage("hi")]}
        if run_async:
            asyncio.run(app.ainvoke(given, config, durability=durability))
        else:
            app.invoke(given, config, durability=durability)
        tuples = {t.config["configurable"]["checkpoint_id"]: t for t in saver.list(config)}
        for child in tuples.values():
            if child.parent_config is None:
                continue
            state = {m.id: m for m in child.checkpoint["channel_values"]["messages"]}
            parent = tuples[child.parent_config["configurable"]["checkpoint_id"]]
            for _, channel, value in parent.pending_writes:
                for message in value if channel == "messages" else []:
                    assert message.id is not None and state[message.id] == message
                    checked += 1
    assert checked == 25 * 7  # the input's message and one per node, in every run


def test_a_message_written_beside_an_interrupt_keeps_its_id_when_resumed():
    """The interrupted run shows the sibling's message; the resumed run replays its saved write,
    which must carry the id shown (a saved write without it would get a new one)."""
    graph = StateGraph(ours.MessagesState)
    graph.add_node("say", lambda state: {"messages": [AIMessage("said")]})
    graph.add_node("ask", lambda state: {"messages": [HumanMessage(interrupt("ok?"))]})
    graph.add_edge(START, "say")
    graph.add_edge(START, "ask")
    app = graph.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "1"}}
    shown = app.invoke({"messages": []}, config)["messages"]
    after = app.invoke(Command(resume="yes"), config)["messages"]
    said = {m.content: m.id for m in after}["said"]
    assert {m.content: m.id for m in shown}["said"] == said and len(after) == 2
