"""Editing a thread's state outside a run: bulk_update_state, and update_state (one update).

``bulk_update_state(config, supersteps)`` takes a list of supersteps, each a list of
``StateUpdate(values, as_node, task_id)``; each superstep edits the checkpoint the previous one
saved and saves one new checkpoint. A superstep is one of four variants:

    first update            | what it does                                  | saves (source)
    ------------------------+-----------------------------------------------+------------------
    values None, as END     | the step ends as if every pending task ran    | "update"
    as "__input__"          | the values are new input                      | "input"
    as "__copy__"           | a copy beside the edited checkpoint (same     | "fork" (then an
                            | parent); a list of (values, as_node) edits it | "update")
    as node(s)              | each update as that node's result: its edges | "update"
                            | fire; the edited checkpoint keeps the writes  |

Next: pregel/run_input.py.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from lgcheckpoint.checkpoint.base import copy_checkpoint
from lgcheckpoint.constants import CONF, END, INPUT, INTERRUPT
from lgcheckpoint.errors import CheckpointNotFoundError, InvalidUpdateError
from lgcheckpoint.managed import Window, read_managed
from lgcheckpoint.pregel import delta
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.algo import (
    InputWrites, Task, local_read, apply_writes, reuse_pending_writes, task_path_str,
)
from lgcheckpoint.pregel.checkpoint import (
    channel_values, create_checkpoint, migrate_pending_sends, new_channel_versions,
)
from lgcheckpoint.pregel.run_input import input_writes
from lgcheckpoint.pregel.node import Node, branch_writes
from lgcheckpoint.pregel.runner import branch_input
from lgcheckpoint.pregel.state import apply_null_writes, infer_as_node, locate, restore, superseded
from lgcheckpoint.pregel.view import StateView
from lgcheckpoint.types import StateUpdate

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

COPY = "__copy__"  # as_node of a fork beside the edited checkpoint


class Edit:
    """One superstep of edits: the checkpoint it edits, brought back, and how it is published."""

    def __init__(self, graph: Pregel, config: dict, first: bool) -> None:
        self.graph, config, self.saver = locate(graph, config, update=True)
        conf = {"checkpoint_ns": "", **config[CONF]}
        self.config = {**config, CONF: conf}
        self.saved = saved = self.saver.get_tuple(self.config)
        if saved is None and conf.get("checkpoint_id"):
            raise CheckpointNotFoundError(
                f"Thread {conf['thread_id']!r} has no checkpoint {conf['checkpoint_id']!r}: pick "
                "one from get_state_history(config), or leave checkpoint_id out to edit the latest")
        self.checkpoint, self.channels, self.pending, self.next_tasks = restore(
            self.graph, saved, self.saver)
        self.previous_versions = dict(self.checkpoint["channel_versions"])
        self.metadata = saved.metadata if saved else {}
        self.updated: set[str] = set()
        # DeltaChannels (delta.py): an edit starts a new branch, so its loaded writes snapshot
        self.delta = delta.DeltaBook(self.channels, self.graph.trigger_to_nodes,
                                     self.saver.get_next_version)
        self.delta.loaded(self.pending, [], reuses=False)
        self.step = self.metadata.get("step", -1)
        # the new checkpoint's parent: the edited one
        self.parent_config = {**self.config, CONF: {**conf, **saved.config[CONF]}} if saved else (
            self.config)
        # the edited checkpoint keeps the update's writes, unless the thread moved past it (the
        # first superstep's may be old; later ones edit what the one before saved)
        self.keeps_writes = saved is not None and not (
            first and superseded(self.saver, self.config, saved))

    def apply(self, tasks: Iterable[Task | InputWrites]) -> None:
        tasks = list(tasks)
        self.updated |= apply_writes(self.checkpoint, self.channels, tasks,
                                     self.saver.get_next_version, self.graph.trigger_to_nodes,
                                     StateView(self.channels))
        self.delta.after_step(tasks, self.step)

    def publish(self, source: str, new_step: int, id_step: int | None = None) -> dict:
        """Save the edited state as a new checkpoint after the edited one; its config."""
        values = channel_values(self.channels, self.checkpoint["channel_versions"])
        new = create_checkpoint(self.checkpoint, values, new_step if id_step is None else id_step)
        metadata = {"source": source, "step": new_step, "parents": self.metadata.get("parents", {})}
        previous = None if self.saved is None else self.metadata  # None: a new thread
        self.delta.store_edit(new, metadata, previous, self.updated, self.previous_versions)
        put = self.saver.put(self.parent_config, new, metadata,
                             new_channel_versions(self.previous_versions, new["channel_versions"]))
        return out.with_checkpoint_map(put, self.metadata)

    def keep_writes(self, writes: list, task_id: str, task_path: str = "") -> None:
        """Save an edit's writes on the checkpoint it edits, where DeltaChannels replay them;
        if the thread moved past that checkpoint, other branches would too: snapshot instead."""
        if self.saved is None or not writes:
            return
        if self.keeps_writes:
            self.saver.put_writes(self.parent_config, list(writes), task_id, task_path)
        else:
            self.delta.force(writes)


def bulk_update_state(graph: Pregel, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
    """Apply each superstep of updates in turn; returns the last saved checkpoint's config."""
    if len(supersteps) == 0:
        raise ValueError("No supersteps provided: pass a list of lists of StateUpdate")
    if any(len(updates) == 0 for updates in supersteps):
        raise ValueError("No updates provided: each superstep needs at least one StateUpdate")
    for i, updates in enumerate(supersteps):
        updates = [StateUpdate(*update) for update in updates]
        config = update_superstep(Edit(graph, config, first=i == 0), updates)
    return config


