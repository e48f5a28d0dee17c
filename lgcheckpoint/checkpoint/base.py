"""What a checkpoint is, and the few verbs every saver offers.

A *checkpoint* is the state of every channel at a super-step boundary, plus the bookkeeping the
scheduler needs to decide what runs next (channel_versions, versions_seen). A *pending write* is
one task's output saved before the step ends, so a crash does not lose finished work.

Savers store only ``(type_tag, bytes)`` pairs made by ``self.serde``; they never see Python
objects' insides. Next: ``checkpoint/memory.py`` (the simplest saver).
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any, Generic, Literal, NamedTuple, NotRequired, TypedDict, TypeVar

from lgcheckpoint.checkpoint.id import uuid6
from lgcheckpoint.checkpoint.serde.allowlist import WithAllowlist
from lgcheckpoint.checkpoint.serde.base import SerializerProtocol
from lgcheckpoint.checkpoint.serde.jsonplus import JsonPlusSerializer
from lgcheckpoint.checkpoint.serde.types import TASKS  # noqa: F401  (re-exported, Topic of Sends)
from lgcheckpoint.checkpoint.errors import EmptyChannelError  # noqa: F401  (re-exported like LangGraph)
from lgcheckpoint.checkpoint.errors import MissingConfigError
# side trips: async twins, DeltaChannel's history, housekeeping (re-exported: savers import here)
from lgcheckpoint.checkpoint.aio import AsyncTwins, InPlaceAsync, SyncOverAsync  # noqa: F401
from lgcheckpoint.checkpoint.delta_history import (  # noqa: F401
    DeltaChannelHistory, DeltaHistoryWalk, HistoryWalk)
from lgcheckpoint.checkpoint.housekeeping import (  # noqa: F401
    PRUNE_STRATEGIES, Housekeeping, id_list, prune_threads)

# {"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}, ...}
RunnableConfig = dict[str, Any]
NS_SEP = "|"  # joins the checkpoint_ns of nested graphs: "outer:id|inner:id"
NS_END = ":"  # separates a node name from its task id in a checkpoint_ns
ChannelVersions = dict[str, str | int | float]  # channel name -> version (grows on every write)
PendingWrite = tuple[str, str, Any]  # (task_id, channel, value)
V = TypeVar("V", int, float, str)

# special channels a task can write; they get fixed negative indexes, so a retry overwrites them
ERROR = "__error__"
SCHEDULED = "__scheduled__"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
WRITES_IDX_MAP = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}

# the ``v`` this package's helpers write, as LangGraph's checkpoint package does; the runtime
# writes v=4 (pregel/checkpoint.py), where Send packets moved from "pending_sends" into TASKS
LATEST_VERSION = 2

# config keys that are addresses, not facts about a run, so they are not copied into metadata
EXCLUDED_METADATA_KEYS = {
    "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
    "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
}


class CheckpointMetadata(TypedDict, total=False):
    """Facts about how a checkpoint came to be; users may add their own keys."""

    source: Literal["input", "loop", "update", "fork"]  # who wrote it
    step: int  # -1 for the input checkpoint, 0 for the first loop step, ...
    parents: dict[str, str]  # checkpoint_ns -> checkpoint_id of each enclosing graph
    run_id: str  # the run that wrote it (used by delete_for_runs)


class Checkpoint(TypedDict):
    """State of all channels at a super-step boundary."""

    v: int  # format version
    id: str  # uuid6: unique, and sorts by time
    ts: str  # ISO 8601 UTC timestamp, for people only
    channel_values: dict[str, Any]  # channel -> value, only channels that were ever written
    channel_versions: ChannelVersions  # channel -> version of its latest write
    versions_seen: dict[str, ChannelVersions]  # node -> channel -> version it last ran on
    updated_channels: list[str] | None  # channels written in the step that made this checkpoint
    pending_sends: NotRequired[list[Any]]  # before v4: Send packets for the next step (now TASKS)


class CheckpointTuple(NamedTuple):
    """A checkpoint with everything a loader needs: where it is, why, its parent and its writes."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: RunnableConfig | None = None
    pending_writes: list[PendingWrite] | None = None


