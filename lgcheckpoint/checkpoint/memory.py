"""InMemorySaver: the whole saver contract in three dictionaries. Read it before sqlite/, postgres/.

    storage[thread_id][checkpoint_ns][checkpoint_id] = StoredCheckpoint(checkpoint, metadata, ...)
    writes[(thread_id, checkpoint_ns, checkpoint_id)][(task_id, idx)] = StoredWrite(task_id, ...)
    blobs[(thread_id, checkpoint_ns, channel, version)] = (type tag, bytes)

The read verbs (get_tuple, list, get_delta_channel_history) unpack records by position, so a
plain tuple of the same shape, as LangGraph's InMemorySaver stores and its tests write by hand,
reads the same; housekeeping (prune, copy_thread, ...) expects the NamedTuples put() makes.
A checkpoint is stored *without* its channel values: each value lives in ``blobs`` under the
channel's version, so a channel that did not change in a step is not stored again. Everything is
kept as ``(type tag, bytes)`` from ``self.serde``, exactly as a database would hold it.

Left out on purpose: LangGraph's ``factory=PersistentDict`` (pickling to a file; use SqliteSaver).
Next: ``checkpoint/sqlite/sql.py``.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Collection, Iterator, Sequence
from typing import Any, NamedTuple

from lgcheckpoint.checkpoint.base import (
    WRITES_IDX_MAP,
    AsyncBySync,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    PendingWrite,
    RunnableConfig,
    StringVersions,
    address,
    as_config,
    get_checkpoint_id,
    get_checkpoint_metadata,
    list_limit,
    metadata_matches,
    writes_address,
)
from lgcheckpoint.checkpoint.memory_history import InMemoryHistory
from lgcheckpoint.checkpoint.memory_housekeeping import InMemoryHousekeeping
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol, Typed

EMPTY: Typed = ("empty", b"")  # a channel that has a version but no value (e.g. cleared)


class StoredCheckpoint(NamedTuple):
    """One saved checkpoint; its channel values are not inside it, they are in ``blobs``."""

    checkpoint: Typed
    metadata: Typed
    parent_id: str | None  # the checkpoint it was made from (same namespace)


class StoredWrite(NamedTuple):
    """One value a task wrote to one channel, saved before its step ended."""

    task_id: str
    channel: str
    value: Typed
    task_path: str  # orders a step's writes the way the loop applied them


class Checkpoints(dict):
    """One namespace's checkpoints by id; remembers the largest id, so 'the latest' is O(1)."""

    __slots__ = ("latest",)

    def __init__(self) -> None:
        super().__init__()
        self.latest = ""  # "" sorts before every id: no checkpoint yet

    def forget_latest(self) -> None:
        """After deleting checkpoints: find the largest id again."""
        self.latest = max(self, default="")


def apply_order(item: tuple[tuple[str, int], StoredWrite]) -> tuple[str, str, int]:
    """Sort key of a stored write: (task_path, task_id, idx), the order the loop applies them."""
    (task_id, idx), (_task_id, _channel, _value, task_path) = item
    return task_path, task_id, idx