def update_superstep(edit: Edit, updates: list[StateUpdate]) -> dict:
    """One superstep: the first update's as_node picks the variant."""
    values, as_node, _ = updates[0]
    variant = {END: finish_step, INPUT: update_as_input, COPY: copy_beside}.get(as_node)
    if variant is not None and (as_node != END or values is None):
        if len(updates) > 1:
            raise InvalidUpdateError(f"as_node={as_node!r} must be the only update of its "
                                     "superstep: put other updates in a superstep of their own")
        return variant(edit, values)
    return update_as_nodes(edit, updates)


def finish_step(edit: Edit, _values: None) -> dict:
    """as_node=END, no values: the step ends as if every pending task finished with its writes."""
    apply_null_writes(edit.graph, edit.checkpoint, edit.channels, edit.pending,
                      edit.saver.get_next_version)
    reuse_pending_writes(edit.next_tasks, edit.pending)
    edit.apply(edit.next_tasks.values())
    return edit.publish("update", edit.step + 1, id_step=edit.step)


def update_as_input(edit: Edit, values: Any) -> dict:
    """as_node="__input__": the values are new input, saved as an "input" checkpoint."""
    if values is None:
        raise InvalidUpdateError(f"Received no input writes for {edit.graph.input_channels}")
    writes = input_writes(edit.graph.input_channels, values)
    edit.apply([InputWrites(writes)])  # may refuse the values: nothing saved yet
    if edit.saved is not None:
        edit.keep_writes(writes, str(uuid.uuid5(uuid.UUID(edit.saved.checkpoint["id"]), INPUT)))
    return edit.publish("input", -1 if edit.metadata.get("step") is None else edit.step + 1)


def copy_beside(edit: Edit, values: Any) -> dict:
    """as_node="__copy__": the edited checkpoint copied as its sibling (source "fork"); values,
    a list of (values, as_node), then edit the copy as one superstep."""
    saved = edit.saved
    if saved is None:
        raise InvalidUpdateError("Cannot copy a non-existent checkpoint: name one of "
                                 "get_state_history(config)")
    source = copy_checkpoint(saved.checkpoint)
    migrate_pending_sends(source)  # a pre-v4 checkpoint's Sends: into TASKS, or the copy drops them
    copy = create_checkpoint(source, source["channel_values"], edit.step)
    beside = saved.parent_config or {
        **saved.config, CONF: {**saved.config[CONF], "checkpoint_id": None}}
    metadata = {"source": "fork", "step": edit.step + 1,
                "parents": saved.metadata.get("parents", {}),  # same values: same delta counters
                **{k: v for k, v in saved.metadata.items() if k == delta.COUNTERS}}
    config = out.with_checkpoint_map(edit.saver.put(beside, copy, metadata, {}), saved.metadata)
    if not (isinstance(values, list) and values):
        return config
    if not all(isinstance(item, (list, tuple)) for item in values):
        raise InvalidUpdateError(f"Invalid update item in {values!r} when copying a checkpoint: "
                                 "pass a list of (values, as_node)")
    # the copy's edits, grouped by node as LangGraph orders them
    nodes = list(dict.fromkeys(item[1] for item in values))
    updates = [StateUpdate(v, n) for node in nodes for v, n, *_ in values if n == node]
    return update_as_nodes(Edit(edit.graph, config, first=False), updates)


