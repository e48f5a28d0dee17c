"""DeltaChannel bookkeeping in one place: when a delta channel stores its whole value, and how a
checkpoint that stores none gets it back.

A DeltaChannel's value is in a checkpoint's channel_values only as ``DeltaSnapshot(value)``, at
a snapshot. ``metadata["counters_since_delta_snapshot"][k] = (updates, supersteps)`` counts
since k's last one; k snapshots when ``updates`` reaches its ``snapshot_frequency``, when
``supersteps`` reaches MAX_SUPERSTEPS, or when it is *forced*: an Overwrite, or writes stored on
the starting checkpoint that belong to another branch (a fork must never replay them).
Loading asks ``saver.get_delta_channel_history`` for the nearest stored value (the seed) and the
writes after it, and replays them through the reducer. The savers' side comes next:
``get_delta_channel_history``, by default and fast. Next: checkpoint/delta_history.py.
"""

from __future__ import annotations

import copy
import os
import uuid
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from lgcheckpoint.channels import MISSING, BinaryOperatorAggregate, Channel, DeltaChannel
from lgcheckpoint.channels import overwrite_value
from lgcheckpoint.checkpoint.base import (
    BaseCheckpointSaver, Checkpoint, CheckpointTuple, RunnableConfig,
)
from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot
from lgcheckpoint.constants import CONF, NS_END, NS_SEP, NULL_TASK_ID
from lgcheckpoint.pregel.algo import GetNextVersion, InputWrites, Task, task_path_str
from lgcheckpoint.pregel.checkpoint import empty_checkpoint

if TYPE_CHECKING:
    from lgcheckpoint.pregel.saves import SaveQueue

COUNTERS = "counters_since_delta_snapshot"  # metadata key: channel -> (updates, supersteps)
SNAPSHOT_BUMPS = "__snapshot_bumps__"  # versions_seen entry: what a snapshot's bump advanced
MAX_SUPERSTEPS = int(os.environ.get("LANGGRAPH_DELTA_MAX_SUPERSTEPS_SINCE_SNAPSHOT", "5000"))

Counters = dict[str, tuple[int, int]]


# --- loading: rebuild what the checkpoint does not store -----------------------------------------
def to_replay(specs: Mapping[str, Channel], checkpoint: Checkpoint) -> list[str]:
    """Channels written on this branch whose value is not stored here (a reducer channel with
    none was a DeltaChannel when it was saved)."""
    values, versions = checkpoint["channel_values"], checkpoint["channel_versions"]
    return [k for k, spec in specs.items()
            if isinstance(spec, (DeltaChannel, BinaryOperatorAggregate))
            and k in versions and k not in values]


def rebuilt(specs: Mapping[str, Channel], saved: CheckpointTuple, histories: Mapping[str, Any]
            ) -> CheckpointTuple:
    """``saved`` with each channel's value in channel_values: its seed, then the writes after
    it through the reducer."""
    values = dict(saved.checkpoint["channel_values"])
    for k, history in histories.items():
        chan = specs[k].from_checkpoint(history.get("seed", MISSING))
        if isinstance(chan, DeltaChannel):
            chan.replay_writes(history["writes"])
        else:  # one update per write: they span many steps (and maybe several Overwrites)
            for _, _, value in history["writes"]:
                chan.update([value])
        if chan.is_available():
            values[k] = DeltaSnapshot(chan.get())
    return saved._replace(checkpoint={**saved.checkpoint, "channel_values": values})


def resolve(saver: BaseCheckpointSaver, specs: Mapping[str, Channel], saved: CheckpointTuple | None
            ) -> CheckpointTuple | None:
    """``saved`` with every delta channel's value rebuilt into channel_values."""
    if saved is None or not (keys := to_replay(specs, saved.checkpoint)):
        return saved
    histories = saver.get_delta_channel_history(config=saved.config, channels=keys)
    return rebuilt(specs, saved, histories)


