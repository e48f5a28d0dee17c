"""The interactive side and the edges: HITL resume through the panel's buttons, the storage view on
each saver, a database written by LangGraph read back, widgets driven from Python, and the clear
messages a user gets for misuse or a missing Graphviz."""

from __future__ import annotations

import sqlite3
import uuid

import pytest

import lgcheckpoint.viz.render as render
from lgcheckpoint.viz import (ChannelVersionTable, HITLPanel, LineageGraph, StorageView,
                              SuperStepPlayer, VersionsSeenMatrix, load_history)
from lgcheckpoint.viz.hitl import command_factory_for, parse_answer
from tests.viz_helpers import COMBOS, open_saver, run_full, run_until_interrupt, runtime


@pytest.fixture(params=COMBOS, ids=[f"{rt}-{kind}" for rt, kind in COMBOS])
def saver_for(request, sqlite_path):
    rt_name, kind = request.param
    rt = runtime(rt_name)
    uri = request.getfixturevalue("postgres_uri") if kind == "postgres" else None
    with open_saver(rt_name, kind, sqlite_path, uri) as saver:
        yield rt, saver, kind


def buttons(panel_widget):
    """approve / reject / send edit buttons and the edit box of the first interrupt row."""
    row = panel_widget.children[0].children[0]
    return row.children[1].children, row.children[2]


@pytest.mark.lesson("08_human_in_the_loop")
def test_hitl_approve_button_resumes_and_refreshes(saver_for):
    rt, saver, _ = saver_for
    run = run_until_interrupt(rt, saver)
    panel = HITLPanel(run.app, run.config)
    assert repr(panel) == "HITLPanel(1 pending interrupt(s))"
    assert [i.value for i in panel.interrupts] == [{"items": ["t0", "t1"]}]
    assert "{&#x27;items&#x27;: [&#x27;t0&#x27;, &#x27;t1&#x27;]}" in panel._repr_html_()
    ui = panel.widget()
    (approve, reject, edit), text = buttons(ui)
    assert [b.description for b in (approve, reject, edit)] == ["approve", "reject", "send edit"]
    approve.click()
    assert panel.last_result["verdict"] == "approve!"
    assert "resumed with &#x27;approve&#x27;" in ui.children[1].value
    assert panel.interrupts == [] and ui.children[0].children[0].value == "no pending interrupt"
    details = ui.children[2].children[1].value  # the lineage below was re-read: 6 checkpoints now
    assert "c5: step 4, source loop, branch 0, HEAD" in details


@pytest.mark.lesson("08_human_in_the_loop")
def test_hitl_edit_sends_parsed_value(saver_for):
    rt, saver, _ = saver_for
    run = run_until_interrupt(rt, saver)
    panel = HITLPanel(run.app, run.config, command_factory=rt.Command)
    ui = panel.widget()
    (_, _, edit), text = buttons(ui)
    text.value = '"looks good"'
    edit.click()
    assert panel.last_result["verdict"] == "looks good!"
    with pytest.raises(ValueError, match="no pending interrupt"):
        panel.resume("again")


@pytest.mark.lesson("00_tour")
def test_hitl_edit_starts_empty_and_a_double_click_answers_once(saver_for):
    rt, saver, _ = saver_for
    run = run_until_interrupt(rt, saver)
    panel = HITLPanel(run.app, run.config)
    ui = panel.widget()
    (approve, _, edit), text = buttons(ui)
    assert text.value == "" and text.layout.width == "100%"  # not prefilled with the question
    edit.click()  # nothing typed: refused, nothing sent
    assert "type an answer in the edit box first" in ui.children[1].value and panel.interrupts
    approve.click()
    approve.click()  # the double click's second event, on a row no longer drawn
    status = ui.children[1].value
    assert status.startswith("resumed with &#x27;approve&#x27;") and "ignored" in status
    assert "refused" not in status and panel.last_result["verdict"] == "approve!"
    ui.children[2].children[0].selected = "c1"  # a new selection clears the status
    assert ui.children[1].value == ""


