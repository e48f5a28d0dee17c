"""create_react_agent: a chat model that calls tools in a loop, as a StateGraph.

    agent --(tool calls)--> tools --> agent ... --(none)--> END

``agent`` asks the model (after an optional ``prompt`` and ``pre_model_hook``); ``tools`` is a
ToolNode. version="v2" (the default) sends each tool call to ``tools`` on its own (Send), "v1"
runs them in one task. Optional: ``post_model_hook`` after each model call, ``response_format``
for a final structured answer, ``return_direct`` tools that end the run. Deprecated in LangGraph
1.0 (moved to ``langchain.agents.create_agent``), yet in most tutorials.
LangGraph's ``langgraph.prebuilt.chat_agent_executor``. Next: tool_validator.py.
"""

from __future__ import annotations

import inspect
import warnings
from typing import Annotated, Any, Callable, Literal, Sequence, get_type_hints

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.runnables import Runnable, RunnableBinding, RunnableLambda, RunnableSequence
from langchain_core.tools import BaseTool
from pydantic import BaseModel
from typing_extensions import NotRequired, TypedDict, deprecated

from lgcheckpoint.constants import END
from lgcheckpoint.graph import StateGraph
from lgcheckpoint.managed import RemainingSteps
from lgcheckpoint.messages import add_messages
from lgcheckpoint.prebuilt.tool_node import ToolCallWithContext, ToolNode
from lgcheckpoint.types import Send
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10

__all__ = ["create_react_agent", "create_tool_calling_executor", "AgentState",
           "AgentStatePydantic", "AgentStateWithStructuredResponse",
           "AgentStateWithStructuredResponsePydantic"]

PROMPT_RUNNABLE_NAME = "Prompt"
StructuredResponse = dict | BaseModel
StructuredResponseSchema = dict | type[BaseModel]
CHAT_HISTORY_HELP = ("\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/"
                     "langgraph/errors/INVALID_CHAT_HISTORY")


MOVED = "{} has been moved to `langchain.agents`. Please update your import to `{}`."
REPLACED = "{} has been deprecated in favor of AgentState in `langchain.agents`."


@deprecated(MOVED.format("AgentState", "from langchain.agents import AgentState"),
            category=LangGraphDeprecatedSinceV10)
class AgentState(TypedDict):
    """The agent's state: the conversation, and how many steps the run has left."""

    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: NotRequired[RemainingSteps]


@deprecated(REPLACED.format("AgentStatePydantic"), category=LangGraphDeprecatedSinceV10)
class AgentStatePydantic(BaseModel):
    messages: Annotated[Sequence[BaseMessage], add_messages]
    remaining_steps: RemainingSteps = 25


with warnings.catch_warnings():  # subclassing a deprecated class warns: not at our import
    warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)

    @deprecated(REPLACED.format("AgentStateWithStructuredResponse"),
                category=LangGraphDeprecatedSinceV10)
    class AgentStateWithStructuredResponse(AgentState):
        structured_response: StructuredResponse

    @deprecated(REPLACED.format("AgentStateWithStructuredResponsePydantic"),
                category=LangGraphDeprecatedSinceV10)
    class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
        structured_response: StructuredResponse


def value(state: Any, key: str, default: Any = None) -> Any:
    return state.get(key, default) if isinstance(state, dict) else getattr(state, key, default)


def prompt_runnable(prompt: Any) -> Runnable:
    """What the model is given: the messages, after a system prompt or a prompt function."""
    if prompt is None:
        return RunnableLambda(lambda state: value(state, "messages"), name=PROMPT_RUNNABLE_NAME)
    if isinstance(prompt, str):
        prompt = SystemMessage(content=prompt)
    if isinstance(prompt, SystemMessage):
        return RunnableLambda(lambda state: [prompt, *value(state, "messages")],
                              name=PROMPT_RUNNABLE_NAME)
    if isinstance(prompt, Runnable):
        return prompt
    if callable(prompt):
        return RunnableLambda(prompt, name=PROMPT_RUNNABLE_NAME)
    raise ValueError(f"Got unexpected type for `prompt`: {type(prompt)}")


