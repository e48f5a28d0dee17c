"""ToolNode runs the tool calls of a chat model's last message; tools_condition routes to it.

One ``ToolMessage`` per call (calls run in parallel), in the shape the input came in: a state dict
``{"messages": [...]}``, a list of messages, or a list of tool calls. A tool may take the graph's
state (``Annotated[dict, InjectedState]``) or a ``ToolRuntime`` (state, context, config, ...)
that the model never sees, and may return a ``Command`` to update the state or jump. A failing
tool becomes an error message for the model, per ``handle_tool_errors``; by default only bad
arguments do (any other error fails the node). LangGraph's ``langgraph.prebuilt.tool_node``;
stores are out of scope (``InjectedStore`` is refused). Next: chat_agent_executor.py.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import warnings
from concurrent.futures import ThreadPoolExecutor
from copy import copy, deepcopy
from dataclasses import dataclass, field, replace
from types import UnionType
from typing import (
    Annotated, Any, Callable, Generic, Literal, Sequence, Union, get_args,
    get_origin, get_type_hints,
)

from langchain_core.messages import AIMessage, AnyMessage, RemoveMessage, ToolCall, ToolMessage
from langchain_core.messages import convert_to_messages
from langchain_core.tools import BaseTool, InjectedToolArg, ToolException
from langchain_core.tools import tool as create_tool
from langchain_core.tools.base import (
    TOOL_MESSAGE_BLOCK_TYPES, _DirectlyInjectedToolArg, _is_injected_arg_type,
    get_all_basemodel_annotations,
)
from pydantic import BaseModel, ValidationError
from typing_extensions import TypedDict, TypeVar

from lgcheckpoint.constants import CONF, END, RUNTIME
from lgcheckpoint.errors import GraphBubbleUp, is_invalid_resume
from lgcheckpoint.managed import read_managed
from lgcheckpoint.messages import REMOVE_ALL_MESSAGES
from lgcheckpoint.pregel.runner import task_config
from lgcheckpoint.runtime import Runtime, task_runtime
from lgcheckpoint.types import Command, Send, current_task

__all__ = ["ToolNode", "tools_condition", "InjectedState", "ToolRuntime", "ToolCallRequest",
           "ToolCallWithContext",
           "ToolInvocationError", "msg_content_output", "InjectedStore"]

BUBBLES = (GraphBubbleUp,)  # what a tool raises for the graph (interrupt, Command): never handled
InputType = Literal["list", "dict", "tool_calls"]  # the shape of the input, kept for the output

INVALID_TOOL_NAME_ERROR_TEMPLATE = (
    "Error: {requested_tool} is not a valid tool, try one of [{available_tools}].")
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
TOOL_INVOCATION_ERROR_TEMPLATE = ("Error invoking tool '{tool_name}' with kwargs {tool_kwargs} "
                                  "with error:\n {error}\n Please fix the error and try again.")
TOOL_EXECUTION_ERROR_TEMPLATE = TOOL_INVOCATION_ERROR_TEMPLATE.replace("invoking", "executing")

StateT = TypeVar("StateT", default=dict)  # ToolRuntime[Context] or ToolRuntime[Context, State]
ContextT = TypeVar("ContextT", default=None)


class InjectedState(InjectedToolArg):
    """Annotates a tool argument the node fills with the graph state (or one key of it)."""

    def __init__(self, field: str | None = None) -> None:
        self.field = field


@dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool taking ``runtime: ToolRuntime`` is given (the model never sees it)."""

    state: Any
    context: Any
    config: dict
    stream_writer: Callable[[Any], None]
    tool_call_id: str | None
    store: Any = None  # stores are out of scope: always None
    tools: list[BaseTool] = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None


class ToolCallWithContext(TypedDict):
    """A tool call sent to the node on its own (create_react_agent v2), with the state."""

    tool_call: ToolCall
    __type: Literal["tool_call_with_context"]
    state: Any


