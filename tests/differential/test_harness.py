"""The harness itself: LangGraph against LangGraph compares equal (nothing random survives the
normaliser), and a deliberately different run compares unequal (the comparison can fail)."""

import pytest
from hypothesis import given, settings

from tests.differential.harness import Normaliser, assert_same, record
from tests.differential.libs import LANGGRAPH, Lib
from tests.differential.scenarios_loop import LOOP, linear_chain, thread, two_step_graph
from tests.differential.scenarios_interrupts import INTERRUPTS
from tests.differential.test_random_graphs import COMMON, graph_specs, scenario_for

ALL = {**LOOP, **INTERRUPTS}


@pytest.mark.parametrize("name", list(ALL))
def test_langgraph_equals_itself(name):
    assert_same(
        name, record(ALL[name], LANGGRAPH), record(ALL[name], LANGGRAPH), "langgraph", "langgraph"
    )


def one_more_update(lib):
    linear_chain(lib)
    graph = two_step_graph(lib)
    lib.update_state(graph, thread(), {"n": 1}, as_node="a")


def test_a_different_run_compares_unequal():
    with pytest.raises(
        pytest.fail.Exception, match=r"scenario linear_chain: .*differ(.|\n)*\+## update_state"
    ):
        assert_same(
            "linear_chain", record(linear_chain, LANGGRAPH), record(one_more_update, LANGGRAPH)
        )


def test_placeholders_keep_id_equality():
    a, b = "1ef4f797-8335-6428-8001-8a1503f9b875", "1ef4f797-8335-6428-8002-8a1503f9b875"
    same, other = Normaliser()([a, a]), Normaliser()([a, b])
    assert same == ["<id1>", "<id1>"] and other == ["<id1>", "<id2>"]


def test_versions_keep_only_their_integer_part():
    norm = Normaliser()
    assert norm("00000000000000000000000000000003.0.5184734598473") == 3
    assert norm("42") == "42"  # an ordinary digit string stays a string


def test_missing_ours_module_fails_instead_of_skipping():
    with pytest.raises(
        AssertionError, match=r"\[ours\] cannot import StateGraph from lgcheckpoint_gone.graph"
    ):
        Lib("ours", "lgcheckpoint_gone").StateGraph  # noqa: B018 - the import is the test


def test_library_wording_and_config_internals_are_not_compared():
    norm = Normaliser()
    assert (
        norm("InvalidUpdateError('Expected dict, got x\nsee the docs')")
        == "InvalidUpdateError(...)"
    )
    assert norm("ValueError('boom')") == "ValueError('boom')"  # a node's own error keeps its text
    config = {"configurable": {"thread_id": "t", "__pregel_checkpointer": object()}}
    assert norm(config) == {"configurable": {"thread_id": "t"}}
    assert norm({"__pregel_tasks": [1]}) == {"__pregel_tasks": [1]}  # a channel, not a config


@settings(COMMON, max_examples=15)
@given(graph_specs())
def test_random_graphs_on_langgraph_equal_themselves(spec):
    scenario = scenario_for(spec)
    assert_same("random graph", record(scenario, LANGGRAPH), record(scenario, LANGGRAPH))
