"""Chat messages as graph state: ``add_messages`` merges a conversation by message id.

A node returns new messages; the reducer appends them, replaces the one with the same id, or
drops it for a ``RemoveMessage(id=...)`` (``REMOVE_ALL_MESSAGES`` clears the list). A message
without an id gets one, so a later update can address it: that is how a thread is forked by
overwriting a message. ``MessagesState`` is the usual schema. LangGraph's
``langgraph.graph.message``, on langchain-core, which only this module imports: the core runs
without it (``pip install "lgcheckpoint[messages]"``). Checkpoints store messages as pydantic
models (ext code 5), readable by LangGraph. Next: pregel/write_ids.py (when ids are given).
"""

from __future__ import annotations

import uuid
import warnings
from functools import partial
from typing import Annotated, Any, Callable, Literal

try:
    from langchain_core.messages import (
        AnyMessage,
        BaseMessage,
        BaseMessageChunk,
        MessageLikeRepresentation,
        RemoveMessage,
        convert_to_messages,
        convert_to_openai_messages,
        message_chunk_to_message,
    )
    from langchain_core.messages.tool import ToolOutputMixin
    from typing_extensions import TypedDict  # langchain-core's dependency; pydantic needs it
except ImportError as exc:
    if not (exc.name or "").startswith("langchain_core"):
        raise
    raise ImportError(
        'chat messages need langchain-core: pip install "lgcheckpoint[messages]"'
    ) from None

from lgcheckpoint.config import get_config
from lgcheckpoint.graph import StateGraph
from lgcheckpoint.types import Command, current_task
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10

__all__ = ["add_messages", "MessagesState", "MessageGraph", "REMOVE_ALL_MESSAGES", "Messages",
           "push_message"]

REMOVE_ALL_MESSAGES = "__remove_all__"  # RemoveMessage(id=REMOVE_ALL_MESSAGES) clears the list
FORMATS = (None, "langchain-openai")

Messages = list[MessageLikeRepresentation] | MessageLikeRepresentation  # what a node may write

# what LangGraph names but we do not have yet, and why
NOT_YET: dict[str, str] = {}


def add_messages(left: Messages | None = None, right: Messages | None = None, *,
                 format: Literal["langchain-openai"] | None = None) -> Any:
    """Merge `right` into `left` by id; called with neither, a reducer using `format`."""
    if left is None and right is None:
        return reducer(format)
    if left is None or right is None:
        given = "left" if left is not None else "right"
        raise ValueError("Must specify non-null arguments for both 'left' and 'right'. "
                         f"Only received: '{given}'.")
    return merge(left, right, format)


def reducer(format: str | None) -> Callable[[Messages, Messages], list[BaseMessage]]:
    """add_messages with a fixed format, marked to give ids when a write is made."""
    configured = partial(merge, format=format)
    configured.stamp_write = give_ids  # type: ignore[attr-defined]
    return configured


def merge(left: Messages, right: Messages, format: str | None = None) -> list[BaseMessage]:
    """The merge: ids first, then REMOVE_ALL, then replace/append/remove by id."""
    left, right = as_messages(left), as_messages(right)
    give_ids(left)
    give_ids(right)
    # everything written before the last REMOVE_ALL is gone, the old list with it
    clear_at = [i for i, m in enumerate(right)
                if isinstance(m, RemoveMessage) and m.id == REMOVE_ALL_MESSAGES]
    if clear_at:
        return right[clear_at[-1] + 1:]
    merged = list(left)
    index = {m.id: i for i, m in enumerate(merged)}
    removed: set[str] = set()
    for m in right:
        if m.id in index:  # the same id: a RemoveMessage drops it, any other message replaces it
            if isinstance(m, RemoveMessage):
                removed.add(m.id)
            else:
                removed.discard(m.id)
                merged[index[m.id]] = m
        elif isinstance(m, RemoveMessage):
            raise ValueError(
                f"Attempting to delete a message with an ID that doesn't exist ('{m.id}')")
        else:
            index[m.id] = len(merged)
            merged.append(m)
    merged = [m for m in merged if m.id not in removed] if removed else merged
    if format == "langchain-openai":  # contents as OpenAI's blocks, tool results as messages
        return convert_to_messages(convert_to_openai_messages(merged))
    if format is not None:
        raise ValueError(f"Unrecognized {format=}. Expected one of 'langchain-openai', None.")
    return merged


def as_messages(value: Messages) -> list[BaseMessage]:
    """A list of message objects: tuples, dicts and strings converted, chunks made whole."""
    items = value if isinstance(value, list) else [value]
    if all(issubclass(t, BaseMessage) and not issubclass(t, BaseMessageChunk)
           for t in {type(m) for m in items}):  # the common case: nothing to convert
        return items
    return [message_chunk_to_message(m) for m in convert_to_messages(items)]


def give_ids(value: Any) -> None:
    """Give each message object without an id a new one (in place, as LangGraph does)."""
    for m in value if isinstance(value, list) else [value]:
        if isinstance(m, BaseMessage) and m.id is None:
            m.id = str(uuid.uuid4())


add_messages.stamp_write = give_ids  # type: ignore[attr-defined]  # see pregel/write_ids.py

# A tool that returns a Command (update the state, go to a node) must hand it on as it is:
# langchain passes on only its ToolOutputMixin objects (anything else becomes a ToolMessage's
# text). LangGraph's Command inherits that mixin; the core cannot import langchain, so ours gains
# it here, once, where langchain is first used.
if ToolOutputMixin not in Command.__mro__:
    Command.__bases__ = (*Command.__bases__, ToolOutputMixin)


def push_message(message: MessageLikeRepresentation | BaseMessageChunk, *,
                 state_key: str | None = "messages") -> AnyMessage:
    """From a running node, stream a message to stream_mode="messages" now, and write it to
    `state_key` (unless None) as if the node had returned it."""
    task = current_task.get(None)
    if task is None:
        raise RuntimeError("push_message must be called from a running node")
    message = convert_to_messages([message])[0]
    if message.id is None:
        raise ValueError("Message ID is required")
    from lgcheckpoint.pregel.messages_stream import push  # only a node's call reaches here

    push(message, get_config())
    if state_key:
        task.writes.append((state_key, message))
    return message


class MessagesState(TypedDict):
    """A state that is one conversation."""

    messages: Annotated[list[AnyMessage], add_messages]


class MessageGraph(StateGraph):
    """Deprecated (LangGraph 1.0): a graph whose whole state is a list of messages."""

    def __init__(self) -> None:
        warnings.warn("MessageGraph is deprecated in LangGraph v1.0.0, to be removed in v2.0.0. "
                      "Please use StateGraph with a `messages` key instead.",
                      LangGraphDeprecatedSinceV10, stacklevel=2)
        super().__init__(Annotated[list[AnyMessage], add_messages])


def __getattr__(name: str) -> Any:
    """Refuse by name what LangGraph's module has and this one does not yet."""
    if name in NOT_YET:
        raise ImportError(f"{name} is not implemented yet in lgcheckpoint: {NOT_YET[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
