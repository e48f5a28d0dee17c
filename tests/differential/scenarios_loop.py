"""Scenarios of the super-step loop, channels, reducers, edges, schemas, streams, durability.

Each scenario builds a small graph with ``lib``'s names and drives it through ``lib``'s recording
verbs; the harness compares everything observed between LangGraph and lgcheckpoint.
Next: ``scenarios_interrupts.py`` (interrupts, time travel, failures, subgraphs).
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import BaseModel
from typing_extensions import TypedDict

from tests.differential.harness import Run, registry

LOOP, scenario = registry()


class Trail(TypedDict, total=False):
    """A state that keeps every node's visit in order, plus a counter."""

    trail: Annotated[list[str], operator.add]
    n: int


def visit(name: str, lib: Run):
    """A node that appends its own name to the trail (and counts its calls)."""

    def node(state: dict) -> dict:
        lib.count(name)
        return {"trail": [name]}

    node.__name__ = name
    return node


def thread(t: Any = "t1", **extra) -> dict:
    return {"configurable": {"thread_id": t, **extra}}


@scenario
def linear_chain(lib: Run):
    g = lib.StateGraph(Trail)
    for name in "abc":
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", lib.END)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": ["in"]}, thread())
    lib.invoke(graph, {"trail": ["again"]}, thread())  # a second run on the same thread


@scenario
def fan_out_fan_in(lib: Run):
    g = lib.StateGraph(Trail)
    for name in ["a", "b", "c", "d"]:
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    g.add_edge("b", "c")
    g.add_edge(["a", "c"], "d")  # d waits for both a and c (a join barrier channel)
    g.add_edge("d", lib.END)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


def merge_max(old: dict, new: dict) -> dict:
    """A custom reducer: per key, keep the larger number."""
    return {k: max(old.get(k, 0), new.get(k, 0)) for k in {**old, **new}}


class Reduced(TypedDict, total=False):
    items: Annotated[list, operator.add]
    best: Annotated[dict, merge_max]
    total: Annotated[int, operator.add]
    last: str


@scenario
def reducers(lib: Run):
    def left(state):
        return {"items": [1, 2], "best": {"x": 5, "y": 1}, "total": 10, "last": "left"}

    def right(state):
        return {"items": [3], "best": {"x": 2, "y": 7}, "total": 5}

    def summary(state):
        return {
            "last": f"{sorted(state['items'])} {sorted(state['best'].items())} {state['total']}"
        }

    g = lib.StateGraph(Reduced)
    g.add_node("left", left)
    g.add_node("right", right)
    g.add_node("summary", summary)
    g.add_edge(lib.START, "left")
    g.add_edge(lib.START, "right")
    g.add_edge(["left", "right"], "summary")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"items": [0], "best": {}, "total": 1}, thread())


@scenario
def conditional_edges(lib: Run):
    def route_plain(state):  # no path map: returns a node name
        return "b" if len(state["trail"]) < 3 else "c"

    def route_list(state):  # returns a list of nodes (all run in the next step)
        return ["d", "e"]

    def route_end(state):  # through a dict path map, possibly to END
        return "stop" if "e" in state["trail"] else "again"

    g = lib.StateGraph(Trail)
    for name in "abcdef":
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", route_plain)
    g.add_edge("b", "a")
    g.add_conditional_edges("c", route_list, ["d", "e"])
    g.add_conditional_edges("d", route_end, {"stop": lib.END, "again": "f"})
    g.add_edge("e", lib.END)
    g.add_edge("f", lib.END)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


@scenario
def loop_until_n(lib: Run):
    def inc(state):
        lib.count("inc")
        return {"n": state["n"] + 1}

    g = lib.StateGraph(Trail)
    g.add_node("inc", inc)
    g.add_edge(lib.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 5 else lib.END)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"n": 0}, thread())


@scenario
def deferred_node(lib: Run):
    g = lib.StateGraph(Trail)
    for name in ["a", "b1", "b2", "c"]:
        g.add_node(name, visit(name, lib))
    g.add_node("final", visit("final", lib), defer=True)  # waits until nothing else is left
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b1")
    g.add_edge("a", "c")
    g.add_edge("b1", "b2")
    g.add_edge("b2", "final")
    g.add_edge("c", "final")
    g.add_edge("final", lib.END)
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread())


