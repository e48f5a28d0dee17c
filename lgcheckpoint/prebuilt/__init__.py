"""Prebuilt agent parts: ToolNode runs a chat model's tool calls, create_react_agent loops them.

LangGraph's ``langgraph.prebuilt`` (langgraph-prebuilt 1.1.3), on the ``messages`` extra,
without what needs a store (stores are out of scope: a tool taking an ``InjectedStore`` is
refused) or the v3 streaming protocol (``ToolCallTransformer``).
Next: tool_node.py.
"""

from lgcheckpoint.prebuilt.chat_agent_executor import (
    PROMPT_RUNNABLE_NAME, AgentState, AgentStatePydantic, AgentStateWithStructuredResponse,
    AgentStateWithStructuredResponsePydantic, create_react_agent, create_tool_calling_executor,
)
from lgcheckpoint.prebuilt.interrupt import (
    ActionRequest, HumanInterrupt, HumanInterruptConfig, HumanResponse,
)
from lgcheckpoint.prebuilt.tool_node import (
    INVALID_TOOL_NAME_ERROR_TEMPLATE, TOOL_CALL_ERROR_TEMPLATE, TOOL_EXECUTION_ERROR_TEMPLATE,
    TOOL_INVOCATION_ERROR_TEMPLATE, InjectedState, InjectedStore, ToolCallRequest,
    ToolCallWithContext, ToolInvocationError, ToolNode, ToolRuntime, msg_content_output,
    tools_condition,
)
from lgcheckpoint.prebuilt.tool_validator import ValidationNode

__all__ = ["create_react_agent", "ToolNode", "tools_condition", "ValidationNode",
           "InjectedState", "InjectedStore", "ToolRuntime"]
# also served here (LangGraph's submodules' public names, for the swap table that maps
# langgraph.prebuilt.* onto this package): the agent's states and the tool node's helpers
MORE = [PROMPT_RUNNABLE_NAME, AgentState, AgentStatePydantic, AgentStateWithStructuredResponse,
        AgentStateWithStructuredResponsePydantic, create_tool_calling_executor, ActionRequest,
        HumanInterrupt, HumanInterruptConfig, HumanResponse, INVALID_TOOL_NAME_ERROR_TEMPLATE,
        TOOL_CALL_ERROR_TEMPLATE, TOOL_EXECUTION_ERROR_TEMPLATE, TOOL_INVOCATION_ERROR_TEMPLATE,
        ToolCallRequest, ToolCallWithContext, ToolInvocationError, msg_content_output]

# what LangGraph's module has and this one does not, and why
OUT_OF_SCOPE = {
    "ToolCallTransformer": "it belongs to the v3 streaming protocol, which is out of scope",
}


def __getattr__(name: str):
    """Refuse by name what LangGraph's prebuilt has and lgcheckpoint leaves out."""
    if name in OUT_OF_SCOPE:
        raise ImportError(f"{name} is out of scope in lgcheckpoint: {OUT_OF_SCOPE[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
