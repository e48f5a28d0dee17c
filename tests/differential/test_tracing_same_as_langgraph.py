"""langchain callbacks and tracers beside LangGraph: the same run tree, and the same lifecycle
events. Each graph runs on both libraries with a recording tracer; a run is compared as (name,
tags, the task's langgraph_* metadata, inputs, outputs, error class, children). Read with
lgcheckpoint/pregel/tracing.py and lgcheckpoint/callbacks.py.
"""

from __future__ import annotations

import asyncio
import importlib
import operator
from types import SimpleNamespace
from typing import Annotated, Any, TypedDict

import pytest
from langchain_core.language_models.fake_chat_models import (
    FakeMessagesListChatModel, GenericFakeChatModel,
)
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.runnables import RunnableLambda
from langchain_core.tracers import BaseTracer

PACKAGES = {"langgraph": "langgraph", "ours": "lgcheckpoint"}
NAMES = {  # name -> (LangGraph's module, ours)
    "StateGraph": ("graph", "graph"), "START": ("graph", "graph"), "END": ("graph", "graph"),
    "InMemorySaver": ("checkpoint.memory", "checkpoint.memory"),
    "entrypoint": ("func", "func"), "task": ("func", "func"),
    "interrupt": ("types", "types"), "Command": ("types", "types"), "Send": ("types", "types"),
    "TracePolicy": ("types", "types"), "GraphCallbackHandler": ("callbacks", "callbacks"),
    "TimeoutPolicy": ("types", "types"), "NodeTimeoutError": ("errors", "errors"),
}
TASK_KEYS = ("langgraph_step", "langgraph_node", "langgraph_triggers", "langgraph_path")
LIBS = list(PACKAGES)


def lib(name: str) -> SimpleNamespace:
    index = 0 if name == "langgraph" else 1
    return SimpleNamespace(**{n: getattr(importlib.import_module(
        f"{PACKAGES[name]}.{mods[index]}"), n) for n, mods in NAMES.items()})


class Recorder(BaseTracer):
    def __init__(self) -> None:
        super().__init__()
        self.runs: list = []

    def _persist_run(self, run: Any) -> None:
        self.runs.append(run)


def tree(run: Any) -> tuple:
    metadata = run.extra.get("metadata", {})
    children = sorted((tree(c) for c in run.child_runs), key=repr)
    return (run.name, tuple(run.tags), tuple(metadata.get(k) for k in TASK_KEYS),
            repr(run.inputs), repr(run.outputs), (run.error or "").split("(")[0], children)


class S(TypedDict):
    x: Annotated[list, operator.add]
    y: str


def chain(g: SimpleNamespace) -> Any:
    graph = g.StateGraph(S)
    graph.add_node("a", lambda s: {"x": ["a"]})
    graph.add_node("b", lambda s: {"x": ["b"]})
    graph.add_edge(g.START, "a")
    graph.add_edge("a", "b")
    return graph.compile()


def asking(g: SimpleNamespace) -> Any:
    graph = g.StateGraph(S)
    graph.add_node("ask", lambda s: {"y": g.interrupt("q")})
    graph.add_edge(g.START, "ask")
    return graph.compile(checkpointer=g.InMemorySaver())


def nested(g: SimpleNamespace) -> Any:
    sub = g.StateGraph(S)
    sub.add_node("inner", lambda s: {"x": ["inner"]})
    sub.add_edge(g.START, "inner")
    graph = g.StateGraph(S)
    graph.add_node("outer", sub.compile())
    graph.add_node("a", lambda s: {"x": ["a"]})
    graph.add_edge(g.START, "a")
    graph.add_edge("a", "outer")
    return graph.compile()


def tasks(g: SimpleNamespace) -> Any:
    @g.task
    def double(n: int) -> int:
        return 2 * n

    @g.entrypoint(checkpointer=g.InMemorySaver())
    def main(nums: list) -> list:
        return [f.result() for f in [double(n) for n in nums]]
    return main


def failing(g: SimpleNamespace) -> Any:
    graph = g.StateGraph(S)
    graph.add_node("boom", lambda s: 1 / 0)
    graph.add_edge(g.START, "boom")
    return graph.compile()


