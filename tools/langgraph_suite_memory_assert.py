"""Our stand-in for LangGraph's tests/memory_assert.py, installed by tools/langgraph_suite.py.

LangGraph's helper builds its checkpointers on ``InMemorySaver(factory=PersistentDict)``, a
disk-backed dict we do not have; every "memory" parametrization would fail on that alone. This file
keeps the helpers' *checks* with our own code and our InMemorySaver:

* ``MemorySaverAssertImmutable``: a saved checkpoint must not change after it was handed to ``put``
  (the saver keeps a serialized copy and compares it on the next put of the same thread).
* ``MemorySaverNeedsPendingSendsMigration``: reads back checkpoints in the pre-v4 shape (v3, sends
  under ``pending_sends``), so the runtime must migrate them.
* ``MemorySaverNoPending``: returns checkpoints without their pending writes.

Next: tools/langgraph_suite.py
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from lgcheckpoint.checkpoint.memory import InMemorySaver
from lgcheckpoint.constants import TASKS


class MemorySaverAssertImmutable(InMemorySaver):
    """InMemorySaver that fails if a checkpoint it stored is mutated afterwards."""

    def __init__(self, *, serde: Any = None, put_sleep: float | None = None) -> None:
        super().__init__(serde=serde)
        self.copies: defaultdict[tuple[str, str], dict[str, Any]] = defaultdict(dict)
        self.put_sleep = put_sleep

    def put(self, config, checkpoint, metadata, new_versions):
        if self.put_sleep:
            time.sleep(self.put_sleep)
        key = (config["configurable"]["thread_id"], config["configurable"].get("checkpoint_ns", ""))
        if (saved := super().get(config)) and saved["id"] in self.copies[key]:
            assert self.serde.loads_typed(self.copies[key][saved["id"]]) == saved, key
        next_config = super().put(config, checkpoint, metadata, new_versions)
        self.copies[key][checkpoint["id"]] = self.serde.dumps_typed(super().get(next_config))
        return next_config


class MemorySaverNeedsPendingSendsMigration(BaseCheckpointSaver):
    """Serves every checkpoint with queued sends in the v3 shape, as LangGraph < 0.3 stored it."""

    def __init__(self) -> None:
        self.saver = InMemorySaver()

    def __getattribute__(self, name):
        if name in ("saver", "__class__", "get_tuple"):
            return object.__getattribute__(self, name)
        return getattr(self.saver, name)

    def get_tuple(self, config):
        found = self.saver.get_tuple(config)
        if found and found.checkpoint["v"] == 4 and found.checkpoint["channel_values"].get(TASKS):
            checkpoint = found.checkpoint
            checkpoint["v"] = 3
            checkpoint["pending_sends"] = checkpoint["channel_values"].pop(TASKS)
            checkpoint["channel_versions"].pop(TASKS)
            for seen in checkpoint["versions_seen"].values():
                seen.pop(TASKS, None)
        return found


class MemorySaverNoPending(InMemorySaver):
    """Returns checkpoints without their pending writes."""

    def get_tuple(self, config):
        found = super().get_tuple(config)
        return CheckpointTuple(found.config, found.checkpoint, found.metadata) if found else None
