"""What a saver hands a DeltaChannel on load: the nearest stored value and the writes after it.

A DeltaChannel stores a full value only now and then; in between, its value is the last stored
one (the *seed*) with the later writes replayed. ``HistoryWalk`` collects both while a saver
visits a checkpoint's ancestors; ``DeltaHistoryWalk`` is the default visit through ``get_tuple``
that every saver inherits (memory and SQLite read less). Next: checkpoint/memory_history.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from lgcheckpoint.checkpoint.base import PendingWrite, RunnableConfig


class DeltaChannelHistory(TypedDict, total=False):
    """What a delta channel needs from a checkpoint's ancestors to rebuild its value."""

    writes: list[PendingWrite]  # its writes after the seed, oldest first (the target's excluded)
    seed: Any  # the nearest stored value (a DeltaSnapshot); absent: start from empty


class HistoryWalk:
    """get_delta_channel_history as a fold: a saver visits the target's ancestors, newest first,
    until every channel found a stored value (its seed)."""

    def __init__(self, channels: Sequence[str]) -> None:
        self.channels, self.remaining = list(channels), set(channels)
        self.writes: dict[str, list[PendingWrite]] = {c: [] for c in channels}
        self.seeds: dict[str, Any] = {}

    def visit(self, values: dict[str, Any], pending_writes: Sequence[PendingWrite] | None) -> None:
        """One ancestor: its writes (in apply order) and its stored values."""
        for write in reversed(pending_writes or ()):
            if write[1] in self.remaining:
                self.writes[write[1]].append(write)
        for channel in [c for c in self.remaining if c in values]:
            self.seeds[channel] = values[channel]
            self.remaining.discard(channel)

    def result(self) -> dict[str, DeltaChannelHistory]:
        out: dict[str, DeltaChannelHistory] = {}
        for channel in self.channels:
            out[channel] = {"writes": self.writes[channel][::-1]}
            if channel in self.seeds:
                out[channel]["seed"] = self.seeds[channel]
        return out


class DeltaHistoryWalk:
    """BaseCheckpointSaver's get_delta_channel_history: whole ancestors read with get_tuple."""

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                  ) -> dict[str, DeltaChannelHistory]:
        """For each channel: the nearest stored value among the ancestors of the checkpoint
        ``config`` names (following parents, so a fork sees only its own branch), and the
        writes after it. This default reads whole ancestors with get_tuple; savers override."""
        walk = HistoryWalk(channels)
        target = self.get_tuple(config) if channels else None
        parent, seen = (target.parent_config if target else None), set()
        while parent is not None and walk.remaining and (saved := self.get_tuple(parent)):
            if saved.checkpoint["id"] in seen:  # a corrupt chain that cycles: stop
                break
            seen.add(saved.checkpoint["id"])
            walk.visit(saved.checkpoint["channel_values"], saved.pending_writes)
            parent = saved.parent_config
        return walk.result()

    async def aget_delta_channel_history(self, *, config: RunnableConfig,
                                         channels: Sequence[str]
                                         ) -> dict[str, DeltaChannelHistory]:
        walk = HistoryWalk(channels)
        target = await self.aget_tuple(config) if channels else None
        parent, seen = (target.parent_config if target else None), set()
        while parent is not None and walk.remaining and (saved := await self.aget_tuple(parent)):
            if saved.checkpoint["id"] in seen:  # a corrupt chain that cycles: stop
                break
            seen.add(saved.checkpoint["id"])
            walk.visit(saved.checkpoint["channel_values"], saved.pending_writes)
            parent = saved.parent_config
        return walk.result()