def chatting(g: SimpleNamespace) -> Any:
    model = FakeMessagesListChatModel(responses=[AIMessage("hi", id="m1")])
    graph = g.StateGraph(S)
    graph.add_node("chat", lambda s: {"y": model.invoke("hello").content},
                   trace_policy=g.TracePolicy(process_inputs=lambda v: {"seen": len(v)}))
    graph.add_edge(g.START, "chat")
    return graph.compile()


def route_to_b(s: dict) -> str:
    return "b"


def branching(g: SimpleNamespace) -> Any:
    """Conditional edges: from START, after a static edge, two on one node, a Runnable path,
    a lambda with a path_map, one to END."""
    graph = g.StateGraph(S)
    for name in "abcd":
        graph.add_node(name, lambda s, name=name: {"x": [name]})
    graph.add_conditional_edges(g.START, lambda s: "a")
    graph.add_edge("a", "c")
    graph.add_conditional_edges("a", route_to_b)
    graph.add_conditional_edges("b", RunnableLambda(lambda s: "d", name="runnable_path"))
    graph.add_conditional_edges("b", lambda s: "yes", {"yes": g.END})
    graph.add_edge(["b", "c"], "d")
    return graph.compile()


def sequence(g: SimpleNamespace) -> Any:
    """A RunnableSequence node (its steps are the node run's children) with a conditional edge."""
    graph = g.StateGraph(S)
    graph.add_node("seq", RunnableLambda(lambda s: {"x": ["1"]}) | RunnableLambda(
        lambda s: {"x": s["x"] + ["2"]}))
    graph.add_node("end", lambda s: {"y": "done"})
    graph.add_edge(g.START, "seq")
    graph.add_conditional_edges("seq", lambda s: "end")
    return graph.compile()


def bad_route(g: SimpleNamespace) -> Any:
    """A path function naming no node of its path_map fails the node's run, not its own."""
    graph = g.StateGraph(S)
    graph.add_node("a", lambda s: {"x": ["a"]})
    graph.add_edge(g.START, "a")
    graph.add_conditional_edges("a", lambda s: "nowhere", {"somewhere": g.END})
    return graph.compile()


GRAPHS = {"chain": (chain, {"x": []}), "interrupt": (asking, {"x": []}),
          "subgraph": (nested, {"x": []}), "task calls": (tasks, [1, 2]),
          "error": (failing, {"x": []}), "chat model, trace policy": (chatting, {"x": []}),
          "conditional edges": (branching, {"x": []}), "sequence node": (sequence, {"x": []}),
          "bad route": (bad_route, {"x": []})}


def traced(name: str, graph_name: str, is_async: bool = False) -> list:
    make, value = GRAPHS[graph_name]
    g = lib(name)
    recorder, graph = Recorder(), make(g)
    config = {"configurable": {"thread_id": "1"}, "callbacks": [recorder]}
    try:
        if is_async:
            asyncio.run(graph.ainvoke(value, config))
        else:
            graph.invoke(value, config)
    except (ZeroDivisionError, KeyError):
        pass
    if graph_name == "interrupt":  # and its resume
        graph.invoke(g.Command(resume="yes"), config)
    return [tree(run) for run in recorder.runs]


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("graph_name", list(GRAPHS))
def test_run_tree_same_as_langgraph(graph_name, is_async):
    assert traced("ours", graph_name, is_async) == traced("langgraph", graph_name, is_async)


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_a_stream_stopped_by_the_caller(is_async):
    """The graph's run ends with GeneratorExit (no output); the node that ran is kept."""
    def runs(name: str) -> list:
        recorder, graph = Recorder(), chain(lib(name))
        config = {"callbacks": [recorder]}
        if is_async:
            async def first() -> None:
                stream = graph.astream({"x": []}, config)
                async for _ in stream:
                    break
                await stream.aclose()
            asyncio.run(first())
        else:
            stream = graph.stream({"x": []}, config)
            next(stream)
            stream.close()
        return [tree(run) for run in recorder.runs]
    ours = runs("ours")
    assert ours == runs("langgraph")
    assert ours[0][5] == "GeneratorExit" and [c[0] for c in ours[0][6]] == ["a"]


class SlowTokens(GenericFakeChatModel):
    """Four tokens 0.2 s apart: only its callback events keep a 0.5 s idle clock going (with
    room for a loaded machine's delays on either side)."""

    async def _astream(self, messages: list, stop: Any = None, run_manager: Any = None,
                       **kwargs: Any) -> Any:
        for i in range(4):
            await asyncio.sleep(0.2)
            chunk = ChatGenerationChunk(message=AIMessageChunk(content=str(i)))
            if run_manager:
                await run_manager.on_llm_new_token(str(i), chunk=chunk)
            yield chunk


