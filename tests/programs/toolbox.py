"""Send map-reduce, retries, a node cache, runtime context, the low-level Pregel API, errors."""

import operator
from dataclasses import dataclass
from typing import Annotated, TypedDict

from langgraph.cache.memory import InMemoryCache
from langgraph.channels import EphemeralValue, LastValue, Topic
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer
from langgraph.config import get_stream_writer
from langgraph.constants import END, START
from langgraph.errors import GraphRecursionError
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.pregel import NodeBuilder, Pregel
from langgraph.runtime import Runtime
from langgraph.types import CachePolicy, RetryPolicy, Send


class Overall(TypedDict):
    subjects: list[str]
    jokes: Annotated[list[str], operator.add]


def fan_out(state: Overall) -> list[Send]:
    return [Send("joke", {"subject": s}) for s in state["subjects"]]


attempts = {"n": 0}


def joke(state: dict) -> dict:
    attempts["n"] += 1
    if attempts["n"] == 1:
        raise ConnectionError("flaky")
    get_stream_writer()(f"joking about {state['subject']}")
    return {"jokes": [f"a joke about {state['subject']}"]}


builder = StateGraph(Overall)
builder.add_node("joke", joke, retry_policy=RetryPolicy(initial_interval=0, jitter=False))
builder.add_conditional_edges(START, fan_out, ["joke"])
builder.add_edge("joke", END)
graph = builder.compile()
print("compiled:", isinstance(graph, CompiledStateGraph))
print(sorted(graph.invoke({"subjects": ["cats", "dogs"]})["jokes"]), "attempts", attempts["n"])
print(sorted(c for c in graph.stream({"subjects": ["owls"]}, stream_mode="custom")))


@dataclass
class Context:
    greeting: str


class Count(TypedDict):
    name: str
    text: str


calls = []


def greet(state: Count, runtime: Runtime[Context]) -> dict:
    calls.append(state["name"])
    return {"text": f"{runtime.context.greeting}, {state['name']}"}


cached = StateGraph(Count, context_schema=Context)
cached.add_node("greet", greet, cache_policy=CachePolicy())
cached.add_edge(START, "greet")
app = cached.compile(cache=InMemoryCache())
for name in ["Ada", "Ada", "Bob"]:
    print(app.invoke({"name": name, "text": ""}, context=Context(greeting="hi")))
print("node ran for", calls)

double = (NodeBuilder().subscribe_only("a").do(lambda x: x * 2).write_to("b"))
pregel = Pregel(nodes={"double": double},
                channels={"a": EphemeralValue(int), "b": LastValue(int), "log": Topic(str)},
                input_channels="a", output_channels="b", checkpointer=InMemorySaver())
print("pregel:", pregel.invoke(21, {"configurable": {"thread_id": "p"}}))

loop = StateGraph(Count)
loop.add_node("again", lambda s: {"text": s["text"] + "."})
loop.add_edge(START, "again")
loop.add_edge("again", "again")
try:
    loop.compile().invoke({"name": "x", "text": ""}, {"recursion_limit": 4})
except GraphRecursionError as err:
    print("recursion:", type(err).__name__)

serde = JsonPlusSerializer()
print("serde:", serde.loads_typed(serde.dumps_typed({"set": {1, 2}, "t": (1, "a")})))