async def aresolve(saver: BaseCheckpointSaver, specs: Mapping[str, Channel],
                   saved: CheckpointTuple | None) -> CheckpointTuple | None:
    if saved is None or not (keys := to_replay(specs, saved.checkpoint)):
        return saved
    histories = await saver.aget_delta_channel_history(config=saved.config, channels=keys)
    return rebuilt(specs, saved, histories)


# --- saving: when a snapshot is stored ----------------------------------------------------------
class DeltaBook:
    """One run's delta bookkeeping: the counters, and the channels forced to snapshot next.
    The loop calls it once per phase: loaded, took_input, after_step, count, store, at_exit."""

    def __init__(self, channels: Mapping[str, Channel], trigger_to_nodes: Mapping[str, list[str]],
                 next_version: GetNextVersion, exit_mode: bool = False) -> None:
        self.channels, self.trigger_to_nodes = channels, trigger_to_nodes  # the run's live ones
        self.next_version = next_version  # the saver's rule for a snapshot's version bump
        self.keys = [k for k, chan in channels.items() if isinstance(chan, DeltaChannel)]
        self.forced: set[str] = set()
        self.loaded_writes: list = []  # a resume's loaded writes, until its first step ends
        self.stored: set[tuple[str, str]] = set()  # (task, channel) writes already on the start
        # durability="exit": every delta write of the run, (step, task id, task path, ch, value)
        self.exit_writes: list[tuple[int, str, str, str, Any]] | None = [] if exit_mode else None
        self.first_step: int | None = None
        self.commanded: list[tuple] = []  # this run's Command writes, (null task id, ch, value)

    def loaded(self, pending_writes: list, commanded: list, reuses: bool) -> None:
        """Writes stored on the starting checkpoint belong to the branch that went on from it:
        unless this run gives them back to their tasks, its next checkpoint snapshots."""
        self.commanded = commanded
        self.loaded_writes = [w for w in pending_writes if w[0] != NULL_TASK_ID] if reuses else []
        self.stored = {(t, c) for t, c, _ in pending_writes if c in self.keys}
        if not reuses:
            self.forced |= {c for _, c, _ in pending_writes if c in self.keys}

    def took_input(self, writes: list, step: int, on_start: bool) -> list:
        """New input. A DeltaChannel reads it back from writes on the checkpoint the run starts
        from: returned, for the loop to save there, if ``on_start`` (that checkpoint is stored
        and the thread's latest: its other children would read them too). "exit" saves them
        with the run's others; otherwise the input checkpoint snapshots them."""
        self.overwritten(writes)
        delta_input = [(c, v) for c, v in writes if c in self.keys]
        if self.exit_writes is not None:
            self.exit_writes += [(step, NULL_TASK_ID, "", c, v) for c, v in delta_input]
        elif on_start:
            return delta_input
        else:
            self.forced |= {c for c, _ in delta_input}
        return []

    def after_step(self, tasks: Iterable[Task | InputWrites], step: int) -> None:
        """Overwrites force a snapshot; so do loaded writes that no task of a resumed first
        step took back (they were another branch's). "exit" keeps the step's delta writes."""
        tasks = list(tasks)
        self.overwritten(w for task in tasks for w in task.writes)
        if self.exit_writes is not None:
            first = self.first_step is None
            if first:
                self.first_step = step
                self.exit_writes += [(step, t, "", c, v) for t, c, v in self.commanded
                                     if c in self.keys]
            self.exit_writes += [(step, t.id, task_path_str(t.path), c, v) for t in tasks
                                 for c, v in t.writes if c in self.keys
                                 and not (first and (t.id, c) in self.stored)]
        if self.loaded_writes:
            ids = {task.id for task in tasks}
            self.forced |= {c for t, c, _ in self.loaded_writes if c in self.keys and t not in ids}
            self.loaded_writes = []

    def count(self, previous: Mapping, metadata: dict, updated: set[str] | None) -> None:
        """A checkpoint is made: one more super-step for every delta channel, one more update
        for those written."""
        if not self.keys:
            return
        before = previous.get(COUNTERS) or {}
        metadata[COUNTERS] = {k: (u + (k in (updated or ())), s + 1)
                              for k in self.keys for u, s in [before.get(k, (0, 0))]}

    def store(self, checkpoint: Checkpoint, metadata: dict, stored_versions: dict) -> dict:
        """A checkpoint is stored: put the due and forced snapshots in it and reset their
        counters. Returns the versions bumped (channels the saver must then write too)."""
        if not self.keys:
            return {}
        counters = dict(metadata.get(COUNTERS) or {})
        snapshot = self.due(counters, checkpoint["channel_versions"]) | self.forced
        bumped = store_snapshots(checkpoint, self.channels, self.keys, snapshot, stored_versions,
                                 self.next_version, self.trigger_to_nodes)
        self.forced -= snapshot
        metadata.pop(COUNTERS, None)
        if nonzero := {k: c for k, c in counters.items() if k not in snapshot and c != (0, 0)}:
            metadata[COUNTERS] = nonzero
        return bumped

    def at_exit(self, saves: SaveQueue, config: RunnableConfig, start_id: str, superseded: bool,
                checkpoint: Checkpoint, metadata: Mapping) -> RunnableConfig:
        """"exit" saves no step, so the run's delta writes go on the checkpoint it started from
        (a new thread: on a stub checkpoint saved for them, with ``start_id``), where a load walks
        back to them. Returns the config the run's last checkpoint follows."""
        if not self.exit_writes:
            return config
        if superseded:  # that checkpoint has other children: they must never see these
            self.forced |= {w[3] for w in self.exit_writes}
        counters = metadata.get(COUNTERS) or {}
        snapshot = self.due(counters, checkpoint["channel_versions"])
        if not (calls := exit_write_calls(self, snapshot | self.forced)):
            return config
        anchor = config
        if not anchor[CONF].get("checkpoint_id"):  # nothing saved yet: a stub to hold them
            stub = {**empty_checkpoint(), "id": start_id}
            anchor = {**anchor, CONF: {**anchor[CONF], "checkpoint_id": start_id}}
            saves.submit(saves.put, config, stub, {"step": -2}, {})
        for task_id, path, writes in calls:
            saves.submit(saves.put_writes, anchor, writes, task_id, path)
        return anchor

    def store_edit(self, checkpoint: Checkpoint, metadata: dict, previous: Mapping | None,
                   updated: set[str], stored_versions: dict) -> None:
        """update_state stores a checkpoint: an edit counts like a step, and a new thread (no
        ``previous`` metadata) snapshots every delta channel it wrote."""
        if not self.keys:
            return
        if previous is None:
            self.forced = {k for k in self.keys if k in checkpoint["channel_versions"]
                           and self.channels[k].is_available()}
        else:
            self.count(previous, metadata, updated)
        self.store(checkpoint, metadata, stored_versions)

    def due(self, counters: Counters, versions: dict) -> set[str]:
        """Channels whose counters reached their bound (a never-written one has nothing)."""
        channels = self.channels
        return {k for k, (updates, steps) in counters.items()
                if k in versions and channels[k].is_available()
                and (updates >= channels[k].snapshot_frequency or steps >= MAX_SUPERSTEPS)}

    def overwritten(self, writes: Iterable[tuple]) -> None:
        """An Overwrite resets the value: the next checkpoint snapshots it."""
        self.forced |= {w[-2] for w in writes if w[-2] in self.keys and overwrite_value(w[-1])[0]}

    def force(self, writes: Iterable[tuple]) -> None:
        """Writes another branch must never replay: their delta channels snapshot instead."""
        self.forced |= {w[-2] for w in writes if w[-2] in self.keys}


