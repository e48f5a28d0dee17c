"""A subgraph as a node: its state, its interrupt, streamed with subgraphs=True."""

from typing import TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt


class Inner(TypedDict):
    text: str


def shout(state: Inner) -> dict:
    return {"text": state["text"].upper()}


def confirm(state: Inner) -> dict:
    ok = interrupt(f"keep {state['text']!r}?")
    return {"text": state["text"] + ("!" if ok else "?")}


inner = StateGraph(Inner)
inner.add_node("shout", shout)
inner.add_node("confirm", confirm)
inner.add_edge(START, "shout")
inner.add_edge("shout", "confirm")
inner.add_edge("confirm", END)


class Outer(TypedDict):
    text: str
    done: bool


def finish(state: Outer) -> dict:
    return {"done": True}


outer = StateGraph(Outer)
outer.add_node("inner", inner.compile())
outer.add_node("finish", finish)
outer.add_edge(START, "inner")
outer.add_edge("inner", "finish")
graph = outer.compile(checkpointer=InMemorySaver())

config = {"configurable": {"thread_id": "s"}}
for ns, chunk in graph.stream({"text": "hello", "done": False}, config, subgraphs=True,
                              stream_mode="updates"):
    where = [part.split(":")[0] for part in ns]
    if "__interrupt__" in chunk:
        chunk = {"__interrupt__": [i.value for i in chunk["__interrupt__"]]}
    print("update", where, chunk)
state = graph.get_state(config, subgraphs=True)
print("next:", state.next, "task states:",
      [t.state.values for t in state.tasks if t.state is not None])
for ns, chunk in graph.stream(Command(resume=True), config, subgraphs=True,
                              stream_mode="updates"):
    print("update", [part.split(":")[0] for part in ns], chunk)
print("final:", graph.get_state(config).values)
