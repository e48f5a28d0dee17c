"""PostgresSaver from a connection string (the persistence docs); DB_URI names the database."""

import os
import sys
from typing import TypedDict

from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command, interrupt


class State(TypedDict):
    question: str
    answer: str


def ask(state: State) -> dict:
    return {"answer": interrupt(state["question"])}


builder = StateGraph(State)
builder.add_node("ask", ask)
builder.add_edge(START, "ask")

thread = sys.argv[1]  # each run its own thread
with PostgresSaver.from_conn_string(os.environ["DB_URI"]) as checkpointer:
    checkpointer.setup()
    graph = builder.compile(checkpointer=checkpointer)
    config = {"configurable": {"thread_id": thread}}
    print(graph.invoke({"question": "favourite colour?", "answer": ""}, config))
    print("waiting at:", graph.get_state(config).next)
    print(graph.invoke(Command(resume="teal"), config))
    print("stored:", [(c.metadata["source"], c.metadata["step"])
                      for c in checkpointer.list(config)])