class PutWrites(NamedTuple):
    """The arguments of one ``put_writes`` call, held so it can share the next put's commit."""

    config: RunnableConfig  # names the checkpoint the task ran from
    writes: Sequence[tuple[str, Any]]  # (channel, value) pairs
    task_id: str
    task_path: str = ""


def empty_checkpoint() -> Checkpoint:
    """A checkpoint with nothing in it (its id carries step -2), in this package's v=2 format:
    what tests and hand-written savers build; a graph starts from pregel/checkpoint.py's v=4."""
    return Checkpoint(
        v=LATEST_VERSION,
        id=str(uuid6(clock_seq=-2)),
        ts=datetime.now(timezone.utc).isoformat(),
        channel_values={},
        channel_versions={},
        versions_seen={},
        pending_sends=[],
        updated_channels=None,
    )


def create_checkpoint(checkpoint: Checkpoint, channels: Mapping[str, Any] | None, step: int,
                      *, id: str | None = None) -> Checkpoint:
    """The next v=2 checkpoint after ``checkpoint`` for ``step``: the values of the live
    ``channels`` that were ever written (None: ``checkpoint``'s values), its versions kept."""
    if channels is None:
        values = checkpoint["channel_values"]
    else:
        values = {key: channel.checkpoint() for key, channel in channels.items()
                  if key in checkpoint["channel_versions"] and channel.is_available()}
    return Checkpoint(
        v=LATEST_VERSION,
        id=id or str(uuid6(clock_seq=step)),
        ts=datetime.now(timezone.utc).isoformat(),
        channel_values=values,
        channel_versions=checkpoint["channel_versions"],
        versions_seen=checkpoint["versions_seen"],
        pending_sends=checkpoint.get("pending_sends", []),
        updated_channels=None,
    )


def copy_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """Copy the mutable parts, so a saved checkpoint never changes under a saver's feet."""
    return Checkpoint(  # type: ignore[typeddict-item]
        {
            **checkpoint,
            "channel_values": dict(checkpoint["channel_values"]),
            "channel_versions": dict(checkpoint["channel_versions"]),
            "versions_seen": {
                node: dict(seen) for node, seen in checkpoint["versions_seen"].items()},
            "updated_channels": (
                None if checkpoint.get("updated_channels") is None
                else list(checkpoint["updated_channels"])
            ),
        }
    )


class Address(NamedTuple):
    """Where a config points: a thread, a namespace in it, a checkpoint (None: the latest)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None


def address(config: RunnableConfig) -> Address:
    """The address in a config; without a thread_id, a MissingConfigError says what to pass."""
    conf = config.get("configurable") if isinstance(config, dict) else None
    if not isinstance(conf, dict) or conf.get("thread_id") is None:
        raise MissingConfigError(
            "a checkpointer needs config['configurable']['thread_id']; "
            "call e.g. graph.invoke(inputs, {'configurable': {'thread_id': '1'}})")
    return Address(str(conf["thread_id"]), str(conf.get("checkpoint_ns") or ""),
                   conf.get("checkpoint_id"))


def writes_address(config: RunnableConfig) -> Address:
    """put_writes' address: it must name the checkpoint the task ran from."""
    where = address(config)
    if not where.checkpoint_id:
        raise MissingConfigError("put_writes needs config['configurable']['checkpoint_id']: "
                                 "pass the config that put() returned")
    return where