def chat_model(model: Any) -> Any:
    """The chat model inside a `prompt | model` sequence, found as LangGraph finds it."""
    if isinstance(model, RunnableSequence):
        model = next((s for s in model.steps if isinstance(s, (RunnableBinding, BaseChatModel))),
                     model)
    return model


def should_bind_tools(model: Any, tools: Sequence[BaseTool], builtin: int = 0) -> bool:
    """Bind the tools unless the model has them bound already (then they must be the same)."""
    model = chat_model(model)
    if not isinstance(model, RunnableBinding) or "tools" not in model.kwargs:
        return True
    bound = model.kwargs["tools"]
    if len(tools) != len(bound) - builtin:
        raise ValueError("Number of tools in the model.bind_tools() and tools passed to "
                         f"create_react_agent must match Got {len(tools)} tools, expected "
                         f"{len(bound) - builtin}")
    names = {t["function"]["name"] if t.get("type") == "function" else t.get("name")
             for t in bound}
    if missing := {t.name for t in tools} - names:
        raise ValueError(f"Missing tools '{missing}' in the model.bind_tools()")
    return False


def unwrapped_model(model: Any) -> BaseChatModel:
    model = chat_model(model)
    model = model.bound if isinstance(model, RunnableBinding) else model
    if not isinstance(model, BaseChatModel):
        raise TypeError("Expected `model` to be a ChatModel or RunnableBinding (e.g. "
                        f"model.bind_tools(...)), got {type(model)}")
    return model