@pytest.mark.parametrize("how", ["messages", "tracer", "tracer, heartbeat only"])
def test_callback_events_are_idle_timeout_progress(how):
    """Under refresh_on="auto" a chat model's events reset the node's idle clock, as in
    LangGraph; under refresh_on="heartbeat" they do not."""
    def outcome(name: str) -> Any:
        g = lib(name)
        model = SlowTokens(messages=iter([]))

        async def call(state: S) -> dict:
            return {"y": "".join([c.content async for c in model.astream("hi")])}

        graph = g.StateGraph(S)
        refresh = "heartbeat" if "heartbeat" in how else "auto"
        graph.add_node("call", call,
                       timeout=g.TimeoutPolicy(idle_timeout=0.5, refresh_on=refresh))
        graph.add_edge(g.START, "call")
        compiled = graph.compile()

        async def run() -> Any:
            if how == "messages":
                return [c.content async for c, _ in compiled.astream(
                    {"x": []}, stream_mode="messages")]
            return (await compiled.ainvoke({"x": []}, {"callbacks": [Recorder()]}))["y"]
        try:
            return asyncio.run(run())
        except g.NodeTimeoutError as exc:
            return exc.kind
    ours = outcome("ours")
    assert ours == outcome("langgraph")
    assert ours == {"messages": ["0", "1", "2", "3", ""], "tracer": "0123"}.get(how, "idle")


def test_run_name_and_id_from_the_config():
    import uuid
    for name in LIBS:
        recorder, run_id = Recorder(), uuid.uuid4()
        chain(lib(name)).invoke({"x": []}, {"callbacks": [recorder], "run_name": "mine",
                                           "run_id": run_id})
        (root,) = recorder.runs
        assert (root.name, root.id) == ("mine", run_id)
        assert {c.name for c in root.child_runs} == {"a", "b"}


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_lifecycle_events_same_as_langgraph(is_async):
    def events(name: str) -> list:
        g = lib(name)
        seen: list = []

        class Handler(g.GraphCallbackHandler):
            def on_interrupt(self, event: Any) -> None:
                seen.append(("interrupt", event.status, event.checkpoint_ns,
                             [i.value for i in event.interrupts], event.run_id is not None))

            def on_resume(self, event: Any) -> None:
                seen.append(("resume", event.status, event.checkpoint_ns))

        graph = asking(g)
        config = {"configurable": {"thread_id": "1"}, "callbacks": [Handler()]}
        for value in ({"x": []}, g.Command(resume="yes")):
            if is_async:
                asyncio.run(graph.ainvoke(value, config))
            else:
                graph.invoke(value, config)
        return seen
    assert events("ours") == events("langgraph")


@pytest.mark.parametrize("name", LIBS)
def test_a_raising_lifecycle_handler(name):
    """Logged and skipped, unless it sets raise_error."""
    g = lib(name)

    class Raising(g.GraphCallbackHandler):
        def on_interrupt(self, event: Any) -> None:
            raise ValueError("boom")

    graph = asking(g)
    result = graph.invoke({"x": []}, {"configurable": {"thread_id": "1"},
                                      "callbacks": [Raising()]})
    assert "__interrupt__" in result
    strict = Raising()
    strict.raise_error = True
    with pytest.raises(ValueError, match="boom"):
        graph.invoke({"x": []}, {"configurable": {"thread_id": "2"}, "callbacks": [strict]})


def test_no_callbacks_no_langchain_import():
    """A run without callbacks never imports the tracing side trip (nor langchain-core)."""
    import subprocess
    import sys
    code = ("import sys, lgcheckpoint\nfrom lgcheckpoint.graph import StateGraph, START\n"
            "g = StateGraph(dict)\n")
    code = ("import sys\nfrom typing import TypedDict\nfrom lgcheckpoint.graph import StateGraph,"
            " START\nclass S(TypedDict):\n    x: int\ng = StateGraph(S)\n"
            "g.add_node('a', lambda s: {'x': 1})\ng.add_edge(START, 'a')\n"
            "assert g.compile().invoke({'x': 0}) == {'x': 1}\n"
            "print(sorted(m for m in sys.modules if m.startswith('langchain')"
            " or m.endswith('tracing') or m.endswith('callbacks')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
