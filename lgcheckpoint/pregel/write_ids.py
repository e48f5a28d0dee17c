"""A reducer that gives written values ids gives them when the write is made, not when applied.

``add_messages`` gives each message without an id a new one. Left to the reducer, that happens
when the step's writes are applied -- after an earlier task's writes were saved, and while a
background save may be serializing the very same message objects: the stored write would hold
no id, or sometimes one (LangGraph 1.2 races exactly so), and a resumed run would replay it with
different ids than the state holds. So a reducer may carry ``stamp_write(value)``, and the loop
calls it on each write as a task commits, before anything saves or streams it: the saved write
then holds the ids the state holds, every time. Next: prebuilt/__init__.py (tools that
answer a model's tool calls).
"""

from __future__ import annotations

from typing import Any, Mapping


def stamp_writes(channels: Mapping[str, Any], writes: list[tuple[str, Any]]) -> None:
    """Let each written channel's reducer stamp its write (e.g. give messages their ids)."""
    for channel, value in writes:
        stamp = getattr(getattr(channels.get(channel), "operator", None), "stamp_write", None)
        if stamp is not None:
            stamp(value)