@dataclass
class ToolCallRequest:
    """One tool call as a ``wrap_tool_call`` interceptor sees it; ``override`` makes a copy."""

    tool_call: ToolCall
    tool: BaseTool | None
    state: Any
    runtime: ToolRuntime

    def __setattr__(self, name: str, value: Any) -> None:
        if name in self.__dataclass_fields__ and hasattr(self, name):  # set after __init__
            warnings.warn(f"Setting attribute '{name}' on ToolCallRequest is deprecated. Use the "
                          "override() method instead to create a new instance with modified "
                          "values.", DeprecationWarning, stacklevel=2)
        object.__setattr__(self, name, value)

    def override(self, **changes: Any) -> ToolCallRequest:
        """A copy with these fields replaced; a new state is also the runtime's state."""
        request = replace(self, **changes)
        if "state" in changes and isinstance(request.runtime, ToolRuntime):
            object.__setattr__(request, "runtime", replace(request.runtime, state=request.state))
        return request


class ToolInvocationError(ToolException):
    """The model called a tool with arguments that do not fit its schema."""

    def __init__(self, tool_name: str, source: ValidationError, tool_kwargs: dict,
                 filtered_errors: list | None = None) -> None:
        shown = str(source) if filtered_errors is None else "\n".join(
            f"{'.'.join(map(str, e.get('loc', ())))}: {e.get('msg', 'Unknown error')}"
            for e in filtered_errors)
        self.message = TOOL_INVOCATION_ERROR_TEMPLATE.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error=shown)
        self.tool_name, self.tool_kwargs, self.source = tool_name, tool_kwargs, source
        self.filtered_errors = filtered_errors
        super().__init__(self.message)


def default_handle_tool_errors(e: Exception) -> str:
    """The default: bad arguments go back to the model; any other error fails the node."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def msg_content_output(output: Any) -> str | list[dict]:
    """A tool's result as message content: text and content blocks as is, else JSON or str."""
    if isinstance(output, str) or isinstance(output, list) and all(
            isinstance(x, dict) and x.get("type") in TOOL_MESSAGE_BLOCK_TYPES for x in output):
        return output
    try:
        return json.dumps(output, ensure_ascii=False)
    except Exception:
        return str(output)


@dataclass
class Injected:
    """A tool's arguments filled by the node: state (argument -> state key or None for all)."""

    state: dict[str, str | None]
    runtime: str | None
    keys: set[str]  # every injected argument: never shown to the model, never kept from it
    optional: set[str]  # state arguments with a default (their key may be missing)


def injected_args(tool: BaseTool) -> Injected:
    """Find the arguments annotated InjectedState / typed ToolRuntime (or named runtime)."""
    schema = tool.get_input_schema()
    func = getattr(tool, "func", None) or getattr(tool, "coroutine", None)
    hints = {**(get_type_hints(func, include_extras=True) if func else {}),
             **get_all_basemodel_annotations(schema)}
    found = Injected({}, None, set(), set())
    for name, hint in hints.items():
        if _is_injected_arg_type(hint):
            found.keys.add(name)
        if name == "runtime" or marked(hint, ToolRuntime):
            found.runtime = name
        if marker := marked(hint, InjectedState):
            found.state[name] = marker.field if isinstance(marker, InjectedState) else None
            info = getattr(schema, "model_fields", {}).get(name)
            if found.state[name] and info is not None and not info.is_required():
                found.optional.add(name)
        if marked(hint, InjectedStore):
            raise ValueError(f"tool {tool.name!r}: InjectedStore needs a store, and stores are "
                             "out of scope in lgcheckpoint")
    return found


def marked(hint: Any, kind: type) -> Any:
    """The `kind` marker (instance, or True for the class) in an annotation, else None."""
    if isinstance(hint, kind):
        return hint
    if isinstance(hint, type) and issubclass(hint, kind):
        return True
    origin = get_origin(hint)
    if isinstance(origin, type) and issubclass(origin, kind):  # ToolRuntime[Ctx, State]
        return True
    if origin in (Union, UnionType, Annotated):
        return next((m for m in map(lambda a: marked(a, kind), get_args(hint)) if m), None)
    return None


def edge_state() -> Any:
    """The state the running node would get from an edge (its input read from the graph's
    channels, with managed values, as its schema's class); {} outside a running graph."""
    task = current_task.get(None)
    if task is None or task.node is None or task.local_read is None:
        return {}
    node = task.node
    state = task.local_read(node.reads)
    if node.managed:
        state.update(read_managed(node.managed, task.scratchpad))
    return node.mapper(state) if node.mapper is not None else state


