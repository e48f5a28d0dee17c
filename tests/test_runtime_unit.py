"""Unit tests of the runtime: builder, loop, checkpoints, state API (LangGraph is compared in tests/differential)."""

import operator
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import END, START, StateGraph


class State(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def chain(checkpointer=None, **compile_kwargs):
    g = StateGraph(State)
    g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile(checkpointer=checkpointer, **compile_kwargs)


def test_invoke_without_checkpointer():
    assert chain().invoke({"x": 1}) == {"x": 2, "log": ["a", "b"]}


def test_invoke_writes_one_checkpoint_per_step():
    saver = InMemorySaver()
    cfg = {"configurable": {"thread_id": "t"}}
    assert chain(saver).invoke({"x": 1}, cfg) == {"x": 2, "log": ["a", "b"]}
    history = list(saver.list(cfg))
    assert [t.metadata["step"] for t in history] == [2, 1, 0, -1]
    assert [t.metadata["source"] for t in history] == ["loop", "loop", "loop", "input"]
    assert history[0].checkpoint["channel_values"] == {"x": 2, "log": ["a", "b"]}
