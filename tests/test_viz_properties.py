"""Property: on random DAG-shaped graphs (fan-out, fan-in, joins, interrupts before a node), the
history model's ``next`` equals what the graph itself reports (``get_state(config).next``) at every
checkpoint, with the graph and from the saver alone, on LangGraph and on lgcheckpoint."""

from __future__ import annotations

import operator
import uuid
from typing import Annotated

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from lgcheckpoint.viz import LineageGraph, load_history
from tests.viz_helpers import open_saver, runtime


class Log(TypedDict):
    log: Annotated[list, operator.add]


@st.composite
def dags(draw):
    """Nodes n0..nk; edges only go forward; some fan-ins become a join (add_edge([a, b], c))."""
    size = draw(st.integers(2, 5))
    edges, joins = [], []
    for j in range(1, size):
        sources = [i for i in range(j) if draw(st.booleans())] or [j - 1]
        if len(sources) > 1 and draw(st.booleans()):
            joins.append((sources, j))
        else:
            edges += [(i, j) for i in sources]
    pause = draw(st.sampled_from([None, *range(1, size)]))
    return size, edges, joins, pause


def build(rt, saver, size, edges, joins, pause):
    g = rt.StateGraph(Log)
    for i in range(size):
        g.add_node(f"n{i}", lambda s, i=i: {"log": [f"n{i}"]})
    g.add_edge(rt.START, "n0")
    for i, j in edges:
        g.add_edge(f"n{i}", f"n{j}")
    for sources, j in joins:
        g.add_edge([f"n{i}" for i in sources], f"n{j}")
    return g.compile(checkpointer=saver, interrupt_before=[f"n{pause}"] if pause else None)


@pytest.mark.parametrize("rt_name", ["langgraph", "lgcheckpoint"])
@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(shape=dags())
def test_next_matches_the_graph_on_random_dags(rt_name, shape):
    rt = runtime(rt_name)
    with open_saver(rt_name, "memory") as saver:
        app = build(rt, saver, *shape)
        config = {"configurable": {"thread_id": uuid.uuid4().hex}}
        app.invoke({"log": []}, config)
        for source in (app, saver):
            history = load_history(source, config)
            for step in history.steps:
                assert sorted(step.next) == sorted(app.get_state(step.config).next), step.key
            assert history.head.waiting == sorted(app.get_state(config).next)
        assert LineageGraph(app, config).dot == LineageGraph(saver, config).dot
