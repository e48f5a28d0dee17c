"""Values the serializer hands back when it will not (or cannot) build the real thing.

``Opaque`` stands in for a stored object whose type is not allow-listed, when a viewer reads a
database in inspection mode; ``DeltaSnapshot`` is LangGraph's marker for a delta channel's full
value (extension code 7), kept so such blobs survive a round trip. Next: allowlist.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

TASKS = "__pregel_tasks"  # the channel whose value is the Send packets for the next step


@dataclass(frozen=True)
class Opaque:
    """An inert record of a stored object that was not built: its type name and decoded data."""

    module: str
    name: str
    data: Any  # the constructor arguments as stored (dicts, lists, other Opaque values)
    ext_code: int | None = None  # the msgpack extension code it came from; None for legacy json

    def __repr__(self) -> str:
        # stable across runs: no memory addresses, only what was stored
        return f"Opaque({self.module}.{self.name}, {self.data!r})"


class DeltaSnapshot(NamedTuple):
    """The accumulated value of a LangGraph delta channel, stored whole."""

    value: Any
