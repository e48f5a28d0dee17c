"""Graphs built with the low-level API (NodeBuilder + Pregel), whole histories against LangGraph."""

import operator

import pytest

from tests.differential.harness import Run, assert_same, record, registry
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.scenarios_loop import thread

CAUSES, scenario = registry()


def join_graph(lib: Run, **kw):
    """Two nodes publish to a Topic; a third reads all of it in the next step."""
    one = lib.NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("inbox")
    two = lib.NodeBuilder().subscribe_only("input").do(lambda x: x * 10).write_to("inbox")
    total = lib.NodeBuilder().subscribe_only("inbox").do(sorted).write_to(
        "output", count=lambda found: len(found or ()))  # None-safe: LangGraph draws by a
    # dry run that hands every mapper None
    return lib.Pregel(
        nodes={"one": one, "two": two, "total": total},
        channels={"input": lib.LastValue(int), "inbox": lib.Topic(int),
                  "output": lib.LastValue(list), "count": lib.LastValue(int)},
        input_channels="input", output_channels=["output", "count"],
        checkpointer=lib.saver(), **kw)


@scenario
def lowlevel_join_two_runs_and_history(lib: Run):
    graph = join_graph(lib)
    cfg = thread()
    lib.invoke(graph, 2, cfg)
    lib.invoke(graph, 3, cfg)
    lib.stream(graph, 4, cfg, stream_mode="values")  # (updates of parallel tasks: any order)
    lib.get_state(graph, cfg)
    lib.history(graph, cfg)
    lib.note("mermaid", graph.get_graph().draw_mermaid())


@scenario
def lowlevel_update_state_writes_through_the_nodes_writers(lib: Run):
    graph = join_graph(lib)
    cfg = thread()
    lib.invoke(graph, 2, cfg)
    lib.update_state(graph, cfg, [7, 8], as_node="total")  # writes output and count=len
    lib.update_state(graph, cfg, 5, as_node="one")  # inbox gets 5: "total" runs next
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)
    lib.history(graph, cfg)


@scenario
def lowlevel_interrupt_before_then_resume(lib: Run):
    graph = join_graph(lib, interrupt_before_nodes=["total"])
    cfg = thread()
    lib.invoke(graph, 2, cfg)
    lib.get_state(graph, cfg)
    lib.stream(graph, None, cfg, stream_mode="updates")  # only "total" runs
    lib.history(graph, cfg)


def cycle_graph(lib: Run):
    """input_channels as a list takes a dict; a node that writes what it reads loops."""
    grow = lib.NodeBuilder().subscribe_to("value").read_from("step").do(
        lambda d: d["value"] + d["step"]).write_to(
        value=lambda v: v if v < 20 else None)
    log = lib.NodeBuilder().subscribe_only("value").do(lambda v: [v]).write_to("log")
    return lib.Pregel(
        nodes={"grow": grow, "log": log},
        channels={"value": lib.EphemeralValue(int), "step": lib.LastValue(int),
                  "log": lib.BinaryOperatorAggregate(list, operator.add)},
        input_channels=["value", "step"], output_channels="log",
        checkpointer=lib.saver())


@scenario
def lowlevel_dict_input_and_a_cycle(lib: Run):
    graph = cycle_graph(lib)
    cfg = thread()
    lib.invoke(graph, {"value": 1, "step": 6}, cfg)
    lib.stream(graph, {"value": 2}, cfg)  # LangGraph's low-level default: stream_mode="values"
    lib.history(graph, cfg)  # (not drawn: LangGraph 1.2.24's get_graph fails on this graph)


@scenario
def lowlevel_one_node_with_metadata_and_interrupt_after(lib: Run):
    node = lib.NodeBuilder().subscribe_only("a").do(lambda x: x * 2).write_to("b").meta(
        "tagged", note="doubles")
    graph = lib.Pregel(nodes={"double": node}, channels={"a": lib.LastValue(int),
                                                         "b": lib.LastValue(int)},
                       input_channels="a", output_channels="b", checkpointer=lib.saver(),
                       interrupt_after_nodes=["double"])
    cfg = thread()
    lib.stream(graph, 21, {**cfg, "metadata": {"run": "first"}, "tags": ["t"]},
               stream_mode="tasks")  # a task event carries the run's and the node's metadata
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)
    lib.update_state(graph, cfg, 1)  # as_node inferred: the one node
    lib.history(graph, cfg)
    lib.note("mermaid", graph.get_graph().draw_mermaid())


@scenario
def lowlevel_node_runs_a_state_graph_that_interrupts(lib: Run):
    """A compiled StateGraph as a low-level node: its interrupt, state and resume."""
    from typing_extensions import TypedDict

    class Inner(TypedDict):
        text: str

    def ask(state: Inner):
        return {"text": state["text"] + "/" + lib.interrupt("more?")}

    g = lib.StateGraph(Inner)
    g.add_node("ask", ask)
    g.add_edge(lib.START, "ask")
    inner = g.compile()
    outer = lib.NodeBuilder().subscribe_only("q").do(lambda q: {"text": q}).do(inner).write_to(
        a=lambda state: state["text"])
    graph = lib.Pregel(nodes={"outer": outer}, channels={"q": lib.LastValue(str),
                                                         "a": lib.LastValue(str)},
                       input_channels="q", output_channels="a", checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, "hi", cfg)
    lib.get_state(graph, cfg, subgraphs=True)
    lib.invoke(graph, lib.Command(resume="yes"), cfg)
    lib.history(graph, cfg)


@scenario
def lowlevel_bulk_update_state_and_a_send(lib: Run):
    """Supersteps of updates written through the nodes' writers; a node that sends packets."""
    fan = lib.NodeBuilder().subscribe_only("items").do(lambda items: items).write_to(
        lib.Send("each", 1), lib.Send("each", 2))
    each = lib.NodeBuilder().do(lambda x: x * 100).write_to("got")
    graph = lib.Pregel(nodes={"fan": fan, "each": each},
                       channels={"items": lib.LastValue(list), "got": lib.Topic(int,
                                                                               accumulate=True)},
                       input_channels="items", output_channels="got", checkpointer=lib.saver())
    cfg = thread()
    lib.invoke(graph, [1], cfg)
    lib.bulk_update_state(graph, cfg, [[lib.StateUpdate([5], "fan")],
                                       [lib.StateUpdate(7, "each"), lib.StateUpdate(8, "each")]])
    lib.get_state(graph, cfg)
    lib.history(graph, cfg)


@pytest.mark.parametrize("name", list(CAUSES))
def test_same_as_langgraph(name):
    assert_same(name, record(CAUSES[name], LANGGRAPH), record(CAUSES[name], OURS))