def test_hitl_command_comes_from_the_graphs_package():
    rt = runtime("langgraph")
    from langgraph.checkpoint.memory import InMemorySaver

    from tests.viz_helpers import build_review_graph

    app = build_review_graph(rt, InMemorySaver(), {"failures": 0})
    assert command_factory_for(app) is rt.Command
    assert parse_answer("3") == 3 and parse_answer("yes please") == "yes please"
    with pytest.raises(TypeError, match="command_factory"):
        command_factory_for(object())


@pytest.mark.lesson("05_savers")
def test_storage_view(saver_for):
    rt, saver, kind = saver_for
    run = run_full(rt, saver)
    view = StorageView(saver, run.config)
    expected_tables = {"memory": ["storage", "writes", "blobs"],
                       "sqlite": ["checkpoints", "writes"],
                       "postgres": ["checkpoints", "checkpoint_blobs", "checkpoint_writes"]}[kind]
    assert view.kind == kind and list(view.tables) == expected_tables
    assert [c.key for c in view.per_checkpoint] == [f"c{i}" for i in range(7)]
    assert all(c.checkpoint > 0 for c in view.per_checkpoint)
    assert view.per_checkpoint[1].writes > 0  # plan's writes are saved on c1
    if kind == "sqlite":  # every value lives inside each checkpoint row
        assert view.blobs_shared == 0 and "nothing is shared" in view._repr_html_()
    else:  # a value is stored once per version and shared by later checkpoints
        assert view.blobs_shared > 0 and view.per_checkpoint[0].blobs_new == 1
        c5 = view.per_checkpoint[5]
        c5_channels = load_history(saver, run.config)["c5"].channel_versions
        assert c5.blobs_shared > 0 and c5.blobs_new + c5.blobs_shared <= len(c5_channels)
    assert repr(view).startswith(f"StorageView({kind}: ")
    assert "c3 (" in view.table_html(expected_tables[0])  # ids shown with their cN name


@pytest.mark.lesson("12_inspect_langgraph_db")
def test_database_written_by_langgraph(tmp_path):
    """A SQLite file written by LangGraph, closed, then opened from a fresh connection."""
    path = str(tmp_path / "langgraph.sqlite")
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.checkpoint.sqlite import SqliteSaver

    rt = runtime("langgraph")
    with SqliteSaver.from_conn_string(path) as saver:
        run = run_full(rt, saver)
        expected = LineageGraph(saver, run.config).dot
    reference = run_full(rt, InMemorySaver())
    readers = [SqliteSaver(sqlite3.connect(path, check_same_thread=False))]
    try:
        from lgcheckpoint.checkpoint.sqlite import SqliteSaver as OurSqliteSaver
        readers.append(OurSqliteSaver(sqlite3.connect(path, check_same_thread=False)))
    except ImportError:
        pass
    for reader in readers:
        lineage = LineageGraph(reader, run.config)
        assert lineage.dot == expected == LineageGraph(reference.saver, reference.config).dot
        matrix = VersionsSeenMatrix(reader, run.config, key="c3")
        assert matrix.fires == {("review", "branch:to:review")}
        assert StorageView(reader, run.config).kind == "sqlite"
    assert len(readers) == 2, \
        "lgcheckpoint.checkpoint.sqlite.SqliteSaver should read LangGraph's file"