class InMemorySaver(AsyncBySync, InMemoryHistory, InMemoryHousekeeping, StringVersions,
                    BaseCheckpointSaver[str]):
    """A saver for tests and lessons: fast, inspectable, gone when the process ends.

    DeltaChannel's history (memory_history.py) and housekeeping beyond delete_thread
    (memory_housekeeping.py) are mixed in from side trips."""

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.storage: defaultdict[str, defaultdict[str, Checkpoints]] = (
            defaultdict(lambda: defaultdict(Checkpoints)))
        self.writes: defaultdict[tuple[str, str, str], dict[tuple[str, int], StoredWrite]] = (
            defaultdict(dict))
        self.blobs: dict[tuple[str, str, str, str | int | float], Typed] = {}
        self._lock = threading.Lock()  # sync tasks may put_writes from several threads

    def __enter__(self) -> InMemorySaver:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    async def __aenter__(self) -> InMemorySaver:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None

    # --- write: blobs first, then the checkpoint that names them ------------------------------
    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Store the changed channel values as blobs, then the checkpoint without values."""
        thread_id, ns, parent_id = address(config)  # the config we were given names the parent
        checkpoint_id, dumps = checkpoint["id"], self.serde.dumps_typed
        saved = checkpoint.copy()
        values = saved.pop("channel_values")
        # serialize everything first: a value that cannot be stored leaves nothing half-written
        blobs = {}
        for channel, version in new_versions.items():  # channels not in new_versions: unchanged
            blobs[(thread_id, ns, channel, version)] = (
                dumps(values[channel]) if channel in values else EMPTY)
        record = StoredCheckpoint(
            dumps(saved), dumps(get_checkpoint_metadata(config, metadata)), parent_id)
        with self._lock:
            self.blobs.update(blobs)
            checkpoints = self.storage[thread_id][ns]
            checkpoints[checkpoint_id] = record
            # set after the record: a reader always finds the latest
            checkpoints.latest = max(checkpoints.latest, checkpoint_id)
        return as_config(thread_id, ns, checkpoint_id)

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save one task's writes; on a retry regular writes keep the first, special ones update."""
        thread_id, ns, checkpoint_id = writes_address(config)
        rows = []
        for idx, (channel, value) in enumerate(writes):  # all serialized before any is stored
            row = StoredWrite(task_id, channel, self.serde.dumps_typed(value), task_path)
            rows.append(((task_id, WRITES_IDX_MAP.get(channel, idx)), row))
        with self._lock:
            saved = self.writes[(thread_id, ns, checkpoint_id)]
            for key, row in rows:
                if key[1] < 0 or key not in saved:  # regular writes: the first one wins
                    saved[key] = row

    # --- read ---------------------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint the config names, or the namespace's latest (found in O(1))."""
        thread_id, ns, checkpoint_id = address(config)
        checkpoints = self.storage.get(thread_id, {}).get(ns)
        if not checkpoints:
            return None
        if checkpoint_id is None:
            checkpoint_id = checkpoints.latest
            config = as_config(thread_id, ns, checkpoint_id)
        saved = checkpoints.get(checkpoint_id)
        return None if saved is None else self._load(thread_id, ns, checkpoint_id, saved, config)

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Newest first within each namespace; config None walks every thread."""
        limit = list_limit(limit)
        before_id = get_checkpoint_id(before) if before else None
        for thread_id, ns, checkpoint_id in self._candidates(config):
            if before_id and checkpoint_id >= before_id:
                continue
            saved = self.storage.get(thread_id, {}).get(ns, {}).get(checkpoint_id)
            if saved is None:  # deleted while we were iterating
                continue
            _checkpoint, stored_metadata, _parent_id = saved
            metadata = self.serde.loads_typed(stored_metadata)
            if not metadata_matches(metadata, filter):
                continue
            if limit is not None:
                if limit <= 0:
                    return
                limit -= 1
            yield self._load(thread_id, ns, checkpoint_id, saved, metadata=metadata)

    def _candidates(self, config: RunnableConfig | None) -> Iterator[tuple[str, str, str]]:
        """(thread, ns, id) in list order: threads and namespaces as stored, ids newest first."""
        only_ns = only_id = None
        if config:
            thread_ids = [address(config).thread_id]
            only_ns = config["configurable"].get("checkpoint_ns")  # None means every namespace
            only_id = get_checkpoint_id(config)
        else:
            thread_ids = list(self.storage)
        for thread_id in thread_ids:
            for ns in list(self.storage.get(thread_id, {})):
                if only_ns is not None and ns != only_ns:
                    continue
                checkpoints = self.storage.get(thread_id, {}).get(ns, ())
                for checkpoint_id in sorted(checkpoints, reverse=True):
                    if only_id is None or checkpoint_id == only_id:
                        yield thread_id, ns, checkpoint_id

    def _load(
        self,
        thread_id: str,
        ns: str,
        checkpoint_id: str,
        saved: StoredCheckpoint,
        config: RunnableConfig | None = None,
        metadata: CheckpointMetadata | None = None,
    ) -> CheckpointTuple:
        """Rebuild a CheckpointTuple: values from blobs, writes in the loop's apply order."""
        loads = self.serde.loads_typed
        stored_checkpoint, stored_metadata, parent_id = saved
        checkpoint = loads(stored_checkpoint)
        versions = checkpoint["channel_versions"]
        checkpoint["channel_values"] = self._load_blobs(thread_id, ns, versions)
        return CheckpointTuple(
            config or as_config(thread_id, ns, checkpoint_id),
            checkpoint,
            metadata if metadata is not None else loads(stored_metadata),
            as_config(thread_id, ns, parent_id) if parent_id else None,
            self._pending_writes(thread_id, ns, checkpoint_id),
        )

    def _pending_writes(self, thread_id: str, ns: str, checkpoint_id: str,
                        only: Collection[str] | None = None) -> list[PendingWrite]:
        """One checkpoint's saved writes, decoded, in the loop's apply order."""
        stored, loads = self.writes.get((thread_id, ns, checkpoint_id), {}), self.serde.loads_typed
        return [(task_id, channel, loads(value))
                for _, (task_id, channel, value, _path) in sorted(stored.items(), key=apply_order)
                if only is None or channel in only]

    def _load_blobs(self, thread_id: str, ns: str, versions: ChannelVersions,
                    only: Collection[str] | None = None) -> dict[str, Any]:
        """Each channel's value at the version the checkpoint recorded (empty ones are left out)."""
        values, blobs, loads = {}, self.blobs, self.serde.loads_typed
        for channel, version in versions.items():
            if only is not None and channel not in only:
                continue
            blob = blobs.get((thread_id, ns, channel, version))
            if blob is not None and blob[0] != EMPTY[0]:  # a version without a value
                values[channel] = loads(blob)
        return values

    # --- housekeeping -------------------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        """Forget every checkpoint, write and blob of a thread, in every namespace."""
        with self._lock:
            self._delete_thread(thread_id)

    def _delete_thread(self, thread_id: str) -> None:
        self.storage.pop(thread_id, None)
        for table in (self.writes, self.blobs):
            for key in [k for k in table if k[0] == thread_id]:
                del table[key]


MemorySaver = InMemorySaver  # LangGraph's older name, kept so imports port unchanged
