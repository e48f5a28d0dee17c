"""lgcheckpoint.prebuilt against langgraph-prebuilt 1.1.3, run side by side on fake chat models."""

import re
import warnings
from typing import Annotated

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.messages.tool import ToolOutputMixin
from langchain_core.tools import tool
from langgraph import prebuilt as lg_prebuilt
from langgraph.checkpoint.memory import InMemorySaver as LangGraphSaver
from langgraph.runtime import Runtime
from langgraph.types import Command as LangGraphCommand
from langgraph.types import interrupt as lg_interrupt
from pydantic import BaseModel

from lgcheckpoint import Command, InMemorySaver, interrupt
from lgcheckpoint import prebuilt as ours

LIBS = {"ours": (ours, Command, interrupt, InMemorySaver),
        "langgraph": (lg_prebuilt, LangGraphCommand, lg_interrupt, LangGraphSaver)}
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def plain(value, names=None):
    """Comparable data: messages as fields, generated ids numbered by first appearance."""
    names = {} if names is None else names
    if isinstance(value, (list, tuple)):
        return [plain(v, names) for v in value]
    if isinstance(value, dict):
        return {k: plain(v, names) for k, v in value.items()}
    if isinstance(value, str) and UUID.search(value):
        return names.setdefault(value, f"<id{len(names)}>")
    if hasattr(value, "model_dump"):
        return {"class": type(value).__name__, **plain(value.model_dump(), names)}
    if type(value).__name__ in ("Command", "Interrupt", "Send"):
        return {"class": type(value).__name__, **plain(
            {k: getattr(value, k) for k in ("update", "goto", "resume", "graph", "value", "node",
                                            "arg") if hasattr(value, k)}, names)}
    return value


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool
def fails(x: int) -> int:
    """Always fails."""
    raise ValueError(f"no {x}")


def tools_for(lib: str) -> list:
    prebuilt, command, ask, _ = LIBS[lib]
    injected_state, tool_runtime = prebuilt.InjectedState, prebuilt.ToolRuntime

    @tool
    def jump(where: str) -> object:
        """Go somewhere."""
        return command(goto=where)

    @tool
    def note(text: str, state: Annotated[dict, injected_state]) -> str:
        """Note something, with the number of messages so far."""
        return f"{text} after {len(state['messages'])}"

    @tool
    def who(runtime: tool_runtime) -> str:
        """Say which call this is."""
        return f"call {runtime.tool_call_id}"

    @tool
    def ask_human(question: str) -> str:
        """Ask a person."""
        return ask(question)

    return [add, fails, jump, note, who, ask_human]


def calls(*specs, turn: int = 0) -> AIMessage:
    return AIMessage("", id=f"ai{turn}", tool_calls=[
        {"name": name, "args": args, "id": f"c{turn}.{i}"} for i, (name, args) in enumerate(specs)])


TOOL_NODE_CASES = {
    "dict input, parallel calls": (
        {"messages": [HumanMessage("hi"), calls(("add", {"a": 1, "b": 2}),
                                                ("add", {"a": 3, "b": 4}))]}, {}),
    "list input": ([calls(("add", {"a": 1, "b": 2}))], {}),
    "tool calls input": ([{"name": "add", "args": {"a": 5, "b": 6}, "id": "x",
                           "type": "tool_call"}], {}),
    "bad arguments go back to the model": ({"messages": [calls(("add", {"a": 1}))]}, {}),
    "unknown tool": ({"messages": [calls(("nope", {}))]}, {}),
    "error handled": ({"messages": [calls(("fails", {"x": 1}))]},
                      {"handle_tool_errors": True}),
    "error as text": ({"messages": [calls(("fails", {"x": 1}))]},
                      {"handle_tool_errors": "try again"}),
    "error by handler": ({"messages": [calls(("fails", {"x": 1}))]},
                         {"handle_tool_errors": lambda e: f"handled {e}"}),
    "error raised by default": ({"messages": [calls(("fails", {"x": 1}))]}, {}),
    "error not of the handled type": ({"messages": [calls(("fails", {"x": 1}))]},
                                      {"handle_tool_errors": (KeyError,)}),
    "a Command from a tool": ({"messages": [calls(("jump", {"where": "elsewhere"}),
                                                  ("add", {"a": 1, "b": 1}))]}, {}),
    "injected state": ({"messages": [HumanMessage("hi"), calls(("note", {"text": "x"}))]}, {}),
    "injected runtime": ({"messages": [calls(("who", {}))]}, {}),
    "no AIMessage": ({"messages": [HumanMessage("hi")]}, {}),
    "no messages": ({"messages": []}, {}),
}


