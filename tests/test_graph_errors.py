"""Every misuse of the builder and the runtime gets a clear error that says what to do."""

import operator
from typing import Annotated, TypedDict

import pytest

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.errors import (
    EmptyInputError, GraphRecursionError, InvalidUpdateError,
)
from lgcheckpoint.func import entrypoint
from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import Command, Send, interrupt


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def one_node(**node_kw) -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": 1}, **node_kw)
    return g


def runnable(checkpointer=None, **compile_kw):
    g = one_node()
    g.add_edge(START, "a")
    return g.compile(checkpointer=checkpointer, **compile_kw)


THREAD = {"configurable": {"thread_id": "t"}}


# --- building ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "build, message",
    [
        (lambda g: g.compile(), "entrypoint"),
        (
            lambda g: (g.add_edge(START, "a"), g.add_edge("a", "nope"), g.compile()),
            "unknown node `nope`",
        ),
        (
            lambda g: (g.add_edge(START, "a"), g.add_edge("nope", "a"), g.compile()),
            "unknown node 'nope'",
        ),
        (lambda g: g.add_node("a", lambda s: s), "already present"),
        (lambda g: g.add_node(START, lambda s: s), "reserved"),
        (lambda g: g.add_node(END, lambda s: s), "reserved"),
        (lambda g: g.add_node("__mine", lambda s: s), "reserved"),
        (lambda g: g.add_node("a|b", lambda s: s), "reserved character"),
        (lambda g: g.add_node("a:b", lambda s: s), "reserved character"),
        (lambda g: g.add_edge(END, "a"), "END cannot be a start node"),
        (lambda g: g.add_edge("a", START), "START cannot be an end node"),
        (lambda g: g.add_edge(["a", "nope"], END), "add_node `nope` first"),
        (
            lambda g: (g.add_edge(START, "a"), g.compile(interrupt_before=["nope"])),
            "`nope` not found",
        ),
        (
            lambda g: (g.add_edge(START, "a"), g.compile(interrupt_after=["nope"])),
            "`nope` not found",
        ),
        (
            lambda g: (
                g.add_edge(START, "a"),
                g.add_conditional_edges("a", len, {1: "nope"}),
                g.compile(),
            ),
            "unknown target 'nope'",
        ),
        (lambda g: g.add_sequence([]), "at least one node"),
    ],
)
def test_builder_misuse(build, message):
    with pytest.raises(ValueError, match=message):
        build(one_node())


def test_state_schema_must_have_keys():
    class NoKeys:
        pass

    with pytest.raises(ValueError, match="TypedDict, dataclass or pydantic"):
        StateGraph(NoKeys)  # a plain type (StateGraph(int)) is a single-value state instead


def test_checkpointer_must_be_a_saver_or_a_flag():
    for wrong in (object(), "memory", InMemorySaver):  # the class, not an instance
        with pytest.raises(TypeError, match="Invalid checkpointer.*BaseCheckpointSaver"):
            runnable(wrong)
    with pytest.raises(TypeError, match="Invalid checkpointer"):
        entrypoint(checkpointer=object())
    for fine in (None, False, True, InMemorySaver()):
        runnable(fine)


def test_invoke_version_must_be_v1_or_v2():
    # v2 parts are built (tests/differential/test_stream_v2_same_as_langgraph.py); others refused
    parts = runnable().invoke({"x": 0}, stream_mode="updates", version="v2")
    assert parts and all(set(p) == {"type", "ns", "data"} for p in parts)
    with pytest.raises(ValueError, match="version must be"):
        runnable().invoke({"x": 0}, version="v3")


def test_reducer_must_take_two_arguments():
    class Bad(TypedDict):
        x: Annotated[list, lambda a: a]

    with pytest.raises(ValueError, match=r"\(a, b\)"):
        StateGraph(Bad)


def test_state_key_may_not_be_reserved():
    Reserved = TypedDict("Reserved", {"__start__": int})
    with pytest.raises(ValueError, match="reserved"):
        StateGraph(Reserved)


# --- running ----------------------------------------------------------------------------------
def test_checkpointer_needs_thread_id():
    with pytest.raises(ValueError, match="thread_id"):
        runnable(InMemorySaver()).invoke({"x": 0})


def test_get_state_needs_checkpointer():
    with pytest.raises(ValueError, match="No checkpointer set"):
        runnable().get_state(THREAD)


def test_nothing_to_resume():
    with pytest.raises(EmptyInputError, match="no input"):
        runnable(InMemorySaver()).invoke(None, THREAD)


def test_resume_needs_checkpointer():
    with pytest.raises(RuntimeError, match="without checkpointer"):
        runnable().invoke(Command(resume="yes"))


def test_empty_command():
    graph = runnable(InMemorySaver())
    graph.invoke({"x": 0}, THREAD)
    with pytest.raises(EmptyInputError, match="empty Command"):
        graph.invoke(Command(), THREAD)


