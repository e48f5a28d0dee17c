"""InMemorySaver's DeltaChannel history: walk the parent ids in its dictionaries, decoding little.

The default walk (checkpoint/delta_history.py) loads each ancestor whole; this one decodes only
the wanted channels' blobs and writes. Next: checkpoint/sqlite/history.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from lgcheckpoint.checkpoint.base import RunnableConfig, address
from lgcheckpoint.checkpoint.delta_history import DeltaChannelHistory, HistoryWalk


class InMemoryHistory:
    """Mix into InMemorySaver: its get_delta_channel_history."""

    def get_delta_channel_history(self, *, config: RunnableConfig, channels: Sequence[str]
                                  ) -> dict[str, DeltaChannelHistory]:
        """Walk the parent ids in storage, decoding only the wanted channels' blobs and writes."""
        thread_id, ns, checkpoint_id = address(config)
        checkpoints = self.storage.get(thread_id, {}).get(ns)
        walk, loads = HistoryWalk(channels), self.serde.loads_typed
        target = checkpoints and checkpoints.get(checkpoint_id or checkpoints.latest)
        _checkpoint, _metadata, parent_id = target if target and channels else (None, None, None)
        seen = set()  # a corrupt chain may cycle
        while parent_id and walk.remaining and parent_id not in seen and (
                saved := checkpoints.get(parent_id)):
            seen.add(parent_id)
            stored_checkpoint, _metadata, grandparent_id = saved
            versions = loads(stored_checkpoint)["channel_versions"]
            values = self._load_blobs(thread_id, ns, versions, only=walk.remaining)
            walk.visit(values, self._pending_writes(thread_id, ns, parent_id, walk.remaining))
            parent_id = grandparent_id
        return walk.result()
