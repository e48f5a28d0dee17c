"""Persistence, an interrupt and a Command resume, in memory and on SQLite (human-in-the-loop)."""

import sqlite3
import sys
from typing import Annotated, TypedDict
import operator

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    request: str
    log: Annotated[list[str], operator.add]
    approved: bool


def draft(state: State) -> dict:
    return {"log": [f"drafted {state['request']}"]}


def review(state: State) -> dict:
    answer = interrupt({"question": "approve?", "request": state["request"]})
    return {"approved": answer == "yes", "log": [f"human said {answer}"]}


def publish(state: State) -> dict:
    return {"log": ["published" if state["approved"] else "dropped"]}


builder = StateGraph(State)
builder.add_node("draft", draft)
builder.add_node("review", review)
builder.add_node("publish", publish)
builder.add_edge(START, "draft")
builder.add_edge("draft", "review")
builder.add_edge("review", "publish")
builder.add_edge("publish", END)

answer = sys.argv[1] if len(sys.argv) > 1 else "yes"
for name, saver in [("memory", InMemorySaver()),
                    ("sqlite", SqliteSaver(sqlite3.connect(":memory:", check_same_thread=False)))]:
    graph = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "post-1"}}
    result = graph.invoke({"request": "a blog post", "log": []}, config)
    print(name, "stopped:", [i.value for i in result["__interrupt__"]])
    snapshot = graph.get_state(config)
    print(name, "next:", snapshot.next, "values:", snapshot.values)
    print(name, "resumed:", graph.invoke(Command(resume=answer), config))
    history = list(graph.get_state_history(config))
    print(name, "checkpoints:", len(history),
          [(s.metadata["source"], s.metadata["step"], s.next) for s in history])