class InjectedStore(InjectedToolArg):
    """Marks a store argument; stores are out of scope, so ToolNode refuses such a tool."""


class ToolNode:
    """A node that runs the tool calls of the last AIMessage; one ToolMessage per call."""

    # what a drawing's to_json() names it: the public class it stands in for (pregel/draw.py)
    lc_id = ["langgraph", "prebuilt", "tool_node", "ToolNode"]

    def __init__(self, tools: Sequence[BaseTool | Callable], *, name: str = "tools",
                 tags: list[str] | None = None,
                 handle_tool_errors: Any = default_handle_tool_errors,
                 messages_key: str = "messages",
                 wrap_tool_call: Callable | None = None,
                 awrap_tool_call: Callable | None = None) -> None:
        self.name, self.tags, self.messages_key = name, tags, messages_key
        self.handle_tool_errors = handle_tool_errors
        self.wrap_tool_call, self.awrap_tool_call = wrap_tool_call, awrap_tool_call
        self.tools_by_name: dict[str, BaseTool] = {}
        for tool in tools:
            tool = tool if isinstance(tool, BaseTool) else create_tool(tool)
            self.tools_by_name[tool.name] = tool
        self.injected = {name: injected_args(tool) for name, tool in self.tools_by_name.items()}
        self.handled = handled_types(handle_tool_errors)

    # --- as a node, and on its own -----------------------------------------------------------
    def __call__(self, input: Any, config: dict, runtime: Runtime) -> Any:
        return self.invoke(input, config, runtime=runtime)

    def invoke(self, input: Any, config: dict | None = None, *,
               runtime: Runtime | None = None) -> Any:
        """Run every call (in threads when several), then combine their results."""
        calls, shape = self.parse_input(input)
        runtimes = [self.tool_runtime(input, call, config, runtime) for call in calls]
        if len(calls) <= 1:
            outputs = [self.run_one(c, shape, r) for c, r in zip(calls, runtimes)]
        else:
            contexts = [contextvars.copy_context() for _ in calls]  # the node's, for each call
            with ThreadPoolExecutor((config or {}).get("max_concurrency")) as pool:
                outputs = list(pool.map(lambda ctx, c, r: ctx.run(self.run_one, c, shape, r),
                                        contexts, calls, runtimes))
        return self.combine(outputs, shape)

    async def ainvoke(self, input: Any, config: dict | None = None, *,
                      runtime: Runtime | None = None) -> Any:
        calls, shape = self.parse_input(input)
        runtimes = [self.tool_runtime(input, call, config, runtime) for call in calls]
        outputs = await asyncio.gather(*(self.arun_one(c, shape, r)
                                         for c, r in zip(calls, runtimes)))
        return self.combine(list(outputs), shape)

    def parse_input(self, input: Any) -> tuple[list[ToolCall], InputType]:
        """The calls to run, and the shape of the input (the output takes the same)."""
        if isinstance(input, list) and input and isinstance(input[-1], dict) and input[-1].get(
                "type") == "tool_call":
            return list(input), "tool_calls"
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [input["tool_call"]], "tool_calls"
        if isinstance(input, list):
            messages, shape = input, "list"
        elif isinstance(input, dict):
            messages, shape = input.get(self.messages_key, []), "dict"
        else:
            messages, shape = getattr(input, self.messages_key, []), "dict"
        if not messages:
            raise ValueError("No message found in input")
        last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if last_ai is None:
            raise ValueError("No AIMessage found in input")
        return list(last_ai.tool_calls), shape

    def tool_runtime(self, input: Any, call: ToolCall, config: dict | None,
                     runtime: Runtime | None) -> ToolRuntime:
        if config is None and (task := current_task.get(None)) is not None:  # inside a node
            config, runtime = task_config(task), runtime or task_runtime(task)
        runtime = runtime or (config or {}).get(CONF, {}).get(RUNTIME) or Runtime()
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            state = input["state"]
        elif isinstance(input, list) and input and isinstance(input[-1], dict):
            state = edge_state()  # bare tool calls (a Send's) carry no state: read the graph's
        else:
            state = input
        return ToolRuntime(state=state, context=runtime.context, config=dict(config or {}),
                           stream_writer=runtime.stream_writer, tool_call_id=call["id"],
                           store=None, tools=list(self.tools_by_name.values()),
                           execution_info=runtime.execution_info)

    # --- one call ----------------------------------------------------------------------------
    def request(self, call: ToolCall, runtime: ToolRuntime) -> ToolCallRequest:
        return ToolCallRequest(call, self.tools_by_name.get(call["name"]), runtime.state, runtime)

    def run_one(self, call: ToolCall, shape: InputType, runtime: ToolRuntime) -> Any:
        request = self.request(call, runtime)
        if self.wrap_tool_call is None:
            return self.execute(request, shape)
        try:
            return self.wrap_tool_call(request, lambda req: self.execute(req, shape))
        except BUBBLES:
            raise
        except Exception as e:
            return self.wrapped_error(e, request)

    async def arun_one(self, call: ToolCall, shape: InputType, runtime: ToolRuntime) -> Any:
        request = self.request(call, runtime)
        if self.wrap_tool_call is None and self.awrap_tool_call is None:
            return await self.aexecute(request, shape)
        try:
            if self.awrap_tool_call is not None:
                return await self.awrap_tool_call(request, lambda r: self.aexecute(r, shape))
            return self.wrap_tool_call(request, lambda req: self.execute(req, shape))
        except BUBBLES:
            raise
        except Exception as e:
            return self.wrapped_error(e, request)

    def wrapped_error(self, e: Exception, request: ToolCallRequest) -> ToolMessage:
        """An interceptor's own error: handled by any truthy handle_tool_errors."""
        if not self.handle_tool_errors or is_invalid_resume(e):
            raise e
        return self.error_message(e, request.tool_call)

    def execute(self, request: ToolCallRequest, shape: InputType) -> Any:
        return self.finish(request, shape, lambda tool, args, cfg: tool.invoke(args, cfg))

    async def aexecute(self, request: ToolCallRequest, shape: InputType) -> Any:
        async def run(tool: BaseTool, args: dict, cfg: dict) -> Any:
            return await tool.ainvoke(args, cfg)

        call, tool = request.tool_call, request.tool
        if tool is None:
            return self.unknown_tool(call)
        args = {**self.inject(call, request.runtime, tool), "type": "tool_call"}
        try:
            response = await self.called(run, tool, args, request)
            return self.normalize(response, call, shape)
        except BUBBLES:
            raise
        except Exception as e:
            return self.handle(e, call)

    def finish(self, request: ToolCallRequest, shape: InputType, run: Callable) -> Any:
        call, tool = request.tool_call, request.tool
        if tool is None:
            return self.unknown_tool(call)
        args = {**self.inject(call, request.runtime, tool), "type": "tool_call"}
        try:
            return self.normalize(self.called(run, tool, args, request), call, shape)
        except BUBBLES:
            raise
        except Exception as e:
            return self.handle(e, call)

    def called(self, run: Callable, tool: BaseTool, args: dict, request: ToolCallRequest) -> Any:
        """Run the tool on its (injected) arguments; bad arguments become ToolInvocationError
        (an awaitable when `run` is async)."""
        call = request.tool_call

        def invalid(exc: ValidationError) -> ToolInvocationError:
            injected = self.injected.get(call["name"])
            return ToolInvocationError(call["name"], exc, call["args"],
                                       filtered_errors(exc, injected))

        if inspect.iscoroutinefunction(run):
            async def awaited() -> Any:
                try:
                    return await run(tool, args, request.runtime.config)
                except ValidationError as exc:
                    if is_invalid_resume(exc):
                        raise
                    raise invalid(exc) from exc
            return awaited()
        try:
            return run(tool, args, request.runtime.config)
        except ValidationError as exc:
            if is_invalid_resume(exc):
                raise
            raise invalid(exc) from exc

    def unknown_tool(self, call: ToolCall) -> ToolMessage:
        content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(requested_tool=call["name"],
                                           available_tools=", ".join(self.tools_by_name))
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    def handle(self, e: Exception, call: ToolCall) -> ToolMessage:
        """A failed tool: an error message for the model, or the error itself."""
        if is_invalid_resume(e) or not self.handle_tool_errors or not isinstance(
                e, self.handled):
            raise e
        return self.error_message(e, call)

    def error_message(self, e: Exception, call: ToolCall) -> ToolMessage:
        flag = self.handle_tool_errors
        if isinstance(flag, (bool, tuple, type)):
            content = TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e))
        elif isinstance(flag, str):
            content = flag
        elif callable(flag):
            content = flag(e)
        else:
            raise ValueError("Got unexpected type of `handle_tool_error`. Expected bool, str or "
                             f"callable. Received: {flag}")
        return ToolMessage(content, name=call["name"], tool_call_id=call["id"], status="error")

    def inject(self, call: ToolCall, runtime: ToolRuntime, tool: BaseTool) -> ToolCall:
        """The call with the state / runtime arguments its tool asks for filled in."""
        injected = self.injected.get(call["name"]) or injected_args(tool)
        if not injected.keys and not injected.state and not injected.runtime:
            return call
        values: dict[str, Any] = {}
        state = runtime.state
        if injected.state and isinstance(state, list):  # a list input: the messages only
            wanted = list(injected.state.values())
            if wanted[0] is None or wanted == [self.messages_key]:
                state = {self.messages_key: state}
            else:
                fields = ", ".join(f for f in wanted if f)
                raise ValueError(f"Invalid input to ToolNode. Tool {call['name']} requires graph "
                                 "state dict as input." + (
                                     f" State should contain fields {fields}." if fields else ""))
        for arg, key in injected.state.items():
            if not key:
                values[arg] = state
            elif isinstance(state, dict) and key in state:
                values[arg] = state[key]
            elif not isinstance(state, dict) and hasattr(state, key):
                values[arg] = getattr(state, key)
            elif arg not in injected.optional:
                raise KeyError(key) if isinstance(state, dict) else AttributeError(key)
        if injected.runtime:
            values[injected.runtime] = runtime
        call = copy(call)
        call["args"] = {**{k: v for k, v in call["args"].items() if k not in injected.keys},
                        **values}
        return call

    # --- results -----------------------------------------------------------------------------
    def normalize(self, response: Any, call: ToolCall, shape: InputType) -> Any:
        """A tool's ToolMessage, Command or list of them, checked against its call."""
        if isinstance(response, Command):
            return self.checked_command(response, call, shape)
        if isinstance(response, ToolMessage):
            response.content = msg_content_output(response.content)
            return response
        if isinstance(response, list):
            if not all(isinstance(r, (Command, ToolMessage)) for r in response):
                raise TypeError(f"Tool {call['name']} returned a list with invalid element "
                                "types: expected all Command or ToolMessage")
            answers = sum(1 for m in self.messages_of(response) if isinstance(m, ToolMessage)
                          and m.tool_call_id == call["id"])
            if answers != 1:
                raise ValueError(
                    f"Tool {call['name']} returned a list with {answers} messages bound to "
                    f"tool_call_id {call['id']!r}; expected exactly one terminating ToolMessage.")
            for item in response:
                if isinstance(item, ToolMessage):
                    item.content = msg_content_output(item.content)
            return [self.checked_command(r, call, shape, needs_answer=False)
                    if isinstance(r, Command) else r for r in response]
        raise TypeError(f"Tool {call['name']} returned unexpected type: {type(response)}")

    def messages_of(self, items: list) -> list:
        out = []
        for item in items:
            if isinstance(item, Command) and isinstance(item.update, dict):
                out.extend(item.update.get(self.messages_key, []))
            elif not isinstance(item, Command):
                out.append(item)
        return out

    def checked_command(self, command: Command, call: ToolCall, shape: InputType,
                        needs_answer: bool = True) -> Command:
        """A tool's Command must answer its call with a ToolMessage (unless it leaves the
        graph), in the input's shape."""
        if isinstance(command.update, dict):
            if shape not in ("dict", "tool_calls"):
                raise ValueError(
                    "Tools can provide a dict in Command.update only when using dict with "
                    f"'{self.messages_key}' key as ToolNode input, got: {command.update} for "
                    f"tool '{call['name']}'")
            command = deepcopy(command)
            messages = command.update.get(self.messages_key, [])
        elif isinstance(command.update, list):
            if shape != "list":
                raise ValueError(
                    "Tools can provide a list of messages in Command.update only when using "
                    f"list of messages as ToolNode input, got: {command.update} for tool "
                    f"'{call['name']}'")
            command = deepcopy(command)
            messages = command.update
        else:
            return command
        messages = convert_to_messages(messages)
        if messages == [RemoveMessage(id=REMOVE_ALL_MESSAGES)]:
            return command
        answered = False
        for message in messages:
            if isinstance(message, ToolMessage) and message.tool_call_id == call["id"]:
                message.name, answered = call["name"], True
        if needs_answer and command.graph is None and not answered:
            example = ('`Command(update={"messages": [ToolMessage("Success", tool_call_id='
                       'tool_call_id), ...]}, ...)`' if shape == "dict" else
                       '`Command(update=[ToolMessage("Success", tool_call_id=tool_call_id), '
                       '...], ...)`')
            raise ValueError(
                f"Expected to have a matching ToolMessage in Command.update for tool "
                f"'{call['name']}', got: {messages}. Every tool call (LLM requesting to call a "
                "tool) in the message history MUST have a corresponding ToolMessage. You can "
                f"fix it by modifying the tool to return {example}.")
        return command

    def combine(self, outputs: list, shape: InputType) -> Any:
        """The node's result: the messages in the input's shape, or a list with Commands (the
        parent-graph Sends of several tools merged into one Command)."""
        flat = [o for out in outputs for o in (out if isinstance(out, list) else [out])]
        wrap = (lambda m: m) if shape == "list" else (lambda m: {self.messages_key: m})
        if not any(isinstance(o, Command) for o in flat):
            return wrap(flat)
        combined: list = []
        parent: Command | None = None
        for o in flat:
            sends = isinstance(o, Command) and o.graph == Command.PARENT and isinstance(
                o.goto, list) and all(isinstance(s, Send) for s in o.goto)
            if sends:
                parent = Command(graph=Command.PARENT, goto=[*(parent.goto if parent else []),
                                                               *o.goto])
            else:
                combined.append(o if isinstance(o, Command) else wrap([o]))
        return combined + ([parent] if parent else [])


