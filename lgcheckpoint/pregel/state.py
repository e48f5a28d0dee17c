"""Reading a thread's state outside a run: get_state, get_state_history (mixed into Pregel).

A snapshot is rebuilt from a stored checkpoint: restore the channels, ask prepare_next_tasks
what would run next, and attach each task's saved writes (errors, interrupts, results).
Editing it (update_state) is pregel/update.py's. Next: pregel/update.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterator

from lgcheckpoint.channels import Channel
from lgcheckpoint.checkpoint.base import (
    BaseCheckpointSaver, Checkpoint, CheckpointTuple, copy_checkpoint,
)
from lgcheckpoint.constants import CHECKPOINTER, CONF, NS_END, NS_SEP, NULL_TASK_ID, START
from lgcheckpoint.pregel import delta
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.algo import (
    GetNextVersion, InputWrites, Task, apply_writes, prepare_next_tasks, reuse_pending_writes,
)
from lgcheckpoint.pregel.checkpoint import channels_from_checkpoint, empty_checkpoint
from lgcheckpoint.pregel.subgraphs import own_namespace, resolve_saver
from lgcheckpoint.pregel.view import StateView, read_state
from lgcheckpoint.types import StateSnapshot

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel


def state_saver(graph: Pregel, config: dict) -> BaseCheckpointSaver:
    """The saver that holds this graph's checkpoints (its own, or the parent's for a subgraph)."""
    saver = resolve_saver(graph, config.get(CONF, {}))
    if not saver:
        raise ValueError("No checkpointer set: compile(checkpointer=InMemorySaver()) to keep "
                         "state between runs, then call get_state with the run's thread_id")
    if config.get(CONF, {}).get("thread_id") is None:
        raise ValueError("get_state needs config={'configurable': {'thread_id': ...}}")
    return saver


def locate(graph: Pregel, config: dict, update: bool = False
           ) -> tuple[Pregel, dict, BaseCheckpointSaver]:
    """Who answers this config: the (sub)graph its checkpoint_ns names, the config, the saver.
    A namespace no declared subgraph owns (a graph a node runs from a dict, a factory...) is
    still read from the saver, through this graph's channels; an update there is refused, as
    this graph's nodes would write the wrong state into it."""
    saver = state_saver(graph, config)
    conf = config[CONF]
    ns = conf.get("checkpoint_ns", "")
    if ns and CHECKPOINTER not in conf:
        if (sub := declared_subgraph(graph, ns)) is not None:
            graph, conf = sub, {**conf, CHECKPOINTER: saver}  # the parent's saver wins
        elif update:
            raise ValueError(f"Subgraph {stable_ns(ns)} not found (namespace {ns!r}): "
                             "update_state reaches only a subgraph a node declares or calls "
                             "visibly (see get_subgraphs())")
    conf = own_namespace(graph, conf)  # checkpointer=True: its one history per thread
    return graph, {**config, CONF: {**conf, "thread_id": str(conf["thread_id"])}}, saver


def declared_subgraph(graph: Pregel, ns: str) -> Pregel | None:
    """The subgraph a namespace ("a:<id>|b:<id>") names, or None if no node declares it."""
    for _, sub in graph.get_subgraphs(namespace=stable_ns(ns), recurse=True):
        return sub
    return None


def stable_ns(ns: str) -> str:
    """A namespace without task ids and call numbers: "a:<id>|b:<id>|1" -> "a|b"."""
    return NS_SEP.join(p.split(NS_END)[0] for p in ns.split(NS_SEP) if not p.isdigit())


