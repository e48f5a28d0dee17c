"""Scenarios for the viewer tests: one graph with a Send fan-out, a flaky node (an error), an
interrupt, a subgraph and a fork, run on LangGraph and on lgcheckpoint with each saver."""

from __future__ import annotations

import contextlib
import importlib
import operator
import uuid
from types import SimpleNamespace
from typing import Annotated, Any, Iterator

import pytest
from typing_extensions import TypedDict

RUNTIMES = {"langgraph": ("langgraph.graph", "langgraph.types"),
            "lgcheckpoint": ("lgcheckpoint.graph", "lgcheckpoint.types")}
SAVERS = {
    "memory": {"langgraph": "langgraph.checkpoint.memory",
               "lgcheckpoint": "lgcheckpoint.checkpoint.memory"},
    "sqlite": {"langgraph": "langgraph.checkpoint.sqlite",
               "lgcheckpoint": "lgcheckpoint.checkpoint.sqlite"},
    "postgres": {"langgraph": "langgraph.checkpoint.postgres",
                 "lgcheckpoint": "lgcheckpoint.checkpoint.postgres"},
}
COMBOS = [(rt, kind) for rt in RUNTIMES for kind in SAVERS]


def runtime(name: str) -> SimpleNamespace:
    """StateGraph, START, END, interrupt, Command, Send from one runtime's own package."""
    graph_mod, types_mod = RUNTIMES[name]
    try:
        g, t = importlib.import_module(graph_mod), importlib.import_module(types_mod)
    except Exception as error:  # noqa: BLE001 - say exactly which piece is missing
        pytest.skip(f"RUNTIME {name} NOT IMPORTABLE YET: {error!r}")
    return SimpleNamespace(name=name, StateGraph=g.StateGraph, START=g.START, END=g.END,
                           interrupt=t.interrupt, Command=t.Command, Send=t.Send)


@contextlib.contextmanager
def open_saver(rt: str, kind: str, sqlite_path: str | None = None,
               postgres_uri: str | None = None) -> Iterator[Any]:
    """A real saver of ``kind`` from runtime ``rt``'s own package (LangGraph's or ours)."""
    module = importlib.import_module(SAVERS[kind][rt])
    if kind == "memory":
        yield module.InMemorySaver()
    elif kind == "sqlite":
        with module.SqliteSaver.from_conn_string(sqlite_path) as saver:
            yield saver
    else:
        with module.PostgresSaver.from_conn_string(postgres_uri) as saver:
            saver.setup()
            yield saver


class State(TypedDict):
    topic: str
    items: Annotated[list, operator.add]
    verdict: str


class SubState(TypedDict):
    verdict: str


def build_review_graph(rt: SimpleNamespace, saver: Any, flaky: dict, subgraph: bool = False) -> Any:
    """plan -Send-> work x2 (fails once) -> review (interrupt) -> polish (a node or a subgraph)
    -> END."""

    def plan(state):
        return {"items": []}

    def fan_out(state):
        return [rt.Send("work", {"topic": f"{state['topic']}{i}", "items": [], "verdict": ""})
                for i in range(2)]

    def work(state):
        if flaky["failures"] > 0:
            flaky["failures"] -= 1
            raise ValueError("flaky worker")
        return {"items": [state["topic"]]}

    def review(state):
        return {"verdict": rt.interrupt({"items": state["items"]})}

    def inner(state):
        return {"verdict": state["verdict"] + "!"}

    sub = rt.StateGraph(SubState)
    sub.add_node("inner", inner)
    sub.add_edge(rt.START, "inner")
    g = rt.StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("work", work)
    g.add_node("review", review)
    g.add_node("polish", sub.compile() if subgraph else inner)
    g.add_edge(rt.START, "plan")
    g.add_conditional_edges("plan", fan_out, ["work"])
    g.add_edge("work", "review")
    g.add_edge("review", "polish")
    g.add_edge("polish", rt.END)
    return g.compile(checkpointer=saver)


def run_until_interrupt(rt: SimpleNamespace, saver: Any, subgraph: bool = False) -> SimpleNamespace:
    """Error in a Send task (saved as an __error__ write), retry, stop at review's interrupt."""
    flaky = {"failures": 1}
    app = build_review_graph(rt, saver, flaky, subgraph)
    config = {"configurable": {"thread_id": f"viz-{uuid.uuid4().hex[:8]}"}}
    with pytest.raises(ValueError, match="flaky worker"):
        app.invoke({"topic": "t", "items": [], "verdict": ""}, config)
    app.invoke(None, config)
    return SimpleNamespace(app=app, saver=saver, config=config, rt=rt)


def run_full(rt: SimpleNamespace, saver: Any, subgraph: bool = False) -> SimpleNamespace:
    """...then resume (approve), then fork from the checkpoint where the Sends were scheduled."""
    run = run_until_interrupt(rt, saver, subgraph)
    run.result = run.app.invoke(rt.Command(resume="approve"), run.config)
    history = list(saver.list(run.config))
    step1 = next(t for t in history if t.metadata["step"] == 1
                 and not t.config["configurable"]["checkpoint_ns"])
    run.fork_config = run.app.update_state(step1.config, {"topic": "forked"})
    return run