def run_tool_node(lib: str, given, options):
    node = LIBS[lib][0].ToolNode(tools_for(lib), **options)
    # LangGraph's node needs its runtime in the config even outside a graph; ours does not
    config = {"configurable": {"__pregel_runtime": Runtime()}} if lib == "langgraph" else None
    try:
        return plain(node.invoke(given, config))
    except Exception as exc:  # noqa: BLE001 - the error is compared
        return type(exc).__name__, str(exc)


@pytest.mark.parametrize("case", list(TOOL_NODE_CASES))
def test_tool_node_same_as_langgraph(case):
    given, options = TOOL_NODE_CASES[case]
    assert run_tool_node("ours", given, options) == run_tool_node("langgraph", given, options)


@tool
async def slow_add(a: int, b: int) -> int:
    """Add two numbers, asynchronously."""
    return a + b


@pytest.mark.parametrize("case", ["dict input, parallel calls", "error handled", "unknown tool",
                                  "a Command from a tool"])
async def test_tool_node_ainvoke_same_as_langgraph(case):
    given, options = TOOL_NODE_CASES[case]

    async def outcome(lib):
        node = LIBS[lib][0].ToolNode([*tools_for(lib), slow_add], **options)
        config = {"configurable": {"__pregel_runtime": Runtime()}} if lib == "langgraph" else None
        return plain(await node.ainvoke(given, config))

    assert await outcome("ours") == await outcome("langgraph")
    given = {"messages": [calls(("slow_add", {"a": 1, "b": 2}))]}
    assert plain(await ours.ToolNode([slow_add]).ainvoke(given)) == plain(
        await lg_prebuilt.ToolNode([slow_add]).ainvoke(
            given, {"configurable": {"__pregel_runtime": Runtime()}}))


@pytest.mark.parametrize("state", [
    {"messages": [calls(("add", {"a": 1, "b": 2}))]}, {"messages": [AIMessage("done")]},
    [HumanMessage("hi"), calls(("add", {}))], {"other": []}])
def test_tools_condition_same_as_langgraph(state):
    def outcome(condition):
        try:
            return condition(state)
        except ValueError as exc:
            return str(exc)

    assert outcome(ours.tools_condition) == outcome(lg_prebuilt.tools_condition)


class Point(BaseModel):
    x: int
    y: int


@pytest.mark.parametrize("args", [{"x": 1, "y": 2}, {"x": "one"}])
def test_validation_node_same_as_langgraph(args):
    given = {"messages": [AIMessage("", tool_calls=[{"name": "Point", "args": args, "id": "1"}])]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        mine = ours.ValidationNode([Point]).invoke(given)
        theirs = lg_prebuilt.ValidationNode([Point]).invoke(given)
    assert plain(mine) == plain(theirs)


class ToolModel(FakeMessagesListChatModel):
    """Answers from a list; takes any tools."""

    def bind_tools(self, tools, **kwargs):
        return self


def agent_run(lib: str, version: str) -> list:
    """A conversation with a tool call, a human question inside a tool, and a resume."""
    prebuilt, command, _, saver = LIBS[lib]
    model = ToolModel(responses=[
        calls(("add", {"a": 1, "b": 2}), ("note", {"text": "sum"})),
        calls(("ask_human", {"question": "ok?"}), turn=1),
        AIMessage("all done", id="final"),
    ])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = prebuilt.create_react_agent(model, tools_for(lib), prompt="Be brief.",
                                            checkpointer=saver(), version=version)
    config = {"configurable": {"thread_id": "1"}}
    seen = [agent.invoke({"messages": [("user", "add 1 and 2")]}, config)]
    seen.append(agent.invoke(command(resume="yes"), config))
    seen += [(s.values, s.next, s.metadata["source"], s.metadata["step"])
             for s in agent.get_state_history(config)]
    return plain(seen)


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_react_agent_same_run_and_history_as_langgraph(version):
    assert agent_run("ours", version) == agent_run("langgraph", version)


def test_react_agent_is_deprecated_as_in_langgraph():
    with pytest.warns(DeprecationWarning, match="create_react_agent has been moved"):
        ours.create_react_agent(ToolModel(responses=[]), [add])


def test_react_agent_refuses_unknown_options_and_a_store():
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match=r"\{'extra': 1\}"):
        ours.create_react_agent(ToolModel(responses=[]), [add], extra=1)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="store="):
        ours.create_react_agent(ToolModel(responses=[]), [add], store=object())


