"""Studio actions against the graph itself: a session of step / run / breakpoints / answer /
fork / replay on one thread must leave the same history as the same calls made directly on the
graph on another thread — on LangGraph and on lgcheckpoint, on InMemory and SQLite. Stale and
pointless actions are refused and write nothing. Also: the widget's buttons, the HITLPanel bug of
chapter 00, and a 1,000-checkpoint thread."""

from __future__ import annotations

import operator
import time
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.viz import HITLPanel, Refused, Studio, load_history
from lgcheckpoint.viz.history import short
from tests.viz_helpers import open_saver, runtime

COMBOS = [(rt, kind) for rt in ("lgcheckpoint", "langgraph") for kind in ("memory", "sqlite")]


class Trip(TypedDict, total=False):
    destination: str
    days: int
    plan: str
    notes: Annotated[list, operator.add]
    approved: bool


def build_trip(rt, saver):
    """Plan, two parallel researchers, a review that asks a human, then book (or plan again)."""
    def plan(s):
        return {"plan": f"{s['days']} days in {s['destination']}"}

    def review(s):
        answer = rt.interrupt({"question": "approve?", "plan": s["plan"]})
        return {"approved": answer == "approve"}

    g = rt.StateGraph(Trip)
    g.add_node("plan", plan)
    g.add_node("weather", lambda s: {"notes": ["mild"]})
    g.add_node("hotels", lambda s: {"notes": ["2 hotels"]})
    g.add_node("review", review)
    g.add_node("book", lambda s: {"notes": [f"booked {s['plan']}"]})
    g.add_edge(rt.START, "plan")
    g.add_edge("plan", "weather")
    g.add_edge("plan", "hotels")
    g.add_edge(["weather", "hotels"], "review")
    g.add_conditional_edges("review", lambda s: "book" if s.get("approved") else "plan",
                            ["book", "plan"])
    g.add_edge("book", rt.END)
    return g.compile(checkpointer=saver)


def fingerprint(graph, config) -> list:
    """The thread's whole history minus what is random (ids, timestamps, version suffixes)."""
    history = load_history(graph, config, graph=graph)
    return [(s.key, s.step, s.source, s.parent, s.branch, s.channel_versions, s.versions_seen,
             s.updated_channels, short(s.values, 500), s.next,
             [(t.name, short(t.regular, 200), [short(i.value, 80) for i in t.interrupts],
               short(t.resumes)) for t in s.tasks])
            for s in history.steps]


@pytest.fixture(params=COMBOS, ids=[f"{rt}-{kind}" for rt, kind in COMBOS])
def trip(request, sqlite_path):
    rt_name, kind = request.param
    rt = runtime(rt_name)
    with open_saver(rt_name, kind, sqlite_path) as saver:
        yield rt, build_trip(rt, saver)


@pytest.mark.lesson("15_studio")
def test_a_studio_session_writes_what_the_same_calls_on_the_graph_write(trip):
    rt, graph = trip
    mine, theirs = ({"configurable": {"thread_id": t}} for t in ("studio", "direct"))
    studio = Studio(graph, mine)
    everything = ["__start__", "plan", "weather", "hotels", "review", "book"]
    direct = []  # the calls the studio should make, made by hand on the other thread

    def call(value, config=theirs, before=(), after=()):
        direct.append(graph.invoke(value, config, interrupt_before=list(before),
                                   interrupt_after=list(after)))

    start = {"destination": "Kyoto", "days": 3}
    studio.step(start)  # one super-step: the input checkpoint, then __start__ ran
    call(start, after=everything)
    assert studio.head.step == 0 and studio.head.next == ["plan"]
    studio.step()
    call(None, after=everything)
    assert studio.head.step == 1 and studio.head.next == ["hotels", "weather"]
    assert fingerprint(graph, mine) == fingerprint(graph, theirs)

    studio.toggle_breakpoint("book", "before")
    studio.run()  # stops at the interrupt in review
    call(None, before=["book"])
    assert [i.value["question"] for i in studio.pending] == ["approve?"]
    studio.answer("approve")  # then stops before book
    call(rt.Command(resume="approve"), before=["book"])
    assert studio.pending == [] and studio.breakpoint_stop == ["book"]
    assert "next: book (breakpoint)" in studio.message

    studio.toggle_breakpoint("book", "before")
    studio.toggle_breakpoint("book", "after")
    studio.run()  # runs book and stops after it (the end: nothing follows)
    call(None, after=["book"])
    assert studio.ended and studio.last_result["notes"][-1] == "booked 3 days in Kyoto"

    # fork the checkpoint where the plan was written, as if plan had said 5 days, and continue
    planned = next(s for s in studio.history.steps if "plan" in s.updated_channels)
    studio.fork(planned.key, {"days": 5, "plan": "5 days in Kyoto"}, as_node="plan")
    graph.update_state(load_history(graph, theirs)[planned.key].config,
                       {"days": 5, "plan": "5 days in Kyoto"}, as_node="plan")
    assert studio.head.source == "update" and studio.head.branch == 0
    studio.step()
    call(None, after=everything)

    studio.replay("c1")  # the input checkpoint's child: run again from __start__'s output
    call(None, load_history(graph, theirs)["c1"].config, after=["book"])
    assert [i.value["plan"] for i in studio.pending] == ["3 days in Kyoto"]
    assert len({s.branch for s in studio.history.steps}) == 3  # the lineage shows the branches

    assert fingerprint(graph, mine) == fingerprint(graph, theirs)
    assert len(load_history(graph, mine)) == len(load_history(graph, theirs)) > 10


