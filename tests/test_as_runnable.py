"""A compiled graph as a langchain Runnable (lgcheckpoint/pregel/as_runnable.py): what the adapter
serves, what it refuses, and what happens without langchain-core. Side by side with LangGraph:
tests/differential/test_runnable_same_as_langgraph.py."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap

import pytest
from langchain_core.runnables import Runnable, RunnableLambda, RunnablePassthrough

from lgcheckpoint.channels import LastValue, Topic
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.pregel import NodeBuilder, Pregel
from lgcheckpoint.pregel.as_runnable import RUNNABLE_API, as_runnable


def add_one_graph(fail_first: int = 0) -> tuple[Pregel, list]:
    """A low-level graph: input + 1 -> output; its first `fail_first` runs fail."""
    runs: list = []

    def add_one(x: int) -> int:
        runs.append(x)
        if len(runs) <= fail_first:
            raise ConnectionError(f"down ({len(runs)})")
        return x + 1

    app = Pregel(nodes={"one": NodeBuilder().subscribe_only("input").do(add_one)
                        .write_to("output")},
                 channels={"input": LastValue(int), "output": LastValue(int)},
                 input_channels="input", output_channels="output")
    return app, runs


def test_with_retry_runs_a_failing_graph_again_until_it_succeeds():
    app, runs = add_one_graph(fail_first=2)
    retried = app.with_retry(retry_if_exception_type=(ConnectionError,), stop_after_attempt=3,
                             wait_exponential_jitter=False)
    assert retried.invoke(1) == 2
    assert runs == [1, 1, 1]  # two failed runs, then one that finished


def test_with_retry_gives_up_after_its_attempts():
    app, runs = add_one_graph(fail_first=9)
    with pytest.raises(ConnectionError, match=r"down \(2\)"):
        app.with_retry(stop_after_attempt=2, wait_exponential_jitter=False).invoke(1)
    assert len(runs) == 2


def test_pipe_or_map_and_batch():
    app, _ = add_one_graph()
    times_ten = RunnableLambda(lambda x: x * 10)
    assert (app | times_ten).invoke(1) == 20
    assert app.pipe(times_ten, app).invoke(1) == 21
    assert (RunnableLambda(lambda x: x - 1) | app).invoke(5) == 5  # a graph on the right
    assert app.map().invoke([1, 2, 3]) == [2, 3, 4]
    assert asyncio.run(app.map().ainvoke([1, 2])) == [2, 3]
    assert app.batch([1, 2]) == [2, 3] == (app | RunnablePassthrough()).batch([1, 2])


def test_a_mapped_graph_in_a_node_runs_as_subgraphs_of_that_node_with_the_parents_saver():
    inner, runs = add_one_graph()
    outer = Pregel(
        nodes={"split": NodeBuilder().subscribe_only("input").do(lambda xs: xs)
               .write_to("items"),
               "each": NodeBuilder().subscribe_only("items").do(inner.map()).write_to("results"),
               "total": NodeBuilder().subscribe_only("results").do(sum).write_to("output")},
        channels={"input": LastValue(list), "items": Topic(int), "results": LastValue(list),
                  "output": LastValue(int)},
        input_channels="input", output_channels="output", checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    assert outer.invoke([1, 2], config) == 5
    assert sorted(runs) == [1, 2]
    # each inner run is a subgraph of "each": its checkpoints went to the parent's saver
    namespaces = {c.config["configurable"]["checkpoint_ns"].split(":")[0]
                  for c in outer.checkpointer.list(None)}
    assert namespaces == {"", "each"}


def test_the_graph_is_a_runnable_and_keeps_its_own_methods():
    app, _ = add_one_graph()
    assert isinstance(app, Runnable)  # langchain-core is loaded here, so langchain takes it
    assert app.with_config(recursion_limit=5).invoke(1) == 2  # ours: a graph, not a binding
    assert isinstance(app.with_config(tags=["x"]), Pregel)
    assert app.get_name() == "LangGraph"
    assert type(as_runnable(app)).__name__ == "GraphRunnable"
    assert {"pipe", "map", "with_retry", "astream_log"} <= RUNNABLE_API


def test_names_that_are_not_runnable_api_are_attribute_errors():
    app, _ = add_one_graph()
    with pytest.raises(AttributeError, match="'Pregel' object has no attribute 'nope'"):
        app.nope
    assert not hasattr(app, "astream_events")
    with pytest.raises(AttributeError, match="astream_events is out of scope"):
        app.astream_events


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120)


def test_without_langchain_core_a_runnable_method_says_which_extra_to_install():
    result = run_python("""
        import sys
        sys.modules["langchain_core"] = None  # as if langchain-core were not installed
        from lgcheckpoint.graph import StateGraph
        builder = StateGraph(dict)
        builder.add_node("a", lambda s: s)
        builder.set_entry_point("a")
        app = builder.compile()
        print(app.invoke({"k": 1}))
        try:
            app.with_retry()
        except ImportError as exc:
            print(exc)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("{'k': 1}\ngraph.with_retry is langchain's Runnable API: it needs "
                             'langchain-core, pip install "lgcheckpoint[messages]"\n')


def test_a_graph_compiled_before_langchain_was_imported_is_a_runnable_once_touched():
    """The one order the virtual registration cannot see, as the module docstring says."""
    result = run_python("""
        from lgcheckpoint.graph import StateGraph
        builder = StateGraph(dict)
        builder.add_node("a", lambda s: s)
        builder.set_entry_point("a")
        app = builder.compile()
        from langchain_core.runnables import Runnable
        print(isinstance(app, Runnable), isinstance(app.as_runnable(), Runnable),
              isinstance(app, Runnable))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "False True True\n"


def test_a_state_graph_compiled_after_langchain_was_loaded_is_a_runnable():
    """A StateGraph compiled after langchain was loaded: a Runnable from the start."""
    builder = StateGraph(dict)
    builder.add_node("a", lambda s: {"k": s["k"] + 1})
    builder.add_edge(START, "a")
    app = builder.compile()
    assert isinstance(app, Runnable)
    assert (app | RunnableLambda(lambda s: s["k"])).invoke({"k": 1}) == 2
