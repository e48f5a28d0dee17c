"""What a conditional edge's function is given, compared with LangGraph.

An edge annotated `def route(state: Sub)` reads Sub's keys (Sub may add private keys to the
graph), whatever its node reads. An edge without such a schema reads its node's keys, plus, for a
dict state, every key of the dict the node returned, even one the state does not have.
"""

import operator
from typing import Annotated

from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class Overall(TypedDict):
    foo: Annotated[int, operator.add]
    bar: str


class Private(TypedDict):
    baz: str


def seen_by_edges(lib) -> tuple[dict, list[tuple[str, dict]]]:
    """Run a graph whose edges record their input; return the result and the records."""
    seen: list[tuple[str, dict]] = []

    def first(state: Overall):
        return {"foo": 1, "baz": "private"}

    def second(state: Private):
        return {"foo": 1, "bar": state["baz"], "not_a_key": "returned"}

    def untyped(state):
        seen.append(("untyped", dict(state)))
        return lib.END

    def overall_route(state: Overall):
        seen.append(("overall", dict(state)))
        return lib.END

    def private_route(state: Private):
        seen.append(("private", dict(state)))
        return "second"

    builder = lib.StateGraph(Overall)
    builder.add_node(first)
    builder.add_node(second)
    builder.add_edge(lib.START, "first")
    builder.add_conditional_edges("first", private_route)
    builder.add_conditional_edges("second", untyped)
    builder.add_conditional_edges("second", overall_route)
    return builder.compile().invoke({"foo": 0}), seen


def test_an_edge_reads_its_own_schema_or_its_nodes_keys_and_update():
    ours = seen_by_edges(OURS)
    assert ours == seen_by_edges(LANGGRAPH)
    result, seen = ours
    assert result == {"foo": 2, "bar": "private"}
    assert dict(seen)["private"] == {"baz": "private"}
    assert dict(seen)["overall"] == {"foo": 2, "bar": "private"}


def test_a_private_key_only_an_edge_reads_becomes_a_channel():
    """Private is added by the edge alone: `first` may write baz, and the edge reads it."""
    routes = []
    for lib in (LANGGRAPH, OURS):
        builder = lib.StateGraph(Overall)
        builder.add_node("first", lambda state: {"foo": 1, "baz": "meow"})

        def route(state: Private):
            routes.append(dict(state))
            return lib.END

        builder.add_edge(lib.START, "first")
        builder.add_conditional_edges("first", route)
        graph = builder.compile()
        assert "baz" in graph.channels
        assert graph.invoke({"foo": 0}) == {"foo": 1}
    assert routes == [{"baz": "meow"}] * 2