def handled_types(flag: Any) -> tuple[type[Exception], ...]:
    """Which errors handle_tool_errors turns into messages (a handler's by its annotation)."""
    if isinstance(flag, type) and issubclass(flag, Exception):
        return (flag,)
    if isinstance(flag, tuple):
        return flag
    if not callable(flag) or isinstance(flag, type):
        return (Exception,)
    params = list(inspect.signature(flag).parameters.values())
    if not params:
        return (Exception,)
    first = params[1] if params[0].name in ("self", "cls") and len(params) == 2 else params[0]
    hint = get_type_hints(flag).get(first.name)
    if hint is None:
        return (Exception,)
    if get_origin(hint) in (Union, UnionType):
        args = get_args(hint)
        if all(isinstance(a, type) and issubclass(a, Exception) for a in args):
            return args
        raise ValueError("All types in the error handler error annotation must be Exception "
                         "types. For example, `def custom_handler(e: Union[ValueError, "
                         f"TypeError])`. Got '{first.annotation}' instead.")
    if isinstance(hint, type) and issubclass(hint, Exception):
        return (hint,)
    raise ValueError("Arbitrary types are not supported in the error handler signature. Please "
                     "annotate the error with either a specific Exception type or a union of "
                     "Exception types. For example, `def custom_handler(e: ValueError)` or "
                     "`def custom_handler(e: Union[ValueError, TypeError])`. "
                     f"Got '{hint}' instead.")


def filtered_errors(error: ValidationError, injected: Injected | None) -> list:
    """The validation errors about arguments the model gave (not the injected ones)."""
    hidden = set(injected.keys) | set(injected.state) if injected else set()
    out = []
    for e in error.errors():
        if e["loc"] and e["loc"][0] not in hidden:
            e = dict(e)
            if isinstance(e.get("input"), dict):
                e["input"] = {k: v for k, v in e["input"].items() if k not in hidden}
            out.append(e)
    return out


def tools_condition(state: list[AnyMessage] | dict[str, Any] | BaseModel,
                    messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """Route to "tools" if the last message asks for tool calls, else end."""
    if isinstance(state, list):
        last = state[-1]
    elif isinstance(state, dict) and (messages := state.get(messages_key, [])) or (
            messages := getattr(state, messages_key, [])):
        last = messages[-1]
    else:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    return "tools" if getattr(last, "tool_calls", None) else END