def test_what_needs_a_store_or_the_v3_protocol_is_refused_by_name():
    @tool
    def remember(text: str, store: Annotated[object, ours.InjectedStore()]) -> str:
        """Keep a note."""
        return text

    with pytest.raises(ValueError, match="InjectedStore needs a store.*out of scope"):
        ours.ToolNode([remember])
    with pytest.raises(ImportError, match="ToolCallTransformer is out of scope"):
        from lgcheckpoint.prebuilt import ToolCallTransformer  # noqa: F401


def test_a_tools_command_is_handed_on_as_it_is():
    """langchain passes on only its ToolOutputMixin objects; our Command is one (as LangGraph's)."""
    assert isinstance(Command(goto="x"), ToolOutputMixin)
    jump = tools_for("ours")[2]
    assert jump.invoke({"name": "jump", "args": {"where": "x"}, "id": "1",
                        "type": "tool_call"}) == Command(goto="x")


SUBMODULE_NAMES = {  # the public names programs import from langgraph.prebuilt's modules
    "tool_node": ["ToolNode", "tools_condition", "InjectedState", "InjectedStore", "ToolRuntime",
                  "ToolCallRequest", "ToolCallWithContext", "ToolInvocationError",
                  "msg_content_output", "TOOL_CALL_ERROR_TEMPLATE",
                  "INVALID_TOOL_NAME_ERROR_TEMPLATE", "TOOL_EXECUTION_ERROR_TEMPLATE",
                  "TOOL_INVOCATION_ERROR_TEMPLATE"],
    "chat_agent_executor": ["create_react_agent", "create_tool_calling_executor", "AgentState",
                            "AgentStatePydantic", "AgentStateWithStructuredResponse",
                            "AgentStateWithStructuredResponsePydantic", "PROMPT_RUNNABLE_NAME"],
    "tool_validator": ["ValidationNode"],
    "interrupt": ["HumanInterrupt", "HumanInterruptConfig", "ActionRequest", "HumanResponse"],
}


def test_langgraphs_prebuilt_names_are_served_or_refused_by_name():
    import importlib

    for name in lg_prebuilt.__all__:
        if name in ours.OUT_OF_SCOPE:
            with pytest.raises(ImportError, match=f"{name} is out of scope"):
                getattr(ours, name)
        else:
            assert hasattr(ours, name), name
    for module, names in SUBMODULE_NAMES.items():
        theirs = importlib.import_module(f"langgraph.prebuilt.{module}")
        for name in names:
            assert hasattr(theirs, name), f"{module}.{name}: not LangGraph's"
            assert hasattr(ours, name), f"{module}.{name}"
    assert ours.TOOL_CALL_ERROR_TEMPLATE == theirs_template("TOOL_CALL_ERROR_TEMPLATE")
    assert ours.TOOL_EXECUTION_ERROR_TEMPLATE == theirs_template("TOOL_EXECUTION_ERROR_TEMPLATE")


def theirs_template(name: str) -> str:
    from langgraph.prebuilt import tool_node

    return getattr(tool_node, name)


async def test_async_agent_awaits_async_tools_and_model_as_in_langgraph():
    """ainvoke awaits the model and the tools (pregel/runner.py: async_twin); an async-only tool
    would fail in a thread, as `slow_add` does under invoke in both libraries."""
    async def run(lib: str) -> list:
        prebuilt = LIBS[lib][0]
        model = ToolModel(responses=[calls(("slow_add", {"a": 2, "b": 3})),
                                     AIMessage("5", id="end")])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            agent = prebuilt.create_react_agent(model, [slow_add])
        return plain(await agent.ainvoke({"messages": [("user", "2+3?")]}))

    assert await run("ours") == await run("langgraph")
    assert (await run("ours"))["messages"][2]["content"] == "5"


def test_a_compiled_nodes_invoke_runs_it_alone_as_in_langgraph():
    """graph.nodes["tools"].invoke(...) runs the node outside a run (LangGraph's PregelNode)."""
    given = {"messages": [calls(("add", {"a": 1, "b": 2}))]}

    def run(lib: str):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            agent = LIBS[lib][0].create_react_agent(ToolModel(responses=[]), [add])
        config = {"configurable": {"__pregel_runtime": Runtime()}} if lib == "langgraph" else None
        return plain(agent.nodes["tools"].invoke(given, config))

    assert run("ours") == run("langgraph")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        agent = ours.create_react_agent(ToolModel(responses=[]), [add])
    assert isinstance(agent.nodes["tools"].bound, ours.ToolNode)
    with pytest.raises(TypeError, match="only a run provides"):
        agent.nodes["agent"].invoke(given)