def exit_task_id(step: int, task_id: str, late: bool) -> str:
    """Where "exit" stores a step's delta writes: the task id with the step in its first group
    (sorts by step; never the null task's id), or, for a step after the first, an id that sorts
    after every real one."""
    parts = str(uuid.UUID(task_id)).split("-")
    if late:
        return f"ffffffff-{step >> 16:04x}-{step & 0xFFFF:04x}-{parts[3]}-{parts[4]}"
    synthetic = "-".join([f"{step:08d}", *parts[1:]])
    return f"{step:08d}-0000-0000-0000-000000000001" if synthetic == NULL_TASK_ID else synthetic


def exit_write_calls(book: DeltaBook, snapshot: set[str]) -> list[tuple[str, str, list]]:
    """(task id, task path, writes) put_writes calls for the run's delta writes that the final
    checkpoint does not snapshot, grouped as LangGraph groups them."""
    grouped: dict[tuple[str, str], list] = {}
    for step, tid, path, channel, value in book.exit_writes or ():
        if channel in snapshot:
            continue
        # a task's write in a step after the first sorts after every real task (path too);
        # the null task's (an input or Command update, path "") never does
        late = tid != NULL_TASK_ID and step != book.first_step
        key = (exit_task_id(step, tid, late), f"~~{step:010d}{path}" if late else path)
        grouped.setdefault(key, []).append((channel, value))
    return [(tid, path, writes) for (tid, path), writes in grouped.items()]


