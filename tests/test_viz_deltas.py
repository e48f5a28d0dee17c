"""The viewers show a DeltaChannel as it is stored: a snapshot every N updates, in between a
DeltaView naming the snapshot and the writes a load replays; on LangGraph's database too."""

from typing import Annotated

import pytest
from typing_extensions import TypedDict

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.cli import main as cli_main
from lgcheckpoint.viz import load_history
from lgcheckpoint.viz.deltas import DeltaView, is_snapshot


def extend(state, writes):
    return [*state, *(item for write in writes for item in write)]


def counting_graph(graph_mod, channels_mod, saver):
    class State(TypedDict):
        messages: Annotated[list, channels_mod.DeltaChannel(extend, snapshot_frequency=3)]
        n: int

    g = graph_mod.StateGraph(State)
    g.add_node("a", lambda s: {"messages": [s["n"]], "n": s["n"] + 1})
    g.add_edge(graph_mod.START, "a")
    g.add_conditional_edges("a", lambda s: "a" if s["n"] < 7 else graph_mod.END)
    return g.compile(checkpointer=saver)


def test_history_shows_snapshots_and_rebuilt_values():
    from lgcheckpoint import channels, graph

    saver, cfg = InMemorySaver(), {"configurable": {"thread_id": "t"}}
    app = counting_graph(graph, channels, saver)
    app.invoke({"messages": ["hi"], "n": 0}, cfg)
    history = load_history(saver, cfg, graph=app)
    shown = [s.values.get("messages") for s in history.steps]
    assert [is_snapshot(v) for v in shown] == [False, False, False, True, False, False, True,
                                               False, False]
    last = shown[-1]
    assert isinstance(last, DeltaView) and (last.seed, last.writes) == ("c6", 2)
    assert last.value == app.get_state(cfg).values["messages"]  # rebuilt as a load would
    assert repr(last) == "delta (rebuilt: 8 items; snapshot c6 + 2 writes)"
    plain = load_history(saver, cfg).steps[-1].values["messages"]  # no graph: nothing rebuilt
    assert repr(plain) == "delta (snapshot c6 + 2 writes)"


def test_inspect_marks_a_langgraph_database(tmp_path, capsys):
    pytest.importorskip("langgraph")
    from langgraph import channels, graph
    from langgraph.checkpoint.sqlite import SqliteSaver

    path = str(tmp_path / "lg.sqlite")
    with SqliteSaver.from_conn_string(path) as saver:
        counting_graph(graph, channels, saver).invoke({"messages": ["hi"], "n": 0},
                                                      {"configurable": {"thread_id": "t"}})
    assert cli_main(["inspect", path]) == 0
    out = capsys.readouterr().out
    assert "c3   step   2" in out and "[snapshot messages]" in out.splitlines()[5]
    assert "[delta messages: c6+2 writes]" in out.splitlines()[-1]
