"""The tour graph: a travel planner that stops for a human to approve the plan, then books it.

It is small on purpose and shows every idea once: a fan-out to two parallel research nodes and a
join, a reducer channel, an ``interrupt()`` for approval, and a conditional edge that loops back
when the human rejects. Used by ``lgcheckpoint tour`` and by notebooks/00_tour.ipynb.
"""

import operator
from typing import Annotated, TypedDict

from lgcheckpoint.graph import END, START, StateGraph
from lgcheckpoint.types import interrupt


class Trip(TypedDict, total=False):
    destination: str
    days: int
    plan: str
    notes: Annotated[list[str], operator.add]  # parallel nodes may both append in one step
    approved: bool
    feedback: str
    bookings: Annotated[list[str], operator.add]


def draft_plan(trip: Trip) -> Trip:
    """Write a plan; a rejected plan is redrafted with the reviewer's feedback."""
    extra = f" (revised: {trip['feedback']})" if trip.get("feedback") else ""
    return {"plan": f"{trip['days']}-day trip to {trip['destination']}{extra}"}


def check_weather(trip: Trip) -> Trip:
    """Runs in parallel with find_hotels: both start in the same super-step."""
    return {"notes": [f"weather in {trip['destination']}: mild"]}


def find_hotels(trip: Trip) -> Trip:
    return {"notes": [f"hotel in {trip['destination']}: 2 options"]}


def review(trip: Trip) -> Trip:
    """Stop the graph until a human answers; the answer comes back as interrupt()'s return value."""
    answer = interrupt({"question": "Approve this plan?", "plan": trip["plan"]})
    if answer is True or answer == "approve":
        return {"approved": True}
    return {"approved": False, "feedback": str(answer)}


def book(trip: Trip) -> Trip:
    return {"bookings": [f"booked: {trip['plan']}"]}


def after_review(trip: Trip) -> str:
    return "book" if trip.get("approved") else "draft_plan"


def build_tour_graph(checkpointer=None):
    """Compile the travel planner with the given saver."""
    builder = StateGraph(Trip)
    builder.add_node("draft_plan", draft_plan)
    builder.add_node("check_weather", check_weather)
    builder.add_node("find_hotels", find_hotels)
    builder.add_node("review", review)
    builder.add_node("book", book)
    builder.add_edge(START, "draft_plan")
    builder.add_edge("draft_plan", "check_weather")
    builder.add_edge("draft_plan", "find_hotels")
    builder.add_edge(["check_weather", "find_hotels"], "review")
    builder.add_conditional_edges("review", after_review, ["book", "draft_plan"])
    builder.add_edge("book", END)
    return builder.compile(checkpointer=checkpointer)