def snapshot(graph: Pregel, config: dict, saved: CheckpointTuple | None, saver: BaseCheckpointSaver,
             recurse: bool = False, live: bool = False) -> StateSnapshot:
    """The state at one checkpoint: values, next tasks with their writes, interrupts."""
    if saved is None:
        return StateSnapshot({}, (), config, None, None, None, (), ())
    # copy the checkpoint only if writes will land on it: null writes, or live, any task's
    writes = saved.pending_writes or ()
    lands = bool(writes) and (live or any(t == NULL_TASK_ID for t, _, _ in writes))
    checkpoint, channels, pending, tasks = restore(graph, saved, saver, copy=lands)
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
            apply_writes(checkpoint, channels, done, None, graph.trigger_to_nodes,
                         StateView(channels))
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


def restore(graph: Pregel, saved: CheckpointTuple | None, saver: BaseCheckpointSaver | None = None,
            copy: bool = True) -> tuple[Checkpoint, dict[str, Channel], list, dict[str, Task]]:
    """A saved checkpoint brought back: the checkpoint, live channels, pending writes, the next
    tasks (without a saver, DeltaChannels that store no value here read as empty). ``copy=False``
    when no writes will land and ``saved`` is the caller's own (an old checkpoint's format is
    still upgraded in place)."""
    if saver is not None:
        saved = delta.resolve(saver, graph.channels, saved)  # DeltaChannels replay their writes
    if saved is None:
        checkpoint = empty_checkpoint()
        return checkpoint, channels_from_checkpoint(graph.channels, checkpoint), [], {}
    checkpoint = copy_checkpoint(saved.checkpoint) if copy else saved.checkpoint
    channels = channels_from_checkpoint(graph.channels, checkpoint)
    pending = list(saved.pending_writes or [])
    tasks = prepare_next_tasks(checkpoint, pending, graph.nodes, channels, saved.config,
                               saved.metadata.get("step", -1) + 1,
                               trigger_to_nodes=graph.trigger_to_nodes, updated_channels=None,
                               view=StateView(channels))
    return checkpoint, channels, pending, tasks


def apply_null_writes(graph: Pregel, checkpoint: Checkpoint, channels: dict[str, Channel],
                      pending: list, version: GetNextVersion | None) -> None:
    """Writes no task made (Command(update=...), resume values) land first."""
    if null_writes := [(c, v) for t, c, v in pending if t == NULL_TASK_ID]:
        apply_writes(checkpoint, channels, [InputWrites(null_writes)], version,
                     graph.trigger_to_nodes, StateView(channels))


def infer_as_node(graph: Pregel, versions_seen: dict) -> str | None:
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


def superseded(saver: BaseCheckpointSaver, config: dict, saved: CheckpointTuple) -> bool:
    """Did the config address an old checkpoint (the thread has moved past it)?"""
    return bool(config[CONF].get("checkpoint_id")) and moved_past(
        saved, saver.get_tuple(without_id(config)))


def moved_past(saved: CheckpointTuple, latest: CheckpointTuple | None) -> bool:
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]


def without_id(config: dict) -> dict:
    return {**config, CONF: {k: v for k, v in config[CONF].items() if k != "checkpoint_id"}}


class StateReading:
    """Pregel's get_state and get_state_history (mixed in)."""

    def get_state(self, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's latest state (or the checkpoint config names), with what runs next."""
        graph, config, saver = locate(self, config)
        return snapshot(graph, config, saver.get_tuple(config), saver, recurse=subgraphs,
                        live="checkpoint_id" not in config[CONF])

    def get_state_history(self, config: dict, *, filter: dict | None = None,
                          before: dict | None = None, limit: int | None = None
                          ) -> Iterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first, each as a StateSnapshot."""
        graph, config, saver = locate(self, config)
        config = {**config, CONF: {"checkpoint_ns": "", **config[CONF]}}
        # lazily, one tuple at a time: no saver of ours holds a lock or cursor while list() yields
        # (SQLite and Postgres read a page at a time), so a snapshot may read the saver (delta
        # channels), and each tuple is dropped once its snapshot is built
        for saved in saver.list(config, filter=filter, before=before, limit=limit):
            yield snapshot(graph, saved.config, saved, saver)
