"""interrupt(response_schema=...): the schema is shown as JSON Schema; a misfit answer is refused.

LangGraph is compared in tests/differential/test_interrupts_same_as_langgraph.py
(scenario invalid_resume_then_valid).
"""

import operator
from typing import Annotated, Any, TypedDict

import pytest
from pydantic import BaseModel, ValidationError

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.constants import RESUME
from lgcheckpoint.errors import is_invalid_resume
from lgcheckpoint.graph import START, StateGraph
from lgcheckpoint.types import Command, interrupt

pytestmark = pytest.mark.lesson("08_human_in_the_loop")


class Decision(BaseModel):
    approved: bool


class State(TypedDict):
    log: Annotated[list, operator.add]


def approver(name: str, schema: Any = Decision, calls: list | None = None):
    """A node that asks for a Decision and logs whether it was approved."""
    def node(state: State) -> dict:
        answer = interrupt(f"{name}?", response_schema=schema)
        if calls is not None:
            calls.append(name)
        approved = answer.approved if isinstance(answer, Decision) else answer["approved"]
        return {"log": [f"{name}={approved}"]}
    return node


def one_node_graph(schema: Any = Decision):
    g = StateGraph(State)
    g.add_node("ask", approver("ask", schema))
    g.add_edge(START, "ask")
    return g.compile(checkpointer=InMemorySaver())


CFG = {"configurable": {"thread_id": "t"}}


def test_a_class_schema_is_shown_as_json_schema_and_the_answer_is_validated():
    graph = one_node_graph()
    [asked] = graph.invoke({"log": []}, CFG)["__interrupt__"]
    assert asked.response_schema == Decision.model_json_schema()
    assert graph.invoke(Command(resume={"approved": "yes"}), CFG) == {"log": ["ask=True"]}


def test_a_json_schema_dict_is_shown_as_given_and_not_checked():
    schema = {"type": "object", "properties": {"approved": {"type": "boolean"}}}
    graph = one_node_graph(schema)
    [asked] = graph.invoke({"log": []}, CFG)["__interrupt__"]
    assert asked.response_schema is schema
    assert graph.invoke(Command(resume={"approved": 7}), CFG) == {"log": ["ask=7"]}


@pytest.mark.parametrize("by_id", [False, True])
def test_an_answer_that_does_not_fit_raises_and_saves_no_answer(by_id):
    graph = one_node_graph()
    [asked] = graph.invoke({"log": []}, CFG)["__interrupt__"]
    answer = lambda v: Command(resume={asked.id: v} if by_id else v)
    with pytest.raises(ValidationError, match="approved") as raised:
        graph.invoke(answer({"approved": "maybe"}), CFG)
    assert is_invalid_resume(raised.value)
    saved = graph.checkpointer.get_tuple(CFG)
    task_id = graph.get_state(CFG).tasks[0].id
    assert not [w for w in saved.pending_writes if w[0] == task_id and w[1] == RESUME]
    assert [i.id for i in graph.get_state(CFG).interrupts] == [asked.id]  # still asks
    assert graph.invoke(answer({"approved": False}), CFG) == {"log": ["ask=False"]}


def test_other_errors_are_not_invalid_resumes():
    with pytest.raises(ValidationError) as raised:
        Decision.model_validate({"approved": "maybe"})
    assert not is_invalid_resume(raised.value)
    assert not is_invalid_resume(ValueError("no"))


def test_an_invalid_answer_lets_the_other_answered_task_finish_once():
    calls: list[str] = []
    g = StateGraph(State)
    for name in ("send", "check"):
        g.add_node(name, approver(name, calls=calls))
        g.add_edge(START, name)
    graph = g.compile(checkpointer=InMemorySaver())
    graph.invoke({"log": []}, CFG)
    ids = {i.value: i.id for i in graph.get_state(CFG).interrupts}
    with pytest.raises(ValidationError):
        graph.invoke(Command(resume={ids["send?"]: {"approved": True},
                                     ids["check?"]: {"approved": "maybe"}}), CFG)
    assert [i.value for i in graph.get_state(CFG).interrupts] == ["check?"]
    out = graph.invoke(Command(resume={ids["check?"]: {"approved": True}}), CFG)
    assert sorted(out["log"]) == ["check=True", "send=True"] and sorted(calls) == ["check", "send"]


def test_in_an_async_run_an_invalid_answer_cancels_nothing():
    """A real failure cancels the step's other async tasks; a misfit answer does not."""
    import asyncio

    sent: list[str] = []

    async def send(state: State) -> dict:
        interrupt("send?", response_schema=Decision)
        sent.append("email")
        await asyncio.sleep(0.05)  # still running when the misfit answer fails its sibling
        return {"log": ["sent"]}

    async def check(state: State) -> dict:
        interrupt("check?", response_schema=Decision)
        return {"log": ["checked"]}

    g = StateGraph(State)
    g.add_node("send", send)
    g.add_node("check", check)
    g.add_edge(START, "send")
    g.add_edge(START, "check")
    graph = g.compile(checkpointer=InMemorySaver())

    async def scenario():
        await graph.ainvoke({"log": []}, CFG)
        ids = {i.value: i.id for i in graph.get_state(CFG).interrupts}
        with pytest.raises(ValidationError):
            await graph.ainvoke(Command(resume={ids["send?"]: {"approved": True},
                                                ids["check?"]: {"approved": "maybe"}}), CFG)
        out = await graph.ainvoke(Command(resume={ids["check?"]: {"approved": True}}), CFG)
        return sorted(out["log"])

    assert asyncio.run(scenario()) == ["checked", "sent"] and sent == ["email"]
