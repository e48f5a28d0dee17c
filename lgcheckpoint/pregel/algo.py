"""The two rules of a super-step: who runs next (prepare_next_tasks) and how writes land.

A node runs when one of its trigger channels has a version newer than the one it last saw
(``versions_seen[node][channel]``). After all tasks of a step finish, their writes are applied
together: every changed channel gets the same new version, and each task records the trigger
versions it consumed. Next: pregel/checkpoint.py.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, NamedTuple, Sequence

from xxhash import xxh3_128_hexdigest

from lgcheckpoint.channels import Channel
from lgcheckpoint.checkpoint.base import Checkpoint, PendingWrite
from lgcheckpoint.constants import (
    CONF, CONTROL_WRITES, ERROR, ERROR_SOURCE_NODE, INPUT, INTERRUPT, NO_WRITES, NS_END, NS_SEP,
    NULL_RESUME, PULL, PUSH, RESERVED, RESUME, RESUME_MAP, RETURN, TASKS,
)
from lgcheckpoint.errors import NodeError
from lgcheckpoint.managed import read_managed
from lgcheckpoint.pregel.checkpoint import null_version
from lgcheckpoint.pregel.node import Node, Write
from lgcheckpoint.pregel.view import StateView
from lgcheckpoint.types import All, CacheKey, Send, TimeoutPolicy, interrupt_id

GetNextVersion = Callable[[Any, None], Any]
logger = logging.getLogger(__name__)


def task_id(checkpoint_id: str, *parts: str) -> str:
    """Deterministic task id: a resumed run finds the writes its tasks saved last time."""
    digest = xxh3_128_hexdigest(bytes.fromhex(checkpoint_id.replace("-", "")) +
                                "".join(parts).encode())
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def task_path_str(path: Any) -> str:
    """Sortable text of a task path (numbers zero-padded), the order writes are applied in."""
    if isinstance(path, (tuple, list)):
        return "~" + ", ".join(task_path_str(p) for p in path)
    return f"{path:010d}" if isinstance(path, int) else str(path)


class Scratchpad:
    """Per-task interrupt bookkeeping: answers given so far and the run's fresh answer."""

    def __init__(self, ns: str, resume: list, null_resume: list | None, here: Step) -> None:
        self.ns = ns  # the task's checkpoint namespace, seed of its interrupt ids
        self.step, self.stop = here.step, here.stop  # where the task runs: managed values
        self.resume = resume  # answers to this task's interrupts, in call order
        self.null_resume = null_resume  # shared [value] from Command(resume=value), or None
        self.interrupt_counter = 0
        self.subgraph_counter = 0  # the n-th graph this task invokes checkpoints under "ns|n"
        self.call_counter = 0  # the n-th task this task calls gets n in its id (calls.py)


@dataclass(slots=True, eq=False)
class Task:
    """One node run in one step: its input, and the writes it produces."""

    id: str
    name: str
    path: tuple  # (PULL, node), (PUSH, index of the Send, False), or for the n-th @task call
    # a task makes (PUSH, its path, n, True): sorts writes
    input: Any
    node: Node
    triggers: Sequence[str]
    config: dict  # the run's config (runner.task_config adds where this task runs)
    scratchpad: Scratchpad
    ns: str  # "node:task_id", the namespace of its interrupts and subgraph checkpoints
    local_read: Callable = None  # type: ignore[assignment]  # state seen with its own writes
    writes: list = field(default_factory=list)
    cache_key: CacheKey | None = None  # where its writes are cached, if its node has a policy
    attempt: int = 1  # which try of its retry policy is running (runner.run_task)
    first_attempt_time: float | None = None  # when the first try started (Runtime.execution_info)
    timeout: TimeoutPolicy | None = None  # a Send's own, over its node's (pregel/timeouts.py)
    error: NodeError | None = None  # an error handler's task: the error it handles (handlers.py)


class InputWrites(NamedTuple):
    """Writes that no node made (input, update_state, Command(update=...))."""

    writes: Sequence[Write]
    path: tuple = ()
    name: str = INPUT
    triggers: Sequence[str] = ()


def should_run(node: Node, channels: Mapping[str, Channel], checkpoint: Checkpoint,
               null: Any) -> bool:
    """A node runs if a trigger channel is newer than the version the node last saw."""
    versions = checkpoint["channel_versions"]
    seen = checkpoint["versions_seen"].get(node.name)
    return any(channels[chan].is_available()
               and (seen is None or versions.get(chan, null) > seen.get(chan, null))
               for chan in node.triggers)


def key_list(keys: Sequence[str] | str) -> Sequence[str]:
    """Output keys as a list: one name (a single-value state, or START) is a list of one."""
    return [keys] if isinstance(keys, str) else keys