def check_chat_history(messages: Sequence[BaseMessage]) -> None:
    """Every tool call must have its ToolMessage before the model is asked again."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    open_calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls
                  if c["id"] not in answered]
    if open_calls:
        raise ValueError(
            "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
            f"Here are the first few of those tool calls: {open_calls[:3]}.\n\nEvery tool call "
            "(LLM requesting to call a tool) in the message history MUST have a corresponding "
            "ToolMessage (result of a tool invocation to return to the LLM) - this is required "
            "by most LLM providers." + CHAT_HISTORY_HELP)


class SyncAsync:
    """A node with a sync form (``func``) and an async one (``afunc``), as LangGraph's node
    objects have: an async run awaits afunc instead of calling func in a thread
    (pregel/runner.async_twin)."""

    def __init__(self, func: Callable, afunc: Callable) -> None:
        self.func, self.afunc = func, afunc

    def __call__(self, state: Any, runtime: Any, config: dict) -> Any:
        return self.func(state, runtime, config)

    async def ainvoke(self, state: Any, runtime: Any, config: dict) -> Any:
        return await self.afunc(state, runtime, config)


def as_node(hook: Any) -> Any:
    """A hook may be a function or a langchain Runnable (run through its invoke)."""
    if callable(hook) or not hasattr(hook, "invoke"):
        return hook
    return lambda state, config: hook.invoke(state, config)


@deprecated("create_react_agent has been moved to `langchain.agents`. Please update your import "
            "to `from langchain.agents import create_agent`.",
            category=LangGraphDeprecatedSinceV10)
def create_react_agent(model: Any, tools: Sequence[BaseTool | Callable | dict] | ToolNode, *,
                       prompt: Any = None, response_format: Any = None,
                       pre_model_hook: Any = None, post_model_hook: Any = None,
                       state_schema: Any = None, context_schema: Any = None,
                       checkpointer: Any = None, store: Any = None,
                       interrupt_before: list[str] | None = None,
                       interrupt_after: list[str] | None = None, debug: bool = False,
                       version: Literal["v1", "v2"] = "v2", name: str | None = None,
                       **deprecated_kwargs: Any) -> Any:
    """Build the agent graph (see the module docstring)."""
    if (config_schema := deprecated_kwargs.pop("config_schema", None)) is not None:
        warnings.warn("`config_schema` is deprecated and will be removed. Please use "
                      "`context_schema` instead.", LangGraphDeprecatedSinceV10, stacklevel=2)
        context_schema = context_schema or config_schema
    if deprecated_kwargs:
        raise TypeError(f"create_react_agent() got unexpected keyword arguments: "
                        f"{deprecated_kwargs}")
    if version not in ("v1", "v2"):
        raise ValueError(f"Invalid version {version}. Supported versions are 'v1' and 'v2'.")
    if state_schema is not None:
        required = {"messages", "remaining_steps"} | (
            {"structured_response"} if response_format is not None else set())
        if missing := required - set(get_type_hints(state_schema)):
            raise ValueError(f"Missing required key(s) {missing} in state_schema")
    else:
        state_schema = AgentState if response_format is None else AgentStateWithStructuredResponse
    pydantic_state = isinstance(state_schema, type) and issubclass(state_schema, BaseModel)

    # the tools: a ToolNode as given, or one made of the tools (dicts are the provider's own)
    builtin = [] if isinstance(tools, ToolNode) else [t for t in tools if isinstance(t, dict)]
    tool_node = tools if isinstance(tools, ToolNode) else ToolNode(
        [t for t in tools if not isinstance(t, dict)])
    tool_classes = list(tool_node.tools_by_name.values())
    return_direct = {t.name for t in tool_classes if t.return_direct}

    # the model: fixed (tools bound once), or chosen per call by model(state, runtime)
    dynamic = callable(model) and not isinstance(model, (str, Runnable))
    dynamic_async = dynamic and inspect.iscoroutinefunction(model)
    if isinstance(model, str):
        raise NotImplementedError("a '<provider>:<model>' string needs langchain's "
                                  "init_chat_model, not implemented yet: pass a chat model")
    if not dynamic and tool_classes + builtin and should_bind_tools(model, tool_classes,
                                                                    len(builtin)):
        model = model.bind_tools(tool_classes + builtin)
    fixed = None if dynamic else prompt_runnable(prompt) | model

    def resolve(state: Any, runtime: Any) -> Runnable:
        if dynamic_async:
            raise RuntimeError("Async model callable provided but agent invoked synchronously. "
                               "Use agent.ainvoke() or agent.astream(), or provide a sync model "
                               "callable.")
        return prompt_runnable(prompt) | model(state, runtime) if dynamic else fixed

    async def aresolve(state: Any, runtime: Any) -> Runnable:
        if dynamic_async:
            return prompt_runnable(prompt) | await model(state, runtime)
        return resolve(state, runtime)

    def more_steps_needed(state: Any, response: BaseMessage) -> bool:
        """Too few steps left to run the tools and ask the model again."""
        calls = getattr(response, "tool_calls", None)
        all_direct = isinstance(response, AIMessage) and all(
            c["name"] in return_direct for c in response.tool_calls)
        left = value(state, "remaining_steps")
        return left is not None and (left < 1 and all_direct or left < 2 and bool(calls))

    def model_input(state: Any) -> Any:
        """The state the model sees: its messages (a pre_model_hook's llm_input_messages)."""
        messages = value(state, "llm_input_messages") if pre_model_hook is not None else None
        messages = messages or value(state, "messages")
        if messages is None:
            keys = "'llm_input_messages' or 'messages' key" if pre_model_hook else "'messages' key"
            raise ValueError(f"Expected input to call_model to have {keys}, but got {state}")
        check_chat_history(messages)
        if pydantic_state:
            state.messages = messages
        else:
            state["messages"] = messages
        return state

    def answer(state: Any, response: BaseMessage) -> dict:
        response.name = name
        if more_steps_needed(state, response):
            return {"messages": [AIMessage(id=response.id,
                                           content="Sorry, need more steps to process this "
                                                   "request.")]}
        return {"messages": [response]}

    def call_model(state: Any, runtime: Any, config: dict) -> dict:
        return answer(state, resolve(state, runtime).invoke(model_input(state), config))

    async def acall_model(state: Any, runtime: Any, config: dict) -> dict:
        runnable = await aresolve(state, runtime)
        return answer(state, await runnable.ainvoke(model_input(state), config))

    def structured_input(state: Any) -> tuple[list, Any]:
        messages, schema = value(state, "messages"), response_format
        if isinstance(response_format, tuple):
            system, schema = response_format
            messages = [SystemMessage(content=system), *messages]
        return messages, schema

    def structured_response(state: Any, runtime: Any, config: dict) -> dict:
        messages, schema = structured_input(state)
        structured = unwrapped_model(resolve(state, runtime)).with_structured_output(schema)
        return {"structured_response": structured.invoke(messages, config)}

    async def astructured_response(state: Any, runtime: Any, config: dict) -> dict:
        messages, schema = structured_input(state)
        model = unwrapped_model(await aresolve(state, runtime))
        return {"structured_response": await model.with_structured_output(schema).ainvoke(
            messages, config)}


    input_schema = state_schema
    if pre_model_hook is not None:  # the hook may hand the model other messages than kept
        if pydantic_state:
            from pydantic import create_model

            input_schema = create_model("CallModelInputSchema", __base__=state_schema,
                                        llm_input_messages=(list[AnyMessage], ...))
        else:
            class CallModelInputSchema(state_schema):  # type: ignore[misc, valid-type]
                llm_input_messages: list[AnyMessage]

            input_schema = CallModelInputSchema

    graph = StateGraph(state_schema, context_schema=context_schema)
    graph.add_node("agent", SyncAsync(call_model, acall_model), input_schema=input_schema)
    entry = "agent"
    if pre_model_hook is not None:
        graph.add_node("pre_model_hook", as_node(pre_model_hook))
        graph.add_edge("pre_model_hook", "agent")
        entry = "pre_model_hook"
    graph.set_entry_point(entry)
    if post_model_hook is not None:
        graph.add_node("post_model_hook", as_node(post_model_hook))
        graph.add_edge("agent", "post_model_hook")
    if response_format is not None:
        graph.add_node("generate_structured_response",
                       SyncAsync(structured_response, astructured_response))
    after_model = "post_model_hook" if post_model_hook is not None else "agent"
    finish = "generate_structured_response" if response_format is not None else END

    def send_calls(state: Any, calls: list) -> list[Send]:
        return [Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=call,
                                                  state=state)) for call in calls]

    if not tool_classes:  # nothing to call: model, hooks, structured answer, end
        if response_format is not None:
            graph.add_edge(after_model, finish)
        return compiled(graph, checkpointer, store, interrupt_before, interrupt_after, debug,
                        name)

    def should_continue(state: Any) -> Any:
        last = value(state, "messages")[-1]
        if not isinstance(last, AIMessage) or not last.tool_calls:
            return "post_model_hook" if post_model_hook is not None else finish
        if version == "v1":
            return "tools"
        return "post_model_hook" if post_model_hook is not None else send_calls(
            state, last.tool_calls)

    graph.add_node("tools", tool_node)
    if post_model_hook is not None:
        def after_hook(state: Any) -> Any:
            messages = value(state, "messages")
            answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
            last_ai = next(m for m in reversed(messages) if isinstance(m, AIMessage))
            if pending := [c for c in last_ai.tool_calls if c["id"] not in answered]:
                return send_calls(state, pending)
            return entry if isinstance(messages[-1], ToolMessage) else finish

        graph.add_conditional_edges("post_model_hook", after_hook, [entry, "tools", finish])
        agent_paths = ["post_model_hook"]
    else:
        agent_paths = ["tools", finish]
    graph.add_conditional_edges("agent", should_continue, agent_paths)

    def after_tools(state: Any) -> str:
        """End when a return_direct tool answered; else back to the model."""
        for m in reversed(value(state, "messages")):
            if not isinstance(m, ToolMessage):
                break
            if m.name in return_direct:
                return END
        if isinstance(m, AIMessage) and any(c["name"] in return_direct for c in m.tool_calls):
            return END
        return entry

    if return_direct:
        graph.add_conditional_edges("tools", after_tools, [entry, END])
    else:
        graph.add_edge("tools", entry)
    return compiled(graph, checkpointer, store, interrupt_before, interrupt_after, debug, name)


def compiled(graph: StateGraph, checkpointer: Any, store: Any, interrupt_before: Any,
             interrupt_after: Any, debug: bool, name: str | None) -> Any:
    """Compile; a store is refused by compile itself (stores are out of scope)."""
    extra = {"store": store} if store is not None else {}
    return graph.compile(checkpointer=checkpointer, interrupt_before=interrupt_before,
                         interrupt_after=interrupt_after, debug=debug, name=name, **extra)


create_tool_calling_executor = create_react_agent
