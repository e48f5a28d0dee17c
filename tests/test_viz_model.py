"""What the viewers show for one rich thread (Send, error, interrupt, subgraph, fork), on every
runtime x saver: the history model, the lineage DOT, the version table, the versions_seen matrix,
the player frames and the topology. The expected facts are LangGraph's own behaviour."""

from __future__ import annotations

import operator
import uuid
from types import SimpleNamespace
from typing import Annotated

import pytest

from lgcheckpoint.viz import (ChannelVersionTable, GraphDrawing, LineageGraph, SuperStepPlayer,
                              VersionsSeenMatrix, load_history)
from lgcheckpoint.viz import palette
from lgcheckpoint.viz.history import version_number
from lgcheckpoint.viz.lineage import SELECTED_COLOUR
from tests.viz_helpers import COMBOS, open_saver, run_full, run_until_interrupt, runtime


@pytest.fixture(params=COMBOS, ids=[f"{rt}-{kind}" for rt, kind in COMBOS])
def saver_for(request, sqlite_path):
    """(runtime namespace, an open saver of that runtime's own package)."""
    rt_name, kind = request.param
    rt = runtime(rt_name)
    uri = request.getfixturevalue("postgres_uri") if kind == "postgres" else None
    with open_saver(rt_name, kind, sqlite_path, uri) as saver:
        yield rt, saver


@pytest.fixture
def full(saver_for):
    return run_full(*saver_for)


def test_version_number_takes_the_integer_part():
    assert version_number("00000000000000000000000000000007.0.123") == 7
    assert version_number(3) == 3 and version_number(None) == 0


def test_history_steps_parents_branches(full):
    h = load_history(full.saver, full.config)
    assert [s.key for s in h.steps] == [f"c{i}" for i in range(7)]
    assert [s.step for s in h.steps] == [-1, 0, 1, 2, 3, 4, 2]
    assert [s.source for s in h.steps] == ["input"] + ["loop"] * 5 + ["update"]
    assert [s.parent for s in h.steps] == [None, "c0", "c1", "c2", "c3", "c4", "c2"]
    assert [s.branch for s in h.steps] == [0, 0, 0, 1, 1, 1, 0]  # branch 0 ends at the head
    assert h.head.key == "c6" and h["c2"].children == ["c3", "c6"]


def test_history_writes_grouped_by_task_and_kind(full):
    h = load_history(full.app, full.config)  # with the graph: task names from get_state
    c2 = h["c2"]
    assert sorted(t.name for t in c2.tasks) == ["work", "work"]
    failed = [t for t in c2.tasks if t.errors]
    assert len(failed) == 1 and "flaky worker" in str(failed[0].errors[0])
    assert failed[0].regular  # it was retried: its successful writes are saved beside the error
    review = [t for t in h["c3"].tasks if t.name == "review"][0]
    assert [i.value for i in review.interrupts] == [{"items": ["t0", "t1"]}]
    assert review.resumes and ("verdict", "approve") in review.regular


def test_history_triggers_and_next(full):
    for source in (full.app, full.saver):  # with a graph, and inferred from versions_seen alone
        h = load_history(source, full.config)
        assert h["c0"].next == ["__start__"] and h["c1"].next == ["plan"]
        assert h["c2"].next == ["work", "work"]  # two Send packets, no PULL trigger
        assert h["c3"].triggered["review"][0].channel == "branch:to:review"
        assert h["c3"].triggered["review"][0].seen == 0
        assert h["c5"].next == [] and h["c6"].next == ["work", "work"]
        assert h["c3"].updated_channels == ["branch:to:review", "items"]
        assert "topic" in h["c6"].updated_channels  # update_state: derived from the parent diff


