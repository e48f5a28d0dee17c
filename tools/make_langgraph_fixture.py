"""Write notebooks/data/langgraph_support.sqlite with LangGraph itself (test extra needed).

Chapter 12 inspects this file: a real database written by LangGraph's own SqliteSaver, holding
langchain message objects (on LangGraph's safe list), a record of the app's own class
(``support_desk.Customer``, on no list: refused, or Opaque when inspected), an interrupt and a fork.
Run: python tools/make_langgraph_fixture.py
"""

import sqlite3
import sys
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt

OUT = Path(__file__).resolve().parent.parent / "notebooks" / "data" / "langgraph_support.sqlite"


@dataclass
class Customer:
    name: str
    plan: str


# as if the support desk's own code (importable where the file is written, not where it is read)
# had stored it: LangGraph rebuilds it when it resumes the thread, so every checkpoint keeps it
Customer.__module__ = "support_desk"
sys.modules["support_desk"] = types.SimpleNamespace(Customer=Customer)


class Ticket(TypedDict, total=False):
    messages: Annotated[list, add_messages]
    customer: Customer
    category: str
    refund: bool


def triage(t):
    return {
        "category": "billing",
        "messages": [AIMessage("Looks like a billing question.", id="ai-1")],
    }


def approve_refund(t):
    ok = interrupt({"question": "Refund 20 EUR?", "category": t["category"]})
    return {"refund": ok == "yes"}


def reply(t):
    text = "Refund issued." if t.get("refund") else "No refund, sorry."
    return {"messages": [AIMessage(text, id="ai-2")]}


def build(saver):
    b = StateGraph(Ticket)
    b.add_node("triage", triage)
    b.add_node("approve_refund", approve_refund)
    b.add_node("reply", reply)
    b.add_edge(START, "triage")
    b.add_edge("triage", "approve_refund")
    b.add_edge("approve_refund", "reply")
    b.add_edge("reply", END)
    return b.compile(checkpointer=saver)


if __name__ == "__main__":
    OUT.unlink(missing_ok=True)
    conn = sqlite3.connect(OUT, check_same_thread=False)
    graph = build(SqliteSaver(conn))
    config = {"configurable": {"thread_id": "ticket-42"}}
    graph.invoke({"messages": [HumanMessage("I was charged twice.", id="h-1")],
                  "customer": Customer("Ada", "pro")}, config)
    graph.invoke(Command(resume="yes"), config)
    # a fork: an agent re-decides the category on the checkpoint before approval, then runs on
    before = next(s for s in graph.get_state_history(config) if s.next == ("approve_refund",))
    forked = graph.update_state(before.config, {"category": "fraud"}, as_node="triage")
    graph.invoke(None, forked)
    graph.invoke(Command(resume="no"), config)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.execute("PRAGMA journal_mode=DELETE")  # one self-contained file in the repository
    conn.close()
    print("wrote", OUT, OUT.stat().st_size, "bytes")