def two_step_graph(lib: Run, **compile_kw):
    g = lib.StateGraph(Trail)
    for name in "ab":
        g.add_node(name, visit(name, lib))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", lib.END)
    return g.compile(checkpointer=lib.saver(), **compile_kw)


@scenario
def update_state_then_continue(lib: Run):
    graph = two_step_graph(lib)
    cfg = thread()
    lib.invoke(graph, {"trail": ["in"], "n": 0}, cfg)
    lib.update_state(
        graph, cfg, {"trail": ["patched"], "n": 1}
    )  # no as_node: counts as the last node
    lib.get_state(graph, cfg)
    lib.update_state(graph, cfg, {"n": 2}, as_node="a")  # as if "a" wrote it: "b" runs next
    lib.get_state(graph, cfg)
    lib.invoke(graph, None, cfg)


class InSchema(TypedDict):
    question: str


class OutSchema(TypedDict):
    answer: str


class FullState(TypedDict, total=False):
    question: str
    scratch: str
    answer: str


@scenario
def input_output_schemas(lib: Run):
    def think(state: InSchema):
        return {"scratch": state["question"].upper()}

    def answer(state: FullState):
        return {"answer": state["scratch"] + "!"}

    g = lib.StateGraph(FullState, input_schema=InSchema, output_schema=OutSchema)
    g.add_node("think", think)
    g.add_node("answer", answer)
    g.add_edge(lib.START, "think")
    g.add_edge("think", "answer")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"question": "why"}, thread())
    lib.stream(graph, {"question": "how"}, thread("t2"), stream_mode="values")


@dataclass
class DataState:
    n: int = 0
    trail: Annotated[list, operator.add] = field(default_factory=list)


class PydanticState(BaseModel):
    n: int = 0
    trail: Annotated[list, operator.add] = []


def counting_graph(lib: Run, schema):
    def step(state):
        return {"n": state.n + 1, "trail": [f"n={state.n}"]}

    g = lib.StateGraph(schema)
    g.add_node("step", step)
    g.add_edge(lib.START, "step")
    g.add_conditional_edges("step", lambda s: "step" if s.n < 3 else lib.END)
    return g.compile(checkpointer=lib.saver())


@scenario
def dataclass_state(lib: Run):
    lib.invoke(counting_graph(lib, DataState), {"n": 0}, thread())


@scenario
def pydantic_state(lib: Run):
    lib.invoke(counting_graph(lib, PydanticState), {"n": 1}, thread())


@scenario
def async_nodes(lib: Run):
    async def a(state):
        return {"trail": ["a"]}

    async def b(state):
        return {"trail": ["b"], "n": len(state["trail"])}

    g = lib.StateGraph(Trail)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    graph = g.compile(checkpointer=lib.saver())
    lib.ainvoke(graph, {"trail": []}, thread())
    for i in range(3):  # LangGraph emits a's update first every time (no await in either node)
        lib.astream(graph, {"trail": [f"x{i}"]}, thread(), stream_mode="updates")


@scenario
def node_with_config(lib: Run):
    def greet(state, config):
        return {"trail": [f"hello {config['configurable']['user']}"]}

    g = lib.StateGraph(Trail)
    g.add_node("greet", greet)
    g.add_edge(lib.START, "greet")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread(user="ada"))  # configurable keys go into metadata
    lib.invoke(graph, {"trail": []}, {**thread("t2", user="bo"), "metadata": {"origin": "test"}})


@scenario
def durability_modes(lib: Run):
    graph = two_step_graph(lib)
    for mode in ["sync", "async", "exit"]:
        lib.invoke(graph, {"trail": [mode]}, thread(mode), durability=mode)


@scenario
def stream_modes(lib: Run):
    def a(state):
        lib.get_stream_writer()({"progress": "a half done"})
        return {"trail": ["a"]}

    g = lib.StateGraph(Trail)
    g.add_node("a", a)
    g.add_node("b", visit("b", lib))
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    graph = g.compile(checkpointer=lib.saver())
    for i, mode in enumerate(["values", "updates", "debug", "checkpoints", "tasks", "custom"]):
        lib.stream(graph, {"trail": [mode]}, thread(f"t{i}"), stream_mode=mode)
    lib.stream(
        graph,
        {"trail": ["many"]},
        thread("many"),
        stream_mode=["values", "updates", "custom", "tasks"],
    )