@pytest.mark.lesson("11_subgraphs")
def test_subgraph_namespace_and_cluster(saver_for):
    run = run_full(*saver_for, subgraph=True)
    h = load_history(run.saver, run.config)
    assert len(h) == 7 and "polish" in h.node_triggers
    (ns, sub), = h.subgraphs.items()
    assert ns.startswith("polish:")
    assert [s.source for s in sub.steps] == ["input", "loop", "loop"]
    assert sub.steps[-1].values["verdict"] == "approve!"
    assert sub.steps[0].metadata["parents"] == {"": h["c4"].checkpoint_id}
    dot = LineageGraph(run.app, run.config).dot
    assert '  subgraph cluster_s0 {\n    label="subgraph polish";' in dot
    assert "  c4 -> s0c0 [style=dotted];" in dot and "    s0c1 -> s0c2;" in dot
    assert LineageGraph(run.app, run.config, subgraphs=False).dot.count("cluster") == 0
    lineage = LineageGraph(run.app, run.config, selected="s0c1")
    assert lineage.svg().count('class="node"') == 7 + 3
    # a subgraph's checkpoints are named after it and never drawn as a second HEAD
    assert '    s0c1 [label="polish.c1  step 0  loop' in lineage.dot
    assert SELECTED_COLOUR in lineage.dot
    assert lineage.dot.count("HEAD") == 1 and '[label="c0  ' not in lineage.dot.split("cluster")[1]
    assert lineage.details("s0c2").startswith("c2: step 1, source loop")


def test_lineage_dot(full):
    dot = LineageGraph(full.app, full.config).dot
    assert dot == LineageGraph(full.saver, full.config).dot  # task names may differ: not in labels
    # the dashed edge starts the newer branch (c6, the update), as chapter 09 says; the old
    # child keeps a solid edge, labelled with the branch number it has now
    assert "  c2 -> c3 [label=\"branch 1\"];" in dot
    assert "  c2 -> c6 [style=dashed, label=\"branch 0\"];" in dot and "cluster" not in dot
    assert 'c2 [label="c2  step 1  loop\\nupdated: __pregel_tasks, items\\nnext: work, work\\n' \
           'ERROR in work (retried ok): ' in dot and f'color="{palette.STRONG_RED}"' in dot
    assert 'c3 [label="c3  step 2  loop\\nupdated: branch:to:review, items\\nnext: review\\n' \
           f'INTERRUPT in review", fillcolor="{palette.GREY}", ' \
           f'color="{palette.STRONG_ORANGE}"' in dot
    assert 'c6 [label="HEAD  c6  step 2  update' in dot and f'fillcolor="{palette.GREEN}"' in dot
    assert full.config["configurable"]["thread_id"] not in dot
    for step in load_history(full.saver, full.config).steps:  # never raw uuids in the drawing
        assert step.checkpoint_id not in dot


def test_lineage_svg_and_details(full):
    lineage = LineageGraph(full.app, full.config, selected="c3")
    svg = lineage.svg()
    assert svg.startswith("<svg") and svg.count('class="node"') == 7
    assert f'color="{SELECTED_COLOUR}", penwidth=4' in lineage.dot  # the selected checkpoint
    details = lineage.details("c3")
    assert "next: review  because branch:to:review 4 > seen 0" in details
    assert "INTERRUPT Interrupt({'items': ['t0', 't1']})" in details
    assert repr(lineage) == f"LineageGraph(thread {full.config['configurable']['thread_id']!r}: " \
                            "7 checkpoints, 2 branches, head c6)"


def test_channel_version_table(full):
    table = ChannelVersionTable(full.saver, full.config)
    assert [s.key for s in table.rows] == [f"c{i}" for i in range(7)]
    assert table.channels[:4] == ["items", "topic", "verdict", "__start__"]
    assert [table.cell(k, "items") for k in ("c0", "c1", "c2", "c3")] == [None, 2, 3, 4]
    assert ("c3", "items") in table.changed and ("c3", "topic") not in table.changed
    assert ("c6", "topic") in table.changed  # compared with its parent c2, not with row c5
    html = table._repr_html_()
    assert html.count('class="changed"') == len(table.changed)
    values = ChannelVersionTable(full.saver, full.config, show="values")
    assert values.cell("c5", "verdict") == "approve!"
    assert "&#x27;approve!&#x27;" in values._repr_html_()
    with pytest.raises(ValueError, match="versions"):
        ChannelVersionTable(full.saver, full.config, show="bytes")


