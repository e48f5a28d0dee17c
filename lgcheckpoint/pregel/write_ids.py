"""A reducer that gives written values ids gives them when the write is made, not when applied.

``add_messages`` gives each message without an id a new one. Left to the reducer, that happens
when the step's writes are applied -- after an earlier task's writes were saved, and while a
background save may be serializing the very same message objects: the stored write would hold
no id, or sometimes one (LangGraph 1.2 races exactly so), and a resumed run would replay it with
different ids than the state holds. So a reducer may carry ``stamp_write(value)``, and the loop
calls it on each write as a task commits, before anything saves or streams it: the saved write
then holds the ids the state holds, every time. A DeltaChannel (which stores its writes, not
its value) gives the messages written to it ids whatever its reducer (delta_ids).
Next: prebuilt/__init__.py (tools that answer a model's tool calls).
"""

from __future__ import annotations

import sys
import uuid
from typing import Any, Mapping

from lgcheckpoint.channels import DeltaChannel, overwrite_value

# a dict is a chat message if its role or type says so (an unrelated dict may have a "role")
MESSAGE_ROLES = frozenset({"user", "human", "assistant", "ai", "tool", "system", "function"})
MESSAGE_TYPES = frozenset({"human", "ai", "tool", "system", "function", "remove"})


def stamp_writes(channels: Mapping[str, Any], writes: list[tuple[str, Any]]) -> None:
    """Let each written channel's reducer stamp its write (e.g. give messages their ids); a
    DeltaChannel's messages get ids whatever its reducer, and a write that changes is replaced
    in ``writes``."""
    for i, (channel, value) in enumerate(writes):
        chan = channels.get(channel)
        if isinstance(chan, DeltaChannel):
            if (stamped := delta_ids(value)) is not value:
                writes[i] = (channel, stamped)
            continue
        stamp = getattr(getattr(chan, "operator", None), "stamp_write", None)
        if stamp is not None:
            stamp(value)


def delta_ids(value: Any) -> Any:
    """A DeltaChannel replays its saved writes on every read: a message saved without an id
    would come back with none (or a new one each time), and nothing could address it. So the
    messages of a write get ids before it is saved, whatever the channel's reducer: message
    objects in place (alone, in a list or in an Overwrite); a message dict in a list becomes a
    message (one that cannot fails the write), a message dict alone gains an "id" key. Other
    data stays as it is; a changed list or dict is a new one."""
    if "langchain_core.messages" not in sys.modules and not has_message_dict(value):
        return value  # no message object can exist, and no dict asks to become one
    from langchain_core.messages import BaseMessage, convert_to_messages  # only for such writes

    def give_id(item: Any) -> Any:
        if isinstance(item, dict):  # a message dict in a list
            item = convert_to_messages([item])[0]
            item.id = item.id or None  # an empty id counts as none
        if isinstance(item, BaseMessage) and item.id is None:
            item.id = str(uuid.uuid4())
        return item

    if overwrite_value(value)[0]:
        inner = overwrite_value(value)[1]
        for item in inner if isinstance(inner, (list, tuple)) else ():
            if isinstance(item, BaseMessage):
                give_id(item)
        return value
    if isinstance(value, list):
        items = [give_id(v) if isinstance(v, BaseMessage) or isinstance(v, dict)
                 and is_message_dict(v) else v for v in value]
        return items if any(new is not old for new, old in zip(items, value)) else value
    if isinstance(value, dict):
        return {**value, "id": str(uuid.uuid4())} if is_message_dict(value) and not value.get(
            "id") else value
    return give_id(value) if isinstance(value, BaseMessage) else value


def has_message_dict(value: Any) -> bool:
    items = value if isinstance(value, list) else [value]
    return not overwrite_value(value)[0] and any(
        isinstance(v, dict) and is_message_dict(v) for v in items)


def is_message_dict(item: dict) -> bool:
    return item.get("role") in MESSAGE_ROLES or item.get("type") in MESSAGE_TYPES
