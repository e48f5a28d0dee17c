"""Random graphs, LangGraph against lgcheckpoint: hypothesis draws small graphs (fixed, join and
conditional edges, Send fan-outs, subgraph nodes, deferred nodes, interrupt_before, nodes calling
interrupt(), loops that may hit the recursion limit, two nodes writing one LastValue in a step),
runs them, answers every interrupt, and every one must give the same normalised history (on our
InMemorySaver, and on a few examples on our SqliteSaver and PostgresSaver).

Derandomized, so CI sees the same examples every run; a failure prints the graph it drew.
"""

from __future__ import annotations

import operator
import os
import tempfile
from typing import Annotated

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st
from typing_extensions import TypedDict

from tests.differential.harness import Run, assert_same, record
from tests.differential.libs import LANGGRAPH, OURS
from tests.differential.test_savers import fresh_postgres

NAMES = ["n0", "n1", "n2", "n3"]


class Walk(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]
    hops: Annotated[int, operator.add]
    last: str  # a LastValue: two nodes writing it in one step is an InvalidUpdateError


class SubIn(TypedDict, total=False):
    hops: int


class SubOut(TypedDict, total=False):
    trail: Annotated[list[str], operator.add]


@st.composite
def graph_specs(draw) -> dict:
    """A graph as plain data: entry nodes, per node its edges, plus joins and flags."""
    nodes = NAMES[: draw(st.integers(2, len(NAMES)))]
    targets = st.lists(st.sampled_from(nodes), min_size=1, max_size=2, unique=True)
    edges = {}
    for node in nodes:  # each node: to END, to fixed targets, or routed by the hop count
        kind = draw(st.sampled_from(["end", "fixed", "route"]))
        edges[node] = (kind, draw(targets) if kind != "end" else [])
    return {
        "entry": draw(targets),
        "edges": edges,
        # add_edge([a, b], c) with three different nodes
        "join": draw(
            st.none() | st.lists(st.sampled_from(nodes), min_size=3, max_size=3, unique=True)
        )
        if len(nodes) >= 3
        else None,
        "writes_last": draw(st.lists(st.sampled_from(nodes), max_size=2, unique=True)),
        "defer": draw(st.none() | st.sampled_from(nodes)),
        "interrupt_before": draw(st.lists(st.sampled_from(nodes), max_size=1)),
        "asks": draw(st.lists(st.sampled_from(nodes), max_size=1)),  # calls interrupt()
        "sends": draw(st.lists(st.sampled_from(nodes), max_size=1)),  # routes by Send
        "subgraph": draw(st.lists(st.sampled_from(nodes), max_size=1)),  # a compiled subgraph
    }