@pytest.mark.lesson("04_versions_seen")
def test_versions_seen_matrix(full):
    m = VersionsSeenMatrix(full.app, full.config, key="c3")
    assert m.nodes == ["__start__", "plan", "polish", "review", "work"]
    assert m.seen["plan"]["branch:to:plan"] == 2 and m.current["branch:to:plan"] == 3
    assert m.seen["review"]["branch:to:review"] is None and m.current["branch:to:review"] == 4
    assert m.fires == {("review", "branch:to:review")}  # why next == [review]
    assert ("plan", "branch:to:plan") in m.behind - m.fires  # moved, but holds no value
    assert m.colour("review", "branch:to:review") == palette.RED  # "red = fires"
    assert m.colour("plan", "branch:to:plan") == palette.ORANGE
    assert m.text().splitlines()[0] == "c3 step 2: next = review"
    assert "review     branch:to:review=0/4!" in m.text()


@pytest.mark.lesson("01_super_steps")
def test_player_frames(full):
    player = SuperStepPlayer(full.app, full.config, until="c5")
    assert len(player.frames) == 6
    assert player.frames[2].ran == ["plan"] and player.frames[3].ran == ["work", "work"]
    assert ("plan", "work") in player.frames[2].fired
    assert ("work", "review") in player.frames[3].fired
    text = player.frame_text(4)
    assert text.splitlines()[:4] == ["frame 5/6: c4 step 3 (loop)", "ran: review",
                                     "  review wrote verdict = 'approve'",
                                     "  review wrote branch:to:polish = None"]
    assert "moved: verdict 2->5" in text and text.endswith("next: polish")
    dot = player.frame_dot(3)
    assert f'"work" [fillcolor="{palette.YELLOW}"]' in dot  # ran in this step
    assert f'"review" [color="{palette.STRONG_RED}", penwidth=3, fillcolor="{palette.RED}"]' in dot
    assert "INTERRUPT" in player.frame_text(3)
    static = SuperStepPlayer(full.app, full.config, index=3)._repr_mimebundle_()
    assert static["text/plain"] == "SuperStepPlayer(4 frames, showing 4)"
    assert static["image/svg+xml"].startswith("<svg") and "frame 4/4: c6 step 2 (update)" in \
        static["image/svg+xml"]
    assert static["image/png"][:8] == b"\x89PNG\r\n\x1a\n"
    head = SuperStepPlayer(full.saver, full.config)  # no graph: topology from the writes
    assert [f.step.key for f in head.frames] == ["c0", "c1", "c2", "c6"]
    assert ("work", "review", False) in head.topology.edges


def test_graph_drawing(full):
    drawing = GraphDrawing(full.app)
    assert repr(drawing) == "GraphDrawing(6 nodes, 5 edges)"
    assert '"plan" -> "work" [style=dashed];' in drawing.dot
    assert drawing._repr_mimebundle_()["image/svg+xml"].startswith("<svg")


def test_dot_is_deterministic_across_savers_and_runtimes(saver_for, sqlite_path):
    rt, saver = saver_for
    run = run_until_interrupt(rt, saver)
    from langgraph.checkpoint.memory import InMemorySaver

    reference = run_until_interrupt(runtime("langgraph"), InMemorySaver())
    ours = LineageGraph(run.saver, run.config)
    theirs = LineageGraph(reference.saver, reference.config)
    assert ours.dot == theirs.dot  # same graph + input -> the very same text on any saver/runtime
    for show in ("versions", "values"):
        assert ChannelVersionTable(run.saver, run.config, show=show)._repr_html_() == \
            ChannelVersionTable(reference.saver, reference.config, show=show)._repr_html_()


