"""Compiled-graph introspection (introspect.py): JSON schemas, get_subgraphs, with_config, copy,
batch — each compared with what LangGraph returns for the same graph."""

import asyncio
import dataclasses
import json
import operator
from typing import Annotated, Optional

import pydantic
import pytest
from typing_extensions import TypedDict

from tests.differential.libs import LANGGRAPH, OURS


class Typed(TypedDict):
    items: Annotated[list, operator.add]
    name: str


class In(TypedDict):
    name: str


class Out(TypedDict):
    items: list


@dataclasses.dataclass
class Data:
    items: Annotated[list, operator.add]
    note: Annotated[Optional[float], "a note"]
    name: Optional[str] = None
    count: int = 3
    tags: list = dataclasses.field(default_factory=lambda: ["a"])
    label: Annotated[str, "metadata"] = dataclasses.field(default="x")


class Model(pydantic.BaseModel):
    items: list = []


def one_node(lib, schema, **kw):
    g = lib.StateGraph(schema, **kw)
    g.add_node("a", lambda state: {})
    g.add_edge(lib.START, "a")
    return g.compile()


@pytest.mark.parametrize("schema, kw", [
    (Typed, {}), (Typed, {"input_schema": In, "output_schema": Out}), (Data, {}), (Model, {}),
    (Annotated[list, operator.add], {})])
def test_json_schemas_are_langgraphs(schema, kw):
    def schemas(lib):
        graph = one_node(lib, schema, **kw)
        return json.dumps([graph.get_input_jsonschema(), graph.get_output_jsonschema(),
                           graph.get_context_jsonschema()])
    assert schemas(OURS) == schemas(LANGGRAPH)


@pytest.mark.parametrize("context", [In, Data, Model])
def test_context_schema_is_langgraphs(context):
    def schema(lib):
        return json.dumps(one_node(lib, Typed, context_schema=context).get_context_jsonschema())
    assert schema(OURS) == schema(LANGGRAPH)


def counter(lib):
    """count adds one until the config's limit; a subgraph as a node, another called inside."""
    class State(TypedDict):
        n: int

    inner = lib.StateGraph(State)
    inner.add_node("bump", lambda s: {"n": s["n"] + 1})
    inner.add_edge(lib.START, "bump")
    inner = inner.compile()
    middle = lib.StateGraph(State)
    middle.add_node("inner", inner)
    middle.add_edge(lib.START, "inner")
    middle = middle.compile()
    g = lib.StateGraph(State)
    g.add_node("count", lambda s, config: {"n": s["n"] + config["configurable"].get("step", 1)})
    g.add_node("middle", middle)
    g.add_node("calls", lambda s: inner.invoke(s))
    g.add_edge(lib.START, "count")
    g.add_conditional_edges("count", lambda s: "count" if s["n"] < 5 else "middle")
    g.add_edge("middle", "calls")
    return g.compile()


def test_subgraphs_are_langgraphs():
    def found(lib):
        graph = counter(lib)
        return [[name for name, _ in graph.get_subgraphs(**kw)] for kw in (
            {}, {"recurse": True}, {"namespace": "middle|inner", "recurse": True},
            {"namespace": "calls"}, {"namespace": "nothing"})]
    assert found(OURS) == found(LANGGRAPH)

    async def afound(lib):
        return [name async for name, _ in counter(lib).aget_subgraphs(recurse=True)]
    assert asyncio.run(afound(OURS)) == asyncio.run(afound(LANGGRAPH))


def test_with_config_copy_and_batch_are_langgraphs():
    def results(lib):
        graph = counter(lib)
        stepped = graph.with_config(configurable={"step": 2})
        out = [stepped.invoke({"n": 0}), graph.invoke({"n": 0}),
               graph.copy({"name": "renamed"}).name, graph.name,
               graph.batch([{"n": 0}, {"n": 4}]),
               graph.batch([{"n": 0}, {"n": 0}], [None, {"configurable": {"step": 5}}]),
               asyncio.run(stepped.abatch([{"n": 1}, {"n": 3}]))]
        with pytest.raises(lib.GraphRecursionError):
            graph.with_config(recursion_limit=3).invoke({"n": 0})
        failed = graph.batch([{"n": 0}, {}], return_exceptions=True)
        return out + [failed[0], type(failed[1]).__name__]
    assert results(OURS) == results(LANGGRAPH)


@pytest.mark.parametrize("rebind", [
    lambda g, n: g.with_config(recursion_limit=n),
    lambda g, n: g.with_config({"recursion_limit": 1}, recursion_limit=n),
    lambda g, n: g.with_config(recursion_limit=n).with_config(tags=["t"]),
], ids=["kwarg", "kwarg over config", "kept by a later with_config"])
def test_with_config_applies_a_recursion_limit_equal_to_the_default(rebind):
    """An explicit limit that equals the default (10007) still replaces a bound one."""
    def limit(lib):
        graph = counter(lib).with_config(recursion_limit=10008)
        return rebind(graph, 10007).config["recursion_limit"]
    assert limit(OURS) == limit(LANGGRAPH) == 10007