def prepare_next_tasks(checkpoint: Checkpoint, pending_writes: list[PendingWrite],
                       nodes: Mapping[str, Node], channels: Mapping[str, Channel],
                       config: dict, step: int, *, trigger_to_nodes: Mapping[str, list[str]],
                       updated_channels: set[str] | None, view: StateView,
                       stop: int | None = None) -> dict[str, Task]:
    """All tasks of the next step: Send packets first (PUSH), then triggered nodes (PULL).

    ``view`` (pregel/view.py) reads a node's input from the channels in one dict copy."""
    tasks: list[Task] = []
    here = Step(checkpoint, pending_writes, channels, config, step,
                step + 1 if stop is None else stop, view)
    null = null_version(checkpoint["channel_versions"])
    # PUSH tasks: one per Send packet waiting in __pregel_tasks (False: LangGraph's "not a call")
    if TASKS in channels and channels[TASKS].is_available():  # an entrypoint has no Sends
        for idx, packet in enumerate(channels[TASKS].get()):
            if isinstance(packet, Send) and packet.node in nodes:
                task = make_task(here, nodes[packet.node], packet.arg, (PUSH, idx, False),
                                 (PUSH,), (PUSH, str(idx)))
                task.timeout = packet.timeout  # a packet may limit its run (pregel/timeouts.py)
                tasks.append(task)
    # PULL tasks: a node runs if a trigger channel is newer than the version it last saw
    for name in may_run(nodes, updated_channels, trigger_to_nodes):
        node = nodes[name]
        if null is None or not should_run(node, channels, checkpoint, null):  # None: no versions
            continue
        if isinstance(node.reads, str) and not channels[node.reads].is_available():
            continue  # a node reading one channel waits until it holds a value (None counts)
        triggers = tuple(sorted(node.triggers))
        value = view.read(node.reads)
        if node.managed:  # computed for this step, never stored (managed.py)
            value.update(read_managed(node.managed, here))
        if node.mapper is not None:  # dataclass / pydantic state: validated here, before running
            value = node.mapper(value)
        tasks.append(make_task(here, node, value, (PULL, name), triggers, (PULL, *triggers)))
    return {t.id: t for t in tasks}


def may_run(nodes: Mapping[str, Node], updated_channels: set[str] | None,
            trigger_to_nodes: Mapping[str, list[str]]) -> Iterable[str]:
    """The nodes that can have become ready: those subscribed to a channel the last step
    updated, or every node when that is not known (a loaded checkpoint's first step)."""
    if updated_channels and trigger_to_nodes:
        return sorted({n for c in updated_channels for n in trigger_to_nodes.get(c, ())})
    return nodes


class Step(NamedTuple):
    """Where the next step's tasks are made: what every task of the step shares."""

    checkpoint: Checkpoint  # the task ids derive from its id
    pending_writes: list[PendingWrite]  # saved answers to the tasks' interrupts
    channels: Mapping[str, Channel]  # what conditional edges read
    config: dict  # the run's config
    step: int
    stop: int  # the step the run stops at (recursion limit): managed values read it
    view: StateView  # the channels' values kept as dicts (pregel/view.py)


def make_task(here: Step, node: Node, value: Any, path: tuple, triggers: tuple,
              id_parts: tuple) -> Task:
    """A task with its deterministic id, its namespace, and its resume answers."""
    parent_ns = here.config[CONF].get("checkpoint_ns", "")
    ns = f"{parent_ns}{NS_SEP}{node.name}" if parent_ns else node.name
    tid = task_id(here.checkpoint["id"], ns, str(here.step), node.name, *id_parts)
    task_ns = f"{ns}{NS_END}{tid}"
    scratchpad = make_scratchpad(here, tid, task_ns)
    task = Task(tid, node.name, path, value, node, triggers, here.config, scratchpad, task_ns)
    task.local_read = lambda select: local_read(here.view, task.writes, select)
    return task


def make_scratchpad(here: Step, tid: str, task_ns: str) -> Scratchpad:
    """Collect the answers this task's interrupts already have (by task id or interrupt id)."""
    conf = here.config[CONF]
    # the answers an earlier run of this task saved (interrupt() saves them as a list)
    saved = next((v for owner, chan, v in here.pending_writes
                  if owner == tid and chan == RESUME), [])
    resume = list(saved) if isinstance(saved, list) else [saved]
    if resume_map := conf.get(RESUME_MAP):
        next_id = interrupt_id(task_ns, len(resume))
        if next_id in resume_map:
            resume.append(resume_map[next_id])
        elif (first := interrupt_id(task_ns, 0)) in resume_map:  # ids before LangGraph 1.1
            resume.append(resume_map[first])
    return Scratchpad(task_ns, resume, conf.get(NULL_RESUME), here)  # shared by all tasks


