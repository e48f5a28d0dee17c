"""Streaming updates, custom chunks from a StreamWriter, RemainingSteps (the docs' import paths)."""

import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.managed.is_last_step import RemainingSteps
from langgraph.types import StreamWriter


class State(TypedDict):
    count: int
    seen: Annotated[list[int], operator.add]
    remaining_steps: RemainingSteps


def tick(state: State, writer: StreamWriter) -> dict:
    writer({"progress": state["count"], "steps left": state["remaining_steps"]})
    return {"count": state["count"] + 1, "seen": [state["count"]]}


def route(state: State) -> str:
    return END if state["count"] >= 3 else "tick"


builder = StateGraph(State)
builder.add_node("tick", tick)
builder.add_edge(START, "tick")
builder.add_conditional_edges("tick", route)
graph = builder.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "w"}, "recursion_limit": 10}
for mode, chunk in graph.stream({"count": 0, "seen": []}, config,
                                stream_mode=["updates", "custom"]):
    print(mode, chunk)
print("values:", [s for s in graph.stream(None, config, stream_mode="values")])
print("final:", graph.get_state(config).values)
