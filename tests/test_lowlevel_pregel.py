"""The low-level API: NodeBuilder, PregelNode and Pregel(...) built by hand (pregel/builder.py,
pregel/validate.py), and finding the graphs a node runs (pregel/detect.py)."""

import asyncio
import operator

import pytest

from lgcheckpoint.channels import BinaryOperatorAggregate, EphemeralValue, LastValue, Topic
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.pregel import ChannelWriteEntry, NodeBuilder, Pregel, PregelNode
from lgcheckpoint.pregel.builder import SKIP_WRITE
from lgcheckpoint.pregel.detect import graphs_called

CFG = {"configurable": {"thread_id": "1"}}


def doubler(**kw) -> Pregel:
    node = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    return Pregel(nodes={"double": node}, channels={"a": EphemeralValue(str), "b": LastValue(str)},
                  input_channels="a", output_channels="b", **kw)


def test_one_input_channel_takes_the_value_one_output_channel_returns_one():
    assert doubler().invoke("foo") == "foofoo"
    assert doubler().invoke("foo", output_keys=["b"]) == {"b": "foofoo"}


def test_input_channels_as_a_list_take_a_dict_and_refuse_anything_else():
    node = NodeBuilder().subscribe_to("a", "b").do(lambda d: d["a"] * d["b"]).write_to("c")
    app = Pregel(nodes={"n": node}, channels={k: LastValue(int) for k in "abc"},
                 input_channels=["a", "b"], output_channels=["c"])
    assert app.invoke({"a": 3, "b": 4}) == {"c": 12}
    with pytest.raises(TypeError, match="dict"):
        app.invoke(3)


def test_write_to_keywords_write_a_value_or_map_the_result():
    node = NodeBuilder().subscribe_only("x").do(lambda x: x + 1).write_to(
        "out", fixed=5, plus_one=lambda r: r + 1)
    app = Pregel(nodes={"n": node}, channels={k: LastValue(int) for k in
                                              ("x", "out", "fixed", "plus_one")},
                 input_channels="x", output_channels=["out", "fixed", "plus_one"])
    assert app.invoke(2) == {"out": 3, "fixed": 5, "plus_one": 4}


def test_skip_none_stops_a_cycle_and_skip_write_writes_nothing():
    grow = NodeBuilder().subscribe_only("v").do(lambda v: v + v if len(v) < 10 else None)
    grow.write_to(ChannelWriteEntry("v", skip_none=True),
                  ChannelWriteEntry("never", mapper=lambda _: SKIP_WRITE))
    app = Pregel(nodes={"grow": grow}, channels={"v": EphemeralValue(str), "never": LastValue(str)},
                 input_channels="v", output_channels=["v", "never"])
    assert app.invoke("a") == {"v": "aaaaaaaaaaaaaaaa"}


def test_a_node_returning_none_writes_none_and_a_reader_of_none_still_runs():
    first = NodeBuilder().subscribe_only("a").do(lambda _: None).write_to("b")
    second = NodeBuilder().subscribe_only("b").do(lambda b: f"saw {b}").write_to("c")
    app = Pregel(nodes={"first": first, "second": second},
                 channels={k: LastValue(object) for k in "abc"},
                 input_channels="a", output_channels="c")
    assert app.invoke(1) == "saw None"


def test_do_twice_chains_and_read_from_adds_an_input_that_does_not_trigger():
    node = (NodeBuilder().subscribe_to("x").read_from("k").do(lambda d: d["x"] * d["k"])
            .do(str).write_to("out"))
    app = Pregel(nodes={"n": node}, channels={"x": LastValue(int), "k": LastValue(int),
                                              "out": LastValue(str)},
                 input_channels=["x", "k"], output_channels="out")
    assert app.invoke({"x": 3, "k": 7}) == "21"
    assert app.nodes["n"].triggers == ["x"] and app.nodes["n"].channels == ["x", "k"]


def test_topic_collects_the_step_and_binop_reduces():
    one = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b", "c")
    two = NodeBuilder().subscribe_only("b").do(lambda x: x + x).write_to("c")
    for chan, expected in ((Topic(str, accumulate=True), ["foofoo", "foofoofoofoo"]),
                           (BinaryOperatorAggregate(str, operator.add), "foofoo" + "foofoofoofoo")):
        app = Pregel(nodes={"one": one, "two": two},
                     channels={"a": EphemeralValue(str), "b": EphemeralValue(str), "c": chan},
                     input_channels="a", output_channels="c")
        assert app.invoke("foo") == expected