@pytest.mark.lesson("15_studio")
def test_stale_and_pointless_actions_are_refused_and_write_nothing(trip):
    rt, graph = trip
    config = {"configurable": {"thread_id": "stale"}}
    studio = Studio(graph, config)
    with pytest.raises(Refused, match="empty: give an input"):
        studio.step()
    studio.run({"destination": "Oslo", "days": 2})
    drawn = studio.drawn_head
    with pytest.raises(Refused, match="answer the pending interrupt first"):
        studio.step()
    graph.invoke(rt.Command(resume="approve"), config)  # someone else answers meanwhile
    before = fingerprint(graph, config)
    with pytest.raises(Refused) as refusal:
        studio.answer("reject", expected_head=drawn)
    assert "nothing to answer" in str(refusal.value) and "moved on" in str(refusal.value)
    assert "Nothing was written" in studio.message
    with pytest.raises(Refused, match="moved on"):
        studio.fork("c2", {"days": 9}, expected_head=drawn)
    with pytest.raises(Refused, match="has ended: give an input"):
        studio.run()
    with pytest.raises(Refused, match="as_node 'nope' is not a node"):
        studio.fork("c2", {"days": 9}, as_node="nope")
    assert fingerprint(graph, config) == before
    studio.run({"destination": "Oslo", "days": 4})  # an ended thread takes a new input
    assert studio.head.step > 0 and studio.pending


def test_two_pending_interrupts_are_answered_by_id(sqlite_path):
    rt = runtime("lgcheckpoint")

    class Votes(TypedDict, total=False):
        a: str
        b: str

    with open_saver("lgcheckpoint", "sqlite", sqlite_path) as saver:
        g = rt.StateGraph(Votes)
        g.add_node("ask_a", lambda s: {"a": rt.interrupt("vote a?")})
        g.add_node("ask_b", lambda s: {"b": rt.interrupt("vote b?")})
        g.add_edge(rt.START, "ask_a")
        g.add_edge(rt.START, "ask_b")
        app = g.compile(checkpointer=saver)
        studio = Studio(app, {"configurable": {"thread_id": "votes"}})
        studio.run({})
        with pytest.raises(Refused, match="2 interrupts are pending"):
            studio.answer("yes")
        first, second = studio.pending
        studio.answer("yes", first.id)
        with pytest.raises(Refused, match="no longer pending"):
            studio.answer("again", first.id)
        studio.answer("no", second.id)
        assert sorted(studio.last_result.values()) == ["no", "yes"] and studio.ended


def test_the_widget_buttons_drive_the_studio_and_show_refusals(trip):
    rt, graph = trip
    config = {"configurable": {"thread_id": "ui"}}
    box = Studio(graph, config, input={"destination": "Rome", "days": 2}).widget()
    ui = box.ui
    assert repr(box) == "Studio widget" and "empty" in ui.status.value
    ui.step_button.click()
    ui.keys.command = "step:1"  # the s key
    assert ui.studio.head.step == 1 and "step" in ui.status.value
    assert "plan wrote plan" in ui.frame.value
    assert "class='lgc-cell fires'" in ui.seen.value  # the rows that explain next
    assert ui.table.value.count("<tr") == 1 + len(ui.studio.history)
    before = next(t for t in ui.breaks.children if t.description == "before review")
    before.value = True  # a breakpoint, as a click on its toggle
    assert ui.studio.break_before == {"review"}
    assert "break before" in ui.studio.topology_dot()
    ui.topology.selected = "hotels"  # a click on a node in the drawing
    assert ui.studio.break_before == {"review", "hotels"}
    ui.topology.selected = "hotels"
    ui.run_button.click()
    assert ui.studio.breakpoint_stop == ["review"] and ui.interrupts.children == ()
    ui.run_button.click()
    label, buttons, _ = ui.interrupts.children[0].children
    assert "approve?" in label.value
    graph.invoke(rt.Command(resume="approve"), config)  # the thread moves under the widget
    buttons.children[1].click()  # reject, on a stale view
    assert "refused" in ui.status.value and "refused" in ui.status._dom_classes
    assert ui.interrupts.children == ()  # redrawn from the thread as it is now
    ui.keys.command = "previous:2"
    ui.keys.command = "previous:3"
    shown = ui.studio.shown.key
    ui.fork_values.value = '{"days": 7}'
    ui.fork_button.click()  # two nodes wrote last: the graph asks for as_node; shown, not raised
    assert "error: InvalidUpdateError" in ui.status.value
    ui.fork_as.value = "plan"
    ui.fork_button.click()
    assert ui.studio.head.source == "update" and ui.studio.head.values["days"] == 7
    assert ui.studio.head.parent == shown
    ui.lineage.selected = "c1"
    ui.replay_button.click()
    assert "replayed from c1" in ui.status.value


