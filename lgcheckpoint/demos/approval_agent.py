"""A support agent that waits for a human: a deterministic offline "model" picks tools.

The model is a few rules over the conversation (no API key, same answer every run): it asks which
order when the customer gave none (a dynamic interrupt), looks the order up, and proposes a refund.
A refund is a risky tool call, so ``review`` stops the run with ``interrupt`` until a person answers
``"approve"``, ``"reject"`` or a dict of corrected arguments (``Command(resume=...)``). Chapter 14
of the course drives it; ``build_approval_agent(saver, interrupt_before=["tools"])`` gives the
breakpoint where the proposed ``tool_call`` can be edited with ``update_state``.
Next: notebooks/src/14_agent_waits_for_a_human.py.
"""

from __future__ import annotations

import operator
import re
from typing import Annotated, Any, TypedDict

from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import interrupt

ORDERS = {"1042": {"item": "hiking boots", "total": 129.0, "status": "delivered, sole torn"},
          "1043": {"item": "rain jacket", "total": 89.0, "status": "in transit"}}
RISKY_TOOLS = {"issue_refund"}  # tools that move money wait for a person


class SupportState(TypedDict, total=False):
    messages: Annotated[list[dict], operator.add]  # the transcript: {"role", "content"}
    tool_call: dict | None  # what the model wants to run next: {"name", "args"}


def lookup_order(order_id: str) -> str:
    order = ORDERS.get(order_id)
    return f"order #{order_id}: {order['item']}, {order['total']:.2f} EUR, {order['status']}" \
        if order else f"no order #{order_id}"


def issue_refund(order_id: str, amount: float) -> str:
    return f"refunded {amount:.2f} EUR for order #{order_id}"


TOOLS = {"lookup_order": lookup_order, "issue_refund": issue_refund}


def fake_model(messages: list[dict]) -> dict:
    """The offline model: the next assistant message, with a tool call or a final answer."""
    said = " ".join(m["content"] for m in messages if m["role"] == "user")
    tool_results = [m["content"] for m in messages if m["role"] == "tool"]
    order_id = (re.findall(r"#?(\d{4})", said) or [None])[-1]
    if not tool_results:
        return {"content": f"Let me look up order #{order_id}.",
                "tool_call": {"name": "lookup_order", "args": {"order_id": order_id}}}
    last = tool_results[-1]
    if "refund" in said.lower() and last.startswith("order #") and ORDERS.get(order_id):
        amount = ORDERS[order_id]["total"]
        return {"content": f"I propose a refund of {amount:.2f} EUR.",
                "tool_call": {"name": "issue_refund",
                              "args": {"order_id": order_id, "amount": amount}}}
    return {"content": f"Result: {last}. Anything else?", "tool_call": None}


def agent(state: SupportState) -> dict:
    """Call the model; with no order number it first asks the customer (a dynamic interrupt)."""
    messages = state["messages"]
    if not re.search(r"\d{4}", " ".join(m["content"] for m in messages if m["role"] == "user")):
        answer = interrupt({"question": "Which order is this about?"})
        messages = messages + [{"role": "user", "content": str(answer)}]
    reply = fake_model(messages)
    new = messages[len(state["messages"]):]  # the customer's answer, if one was asked for
    return {"messages": new + [{"role": "assistant", "content": reply["content"]}],
            "tool_call": reply["tool_call"]}


def review(state: SupportState) -> dict:
    """A risky call waits for a person: approve, reject, or correct its arguments."""
    call = state["tool_call"]
    if call["name"] not in RISKY_TOOLS:
        return {}
    answer = interrupt({"question": "Run this tool call?", **call})
    if answer == "approve":
        return {}
    if isinstance(answer, dict):  # corrected arguments
        return {"tool_call": {**call, "args": {**call["args"], **answer}}}
    note = f"{call['name']} rejected by a human: {answer}"
    return {"tool_call": None, "messages": [{"role": "tool", "content": note}]}


def tools(state: SupportState) -> dict:
    """Run the (approved) tool call and hand its result back to the model."""
    call = state["tool_call"]
    result = TOOLS[call["name"]](**call["args"])
    return {"messages": [{"role": "tool", "content": result}], "tool_call": None}


def build_approval_agent(checkpointer: Any = None, *, interrupt_before: Any = None,
                         interrupt_after: Any = None):
    """The compiled agent: START -> agent -> review -> tools -> agent ... -> END."""
    builder = StateGraph(SupportState)
    builder.add_node("agent", agent)
    builder.add_node("review", review)
    builder.add_node("tools", tools)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", lambda s: "review" if s.get("tool_call") else END,
                                  ["review", END])
    builder.add_conditional_edges("review", lambda s: "tools" if s.get("tool_call") else "agent",
                                  ["tools", "agent"])
    builder.add_edge("tools", "agent")
    return builder.compile(checkpointer=checkpointer, interrupt_before=interrupt_before,
                           interrupt_after=interrupt_after)