@pytest.mark.lesson("10_failures")
def test_error_that_stopped_the_run(saver_for):
    rt, saver = saver_for
    from tests.viz_helpers import build_review_graph

    app = build_review_graph(rt, saver, {"failures": 99})
    config = {"configurable": {"thread_id": f"failed-{uuid.uuid4().hex[:8]}"}}
    with pytest.raises(ValueError):
        app.invoke({"topic": "t", "items": [], "verdict": ""}, config)
    h = load_history(app, config)
    # both Send tasks fail; ours saves both errors, LangGraph's runner stops waiting once one
    # fails, so whether the other's error is saved too depends on which thread ends first
    errors = len(h.head.errors)
    assert h.head.key == "c2" and (errors == 2 if rt.name == "lgcheckpoint" else errors in (1, 2))
    dot = LineageGraph(app, config).dot
    assert "ERROR in work: " in dot and "retried" not in dot


def join_graph(rt, saver):
    """a and b in parallel, then c waits for both (a join:a+b:c channel)."""
    from typing_extensions import TypedDict

    class Log(TypedDict):
        log: Annotated[list, operator.add]

    g = rt.StateGraph(Log)
    for name in "abc":
        g.add_node(name, lambda s, name=name: {"log": [name]})
    g.add_edge(rt.START, "a")
    g.add_edge(rt.START, "b")
    g.add_edge(["a", "b"], "c")
    g.add_edge("c", rt.END)
    return g.compile(checkpointer=saver, interrupt_before=["c"])


@pytest.mark.lesson("04_versions_seen")
def test_next_agrees_with_the_graphs_get_state(saver_for):
    """Oracle: each checkpoint's next == graph.get_state(its config).next; at the head, the tasks
    still waiting == graph.get_state(thread).next (LangGraph drops the ones that saved writes)."""
    rt, saver = saver_for
    runs = [run_full(rt, saver, subgraph=True)]
    app = join_graph(rt, saver)
    config = {"configurable": {"thread_id": f"join-{uuid.uuid4().hex[:8]}"}}
    app.invoke({"log": []}, config)  # stops before c
    runs.append(SimpleNamespace(app=app, config=config))
    half = run_until_interrupt(rt, saver)  # the head is review's interrupt
    runs.append(half)
    for run in runs:
        for source in (run.app, run.app.checkpointer):  # with the graph, and saver-only
            history = load_history(source, run.config)
            for step in history.steps:
                expected = sorted(run.app.get_state(step.config).next)
                assert sorted(step.next) == expected, (step.key, step.next)
            assert sorted(history.head.waiting) == sorted(run.app.get_state(run.config).next)
    joined = load_history(app, config)
    assert joined.head.next == ["c"] and joined.head.triggered["c"][0].channel == "join:a+b:c"
    assert "join:a+b:c" in joined.node_triggers["c"]


def test_waiting_drops_tasks_that_finished(saver_for):
    """Two parallel nodes; one finishes, one interrupts: only the interrupted one is waiting."""
    rt, saver = saver_for
    from typing_extensions import TypedDict

    class Votes(TypedDict, total=False):
        a: str
        b: str

    g = rt.StateGraph(Votes)
    g.add_node("ask", lambda s: {"a": rt.interrupt("vote?")})
    g.add_node("count", lambda s: {"b": "counted"})
    g.add_edge(rt.START, "ask")
    g.add_edge(rt.START, "count")
    app = g.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": f"half-{uuid.uuid4().hex[:8]}"}}
    app.invoke({}, config)
    head = load_history(app, config).head
    assert head.next == ["ask", "count"] and head.waiting == ["ask"]
    assert list(app.get_state(config).next) == ["ask"]
    assert "next: ask, count\\nwaiting: ask\\nINTERRUPT in ask" in LineageGraph(app, config).dot


def test_details_and_frames_are_the_same_text_on_every_saver(saver_for):
    rt, saver = saver_for
    from langgraph.checkpoint.memory import InMemorySaver

    ours = run_full(rt, saver)
    reference = run_full(runtime("langgraph"), InMemorySaver())
    for key in ("c1", "c2", "c3", "c6"):
        assert LineageGraph(ours.app, ours.config).details(key) == \
            LineageGraph(reference.app, reference.config).details(key)
    frames = [SuperStepPlayer(r.app, r.config, until="c5") for r in (ours, reference)]
    texts = [[f.frame_text(i) for i in range(6)] for f in frames[:2]]
    assert texts[0] == texts[1]


