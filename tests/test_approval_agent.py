"""The demo agent of chapter 14: each way it waits for a human, end to end on a real saver."""

import pytest

from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.demos import build_approval_agent
from lgcheckpoint.types import Command

pytestmark = pytest.mark.lesson("14_agent_waits_for_a_human")
ASK = {"messages": [{"role": "user", "content": "My order #1042 arrived torn, I want a refund"}]}


def run(**options):
    graph = build_approval_agent(InMemorySaver(), **options)
    config = {"configurable": {"thread_id": "t"}}
    return graph, config, graph.invoke(ASK, config)


def test_refund_waits_for_approval_and_runs_once_approved():
    graph, config, out = run()
    asked = out["__interrupt__"][0].value
    assert asked["name"] == "issue_refund"
    assert asked["args"] == {"order_id": "1042", "amount": 129.0}
    done = graph.invoke(Command(resume="approve"), config)
    assert done["messages"][-2]["content"] == "refunded 129.00 EUR for order #1042"
    assert graph.get_state(config).next == ()


def test_edited_arguments_and_rejection():
    graph, config, _ = run()
    edited = graph.invoke(Command(resume={"amount": 60.0}), config)
    assert edited["messages"][-2]["content"] == "refunded 60.00 EUR for order #1042"
    graph, config, _ = run()
    rejected = graph.invoke(Command(resume="no"), config)
    assert "rejected by a human: no" in rejected["messages"][-2]["content"]
    assert not any(m["content"].startswith("refunded") for m in rejected["messages"])


def test_missing_order_number_is_a_dynamic_interrupt():
    graph = build_approval_agent(InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    out = graph.invoke({"messages": [{"role": "user", "content": "I want a refund"}]}, config)
    assert out["__interrupt__"][0].value == {"question": "Which order is this about?"}
    out = graph.invoke(Command(resume="it is 1043"), config)
    assert out["__interrupt__"][0].value["args"] == {"order_id": "1043", "amount": 89.0}


def test_breakpoint_before_tools_lets_a_person_edit_the_call():
    graph, config, _ = run(interrupt_before=["tools"])
    assert graph.get_state(config).next == ("tools",)
    call = {"name": "lookup_order", "args": {"order_id": "1043"}}
    graph.update_state(config, {"tool_call": call})
    out = graph.invoke(None, config)
    assert out["messages"][-2]["content"].startswith("order #1043: rain jacket")
