"""What the viewers show for a DeltaChannel: a checkpoint stores its value only at a snapshot;
in between it stores nothing, and a load rebuilds the value from the last snapshot plus the
writes saved since. ``mark_deltas`` puts a ``DeltaView`` in ``Step.values`` there, saying which
snapshot and how many writes a load re-reads (and, given the graph, the rebuilt value).
Works on LangGraph's checkpoints as on ours (duck-typed). Next: cached.py.
"""

from __future__ import annotations

import copy
import reprlib
from dataclasses import dataclass
from typing import Any

COUNTERS = "counters_since_delta_snapshot"  # metadata: channel -> (updates, supersteps)


def is_snapshot(value: Any) -> bool:
    """A DeltaSnapshot: ours, or LangGraph's _DeltaSnapshot."""
    return type(value).__name__.lstrip("_") == "DeltaSnapshot"


@dataclass(frozen=True)
class DeltaView:
    """A delta channel's value at a checkpoint that stores none."""

    seed: str | None  # key of the step with the snapshot; "": none (empty); None: not loaded
    writes: int  # writes a load replays after that snapshot
    value: Any = None  # the rebuilt value (only when the graph's channel was given)
    rebuilt: bool = False

    def __repr__(self) -> str:
        since = {None: "an older snapshot", "": "empty"}.get(self.seed, f"snapshot {self.seed}")
        if not self.rebuilt:
            return f"delta ({since} + {self.writes} writes)"
        size = f"{len(self.value)} items" if hasattr(self.value, "__len__") else reprlib.repr(
            self.value)
        return f"delta (rebuilt: {size}; {since} + {self.writes} writes)"


def delta_channels(steps: list[Any]) -> set[str]:
    """Channels that the history shows are delta channels: counted in metadata, or snapshotted."""
    return {c for s in steps for c in (s.metadata.get(COUNTERS) or {})} | {
        c for s in steps for c, v in s.values.items() if is_snapshot(v)}


def mark_deltas(steps: list[Any], by_key: dict[str, Any], graph: Any = None) -> None:
    """Oldest first: a delta channel with a version but no stored value gets a DeltaView."""
    specs = getattr(graph, "channels", None) or {}
    deltas = delta_channels(steps)  # once: a history of any length is read in linear time
    for step in steps:
        parent = by_key.get(step.parent)
        for channel in deltas:
            if channel not in step.channel_versions or channel in step.values:
                continue
            seed, writes, value, known, added = None, 0, None, False, []
            if parent is not None:  # the parent's value, plus the writes saved on the parent
                before = parent.values.get(channel)
                added = [v for tw in parent.tasks for c, v in tw.regular if c == channel]
                if channel not in parent.channel_versions:  # first written there: from empty
                    seed, known = "", True
                elif is_snapshot(before):
                    seed, value, known = parent.key, before.value, True
                elif isinstance(before, DeltaView):
                    seed, writes, value, known = (before.seed, before.writes, before.value,
                                                  before.rebuilt)
                writes += len(added)
            spec = specs.get(channel)
            rebuilt = known and hasattr(spec, "replay_writes")
            if rebuilt:  # the graph's own reducer, as a load would run it
                chan = spec.from_checkpoint(copy.copy(value))
                if added:
                    chan.replay_writes([("", channel, v) for v in added])
                value = chan.get()
            step.values[channel] = DeltaView(seed, writes, value if rebuilt else None, rebuilt)


def delta_marks(values: dict[str, Any], offset: int = 0) -> str:
    """A short note per delta channel, for one-line listings: stored whole, or replayed
    (``offset``: the listing numbers checkpoints from there, not from c0)."""
    def seed(v: DeltaView) -> str:
        return "older" if v.seed is None else f"c{offset + int(v.seed[1:])}" if v.seed else "empty"

    marks = [f" [snapshot {c}]" for c, v in values.items() if is_snapshot(v)]
    marks += [f" [delta {c}: {seed(v)}+{v.writes} writes]"
              for c, v in values.items() if isinstance(v, DeltaView)]
    return "".join(marks)
