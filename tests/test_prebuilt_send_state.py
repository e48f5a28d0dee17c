"""The state a ToolNode's tools see when no state came with the tool calls, side by side with
langgraph-prebuilt 1.1.3: a ``Send("tools", [call])`` (the node reads the graph, as an edge would
hand it), a ToolNode invoked inside another node (that node's state, config and context)."""

import dataclasses
import inspect
from typing import Annotated, Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall
from langchain_core.tools import tool
from langgraph import prebuilt as lg_prebuilt
from langgraph.errors import GraphBubbleUp as LgBubbleUp
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph as LgStateGraph
from langgraph.types import Send as LgSend
from pydantic import BaseModel
from typing_extensions import TypedDict

from lgcheckpoint import START, StateGraph
from lgcheckpoint import prebuilt as ours
from lgcheckpoint.errors import GraphBubbleUp
from lgcheckpoint.types import Send

LIBS = {"ours": (ours, StateGraph, START, Send, GraphBubbleUp),
        "langgraph": (lg_prebuilt, LgStateGraph, LG_START, LgSend, LgBubbleUp)}
CALL = ToolCall(name="record", args={}, id="call_1", type="tool_call")


class TypedState(TypedDict):
    messages: list
    foo: str


class PydanticState(BaseModel):
    messages: list[AnyMessage] = []
    foo: str = ""


@dataclasses.dataclass
class DataclassState:
    messages: list = dataclasses.field(default_factory=list)
    foo: str = ""


@dataclasses.dataclass
class Ctx:
    user: str


def shown(state: Any) -> tuple[str, dict]:
    """A state as (its class name, its fields as plain data)."""
    fields = state if isinstance(state, dict) else vars(state)
    return type(state).__name__, {k: [m.content if hasattr(m, "content") else m for m in v]
                                  if isinstance(v, list) else v for k, v in fields.items()}


def tools_state(lib: str, schema: type, by_send: bool) -> list:
    """What a tool's ToolRuntime and InjectedState argument hold when the agent's call reaches
    the ToolNode by a Send of the bare tool calls, or by a plain edge."""
    prebuilt, state_graph, start, send, _ = LIBS[lib]
    seen: list = []

    def record(runtime: prebuilt.ToolRuntime[Ctx],
               state: Annotated[Any, prebuilt.InjectedState]) -> str:
        """Record what the tool is given."""
        seen.append((shown(runtime.state), shown(state), runtime.context))
        return "ok"

    def agent(state: Any) -> dict:
        return {"messages": [AIMessage("", tool_calls=[CALL])]}

    route = (lambda _: [send("tools", [CALL])]) if by_send else (lambda _: "tools")
    graph = (state_graph(schema, context_schema=Ctx).add_node("agent", agent)
             .add_node("tools", prebuilt.ToolNode([record])).add_edge(start, "agent")
             .add_conditional_edges("agent", route, ["tools"]).compile())
    graph.invoke({"messages": [], "foo": "bar"}, context=Ctx("ada"))
    return seen


@pytest.mark.parametrize("schema", [TypedState, PydanticState, DataclassState])
def test_a_send_of_bare_tool_calls_reads_the_graph_state_as_an_edge_would(schema):
    ours_by_send = tools_state("ours", schema, by_send=True)
    assert ours_by_send == tools_state("ours", schema, by_send=False)  # as by an edge
    assert ours_by_send == tools_state("langgraph", schema, by_send=True)
    (runtime_state, injected, context), = ours_by_send
    assert runtime_state == injected == (schema.__name__ if schema is not TypedState else "dict",
                                         {"messages": [""], "foo": "bar"})
    assert context == Ctx("ada")  # ToolRuntime[Ctx]: the run's context


def inner_node_tools(lib: str) -> list:
    """A ToolNode invoked (without a config) inside a node of a graph run by a Send."""
    prebuilt, state_graph, start, send, _ = LIBS[lib]
    seen: list = []

    def record(runtime: prebuilt.ToolRuntime) -> str:
        """Record what the tool is given."""
        seen.append((runtime.state, runtime.context, runtime.config["configurable"]["thread_id"]))
        return "ok"

    class State(TypedDict):
        value: str

    def call_tools(state: State) -> dict:
        prebuilt.ToolNode([record]).invoke([{**CALL, "name": "record"}])
        return {}

    inner = state_graph(State).add_node(call_tools).add_edge(start, "call_tools").compile()
    outer = (state_graph(State, context_schema=Ctx).add_node("inner", inner)
             .add_conditional_edges(start, lambda _: [send("inner", {"value": "inner"})],
                                    ["inner"]).compile())
    outer.invoke({"value": "outer"}, {"configurable": {"thread_id": "t"}}, context=Ctx("bo"))
    return seen


def test_a_tool_node_invoked_inside_a_node_sees_that_nodes_graph():
    assert inner_node_tools("ours") == inner_node_tools("langgraph") == [
        ({"value": "inner"}, Ctx("bo"), "t")]


def test_bare_tool_calls_outside_a_graph_have_an_empty_state():
    seen = []

    @tool
    def record(runtime: ours.ToolRuntime) -> str:
        """Record the state."""
        seen.append(runtime.state)
        return "ok"

    ours.ToolNode([record]).invoke([CALL])
    assert seen == [{}]


@pytest.mark.parametrize("lib", LIBS)
@pytest.mark.parametrize("handle", [True, "handled", False])
def test_a_tool_raising_for_the_graph_is_never_handled(lib, handle):
    prebuilt, state_graph, start, _, bubble_up = LIBS[lib]

    def bubbles(x: int) -> str:
        """Raises a graph-level exception."""
        raise bubble_up("for the graph")

    call = {"name": "bubbles", "args": {"x": 1}, "id": "c", "type": "tool_call"}
    graph = (state_graph(TypedState)
             .add_node("tools", prebuilt.ToolNode([bubbles], handle_tool_errors=handle))
             .add_edge(start, "tools").compile())
    with pytest.raises(bubble_up, match="for the graph"):
        graph.invoke({"messages": [AIMessage("", tool_calls=[call])], "foo": ""})


@pytest.mark.parametrize("lib", LIBS)
async def test_the_react_agents_model_node_has_a_sync_and_an_async_form(lib):
    prebuilt = LIBS[lib][0]
    model = FakeMessagesListChatModel(responses=[AIMessage("hi"), AIMessage("again")])
    agent = prebuilt.create_react_agent(model, [])
    bound = agent.nodes["agent"].bound
    assert inspect.getclosurevars(bound.func).nonlocals  # the sync function, closed over model
    assert inspect.iscoroutinefunction(bound.afunc)
    out = await agent.ainvoke({"messages": [HumanMessage("x")]})
    assert [m.content for m in out["messages"]] == ["x", "hi"]
    assert [m.content for m in agent.invoke({"messages": [HumanMessage("y")]})["messages"]] == [
        "y", "again"]