def test_checkpoints_state_and_update_state_through_the_writers():
    app = doubler(checkpointer=InMemorySaver())
    assert app.invoke("x", CFG) == "xx"
    assert app.get_state(CFG).values == {"b": "xx"}
    app.update_state(CFG, "yy", as_node="double")
    assert app.get_state(CFG).values == {"b": "yy"}
    assert [s.metadata["source"] for s in app.get_state_history(CFG)] == [
        "update", "loop", "input"]
    assert list(app.stream("z", CFG)) == [{"b": "zz"}]  # a Pregel's default mode: "values"


def test_async_run():
    async def double(x):
        return x + x

    node = NodeBuilder().subscribe_only("a").do(double).write_to("b")
    app = Pregel(nodes={"n": node}, channels={"a": EphemeralValue(str), "b": LastValue(str)},
                 input_channels="a", output_channels="b")
    assert asyncio.run(app.ainvoke("ab")) == "abab"


def test_a_compiled_graph_as_a_node_runs_as_its_subgraph():
    inner = doubler()
    node = NodeBuilder().subscribe_only("x").do(inner).write_to("y")
    app = Pregel(nodes={"inner": node}, channels={"x": LastValue(str), "y": LastValue(str)},
                 input_channels="x", output_channels="y")
    assert app.invoke("q") == "qq"
    assert app.nodes["inner"].subgraphs == [inner]


def test_a_builder_serves_two_graphs_under_two_names():
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    chans = {"a": LastValue(int), "b": LastValue(int)}
    first = Pregel(nodes={"p": node}, channels=chans, input_channels="a", output_channels="b")
    second = Pregel(nodes={"q": node}, channels=chans, input_channels="a", output_channels="b")
    assert isinstance(first.nodes["p"], PregelNode)
    assert (first.nodes["p"].name, second.nodes["q"].name) == ("p", "q")


@pytest.mark.parametrize("change, message", [
    ({"input_channels": "nope"}, "Input channel 'nope' not in known channels"),
    ({"output_channels": "nope"}, "Output channel 'nope' not in known channels"),
    ({"interrupt_before_nodes": ["ghost"]}, "Node ghost not in nodes"),
    ({"channels": {"a": LastValue(str)}}, "Node double reads channel 'b'|Output channel 'b'"),
    ({"input_channels": "b"}, "None of the input channels b is subscribed to"),
])
def test_wiring_mistakes_fail_at_construction(change, message):
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    kwargs = {"nodes": {"double": node}, "channels": {"a": LastValue(str), "b": LastValue(str)},
              "input_channels": "a", "output_channels": "b", **change}
    with pytest.raises(ValueError, match=message):
        Pregel(**kwargs)


def test_unimplemented_options_are_refused_by_name():
    with pytest.raises(TypeError, match="trigger_to_nodes"):
        doubler(trigger_to_nodes={})
    with pytest.raises(ValueError, match="single channel"):
        NodeBuilder().subscribe_only("a").subscribe_to("b")
    with pytest.raises(TypeError, match="expected a NodeBuilder"):
        Pregel(nodes={"n": lambda x: x}, channels={"a": LastValue(int)}, input_channels="a",
               output_channels="a")


def test_low_level_input_and_output_schemas():
    app = doubler()
    assert app.input_schema.model_json_schema() == {"title": "LangGraphInput", "type": "string"}
    assert app.get_output_jsonschema() == {"title": "LangGraphOutput", "type": "string"}


SUB = doubler()


class Box:
    def __init__(self, payload):
        self.payload = payload


HOLDER = Box(Box(SUB))
GRAPHS = [SUB]


def test_subgraphs_are_found_through_closures_globals_and_attribute_chains():
    captured = doubler()

    def closure(x):
        return captured.invoke(x)

    def chain(x):
        return HOLDER.payload.payload.invoke(x)

    def subscript(x):
        return GRAPHS[0].invoke(x)

    def nested_global(x):
        def inner():
            return SUB.invoke(x)
        return inner()

    assert graphs_called(closure) == [captured]
    assert graphs_called(chain) == [SUB]
    assert graphs_called(subscript) == [] and graphs_called(nested_global) == []
    assert graphs_called(len) == []


def test_state_graph_nodes_report_their_subgraphs():
    def call_sub(state):
        return {"log": SUB.invoke("a")}

    g = StateGraph(dict)
    g.add_node("n", call_sub)
    g.add_edge(START, "n")
    g.add_edge("n", END)
    assert g.compile().nodes["n"].subgraphs == [SUB]
    assert g.nodes["n"].runnable.func is call_sub


def test_a_graph_in_a_chain_of_do_steps_is_the_nodes_subgraph():
    inner = doubler()
    node = NodeBuilder().subscribe_only("x").do(str.lower).do(inner).write_to("y")
    app = Pregel(nodes={"n": node}, channels={"x": LastValue(str), "y": LastValue(str)},
                 input_channels="x", output_channels="y")
    assert app.invoke("AB") == "abab"
    assert app.nodes["n"].subgraphs == [inner]
