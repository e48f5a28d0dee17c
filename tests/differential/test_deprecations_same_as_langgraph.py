"""Deprecated options still run, with the same warning class and text as in LangGraph.

Each case uses an old spelling (``retry=``, ``input=``, ``config_schema=``, ``checkpoint_during=``,
``NodeInterrupt``, ``Interrupt.interrupt_id``, ``Send`` from constants) on both libraries: the
warnings must match (module names aside: ours name lgcheckpoint) and so must the result.
"""

from __future__ import annotations

import importlib
import operator
import warnings
from typing import Annotated, Any, Callable

import pytest
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


class Context(TypedDict):
    user: str


def graph_with(lib, state_options=None, node_options=None):
    g = lib.StateGraph(Trail, **(state_options or {}))
    g.add_node("a", lambda state: {"trail": ["a"]}, **(node_options or {}))
    g.add_edge(lib.START, "a")
    return g


def node_retry(lib):
    calls = []

    def flaky(state):
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("try again")
        return {"trail": ["ok"]}

    g = lib.StateGraph(Trail)
    g.add_node("a", flaky, retry=lib.RetryPolicy(initial_interval=0, jitter=False))
    g.add_edge(lib.START, "a")
    return g.compile().invoke({"trail": []}), len(calls)


def run(lib, **options):
    """Output, stream, and how many checkpoints each run saved (durability "exit": fewer)."""
    graph = graph_with(lib).compile(checkpointer=lib.InMemorySaver())
    saved = []
    for thread, go in (("1", graph.invoke), ("2", lambda *a, **kw: list(graph.stream(*a, **kw)))):
        config = {"configurable": {"thread_id": thread}}
        out = go({"trail": []}, config, **options)
        saved.append((out, len(list(graph.checkpointer.list(config)))))
    return saved


def entrypoint_context(lib):
    @lib.entrypoint(config_schema=Context)
    def main(x: int) -> int:
        return x

    return main.context_schema is Context, main.invoke(3)


def task_retry(lib):
    @lib.task(retry=lib.RetryPolicy(max_attempts=2))
    def double(x: int) -> int:
        return 2 * x

    @lib.entrypoint()
    def main(x: int) -> int:
        return double(x).result()

    return main.invoke(4)


def deprecated_schema_methods(lib):
    graph = graph_with(lib, {"context_schema": Context}).compile()
    return graph.config_schema().model_json_schema(), graph.get_config_jsonschema()


def constants_import(lib):
    module = importlib.import_module(f"{lib.package}.constants")
    return [getattr(module, name).__name__ for name in ("Send", "Interrupt")]


def pregel_config_type(lib):
    pregel = importlib.import_module(f"{lib.package}.pregel")
    last_value = importlib.import_module(f"{lib.package}.channels").LastValue
    node = pregel.NodeBuilder().subscribe_only("input").do(lambda x: x + 1).write_to("output")
    graph = pregel.Pregel(nodes={"one": node}, channels={"input": last_value(int),
                                                         "output": last_value(int)},
                          input_channels="input", output_channels="output", config_type=Context)
    return graph.context_schema is Context, graph.invoke(1)


def graph_output_as_a_dict(lib):
    types = importlib.import_module(f"{lib.package}.types")
    asked = (types.Interrupt("q", "abc"),)
    out = types.GraphOutput(value={"foo": "bar"}, interrupts=asked)
    return out["foo"], "foo" in out, out["__interrupt__"] == asked, "__interrupt__" in out


CASES: dict[str, Callable[[Any], Any]] = {
    "StateGraph(input=, output=)": lambda lib: [
        s.__name__ for s in (lambda g: (g.input_schema, g.output_schema))(
            lib.StateGraph(Trail, input=Context, output=Context))],
    "StateGraph(config_schema=)": lambda lib: lib.StateGraph(
        Trail, config_schema=Context).context_schema is Context,
    "add_node(retry=)": node_retry,
    "add_node(input=)": lambda lib: graph_with(
        lib, node_options={"input": Context}).nodes["a"].input_schema is Context,
    "task(retry=)": task_retry,
    "entrypoint(config_schema=)": entrypoint_context,
    "config_schema(), get_config_jsonschema()": deprecated_schema_methods,
    "invoke(checkpoint_during=True)": lambda lib: run(lib, checkpoint_during=True),
    "invoke(checkpoint_during=False)": lambda lib: run(lib, checkpoint_during=False),
    "Interrupt.interrupt_id": lambda lib: importlib.import_module(
        f"{lib.package}.types").Interrupt("q", "abc").interrupt_id,
    "NodeInterrupt(value)": lambda lib: [
        (i.value, i.id) for i in lib.NodeInterrupt({"why": 1}).args[0]],
    "constants.Send, constants.Interrupt": constants_import,
    "Pregel(config_type=)": pregel_config_type,
    "GraphOutput[key], key in GraphOutput": graph_output_as_a_dict,
}


def observe(lib, case: Callable[[Any], Any]) -> tuple[Any, list[tuple[str, str]]]:
    """What the case returns, and each deprecation warning as (class name, text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = case(lib)
    said = [(type(w.message).__name__, str(w.message).replace(lib.package, "<lib>"))
            for w in caught if issubclass(w.category, DeprecationWarning)]
    return result, said


@pytest.mark.parametrize("name", list(CASES))
def test_deprecated_option_warns_and_works_as_in_langgraph(name):
    theirs, ours = observe(LANGGRAPH, CASES[name]), observe(OURS, CASES[name])
    assert ours[1], f"{name}: no deprecation warning"
    assert ours == theirs
