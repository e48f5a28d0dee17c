"""Reading and editing a thread's state outside a run: get_state, get_state_history, update_state.

A snapshot is rebuilt from a stored checkpoint: restore the channels, ask prepare_next_tasks
what would run next, and attach each task's saved writes (errors, interrupts, results).
update_state applies values as if node `as_node` had returned them, making a new checkpoint
with source "update". Next: config.py.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from typing import Any

from lgcheckpoint.checkpoint.base import CheckpointTuple, copy_checkpoint, empty_checkpoint
from lgcheckpoint.constants import (
    CHECKPOINTER, CONF, END, INPUT, INTERRUPT, NS_END, NS_SEP, NULL_TASK_ID, START,
)
from lgcheckpoint.errors import CheckpointNotFoundError, InvalidUpdateError
from lgcheckpoint.managed import Window, read_managed
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.algo import (
    InputWrites, apply_writes, local_read, prepare_next_tasks, read_state, reuse_pending_writes,
    task_path_str,
)
from lgcheckpoint.pregel.checkpoint import (
    channels_from_checkpoint, create_checkpoint, new_channel_versions,
)
from lgcheckpoint.pregel.node import branch_writes
from lgcheckpoint.pregel.runner import branch_input
from lgcheckpoint.types import StateSnapshot


def state_saver(graph: Any, config: dict) -> Any:
    """The saver that holds this graph's checkpoints (its own, or the parent's for a subgraph)."""
    saver = graph.checkpointer or config.get(CONF, {}).get(CHECKPOINTER)
    if not saver:
        raise ValueError("No checkpointer set: compile(checkpointer=InMemorySaver()) to keep "
                         "state between runs, then call get_state with the run's thread_id")
    if config.get(CONF, {}).get("thread_id") is None:
        raise ValueError("get_state needs config={'configurable': {'thread_id': ...}}")
    return saver


def locate(graph: Any, config: dict) -> tuple[Any, dict, Any]:
    """Who answers this config: the (sub)graph its checkpoint_ns names, the config, the saver."""
    saver = state_saver(graph, config)
    conf = config[CONF]
    ns = conf.get("checkpoint_ns", "")
    if ns and CHECKPOINTER not in conf:
        for name in (part.split(NS_END)[0] for part in ns.split(NS_SEP) if not part.isdigit()):
            node = graph.nodes.get(name)
            if node is None or node.inner_graph is None:
                raise ValueError(f"Subgraph {name!r} of namespace {ns!r} not found")
            graph = node.inner_graph
        conf = {**conf, CHECKPOINTER: saver}
        saver = state_saver(graph, {CONF: conf})  # a subgraph with its own saver keeps it
    return graph, {**config, CONF: {**conf, "thread_id": str(conf["thread_id"])}}, saver


def snapshot(graph: Any, config: dict, saved: CheckpointTuple | None, saver: Any,
             recurse: bool = False, live: bool = False) -> StateSnapshot:
    """The state at one checkpoint: values, next tasks with their writes, interrupts."""
    if saved is None:
        return StateSnapshot({}, (), config, None, None, None, (), ())
    checkpoint, channels, pending, tasks = restore(graph, saved)
    states = out.subgraph_task_states(list(tasks.values()), saved.config)
    if recurse:
        for tid, sub_config in states.items():
            sub = graph.nodes[tasks[tid].name].inner_graph
            states[tid] = sub.get_state(
                {CONF: {**sub_config[CONF], CHECKPOINTER: saver}}, subgraphs=True)
    apply_null_writes(graph, checkpoint, channels, pending, None)
    if live and pending:
        # show the result of tasks that already finished, as if the step were done
        reuse_pending_writes(tasks, pending)
        if done := [t for t in tasks.values() if t.writes]:
            apply_writes(checkpoint, channels, done, None, graph.trigger_to_nodes)
    reported = out.tasks_with_writes(list(tasks.values()), pending, states, graph, live=live)
    return StateSnapshot(
        read_state(channels, graph.stream_channels),
        tuple(t.name for t in tasks.values() if not t.writes),
        out.with_checkpoint_map(saved.config, saved.metadata),
        saved.metadata,
        saved.checkpoint["ts"],
        out.with_checkpoint_map(saved.parent_config, saved.metadata),
        reported,
        tuple(i for t in reported for i in t.interrupts),
    )


def restore(graph: Any, saved: CheckpointTuple | None) -> tuple[dict, dict, list, dict]:
    """A saved checkpoint brought back: a copy, live channels, pending writes, the next tasks."""
    checkpoint = copy_checkpoint(saved.checkpoint) if saved else empty_checkpoint()
    channels = channels_from_checkpoint(graph.channels, checkpoint)
    if saved is None:
        return checkpoint, channels, [], {}
    pending = list(saved.pending_writes or [])
    tasks = prepare_next_tasks(checkpoint, pending, graph.nodes, channels, saved.config,
                               saved.metadata.get("step", -1) + 1,
                               trigger_to_nodes=graph.trigger_to_nodes, updated_channels=None)
    return checkpoint, channels, pending, tasks


def apply_null_writes(graph: Any, checkpoint: dict, channels: dict, pending: list,
                      version: Any) -> None:
    """Writes no task made (Command(update=...), resume values) land first."""
    if null_writes := [(c, v) for t, c, v in pending if t == NULL_TASK_ID]:
        apply_writes(checkpoint, channels, [InputWrites(null_writes)], version,
                     graph.trigger_to_nodes)


def infer_as_node(graph: Any, versions_seen: dict) -> str | None:
    """update_state without as_node: the node that ran last, if exactly one did."""
    if len(graph.nodes) == 1:
        return next(iter(graph.nodes))
    if not any(v for seen in versions_seen.values() for v in seen.values()):
        return START if START in graph.nodes else None
    last = sorted((v, n) for n, seen in versions_seen.items() if n in graph.nodes
                  for v in seen.values())
    if len(last) == 1 or (last and last[-1][0] != last[-2][0]):
        return last[-1][1]
    return None


class Edit:
    """One update_state: the checkpoint it edits, brought back, and how the result is published."""

    def __init__(self, graph: Any, config: dict) -> None:
        self.graph, config, self.saver = locate(graph, config)
        conf = {"checkpoint_ns": "", **config[CONF]}
        self.config = {**config, CONF: conf}
        self.saved = saved = self.saver.get_tuple(self.config)
        if saved is None and conf.get("checkpoint_id"):
            raise CheckpointNotFoundError(
                f"Thread {conf['thread_id']!r} has no checkpoint {conf['checkpoint_id']!r}: pick "
                "one from get_state_history(config), or leave checkpoint_id out to edit the latest")
        self.checkpoint, self.channels, self.pending, self.next_tasks = restore(self.graph, saved)
        self.previous_versions = dict(self.checkpoint["channel_versions"])
        self.metadata = saved.metadata if saved else {}
        self.step = self.metadata.get("step", -1)
        # the new checkpoint's parent: the edited one
        self.parent_config = {**self.config, CONF: {**conf, **saved.config[CONF]}} if saved else (
            self.config)

    def apply(self, tasks: Any) -> set[str]:
        return apply_writes(self.checkpoint, self.channels, tasks, self.saver.get_next_version,
                            self.graph.trigger_to_nodes)

    def publish(self, source: str, new_step: int, id_step: int | None = None) -> dict:
        """Save the edited state as a new checkpoint after the edited one; its config."""
        new = create_checkpoint(self.checkpoint, self.channels,
                                new_step if id_step is None else id_step)
        metadata = {"source": source, "step": new_step, "parents": self.metadata.get("parents", {})}
        put = self.saver.put(self.parent_config, new, metadata,
                             new_channel_versions(self.previous_versions, new["channel_versions"]))
        return out.with_checkpoint_map(put, self.metadata)


def update_state(graph: Any, config: dict, values: Any, as_node: str | None,
                 task_id: str | None = None) -> dict:
    """Apply `values` as if `as_node` returned them; returns the new checkpoint's config."""
    edit = Edit(graph, config)
    if values is None and as_node == END:
        return finish_step(edit)
    if as_node == INPUT:
        return update_as_input(edit, values)
    return update_as_node(edit, values, as_node, task_id)