@scenario
def recursion_limit(lib: Run):
    g = lib.StateGraph(Trail)
    g.add_node("spin", visit("spin", lib))
    g.add_edge(lib.START, "spin")
    g.add_edge("spin", "spin")
    graph = g.compile(checkpointer=lib.saver())
    err = lib.invoke(graph, {"trail": []}, {**thread(), "recursion_limit": 4})
    lib.note("is GraphRecursionError", isinstance(err, lib.GraphRecursionError))


@scenario
def two_writes_to_last_value(lib: Run):
    g = lib.StateGraph(Trail)
    g.add_node("a", lambda s: {"n": 1})
    g.add_node("b", lambda s: {"n": 2})
    g.add_edge(lib.START, "a")
    g.add_edge(lib.START, "b")
    graph = g.compile(checkpointer=lib.saver())
    err = lib.invoke(graph, {"n": 0}, thread())
    lib.note("is InvalidUpdateError", isinstance(err, lib.InvalidUpdateError))


@scenario
def int_thread_id(lib: Run):
    graph = two_step_graph(lib)
    lib.invoke(graph, {"trail": []}, thread(42))
    lib.get_state(graph, thread("42"))  # stored under the string


@scenario
def no_checkpointer(lib: Run):
    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_edge(lib.START, "a")
    graph = g.compile()
    lib.invoke(graph, {"trail": ["x"]})
    lib.stream(graph, {"trail": ["y"]}, stream_mode=["updates", "values"])


@scenario
def misuse_errors(lib: Run):
    def edge_to_unknown_node():
        g = lib.StateGraph(Trail)
        g.add_node("a", visit("a", lib))
        g.add_edge(lib.START, "a")
        g.add_edge("a", "nowhere")
        return g.compile()

    def no_entry_point():
        g = lib.StateGraph(Trail)
        g.add_node("a", visit("a", lib))
        return g.compile()

    lib.attempt("edge to an unknown node", edge_to_unknown_node)
    lib.attempt("graph without an entry point", no_entry_point)
    graph = two_step_graph(lib)
    lib.invoke(graph, {"trail": []})  # a checkpointer but no thread_id
    lib.invoke(graph, None, thread("fresh"))  # nothing to resume on a new thread
    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_edge(lib.START, "a")
    lib.get_state(g.compile(), thread())  # no checkpointer to read from


@scenario
def builder_shortcuts(lib: Run):
    g = lib.StateGraph(Trail)
    g.add_sequence([("a", visit("a", lib)), ("b", visit("b", lib))])  # a -> b
    g.add_node("c", visit("c", lib))
    g.add_edge("b", "c")
    g.set_entry_point("a")
    g.set_finish_point("c")
    lib.invoke(g.compile(checkpointer=lib.saver()), {"trail": []}, thread())


@scenario
def conditional_entry(lib: Run):
    g = lib.StateGraph(Trail)
    for name in "ab":
        g.add_node(name, visit(name, lib))
    g.add_conditional_edges(lib.START, lambda s: "b" if s["n"] > 0 else "a")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": [], "n": 0}, thread("t1"))
    lib.invoke(graph, {"trail": [], "n": 1}, thread("t2"))


@scenario
def odd_node_returns(lib: Run):
    def nothing(state):
        lib.count("nothing")  # returns None: no update, but the step still happens

    def unknown_key(state):
        return {"trail": ["k"], "not_in_schema": 1}

    g = lib.StateGraph(Trail)
    g.add_node("nothing", nothing)
    g.add_node("unknown_key", unknown_key)
    g.add_edge(lib.START, "nothing")
    g.add_edge("nothing", "unknown_key")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": []}, thread("t1"))

    g2 = lib.StateGraph(Trail)
    g2.add_node("text", lambda s: "not a dict")
    g2.add_edge(lib.START, "text")
    lib.invoke(g2.compile(checkpointer=lib.saver()), {"trail": []}, thread("t2"))


@scenario
def bad_input(lib: Run):
    graph = counting_graph(lib, PydanticState)
    lib.invoke(graph, {"n": "not a number"}, thread("t1"))  # pydantic rejects it
    lib.invoke(two_step_graph(lib), {"nope": 1}, thread("t2"))  # no known key in the input
    lib.update_state(two_step_graph(lib), thread("t3"), {"n": 1}, as_node="no_such_node")