def scenario_for(spec: dict):
    """The scenario that builds ``spec`` with a library, runs it, and resumes it twice."""

    def node(name: str):
        def run(state):
            answer = lib_of_run.interrupt(f"{name}?") if name in spec.get("asks", ()) else ""
            update = {"trail": [name + answer], "hops": 1}
            return {**update, "last": name} if name in spec["writes_last"] else update

        return run

    def subgraph(name: str):
        """Two inner nodes; the first one asks if ``name`` asks. It gets only ``hops`` and gives
        back only its own trail (a subgraph returning the whole state would double the trail)."""
        g = lib_of_run.StateGraph(Walk, input_schema=SubIn, output_schema=SubOut)
        g.add_node("inner", node(name))
        g.add_node("inner_out", lambda s: {"trail": [f"{name}.out"]})
        g.add_edge(lib_of_run.START, "inner")
        g.add_edge("inner", "inner_out")
        return g.compile()

    def router(name: str, choices: list[str]):
        def route(s):
            if s["hops"] >= 6:
                return "__end__"
            if name in spec.get("sends", ()):  # every choice, as a Send with its own state
                return [lib_of_run.Send(c, {"trail": [f"sent by {name}"]}) for c in choices]
            return choices[s["hops"] % len(choices)]

        return route

    lib_of_run = None  # the Run, once the scenario starts (nodes need its interrupt and Send)

    def scenario(lib: Run):
        nonlocal lib_of_run
        lib_of_run = lib
        g = lib.StateGraph(Walk)
        for name, (kind, targets) in spec["edges"].items():
            action = subgraph(name) if name in spec.get("subgraph", ()) else node(name)
            g.add_node(name, action, defer=name == spec["defer"])
            if kind == "fixed":
                for target in targets:
                    g.add_edge(name, target)
            elif kind == "route":
                g.add_conditional_edges(name, router(name, targets), targets + ["__end__"])
        for name in spec["entry"]:
            g.add_edge(lib.START, name)
        if spec["join"]:
            a, b, c = spec["join"]
            g.add_edge([a, b], c)
        graph = g.compile(checkpointer=lib.saver(), interrupt_before=spec["interrupt_before"])
        cfg = {"configurable": {"thread_id": "t"}, "recursion_limit": 8}
        invoke(lib, graph, {"trail": [], "hops": 0}, cfg)
        for _ in range(3):  # answer every interrupt, or continue past interrupt_before
            state = lib.get_state(graph, cfg)
            if isinstance(state, Exception) or not state.next:
                break
            answers = {i.id: "!" for i in state.interrupts}
            invoke(lib, graph, lib.Command(resume=answers) if answers else None, cfg)

    return scenario


def invoke(lib: Run, graph, input, cfg) -> None:
    """Record an invoke; parallel tasks may interrupt in any order, so keep only the sorted
    questions from its result (get_state shows the interrupts with their ids, in task order)."""

    def call():
        out = graph.invoke(input, cfg, **lib.options(graph))
        if isinstance(out, dict) and "__interrupt__" in out:
            out = {**out, "__interrupt__": sorted(i.value for i in out["__interrupt__"])}
        return out

    lib.attempt("invoke", call)


# found by this test: n0 -> n1 and add_edge(["n0", "n1"], "n2"); n2 must wait for n1 as well
JOIN_AFTER_CHAIN = {
    "entry": ["n0"],
    "edges": {"n0": ("fixed", ["n1"]), "n1": ("end", []), "n2": ("end", [])},
    "join": ["n0", "n1", "n2"],
    "writes_last": [],
    "defer": None,
    "interrupt_before": [],
}


COMMON = settings(
    deadline=None,
    derandomize=True,
    database=None,  # nothing written into the repository
    # shrinking a failure to the smallest graph takes a minute: only when asked (LGC_SHRINK=1)
    phases=[Phase.explicit, Phase.generate]
    + ([Phase.shrink] if os.environ.get("LGC_SHRINK") else []),
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@settings(COMMON, max_examples=30)
@given(graph_specs())
@example(JOIN_AFTER_CHAIN)
def test_random_graph_same_as_langgraph(spec):
    scenario = scenario_for(spec)
    assert_same(f"random graph {spec}", record(scenario, LANGGRAPH), record(scenario, OURS))


@settings(COMMON, max_examples=10)
@given(graph_specs())
def test_random_graph_on_our_sqlite_same_as_langgraph(spec):
    scenario = scenario_for(spec)
    with tempfile.TemporaryDirectory() as tmp:  # a fresh file per example
        on_file = lambda lib: lib.SqliteSaver.from_conn_string(os.path.join(tmp, "db.sqlite"))
        assert_same(
            f"random graph {spec}", record(scenario, LANGGRAPH), record(scenario, OURS, on_file)
        )


@pytest.mark.postgres
@settings(COMMON, max_examples=8)
@given(spec=graph_specs())
def test_random_graph_on_our_postgres_same_as_langgraph(postgres_uri, spec):
    scenario = scenario_for(spec)
    on_db = lambda lib: fresh_postgres(lib, postgres_uri)  # emptied for each example
    assert_same(f"random graph {spec}", record(scenario, LANGGRAPH), record(scenario, OURS, on_db))
