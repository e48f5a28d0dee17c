"""Each state key's channel comes from its annotation; Required[...] and NotRequired[...] only say
whether the key must be given, so a reducer inside them still makes a reducing channel, in both
libraries alike."""

import operator
from typing import Annotated

import pytest
from typing_extensions import NotRequired, Required, TypedDict

from tests.differential.libs import LANGGRAPH, OURS


def channel_kinds(lib, total: bool) -> dict[str, str]:
    """The class name of each state key's channel in a graph compiled by `lib`."""

    class State(TypedDict, total=total):
        plain: str
        folded: Required[Annotated[dict, operator.or_]]
        optional_folded: NotRequired[Annotated[list, operator.add]]
        labelled: Annotated[Required[str], "a label, not a reducer"]

    builder = lib.StateGraph(State)
    builder.add_node("n", lambda state: state)
    builder.add_edge(lib.START, "n")
    channels = builder.compile().channels
    return {key: type(channels[key]).__name__ for key in State.__annotations__}


@pytest.mark.parametrize("total", [True, False])
def test_a_reducer_inside_required_or_not_required_folds_writes(total):
    ours = channel_kinds(OURS, total)
    assert ours == channel_kinds(LANGGRAPH, total)
    assert ours["folded"] == ours["optional_folded"] == "BinaryOperatorAggregate"


def test_a_wrapped_reducer_folds_at_run_time():
    """A node's update to a NotRequired[Annotated[list, add]] key is appended, not replaced."""

    class State(TypedDict):
        log: NotRequired[Annotated[list, operator.add]]

    results = []
    for lib in (LANGGRAPH, OURS):
        builder = lib.StateGraph(State)
        builder.add_node("n", lambda state: {"log": ["n"]})
        builder.add_edge(lib.START, "n")
        results.append(builder.compile().invoke({"log": ["input"]}))
    assert results[0] == results[1] == {"log": ["input", "n"]}