def test_widgets_driven_from_python():
    from langgraph.checkpoint.memory import InMemorySaver

    run = run_full(runtime("langgraph"), InMemorySaver())
    lineage = LineageGraph(run.app, run.config).widget()
    view, details = lineage.children
    assert "c6: step 2, source update" in details.value
    view.selected = "c3"  # what a click in the browser sets
    assert "next: review  because branch:to:review 4 &gt; seen 0" in details.value
    assert "penwidth=4" in LineageGraph(run.app, run.config, selected="c3").dot
    player = SuperStepPlayer(run.app, run.config).widget()
    (_play, slider), frame = player.children[0].children, player.children[1]
    assert (slider.min, slider.max, slider.value) == (1, 4, 4)  # 1-based, as the frame text
    slider.value = 2
    assert "frame 2/4: c1 step 0 (loop)" in frame.value and "<svg" in frame.value
    table = ChannelVersionTable(run.saver, run.config).widget()
    toggle, out = table.children
    toggle.value = "values"
    assert "&#x27;approve!&#x27;" in out.value
    matrix = VersionsSeenMatrix(run.saver, run.config).widget()
    pick, image, text = matrix.children
    pick.value = "c3"
    assert "c3 step 2: next = review" in text.value and image.value[:8] == b"\x89PNG\r\n\x1a\n"
    bundle = VersionsSeenMatrix(run.saver, run.config)._repr_mimebundle_()
    # by default the newest checkpoint on the head's branch where a node fires: c1 (plan), not c6
    assert set(bundle) == {"image/png", "text/plain"}
    assert bundle["text/plain"].startswith("VersionsSeenMatrix(c1")
    storage = StorageView(run.saver, run.config).widget()
    storage.children[0].value = "blobs"
    assert "<b>blobs</b>" in storage.children[1].value


def test_missing_graphviz_shows_install_command(monkeypatch):
    from langgraph.checkpoint.memory import InMemorySaver

    run = run_until_interrupt(runtime("langgraph"), InMemorySaver())
    monkeypatch.setattr(render.shutil, "which", lambda *a, **k: None)
    monkeypatch.delenv("LGCHECKPOINT_GRAPHVIZ", raising=False)
    render.dot_to_svg.cache_clear()
    with pytest.raises(render.GraphvizNotFound, match="pip install graphviz-pure"):
        render.find_engine()
    bundle = LineageGraph(run.saver, run.config)._repr_mimebundle_()
    assert "image/svg+xml" not in bundle and "pip install graphviz-pure" in bundle["text/html"]
    assert bundle["text/plain"].startswith("LineageGraph(")


def test_misuse_gives_clear_errors():
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(ValueError, match="thread_id"):
        load_history(InMemorySaver(), {})
    with pytest.raises(TypeError, match="compile\\(checkpointer=saver\\)"):
        load_history(object(), {"configurable": {"thread_id": "1"}})
    with pytest.raises(ValueError, match="run the graph first"):
        VersionsSeenMatrix(InMemorySaver(), {"configurable": {"thread_id": "none"}})
    with pytest.raises(KeyError, match="c0..c"):
        load_history(InMemorySaver(), {"configurable": {"thread_id": "none"}})["c9"]


@pytest.mark.lesson("08_human_in_the_loop")
def test_hitl_two_parallel_interrupts_answered_one_by_one(saver_for):
    rt, saver, _ = saver_for
    from typing_extensions import TypedDict

    class Votes(TypedDict, total=False):
        a: str
        b: str

    g = rt.StateGraph(Votes)
    g.add_node("ask_a", lambda s: {"a": rt.interrupt("vote a?")})
    g.add_node("ask_b", lambda s: {"b": rt.interrupt("vote b?")})
    g.add_edge(rt.START, "ask_a")
    g.add_edge(rt.START, "ask_b")
    app = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"votes-{uuid.uuid4().hex[:8]}"}}
    app.invoke({}, config)
    panel = HITLPanel(app, config, approve="yes", reject="no")
    assert sorted(i.value for i in panel.interrupts) == ["vote a?", "vote b?"]
    ui = panel.widget()
    first_row = ui.children[0].children[0]
    asked = first_row.children[0].value
    first_row.children[1].children[1].click()  # reject the first one only
    assert [i.value for i in panel.interrupts] == [("vote b?" if "a?" in asked else "vote a?")]
    buttons(ui)[0][0].click()  # approve the other
    assert panel.interrupts == [] and sorted(panel.last_result.values()) == ["no", "yes"]