@pytest.mark.lesson("09_time_travel")
def test_replay_from_an_old_checkpoint_is_a_new_branch(full):
    c1 = load_history(full.saver, full.config)["c1"]
    full.app.invoke(None, c1.config)  # time travel: LangGraph first copies c1 as a "fork"
    h = load_history(full.app, full.config)
    assert [(s.key, s.step, s.source, s.parent) for s in h.steps[7:]] == [
        ("c7", 1, "fork", "c1"), ("c8", 2, "loop", "c7"), ("c9", 3, "loop", "c8")]
    assert h["c7"].next == ["plan"] and h["c7"].channel_versions == h["c1"].channel_versions
    assert h.head.key == "c9" and h.head.interrupts and h.head.waiting == ["review"]
    assert [s.key for s in h.branch_steps()] == ["c0", "c1", "c7", "c8", "c9"]
    assert len({s.branch for s in h.steps}) == 3
    dot = LineageGraph(h).dot
    assert '  c1 -> c2 [label="branch 1"];' in dot  # the old run, solid: it came first
    assert '  c1 -> c7 [style=dashed, label="branch 0"];' in dot  # the replay: a newer branch
    assert '  c2 -> c3 [label="branch 2"];' in dot
    assert '  c2 -> c6 [style=dashed, label="branch 1"];' in dot
    assert 'c7 [label="c7  step 1  fork' in dot and f'fillcolor="{palette.VIOLET}"' in dot


def handled_graph(rt, saver, crash: list):
    """`bad` always fails; its error handler crashes while `crash` is non-empty, then routes on."""
    from typing_extensions import TypedDict

    class Log(TypedDict):
        log: Annotated[list, operator.add]

    def bad(state):
        raise ConnectionError("down")

    def handler(state):
        if crash:
            raise RuntimeError(crash.pop())
        return rt.Command(update={"log": ["handled"]}, goto="after")

    g = rt.StateGraph(Log)
    g.add_node("bad", bad, error_handler=handler)
    g.add_node("after", lambda s: {"log": ["after"]})
    g.add_edge(rt.START, "bad")
    g.add_edge("after", rt.END)
    return g.compile(checkpointer=saver)


@pytest.mark.lesson("10_failures")
def test_a_handled_error_names_its_source_and_its_handler(saver_for):
    """__error_source_node__ is not a channel write: the viewers say the error was handled, and
    the handler's task (its id derives from the failed task's) is named after the handler."""
    rt, saver = saver_for
    app = handled_graph(rt, saver, crash=["handler crashed"])
    config = {"configurable": {"thread_id": f"handled-{uuid.uuid4().hex[:8]}"}}
    with pytest.raises(RuntimeError):
        app.invoke({"log": []}, config)
    head = load_history(app, config).head
    failed, = [t for t in head.tasks if t.name == "bad"]
    assert failed.error_source == "bad" and failed.regular == [] and len(failed.errors) == 1
    assert [t.name for t in head.tasks] == ["__error_handler__bad", "bad"]
    assert head.waiting == ["bad"]  # as get_state's next: the step has not finished
    lineage = LineageGraph(app, config)
    assert "ERROR in bad (handled): " in lineage.dot
    assert "HANDLED, __error_source_node__ = 'bad'" in lineage.details(head.key)
    assert app.invoke(None, config) == {"log": ["handled", "after"]}
    player = SuperStepPlayer(app, config)
    index = len(player.frames) - 2  # the step the handler finished
    frame = player.frames[index]
    assert frame.ran == ["__error_handler__bad", "bad"] and frame.handled == ["bad"]
    assert "  bad failed: its error went to its handler" in player.frame_text(index)
    assert [(t, c) for t, c, _ in frame.writes] == [("__error_handler__bad", "log"),
                                                    ("__error_handler__bad", "branch:to:after")]