def as_config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    """The config that names one stored checkpoint."""
    return {"configurable": {
        "thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


def list_limit(limit: int | None) -> int | None:
    """list()'s limit, checked: a non-negative int (a bool is not one), or None for all rows."""
    if limit is not None and (type(limit) is bool or not isinstance(limit, int) or limit < 0):
        raise ValueError(f"limit must be a non-negative int or None, got {limit!r}")
    return limit


def get_checkpoint_id(config: RunnableConfig) -> str | None:
    """The checkpoint a config points at, or None for 'the latest'."""
    return config.get("configurable", {}).get("checkpoint_id")


def get_checkpoint_metadata(config: RunnableConfig,
                            metadata: CheckpointMetadata) -> CheckpointMetadata:
    """Merge the run's config keys (scalars only) into metadata, as LangGraph stores them.

    NUL characters are dropped from strings (Postgres text cannot hold them), so every saver
    stores the same metadata.
    """
    merged = metadata.copy()  # every put runs this: a copy, then only the strings are touched
    for key, value in metadata.items():
        if isinstance(value, str):
            merged[key] = value.replace("\u0000", "")
    for source in (config.get("metadata"), config.get("configurable")):
        if not source or source.keys() <= EXCLUDED_METADATA_KEYS:  # often only addresses
            continue
        for key, value in source.items():
            if key in merged or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(value, str):
                merged[key] = value.replace("\u0000", "")
            elif isinstance(value, (int, float, bool)):
                merged[key] = value
    return merged


class BaseCheckpointSaver(AsyncTwins, DeltaHistoryWalk, Housekeeping, WithAllowlist, Generic[V]):
    """The saver contract: get_tuple, list, put, put_writes, plus thread housekeeping.

    Subclasses implement the sync verbs. Their async twins (checkpoint/aio.py) run them in a
    worker thread, so every saver is usable from ``ainvoke``; savers with a native async driver
    override them. DeltaChannel's history (checkpoint/delta_history.py), housekeeping beyond
    delete_thread (checkpoint/housekeeping.py) and with_allowlist (serde/allowlist.py) are side
    trips too.
    """

    serde: SerializerProtocol = JsonPlusSerializer()

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = serde or self.serde

    # --- the four verbs the loop uses -------------------------------------------------------
    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """The checkpoint alone (see get_tuple)."""
        saved = self.get_tuple(config)
        return saved.checkpoint if saved else None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Load the checkpoint the config names (or the thread's latest) with its pending writes."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_tuple")

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoints newest first, optionally filtered by metadata equality."""
        raise NotImplementedError(f"{type(self).__name__} must implement list")

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Publish a checkpoint; ``new_versions`` names the channels whose values changed."""
        raise NotImplementedError(f"{type(self).__name__} must implement put")

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save one task's writes against the checkpoint it ran from."""
        raise NotImplementedError(f"{type(self).__name__} must implement put_writes")

    def put_writes_and_checkpoint(
        self,
        task: PutWrites,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """A step's last writes, then its checkpoint; savers with transactions: one commit."""
        self.put_writes(*task)
        return self.put(config, checkpoint, metadata, new_versions)

    # --- housekeeping ----------------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        """Forget a thread: all its checkpoints and writes, in every namespace."""
        raise NotImplementedError(f"{type(self).__name__} must implement delete_thread")

    # --- versions and types ------------------------------------------------------------------
    def get_next_version(self, current: V | None, channel: None = None) -> V:
        """Next version of a channel; integers by default, savers may use sortable strings."""
        if isinstance(current, str):
            raise NotImplementedError(
                "string versions need a saver that overrides get_next_version")
        return 1 if current is None else current + 1

class StringVersions:
    """Mix in before BaseCheckpointSaver: versions as LangGraph's own savers write them."""

    def get_next_version(self, current: str | int | float | None, channel: None = None) -> str:
        return next_string_version(current)


class AsyncBySync(InPlaceAsync, BaseCheckpointSaver):
    """A BaseCheckpointSaver whose async verbs call the sync ones in place (no worker thread),
    for a saver that never blocks (InMemorySaver); verbs it does not define are the defaults."""


def next_string_version(current: str | int | float | None) -> str:
    """``<counter:032>.<random:016>``: sorts as text like the counter; the tail keeps forks apart.

    LangGraph's InMemory, SQLite and Postgres savers all write versions of this shape, so a thread
    started by either library can be continued by the other.
    """
    counter = 0 if current is None else int(str(current).split(".")[0])
    return f"{counter + 1:032}.{random.random():016}"


def metadata_matches(metadata: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    """True if every filter key is present in metadata with an equal value."""
    return all(k in metadata and metadata[k] == v for k, v in (filter or {}).items())