def store_snapshots(checkpoint: Checkpoint, channels: Mapping[str, Channel], keys: list[str],
                    snapshot: set[str], stored_versions: dict, next_version: GetNextVersion,
                    trigger_to_nodes: Mapping) -> dict:
    """Only snapshots stay in channel_values. A saver stores a value only for a channel whose
    version moved, so a snapshot of an unmoved (or never written) channel bumps its version.
    Returns the bumps, {channel: (old version, new version)}."""
    values, versions = checkpoint["channel_values"], checkpoint["channel_versions"]
    bumped = {}
    for k in keys:
        values.pop(k, None)
        if k not in snapshot:
            continue
        old = versions.get(k)
        if old is None or old == stored_versions.get(k):
            versions[k] = next_version(old, None)
            bumped[k] = (old, versions[k])
        values[k] = DeltaSnapshot(copy.copy(channels[k].get()))  # the live value keeps changing
    checkpoint["versions_seen"] = mark_bumps_seen(
        checkpoint["versions_seen"], bumped, trigger_to_nodes)  # no bumps: the same, copied
    return bumped


def mark_bumps_seen(versions_seen: dict, bumped: dict, trigger_to_nodes: Mapping) -> dict:
    """versions_seen's other writer (algo.mark_seen records reads): a snapshot bump is not a
    write, so whoever had seen the old version now sees the new one (else it would run again).
    SNAPSHOT_BUMPS keeps, per (node, channel), the version advanced to ("node|k") and the one
    really read ("node:k")."""
    seen = dict(versions_seen)
    for k, (old, _) in bumped.items():
        if old is None:  # never written: subscribers that never ran would start on the bump
            for node in trigger_to_nodes.get(k, ()):
                seen.setdefault(node, {})
    marks = dict(versions_seen.get(SNAPSHOT_BUMPS, {}))
    for node in [n for n in seen if n != SNAPSHOT_BUMPS]:
        for k, (old, new) in bumped.items():
            if seen[node].get(k) != old:
                continue
            advanced, read = f"{node}{NS_SEP}{k}", f"{node}{NS_END}{k}"
            if old is not None and marks.get(advanced) != old:  # an earlier bump kept the read
                marks[read] = old
            marks[advanced] = new
            seen[node] = {**seen[node], k: new}
    if marks:
        seen[SNAPSHOT_BUMPS] = marks
    return seen


def without_bumps(versions_seen: dict) -> dict:
    """versions_seen as the nodes really read it (for guessing update_state's as_node)."""
    marks = versions_seen.get(SNAPSHOT_BUMPS, {})
    out: dict = {}
    for node in [n for n in versions_seen if n != SNAPSHOT_BUMPS]:
        out[node] = {}
        for k, v in versions_seen[node].items():
            advanced, read = f"{node}{NS_SEP}{k}", f"{node}{NS_END}{k}"
            if marks.get(advanced) != v:
                out[node][k] = v
            elif read in marks:
                out[node][k] = marks[read]
    return out