def test_engine_override_must_be_a_program(monkeypatch):
    monkeypatch.setenv("LGCHECKPOINT_GRAPHVIZ", "/nonexistent/dot")
    with pytest.raises(render.GraphvizNotFound, match="LGCHECKPOINT_GRAPHVIZ"):
        render.find_engine()
    monkeypatch.delenv("LGCHECKPOINT_GRAPHVIZ")
    assert render.find_engine().endswith(("graphviz-pure", "graphviz-pure.exe", "dot", "dot.exe"))


def test_viewers_never_import_langgraph_and_runtime_never_imports_viz():
    import subprocess
    import sys
    from pathlib import Path

    code = ("import sys, lgcheckpoint.viz; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'langgraph'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
    import re

    package = Path(render.__file__).parents[1]  # the runtime: everything but viz and the CLI
    runtime_files = [p for p in package.rglob("*.py")
                     if "viz" not in p.parts  # course_pictures.py: the course's, not the runtime's
                     and p.name not in ("cli.py", "__main__.py", "course_pictures.py")]
    importing = re.compile(r"^\s*(from|import)\s+lgcheckpoint\.viz", re.M)
    assert runtime_files and [str(p) for p in runtime_files
                              if importing.search(p.read_text(encoding="utf-8"))] == []


async def test_async_savers_read_with_aload_history(tmp_path):
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    from lgcheckpoint.viz import aload_history
    from tests.viz_helpers import build_review_graph

    rt = runtime("langgraph")
    async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "a.sqlite")) as saver:
        app = build_review_graph(rt, saver, {"failures": 0})
        config = {"configurable": {"thread_id": "async"}}
        await app.ainvoke({"topic": "t", "items": [], "verdict": ""}, config)
        with pytest.raises(TypeError, match="await aload_history"):
            load_history(saver, config)
        history = await aload_history(app, config)
        assert history.head.next == ["review"] and history.head.interrupts
        assert "INTERRUPT in review" in LineageGraph(history).dot


@pytest.mark.lesson("08_human_in_the_loop")
def test_hitl_continue_after_a_breakpoint(saver_for):
    rt, saver, _ = saver_for
    from tests.test_viz_model import join_graph

    app = join_graph(rt, saver)  # interrupt_before=["c"]
    config = {"configurable": {"thread_id": f"pause-{uuid.uuid4().hex[:8]}"}}
    app.invoke({"log": []}, config)
    panel = HITLPanel(app, config)
    assert panel.interrupts == [] and panel.paused_before == ["c"]
    ui = panel.widget()
    label, go = ui.children[0].children[0].children
    assert label.value == "paused before c" and go.description == "continue"
    go.click()
    assert sorted(panel.last_result["log"]) == ["a", "b", "c"] and panel.paused_before == []
    assert ui.children[0].children[0].value == "no pending interrupt"
    with pytest.raises(ValueError, match="not paused"):
        panel.proceed()


@pytest.mark.lesson("11_subgraphs")
def test_hitl_answers_an_interrupt_raised_inside_a_subgraph(saver_for):
    rt, saver, _ = saver_for
    from tests.viz_helpers import SubState

    sub = rt.StateGraph(SubState)
    sub.add_node("ask", lambda s: {"verdict": rt.interrupt("ok?")})
    sub.add_edge(rt.START, "ask")
    g = rt.StateGraph(SubState)
    g.add_node("outer", sub.compile())
    g.add_edge(rt.START, "outer")
    app = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"sub-{uuid.uuid4().hex[:8]}"}}
    app.invoke({"verdict": ""}, config)
    panel = HITLPanel(app, config)
    assert [i.value for i in panel.interrupts] == ["ok?"]
    assert len(panel.lineage.history.subgraphs) == 1  # the subgraph saved its own checkpoints
    assert panel.resume("yes") == {"verdict": "yes"} and panel.interrupts == []
