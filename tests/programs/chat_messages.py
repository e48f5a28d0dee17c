"""An Academy-style chat: MessagesState, RemoveMessage, a fork that overwrites a message."""

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.graph.message import REMOVE_ALL_MESSAGES, add_messages


def echo(state: MessagesState) -> dict:
    last = state["messages"][-1]
    return {"messages": [AIMessage(f"you said: {last.content}")]}


def show(messages: list) -> list:
    return [(m.type, m.content) for m in messages]


builder = StateGraph(MessagesState)
builder.add_node("echo", echo)
builder.add_edge(START, "echo")
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "chat"}}
graph.invoke({"messages": [HumanMessage("hi", id="first")]}, config)
graph.invoke({"messages": [("user", "how are you?")]}, config)
print("thread:", show(graph.get_state(config).values["messages"]))

graph.update_state(config, {"messages": [RemoveMessage(id="first")]})
print("after remove:", show(graph.get_state(config).values["messages"]))

# time travel: back to the first answer's input, overwrite the human message by its id
start = next(s for s in graph.get_state_history(config)
             if s.next == ("echo",) and len(s.values["messages"]) == 1)
forked = graph.update_state(start.config, {"messages": [HumanMessage("hello", id="first")]})
print("fork:", show(graph.invoke(None, forked)["messages"]))
print("checkpoints:", len(list(graph.get_state_history(config))))
print("cleared:", add_messages([HumanMessage("a", id="1")],
                               [RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("b", id="2")]))
