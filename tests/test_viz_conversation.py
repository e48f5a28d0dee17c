"""Chat messages shown as a conversation (lgcheckpoint/viz/conversation.py): in the viewers, the
studio, ``lgcheckpoint inspect`` (terminal and --html) on databases LangGraph 1.2.24 wrote, and in
JupyterLab's light and dark themes. Markup in a message stays text everywhere."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import uuid
from types import SimpleNamespace
from typing import TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage

from lgcheckpoint.checkpoint.serde.types import Opaque
from lgcheckpoint.cli import main
from lgcheckpoint.viz import Conversation, LineageGraph, Step, Studio, load_history
from lgcheckpoint.viz.conversation import as_turn, change_lines, transcript, transcript_html

MARKUP = "<b>7</b> <script>window.pwned = 1</script>"


def add(a: int, b: int) -> int:
    """Add a and b."""
    return a + b


class ToolModel(GenericFakeChatModel):
    """A scripted chat model; bind_tools keeps the script."""

    def bind_tools(self, tools, **kwargs):
        return self


def chat_graph(graph_module, prebuilt_module, saver):
    """assistant -> tools -> assistant on a fake model that calls `add` once, then answers."""
    model = ToolModel(messages=iter([
        AIMessage("", tool_calls=[{"name": "add", "args": {"a": 3, "b": 4}, "id": "call-1"}],
                  id="ai-1"),
        AIMessage(MARKUP, id="ai-2")]))
    builder = graph_module.StateGraph(graph_module.MessagesState)
    builder.add_node("assistant", lambda s: {"messages": [model.invoke(s["messages"])]})
    builder.add_node("tools", prebuilt_module.ToolNode([add]))
    builder.add_edge(graph_module.START, "assistant")
    builder.add_conditional_edges("assistant", prebuilt_module.tools_condition)
    builder.add_edge("tools", "assistant")
    return builder.compile(checkpointer=saver)


def run_chat(graph, thread="chat"):
    """Ask, let the tool run, then remove the question (a RemoveMessage by update_state)."""
    config = {"configurable": {"thread_id": thread}}
    graph.invoke({"messages": [HumanMessage("add 3 and 4", id="h-1")]}, config)
    graph.update_state(config, {"messages": [RemoveMessage(id="h-1")]})
    return config


def write_with_langgraph(saver):
    import langgraph.graph
    import langgraph.prebuilt

    run_chat(chat_graph(langgraph.graph, langgraph.prebuilt, saver))


def ours(saver):
    from lgcheckpoint import messages, prebuilt
    from lgcheckpoint.graph import START, StateGraph

    graph = SimpleNamespace(  # LangGraph's langgraph.graph names, from where they live here
        MessagesState=messages.MessagesState, StateGraph=StateGraph, START=START)
    return chat_graph(graph, prebuilt, saver)


EXPECTED_LINES = [  # what inspect prints under the checkpoints that change the conversation
    '+ human   "add 3 and 4"  id=h-1',
    "+ ai      \"\"  calls add({'a': 3, 'b': 4}) [call-1]  id=ai-1",
    '+ tool    "7"  answers [call-1]  id=',
    f'+ ai      "{MARKUP}"  id=ai-2',
    '- human   "add 3 and 4"  id=h-1  (removed: not in this checkpoint)',
]


def assert_inspect_shows_the_conversation(out: str, report: str) -> None:
    lines = out.splitlines()
    for expected in EXPECTED_LINES:
        assert any(line.strip().startswith(expected) for line in lines), (expected, out)
    # each change sits under its checkpoint: c5 (the update) removed the question
    update = next(i for i, line in enumerate(lines) if "step   4 update" in line)
    assert lines[update + 1].strip().startswith(EXPECTED_LINES[-1])
    assert "<script>" not in report and "&lt;script&gt;window.pwned" in report
    assert "Conversation per checkpoint" in report and "lgc-removed" in report


def test_inspect_shows_the_conversation_of_a_langgraph_sqlite_file(tmp_path, capsys):
    from langgraph.checkpoint.sqlite import SqliteSaver as TheirSqliteSaver

    db, report = tmp_path / "chat.sqlite", tmp_path / "chat.html"
    with TheirSqliteSaver.from_conn_string(str(db)) as saver:
        write_with_langgraph(saver)
    assert main(["inspect", str(db), "--html", str(report)]) == 0
    assert_inspect_shows_the_conversation(capsys.readouterr().out, report.read_text())
    # without langchain-core, inspect reads the same messages as inert records of their fields
    code = ("import sys; sys.modules['langchain_core'] = None; "
            "import lgcheckpoint.cli as c; c.main(['inspect', sys.argv[1]])")
    res = subprocess.run([sys.executable, "-c", code, str(db)], capture_output=True, text=True,
                         check=True)
    assert_inspect_shows_the_conversation(res.stdout, report.read_text())


@pytest.mark.postgres
def test_inspect_shows_the_conversation_of_a_langgraph_postgres_database(
        postgres_uri, tmp_path, capsys):
    import psycopg
    from langgraph.checkpoint.postgres import PostgresSaver as TheirPostgresSaver
    from psycopg.conninfo import conninfo_to_dict

    parts, name = conninfo_to_dict(postgres_uri), f"lgc_chat_{uuid.uuid4().hex[:8]}"
    url = (f"postgresql://{parts.get('user', 'postgres')}@{parts.get('host', '127.0.0.1')}:"
           f"{parts.get('port', 5432)}/{name}")
    with psycopg.connect(postgres_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        with TheirPostgresSaver.from_conn_string(url) as saver:
            saver.setup()
            write_with_langgraph(saver)
        report = tmp_path / "chat.html"
        assert main(["inspect", url, "--html", str(report)]) == 0
        assert_inspect_shows_the_conversation(capsys.readouterr().out, report.read_text())
    finally:
        with psycopg.connect(postgres_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def test_a_stored_message_is_recognised_built_or_as_an_inert_record():
    built = as_turn(AIMessage("hi", id="a", tool_calls=[{"name": "t", "args": {}, "id": "c"}]))
    inert = as_turn(Opaque("langchain_core.messages.ai", "AIMessage", {
        "content": "hi", "type": "ai", "id": "a",
        "tool_calls": [{"name": "t", "args": {}, "id": "c", "type": "tool_call"}]}, 5))
    assert built == inert == ("ai", "hi", "a", [("t", {}, "c")], None, "", "")
    assert as_turn({"type": "human", "content": "a dict is state, not a message"}) is None
    assert as_turn(Opaque("app.models", "Customer", {"type": "human", "content": "x"})) is None
    blocks = as_turn(HumanMessage([{"type": "text", "text": "look"}, {"type": "image_url"}]))
    assert blocks.content == "look\n[image_url]"


def test_removed_replaced_and_pending_messages_are_marked(sqlite_path):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(sqlite_path, check_same_thread=False))
    graph = ours(saver)
    config = run_chat(graph)
    history = load_history(graph, config)
    before = history[history.head.parent]
    removed = transcript(before, history=history)[0]
    assert (removed.role, removed.mark) == ("human", "removed")
    assert removed.note == "RemoveMessage in a pending write", removed.note
    # a fork that overwrites a message by its id: the old one is marked replaced at its parent
    fork_at = history.head.parent
    graph.update_state(history[fork_at].config, {"messages": [AIMessage("eight", id="ai-2")]})
    history = load_history(graph, config)
    turns = {t.id: t for t in transcript(history[fork_at], history=history)}
    assert turns["ai-2"].mark == "replaced" and turns["ai-2"].note.startswith("same id")
    fork = history.head
    assert change_lines(fork, history[fork.parent]) == ['~ ai      "eight"  id=ai-2']


def test_a_hostile_stored_message_is_shown_bounded_and_inert():
    fields = {"type": "x" * 10_000, "content": [{"text": "<a>" * 5000}, 7, {"type": None}],
              "id": {"nested": ["id"] * 1000},
              "tool_calls": [None, {"name": 1, "args": "a" * 9999}],
              "tool_call_id": b"\x1b[2J"}
    turn = as_turn(Opaque("langchain_core.messages.ai", "AIMessage", fields, 5))
    assert len(turn.role) == 80 and len(turn.content) <= 2000 and len(turn.id) <= 80
    assert turn.tool_calls[0][0] == "1"
    line = change_lines(Step("c0", 0, "c0", "", 0, "loop", None,
                             values={"messages": [Opaque("langchain_core.messages.ai",
                                                         "AIMessage", fields, 5)]}), None)[0]
    assert "\x1b" not in line and len(line) < 600
    assert "<a>" not in transcript_html([turn])


def test_markup_in_a_message_stays_text():
    html = transcript_html([as_turn(AIMessage(MARKUP, id="<i>id</i>"))])
    assert "<script>" not in html and "<b>7" not in html and "<i>id" not in html
    assert "&lt;b&gt;7&lt;/b&gt; &lt;script&gt;window.pwned = 1&lt;/script&gt;" in html


def test_the_viewers_and_the_studio_show_the_conversation(sqlite_path):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(sqlite_path, check_same_thread=False))
    graph = ours(saver)
    config = run_chat(graph)
    view = Conversation(graph, config)
    assert repr(view).splitlines()[0] == "Conversation(messages at c5: 3 messages)"
    assert view._repr_mimebundle_()["image/png"].startswith(b"\x89PNG")
    widget = view.widget()
    assert "lgc-turn" in widget.children[1].value
    widget.children[0].value = "c1"
    assert "add 3 and 4" in widget.children[1].value
    lineage = LineageGraph(graph, config).widget()
    assert "lgc-chat" in lineage.children[1].value
    studio = Studio(graph, config).widget()
    assert "lgc-chat" in studio.ui.frame.value


class Plain(TypedDict):
    x: int


def test_inspect_without_messages_prints_no_conversation(tmp_path, capsys):
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver
    from lgcheckpoint.graph import START, StateGraph

    db = tmp_path / "plain.sqlite"
    with SqliteSaver.from_conn_string(str(db)) as saver:
        builder = StateGraph(Plain)
        builder.add_node("a", lambda s: {"x": 1})
        builder.add_edge(START, "a")
        builder.compile(checkpointer=saver).invoke({"x": 0}, {"configurable": {"thread_id": "1"}})
    assert main(["inspect", str(db)]) == 0
    out = capsys.readouterr().out
    assert not any(line.startswith("       ") for line in out.splitlines()), out