def local_read(view: StateView, writes: Sequence[Write], select: Sequence[str] | str) -> Any:
    """State for a conditional edge: the step's state plus this task's own writes."""
    if isinstance(select, str):  # a single-value state: the value itself
        return local_read(view, writes, [select]).get(select)
    mine: dict[str, list] = defaultdict(list)  # grouped once: the state is read once
    for chan, value in writes:
        if chan in select:
            mine[chan].append(value)
    values = view.read(select)
    appears = any(key not in values for key in mine)
    for key, written in mine.items():
        chan = view.channels[key].copy()  # the step's channel stays as it is
        chan.update(written)
        if chan.is_available():
            values[key] = chan.get()
        else:
            values.pop(key, None)
    if appears:  # a key's first value: keep the keys in their order
        values = {k: values[k] for k in select if k in values}
    return values


SKIPPED_WRITES = frozenset((NO_WRITES, PUSH, RESUME, INTERRUPT, RETURN, ERROR, ERROR_SOURCE_NODE))


def mark_seen(checkpoint: Checkpoint, name: str, channels: Iterable[str]) -> None:
    """What a task read: `name` has seen the current version of `channels` (versions_seen)."""
    versions = checkpoint["channel_versions"]
    seen = checkpoint["versions_seen"].setdefault(name, {})
    seen.update({c: versions[c] for c in channels if c in versions})


def apply_writes(checkpoint: Checkpoint, channels: Mapping[str, Channel],
                 tasks: Iterable[Task | InputWrites], get_next_version: GetNextVersion | None,
                 trigger_to_nodes: Mapping[str, Sequence[str]], view: StateView) -> set[str]:
    """Land a step's writes in the channels; bump versions; record what each task saw.

    ``view`` (pregel/view.py), the state kept as dicts beside ``channels``, hears of each
    channel that changed, and names the channels a step without writes may clear: a step costs
    the same however many other channels the state has.
    """
    tasks = sorted(tasks, key=lambda t: task_path_str(t.path[:3]))
    bump_step = any(t.triggers for t in tasks)  # False for input-only writes
    versions = checkpoint["channel_versions"]
    # each task saw the current version of the channels that triggered it
    for task in tasks:
        mark_seen(checkpoint, task.name, task.triggers)
    next_version = None if get_next_version is None else get_next_version(
        max(versions.values(), default=None), None)
    # triggers that were read are consumed (barriers reset, deferred values clear)
    for chan in {c for t in tasks for c in t.triggers if c not in RESERVED and c in channels}:
        if channels[chan].consume():
            view.refresh(chan)
            if next_version is not None:
                versions[chan] = next_version
    # group writes by channel, in task order, and apply them
    by_channel: dict[str, list] = defaultdict(list)
    for task in tasks:
        for chan, value in task.writes:
            if chan in channels and chan not in SKIPPED_WRITES:
                by_channel[chan].append(value)
            elif chan not in SKIPPED_WRITES:  # e.g. a managed value (managed.py): not state
                logger.warning(f"Task {task.name} with path {task.path} wrote to unknown "
                               f"channel {chan}, ignoring it.")
    updated: set[str] = set()

    def changed(chan: str) -> None:
        """The channel takes the step's version; holding a value, it may trigger nodes."""
        view.refresh(chan)
        if next_version is not None:
            versions[chan] = next_version
            if channels[chan].is_available():
                updated.add(chan)

    for chan, values in by_channel.items():
        if channels[chan].update(values):
            changed(chan)
    # a new step began: channels that were not written get to forget (ephemeral values)
    if bump_step:
        for chan in view.forgetful:
            channel = channels[chan]
            if chan not in updated and channel.is_available() and channel.update([]):
                changed(chan)
    # nothing left to trigger: this may be the last step, so release deferred channels
    if bump_step and updated.isdisjoint(trigger_to_nodes):
        for chan, channel in channels.items():
            if channel.finish():
                changed(chan)
    return updated


def should_interrupt(checkpoint: Checkpoint, interrupt_nodes: All | Sequence[str],
                     tasks: Iterable[Task]) -> bool:
    """Stop at a breakpoint if a listed node is about to run and anything changed since the last."""
    null = null_version(checkpoint["channel_versions"])
    seen = checkpoint["versions_seen"].get(INTERRUPT, {})
    changed = any(v > seen.get(c, null) for c, v in checkpoint["channel_versions"].items())
    return changed and any(
        (not t.node.hidden) if interrupt_nodes == "*" else t.name in interrupt_nodes
        for t in tasks)


def reuse_pending_writes(tasks: Mapping[str, Task], pending_writes: Sequence[PendingWrite]) -> None:
    """A task with saved output already ran: reuse its writes instead of running it again."""
    for tid, task in tasks.items():
        task.writes.extend((c, v) for t, c, v in pending_writes
                           if t == tid and c not in CONTROL_WRITES)