def test_interrupt_outside_a_graph():
    with pytest.raises(RuntimeError, match="inside a node"):
        interrupt("question")


def test_two_writes_to_last_value_in_one_step():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": 1})
    g.add_node("b", lambda s: {"x": 2})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError, match=r"At key 'x'.*Annotated"):
        g.compile().invoke({"x": 0})


def test_send_to_unknown_node():
    g = one_node()
    g.add_conditional_edges(START, lambda s: [Send("nope", s)])
    with pytest.raises(InvalidUpdateError, match="unknown node 'nope'"):
        g.compile().invoke({"x": 0})


def test_recursion_limit():
    g = one_node()
    g.add_edge(START, "a")
    g.add_edge("a", "a")
    with pytest.raises(GraphRecursionError, match="recursion_limit"):
        g.compile().invoke({"x": 0}, {"recursion_limit": 5})


def test_recursion_limit_must_be_positive():
    with pytest.raises(ValueError, match="at least 1"):
        runnable().invoke({"x": 0}, {"recursion_limit": 0})


def test_update_state_as_unknown_node():
    graph = runnable(InMemorySaver())
    graph.invoke({"x": 0}, THREAD)
    with pytest.raises(InvalidUpdateError, match="as_node must be one of"):
        graph.update_state(THREAD, {"x": 5}, as_node="nope")


def test_node_must_return_a_dict():
    g = StateGraph(S)
    g.add_node("a", lambda s: "oops")
    g.add_edge(START, "a")
    with pytest.raises(InvalidUpdateError, match="node 'a' must return a dict"):
        g.compile().invoke({"x": 0})


def test_bad_input_writes_nothing():
    saver = InMemorySaver()
    with pytest.raises(InvalidUpdateError, match="input must be a dict"):
        runnable(saver).invoke("hello", THREAD)
    assert list(saver.list(THREAD)) == []


def test_unknown_stream_mode_and_durability():
    with pytest.raises(ValueError, match="Unknown stream_mode"):
        list(runnable().stream({"x": 0}, stream_mode="bogus"))
    with pytest.raises(ValueError, match="durability"):
        runnable(InMemorySaver()).invoke({"x": 0}, THREAD, durability="often")


def test_conditional_edge_outside_its_path_map():
    g = one_node()
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "elsewhere", {"there": END})
    with pytest.raises(KeyError, match="not a key of its path_map"):
        g.compile().invoke({"x": 0})


def test_async_node_needs_ainvoke():
    async def a(state):
        return {"x": 1}

    g = StateGraph(S)
    g.add_node("a", a)
    g.add_edge(START, "a")
    with pytest.raises(RuntimeError, match="ainvoke"):
        g.compile().invoke({"x": 0})


def test_several_pending_interrupts_need_ids():
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": [interrupt("a?")]})
    g.add_node("b", lambda s: {"log": [interrupt("b?")]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    graph = g.compile(checkpointer=InMemorySaver())
    graph.invoke({"x": 0}, THREAD)
    with pytest.raises(RuntimeError, match="interrupt id"):
        graph.invoke(Command(resume="yes"), THREAD)


def test_config_must_be_a_dict():
    with pytest.raises(TypeError, match="configurable"):
        runnable(InMemorySaver()).invoke({"x": 0}, "thread-1")
    with pytest.raises(ValueError, match="thread_id"):
        runnable(InMemorySaver()).invoke({"x": 0}, {"configurable": None})


def test_update_state_of_an_unknown_checkpoint():
    saver = InMemorySaver()
    graph = runnable(saver)
    graph.invoke({"x": 0}, THREAD)
    before = len(list(saver.list(THREAD)))
    config = {"configurable": {"thread_id": "t", "checkpoint_id": "garbage"}}
    with pytest.raises(KeyError, match="garbage"):
        graph.update_state(config, {"x": 5})
    assert len(list(saver.list(THREAD))) == before


def test_refused_update_saves_nothing():
    saver = InMemorySaver()
    graph = runnable(saver)
    graph.invoke({"x": 0, "log": []}, THREAD)
    before = (len(list(saver.list(THREAD))), len(saver.get_tuple(THREAD).pending_writes))
    with pytest.raises(TypeError):
        graph.update_state(THREAD, {"log": 5}, as_node="a")  # list + int
    assert (len(list(saver.list(THREAD))), len(saver.get_tuple(THREAD).pending_writes)) == before


def test_a_node_that_is_not_callable_is_refused_at_add_node():
    class Runnable:  # shaped like a langchain Runnable: invoke(), but neither callable nor one
        def invoke(self, state):
            return {"n": 1}

    with pytest.raises(TypeError, match=r"got a Runnable, which is not callable.*langchain Runn"):
        StateGraph(TypedDict("S", {"n": int})).add_node("a", Runnable())