@scenario
def recursion_limit_boundary(lib: Run):
    def inc(state):
        return {"n": state["n"] + 1}

    g = lib.StateGraph(Trail)
    g.add_node("inc", inc)
    g.add_edge(lib.START, "inc")
    g.add_conditional_edges("inc", lambda s: "inc" if s["n"] < 5 else lib.END)
    graph = g.compile(checkpointer=lib.saver())
    for limit in (4, 5, 6):  # the loop needs exactly 5 steps
        lib.invoke(graph, {"n": 0}, {**thread(f"limit{limit}"), "recursion_limit": limit})


@scenario
def stream_modes_with_failure(lib: Run):
    def boom(state):
        raise KeyError("missing")

    g = lib.StateGraph(Trail)
    g.add_node("ok", visit("ok", lib))
    g.add_node("boom", boom)
    g.add_edge(lib.START, "ok")
    g.add_edge("ok", "boom")
    graph = g.compile(checkpointer=lib.saver())
    lib.stream(graph, {"trail": []}, thread("t1"), stream_mode=["tasks", "checkpoints", "updates"])
    lib.stream(graph, {"trail": []}, thread("t2"), stream_mode="debug")


@scenario
def interleaved_threads(lib: Run):
    graph = two_step_graph(lib, interrupt_before=["b"])
    for t in ("one", "two"):
        lib.invoke(graph, {"trail": [t]}, thread(t))
    for t in ("two", "one"):
        lib.invoke(graph, None, thread(t))


@scenario
def task_events_carry_the_callers_metadata(lib: Run):
    """A task event shows the run's metadata and tags, minus the runtime's own keys and tags."""
    graph = two_step_graph(lib)
    cfg = {**thread(), "metadata": {"agent": "mailer", "thread_id": "hidden", "n": 2},
           "tags": ["seq:step:1", "user-tag"]}
    lib.stream(graph, {"trail": []}, cfg, stream_mode=["tasks", "debug"])
    lib.stream(graph, {"trail": []}, thread("plain"), stream_mode="tasks")  # no metadata key


class NoKeys(TypedDict):
    """A state that declares no keys (LangGraph's tests use one): nodes get {}, output is None."""


@scenario
def a_state_without_keys(lib: Run):
    def node(state):
        lib.note("node got", state)
        return {}

    g = lib.StateGraph(NoKeys)
    g.add_node("a", node)
    g.add_edge(lib.START, "a")
    # no saver and no "values" stream: there LangGraph shows its internal channels
    # (branch:to:a) as state values, ours {} (the saved checkpoints are the same)
    graph = g.compile()
    lib.invoke(graph, {})
    lib.stream(graph, {"x": 1}, stream_mode=["updates", "tasks"])


@scenario
def overwrite_after_a_json_round_trip(lib: Run):
    """An Overwrite that lost its class (JSON) keeps its "type" tag and still bypasses the
    reducer."""
    g = lib.StateGraph(Trail)
    g.add_node("a", visit("a", lib))
    g.add_node("b", lambda state: {"trail": {"type": "__overwrite__", "value": ["reset"]}})
    g.add_edge(lib.START, "a")
    g.add_edge("a", "b")
    graph = g.compile(checkpointer=lib.saver())
    lib.invoke(graph, {"trail": ["start"]}, thread())


class LateKeys(TypedDict, total=False):
    """A state whose first key gets its first value only after the later ones."""

    late: str
    n: int
    tag: str


@scenario
def node_mutates_its_input(lib: Run):
    """A node that changes its input dict changes no state: the next read is the channels'.
    (lgcheckpoint reads the state from dicts a step refreshes, pregel/view.py.)"""

    def a(state):
        lib.note("a sees", list(state.items()))
        state["n"] = 99  # neither reaches the state
        state.pop("tag", None)
        return {"n": 1}

    def b(state):
        lib.note("b sees", list(state.items()))
        state.clear()
        return {"late": "b"}

    def route(state):
        lib.note("edge sees", sorted(state.items()))  # LangGraph lists written keys first
        state["n"] = -1
        return "b"

    g = lib.StateGraph(LateKeys)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(lib.START, "a")
    g.add_conditional_edges("a", route, ["b"])
    g.add_edge("b", lib.END)
    graph = g.compile(checkpointer=lib.saver())
    # "late" appears only in the last step: the values chunks keep the schema's key order
    chunks = lib.stream(graph, {"n": 0, "tag": "x"}, thread(), stream_mode="values")
    lib.note("chunk keys", [list(chunk) for chunk in chunks])
    lib.get_state(graph, thread())
