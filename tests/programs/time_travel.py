"""Time travel: replay from an earlier checkpoint, and fork it with update_state."""

from typing import Annotated, TypedDict
import operator

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph


class State(TypedDict):
    topic: str
    steps: Annotated[list[str], operator.add]


def plan(state: State) -> dict:
    return {"steps": [f"plan {state['topic']}"]}


def write(state: State) -> dict:
    return {"steps": [f"write about {state['topic']}"]}


builder = StateGraph(State)
builder.add_node("plan", plan)
builder.add_node("write", write)
builder.add_edge(START, "plan")
builder.add_edge("plan", "write")
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "t"}}
print("first run:", graph.invoke({"topic": "cats", "steps": []}, config))
history = list(graph.get_state_history(config))
for snap in history:
    print("  step", snap.metadata["step"], snap.metadata["source"], "next", snap.next,
          "steps", snap.values.get("steps"))

before_write = next(s for s in history if s.next == ("write",))
print("replay:", graph.invoke(None, before_write.config))

forked = graph.update_state(before_write.config, {"topic": "dogs"})
print("fork source:", graph.get_state(forked).metadata["source"])
print("fork run:", graph.invoke(None, forked))
print("checkpoints now:", len(list(graph.get_state_history(config))))