def finish_step(edit: Edit) -> dict:
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
    edit.apply([InputWrites([(START, values)])])
    return edit.publish("input", -1 if edit.metadata.get("step") is None else edit.step + 1)


def update_as_node(edit: Edit, values: Any, as_node: str | None, task_id: str | None) -> dict:
    """The values as `as_node`'s result: its edges fire, and the edited checkpoint keeps them."""
    graph, checkpoint = edit.graph, edit.checkpoint
    if as_node is None:
        as_node = infer_as_node(graph, checkpoint["versions_seen"])
        if as_node is None:
            raise InvalidUpdateError("Ambiguous update, specify as_node=<name of a node>")
    if as_node not in graph.nodes:
        raise InvalidUpdateError(
            f"Node {as_node} does not exist: as_node must be one of {sorted(graph.nodes)}")
    node = graph.nodes[as_node]
    writes = node.result_writes(values)
    for branch in node.branches:
        state = local_read(edit.channels, writes, branch.reads)
        if branch.managed:  # LangGraph's window for an update: two steps from here
            state.update(read_managed(branch.managed, Window(edit.step, edit.step + 2)))
        state = branch_input(branch, state, values)
        route = branch.path(state)
        if inspect.isawaitable(route):  # an async edge (aupdate_state runs this in a thread)
            route = asyncio.run(route)
        writes.extend(branch_writes(branch.destinations(route)))
    task = InputWrites(writes, path=(INTERRUPT, 0), name=as_node, triggers=[INTERRUPT])
    edit.apply([task])  # may refuse the values
    if edit.saved is not None and writes and not superseded(edit.saver, edit.config, edit.saved):
        # the update is also kept as the writes of that task on the checkpoint it edits
        tid = task_id or next((t.id for t in edit.next_tasks.values() if t.name == as_node),
                              None) or str(uuid.uuid5(uuid.UUID(checkpoint["id"]), INTERRUPT))
        edit.saver.put_writes(edit.parent_config, list(writes), tid, task_path_str(task.path))
    return edit.publish("update", edit.step + 1)


def superseded(saver: Any, config: dict, saved: CheckpointTuple) -> bool:
    """Did the config address an old checkpoint (the thread has moved past it)?"""
    return bool(config[CONF].get("checkpoint_id")) and moved_past(
        saved, saver.get_tuple(without_id(config)))


def moved_past(saved: CheckpointTuple, latest: CheckpointTuple | None) -> bool:
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]


def without_id(config: dict) -> dict:
    return {**config, CONF: {k: v for k, v in config[CONF].items() if k != "checkpoint_id"}}
