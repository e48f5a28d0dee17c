"""What we refuse that LangGraph accepts: LangGraph's behaviour beside our clear error.

An option accepted and ignored teaches a false thing; these show what LangGraph does with each
(so the refusal hides nothing that works there) and that ours names the option.
"""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated

import pytest
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def one_node_graph(lib, **add_node_options):
    g = lib.StateGraph(Trail)
    g.add_node("a", lambda state: {"trail": ["a"]}, **add_node_options)
    g.add_edge(lib.START, "a")
    return g


def test_messages_stream_mode_without_a_chat_model_streams_nothing_on_both():
    """Without a LangChain chat model "messages" mode emits no chunk at all (it was refused here
    before chat models ran in nodes: pregel/messages_stream.py)."""
    for lib in (LANGGRAPH, OURS):
        graph = one_node_graph(lib).compile()
        assert list(graph.stream({"trail": []}, stream_mode="messages")) == []
        assert list(graph.stream({"trail": []}, stream_mode=["messages", "updates"])) == [
            ("updates", {"a": {"trail": ["a"]}})]


@pytest.mark.parametrize(("where", "call"), [
    ("compile(store=", lambda lib: one_node_graph(lib).compile(store=object())),
])
def test_options_we_do_not_implement_are_refused_by_name(where, call):
    call(LANGGRAPH)  # accepted there
    with pytest.raises(TypeError, match=f"does not implement {where.replace('(', '[(]')}"):
        call(OURS)


def test_an_unknown_option_is_ignored_by_langgraph_and_refused_here():
    call = lambda lib: one_node_graph(lib).compile().invoke({"trail": []}, no_such_option=1)
    assert call(LANGGRAPH) == {"trail": ["a"]}
    with pytest.raises(TypeError, match="no_such_option"):
        call(OURS)


def run_with_unknown_keyword(where: str, lib):
    """Build or run a one-node graph with an unknown keyword at ``where``."""
    if where == "add_node":
        return one_node_graph(lib, no_such_option=1).compile().invoke({"trail": []})
    graph = one_node_graph(lib).compile()
    if where == "stream":
        return list(graph.stream({"trail": []}, no_such_option=1))

    async def chunks():
        return [chunk async for chunk in graph.astream({"trail": []}, no_such_option=1)]

    return asyncio.run(chunks())


@pytest.mark.parametrize("where", ["add_node", "stream", "astream"])
def test_an_unknown_keyword_runs_on_langgraph_and_is_refused_here_by_name(where):
    """LangGraph runs the graph as if the keyword were not there; ours names it and stops."""
    expected = {"trail": ["a"]} if where == "add_node" else [{"a": {"trail": ["a"]}}]
    assert run_with_unknown_keyword(where, LANGGRAPH) == expected
    with pytest.raises(TypeError, match=f"does not implement {where}[(]no_such_option="):
        run_with_unknown_keyword(where, OURS)


def test_an_unknown_compile_keyword_is_an_error_on_both():
    with pytest.raises(TypeError, match="no_such_option"):
        one_node_graph(LANGGRAPH).compile(no_such_option=1)
    with pytest.raises(TypeError, match="no_such_option"):
        one_node_graph(OURS).compile(no_such_option=1)
