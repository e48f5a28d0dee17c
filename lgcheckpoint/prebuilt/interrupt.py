"""The shapes of a human-in-the-loop question and its answer (Agent Inbox), as TypedDicts.

Deprecated in LangGraph 1.0 (moved to ``langchain.agents.interrupt``), kept for its tutorials:
``interrupt(HumanInterrupt(...))`` asks, the answer is a ``HumanResponse``.
LangGraph's ``langgraph.prebuilt.interrupt``. Next: tool_node.py.
"""

from __future__ import annotations

from typing import Literal

from typing_extensions import TypedDict, deprecated

from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10

MOVED = ("{} has been moved to `langchain.agents.interrupt`. Please update your import to "
         "`from langchain.agents.interrupt import {}`.")


@deprecated(MOVED.format("HumanInterruptConfig", "HumanInterruptConfig"),
            category=LangGraphDeprecatedSinceV10)
class HumanInterruptConfig(TypedDict):
    """Which answers the person may give."""

    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


@deprecated(MOVED.format("ActionRequest", "ActionRequest"), category=LangGraphDeprecatedSinceV10)
class ActionRequest(TypedDict):
    """The action waiting for approval: its name and arguments."""

    action: str
    args: dict


@deprecated(MOVED.format("HumanInterrupt", "HumanInterrupt"), category=LangGraphDeprecatedSinceV10)
class HumanInterrupt(TypedDict):
    """What interrupt() asks: the action, the answers allowed, a description."""

    action_request: ActionRequest
    config: HumanInterruptConfig
    description: str | None


class HumanResponse(TypedDict):
    """The answer: accept, ignore, a text response, or edited arguments."""

    type: Literal["accept", "ignore", "response", "edit"]
    args: None | str | ActionRequest