def test_the_widget_answers_once_on_a_double_click_and_never_sends_the_question(trip):
    rt, graph = trip
    ui = Studio(graph, {"configurable": {"thread_id": "twice"}},
                input={"destination": "Oslo", "days": 1}).widget().ui
    ui.run_button.click()
    label, buttons, edit = ui.interrupts.children[0].children
    assert edit.value == "" and edit.layout.width == "100%"  # empty: not the question
    buttons.children[2].click()  # send edit, with nothing typed
    assert "type an answer in the edit box first" in ui.status.value and ui.studio.pending
    ui.step_button.click()  # stepping would only ask again: refused, with the reason...
    assert "refused" in ui.status._dom_classes and "answer the pending" in ui.status.value
    ui.pick.value = "c1"  # ...which no longer applies once another checkpoint is selected
    assert "refused" not in ui.status._dom_classes and "refused" not in ui.status.value
    approve = buttons.children[0]
    approve.click()
    answered = ui.status.value
    assert "answered &#x27;approve&#x27;" in answered and "refused" not in ui.status._dom_classes
    approve.click()  # the double click's second event, on a row no longer drawn
    assert ui.status.value.startswith(answered) and "ignored" in ui.status.value
    assert "refused" not in ui.status._dom_classes and len(ui.studio.history) == 6


def test_a_widget_error_reaches_the_status_line_even_when_reloading_fails(tmp_path, capfd):
    """Chapter 15 after Run All: the saver was closed, so the action fails and so does the
    re-read in the error path; ipywidgets would have swallowed the second error."""
    from lgcheckpoint.checkpoint.sqlite import SqliteSaver

    rt = runtime("lgcheckpoint")
    with SqliteSaver.from_conn_string(str(tmp_path / "closed.sqlite")) as saver:
        ui = Studio(build_trip(rt, saver), {"configurable": {"thread_id": "t"}},
                    input={"destination": "Oslo", "days": 1}).widget().ui
        ui.step_button.click()
    ui.step_button.click()  # the saver is closed now
    assert "refused" in ui.status._dom_classes
    assert "error: RuntimeError: the saver&#x27;s SQLite connection is closed" in ui.status.value
    assert "re-reading the thread failed too: RuntimeError" in ui.status.value
    ui.lineage.selected = "c9"  # any handler: its error is shown, not raised into ipywidgets
    assert "error: KeyError" in ui.status.value and "no checkpoint" in ui.status.value
    assert "Traceback" in capfd.readouterr().err  # the traceback went to the terminal


def test_hitl_panel_never_answers_a_thread_with_nothing_pending(trip):
    """Chapter 00's bug: the panel was drawn, then the thread was answered elsewhere."""
    rt, graph = trip
    config = {"configurable": {"thread_id": "chapter-00"}}
    graph.invoke({"destination": "Kyoto", "days": 3}, config)
    panel = HITLPanel(graph, config)
    ui = panel.widget()
    graph.invoke(rt.Command(resume="approve"), config)  # "the exercise's solution"
    before = fingerprint(graph, config)
    reject = ui.children[0].children[0].children[1].children[1]
    reject.click()
    status = ui.children[1].value
    assert "no pending interrupt" in status and "resumed" not in status
    assert fingerprint(graph, config) == before and panel.interrupts == []
    assert ui.children[0].children[0].value == "no pending interrupt"


def test_a_1000_checkpoint_thread_opens_fast_and_pages_its_lineage():
    rt = runtime("lgcheckpoint")
    from lgcheckpoint.checkpoint.memory import InMemorySaver

    class Count(TypedDict):
        n: int

    g = rt.StateGraph(Count)
    g.add_node("tick", lambda s: {"n": s["n"] + 1})
    g.add_edge(rt.START, "tick")
    g.add_conditional_edges("tick", lambda s: "tick" if s["n"] < 998 else rt.END,
                            ["tick", rt.END])
    app = g.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "long"}, "recursion_limit": 2000}
    app.invoke({"n": 0}, config)
    started = time.perf_counter()
    box = Studio(app, config).widget()
    seconds = time.perf_counter() - started
    print(f"\n1,000-checkpoint thread: studio model + widget in {seconds:.2f} s")
    studio = box.ui.studio
    assert len(studio.history) == 1000 and studio.pages == 34
    assert box.ui.lineage.svg.count('class="node"') == 31  # 30 checkpoints + the fold
    assert '970 older checkpoint(s)' in studio.lineage_dot()
    box.ui.older.click()
    assert "c969" in box.ui.table.value and "c999" not in box.ui.table.value