def update_as_nodes(edit: Edit, updates: list[StateUpdate]) -> dict:
    """Each update as its node's result: the edges fire; the edited checkpoint keeps them."""
    graph, checkpoint = edit.graph, edit.checkpoint
    updates = [named_update(edit, update, alone=len(updates) == 1) for update in updates]
    # each update takes a task id the edited checkpoint would give that node next, in order
    prepared: dict[str, list[str]] = {}
    for task in edit.next_tasks.values():
        prepared.setdefault(task.name, []).append(task.id)
    tasks, task_ids = [], []
    for i, (values, as_node, task_id) in enumerate(updates):
        writes = node_writes(edit, graph.nodes[as_node], values)
        tasks.append(InputWrites(writes, path=(INTERRUPT, i), name=as_node, triggers=[INTERRUPT]))
        ids = prepared.get(as_node)
        task_ids.append(task_id or (ids.pop(0) if ids else update_task_id(checkpoint["id"], i)))
    edit.apply(tasks)  # may refuse the values: nothing is saved then
    for task, task_id in zip(tasks, task_ids):
        edit.keep_writes(list(task.writes), task_id, task_path_str(task.path))
    return edit.publish("update", edit.step + 1)


def named_update(edit: Edit, update: StateUpdate, alone: bool) -> StateUpdate:
    """The update with its node: given, or (for a lone update) the node that ran last."""
    as_node = update.as_node
    if as_node is None and alone:
        as_node = infer_as_node(edit.graph, delta.without_bumps(edit.checkpoint["versions_seen"]))
        if as_node is None:
            raise InvalidUpdateError("Ambiguous update, specify as_node=<name of a node>")
    if as_node is None:
        raise InvalidUpdateError("as_node is required when applying multiple updates")
    if as_node not in edit.graph.nodes:
        raise InvalidUpdateError(
            f"Node {as_node} does not exist: as_node must be one of {sorted(edit.graph.nodes)}")
    return update._replace(as_node=as_node)


def node_writes(edit: Edit, node: Node, values: Any) -> list:
    """What the node's result `values` writes: state updates, edges, conditional edges."""
    writes = node.result_writes(values)
    for branch in node.branches:
        state = local_read(StateView(edit.channels), writes, branch.reads)
        if branch.managed:  # LangGraph's window for an update: two steps from here
            state.update(read_managed(branch.managed, Window(edit.step, edit.step + 2)))
        route = branch.path(branch_input(branch, state, values))
        if inspect.isawaitable(route):  # an async edge (aupdate_state runs this in a thread)
            route = asyncio.run(route)
        writes.extend(branch_writes(branch.destinations(route)))
    return writes


def update_task_id(checkpoint_id: str, i: int) -> str:
    """The task id of the i-th update of a superstep when the node has no task to reuse."""
    return str(uuid.uuid5(uuid.UUID(checkpoint_id), INTERRUPT if i == 0 else f"{INTERRUPT}:{i}"))


class StateUpdating:
    """Pregel's update_state and bulk_update_state (mixed in)."""

    def update_state(self, config: dict, values: Any, as_node: str | None = None,
                     task_id: str | None = None) -> dict:
        """Write values as if node `as_node` returned them; a new checkpoint (source "update"):
        a bulk update of one superstep of one update."""
        return bulk_update_state(self, config, [[StateUpdate(values, as_node, task_id)]])

    def bulk_update_state(self, config: dict, supersteps: Any) -> dict:
        """Apply supersteps of StateUpdate(values, as_node, task_id), one checkpoint each."""
        return bulk_update_state(self, config, supersteps)
