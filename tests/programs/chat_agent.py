"""LangChain Academy's agent (module 1) on a fake chat model: tools, ToolNode, tools_condition."""

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.checkpoint.memory import MemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition


def multiply(a: int, b: int) -> int:
    """Multiply a and b."""
    return a * b


def add(a: int, b: int) -> int:
    """Add a and b."""
    return a + b


class FakeToolModel(GenericFakeChatModel):
    """Answers from a script; bind_tools keeps the script (a real model would read the tools)."""

    def bind_tools(self, tools, **kwargs):
        return self


script = iter([
    AIMessage("", tool_calls=[{"name": "add", "args": {"a": 3, "b": 4}, "id": "call-1"}]),
    AIMessage("", tool_calls=[{"name": "multiply", "args": {"a": 7, "b": 2}, "id": "call-2"}]),
    AIMessage("3 plus 4, times 2, is 14."),
    AIMessage("You asked me to add and multiply."),
])
llm_with_tools = FakeToolModel(messages=script).bind_tools([add, multiply])
sys_msg = SystemMessage(content="You are a helpful assistant tasked with arithmetic.")


def assistant(state: MessagesState):
    return {"messages": [llm_with_tools.invoke([sys_msg] + state["messages"])]}


builder = StateGraph(MessagesState)
builder.add_node("assistant", assistant)
builder.add_node("tools", ToolNode([add, multiply]))
builder.add_edge(START, "assistant")
builder.add_conditional_edges("assistant", tools_condition)
builder.add_edge("tools", "assistant")
react_graph = builder.compile(checkpointer=MemorySaver())

config = {"configurable": {"thread_id": "1"}}
for question in ["Add 3 and 4. Multiply the output by 2.", "What did I ask you?"]:
    result = react_graph.invoke({"messages": [HumanMessage(content=question)]}, config)
    for m in result["messages"]:
        calls = [(c["name"], c["args"]) for c in getattr(m, "tool_calls", [])]
        print(f"{m.type:>6}: {m.content!r} {calls or ''}")
    print("---")
print("checkpoints:", len(list(react_graph.get_state_history(config))))
