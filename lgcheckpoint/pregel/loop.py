"""The super-step loop: load a checkpoint, apply the input, then step until nothing is triggered.

``PregelLoop.run()`` is the whole algorithm on one screen: it yields each step's tasks, and a
runner (runner.py) runs them and hands each result to ``commit``. A task's writes and the step's
checkpoint go to one ordered queue (saves.py), which decides when each is saved; a checkpoint
never precedes the writes that produced it. Next: pregel/saves.py.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence

from lgcheckpoint.checkpoint.base import (
    WRITES_IDX_MAP, ChannelVersions, CheckpointMetadata, CheckpointTuple, PutWrites,
    RunnableConfig, copy_checkpoint,
)
from lgcheckpoint.constants import (
    CHECKPOINT_ID, CONF, CONTROL_WRITES, ERROR, ERROR_SOURCE_NODE, INPUT, INTERRUPT,
    NO_WRITES, NS_END, NULL_TASK_ID, REPLAYING, RESUME,
    RESUMING, ROOT, RUNTIME, START, STEP, TASK_ID, TASKS,
)
from lgcheckpoint.errors import EmptyInputError, GraphBubbleUp, GraphInterrupt, InvalidUpdateError
from lgcheckpoint.pregel import caching, handlers
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.algo import (
    InputWrites, Step, Task, apply_writes, key_list, mark_seen, prepare_next_tasks,
    reuse_pending_writes, should_interrupt, task_path_str,
)
from lgcheckpoint.pregel.run_input import command_writes, input_writes, share_null_resume
from lgcheckpoint.pregel.checkpoint import (
    changed_values, channel_values, channels_from_checkpoint, create_checkpoint, empty_checkpoint,
    new_channel_versions, saved_packet,
)
from lgcheckpoint.pregel.delta import DeltaBook
from lgcheckpoint.pregel.saves import Put, SaveQueue
from lgcheckpoint.pregel.subgraphs import Replay, replay_start
from lgcheckpoint.pregel.view import StateView, key_lists
from lgcheckpoint.pregel.write_ids import stamp_writes
from lgcheckpoint.types import All, Command

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel, Run

Emit = Callable[[tuple, str, Any], None]  # (namespace, mode, payload)


@dataclass(slots=True)
class Start:
    """How the run starts: its input and the checkpoint it loaded."""

    input: Any  # what invoke/stream was given: state values, a Command, or None
    stored: bool  # a saved checkpoint (False: a new thread's empty one)
    id: str  # its id: "exit" durability saves a last checkpoint only if the run moved past it
    superseded: bool  # not the thread's latest: a run from it branches off
    updated: set[str] | None  # its updated_channels: the first step needs no scan for triggers
    replaying: bool = False  # rerun its tasks, not reuse their saved writes (first step only)


@dataclass(slots=True)
class Listeners:
    """Who hears the run: the stream modes someone asked for, where their chunks go, and the
    langchain callbacks, if the run has any."""

    modes: set[str]  # only the payloads of these modes are built
    emit: Callable[[str, Any], None]  # (mode, payload) to the caller, from this namespace
    trace: Any = None  # the run as langchain callbacks see it (pregel/tracing.py)


@dataclass(slots=True)
class Saved:
    """The thread's newest checkpoint as the run knows it: the loaded one, then each one saved."""

    config: RunnableConfig  # its config, the next checkpoint's parent (no checkpoint_id: none)
    parent_config: RunnableConfig | None  # its parent's config
    versions: ChannelVersions  # its channel versions: a put writes only the channels that moved
    task_ids: set[str] = field(default_factory=set)  # tasks whose writes this run saved


@dataclass(slots=True)
class Caches:
    """What lets a step cost the same however many channels the state has."""

    view: StateView  # the state's values kept as dicts, refreshed per changed channel (view.py)
    values_loaded: bool = True  # channel_values as the saver gave them: next snapshot reads all


class PregelLoop:
    """One run of a graph on one thread: the checkpoint, the live channels, the current step."""

    def __init__(self, graph: Pregel, input: Any, run: Run, *, saved: CheckpointTuple | None,
                 saves: SaveQueue, emit: Emit, modes: set[str], superseded: bool = False) -> None:
        self.graph, self.spec = graph, run  # spec: config, saver, durability, breakpoints, output
        self.saves = saves  # decides when each write and checkpoint is saved (saves.py)
        self.listeners = Listeners(modes, partial(emit, self.namespace))
        self.status, self.tasks = "pending", {}
        self.running: set[str] = set()  # ids of the step's tasks that have not committed yet
        self.load(input, saved, superseded)
        # when DeltaChannels store snapshots, and what "exit" keeps of their writes (delta.py)
        self.delta = DeltaBook(self.channels, graph.trigger_to_nodes, self.get_next_version,
                               exit_mode=saves.saves_at_exit)

    @property
    def namespace(self) -> tuple[str, ...]:
        """Where the run's checkpoints are: () for the root graph, a subgraph's path else."""
        ns = self.spec.config[CONF].get("checkpoint_ns", "")
        return tuple(ns.split("|")) if ns else ()

    @property
    def is_nested(self) -> bool:
        """Running as a node of a parent graph."""
        return TASK_ID in self.spec.config[CONF]

    # --- the algorithm --------------------------------------------------------------------
    def run(self) -> Iterator[list[Task]]:
        """Input, then super-steps until no node is triggered; yields each step's tasks to run."""
        self.apply_input()
        if self.listeners.trace is not None:  # langchain callbacks hear a resumed run
            self.listeners.trace.resumed(self)
        while self.tick():  # prepare the next tasks; False when none is triggered
            todo = [t for t in self.tasks.values() if not t.writes]
            self.running = {t.id for t in todo}
            yield todo  # run them, commit each
            # every task finished: apply all writes at once, then publish the step
            self.updated_channels = self.apply(self.tasks.values())
            self.delta.after_step(self.tasks.values(), self.step)
            self.emit_values(self.updated_channels)
            self.pending_writes.clear()
            self.spec.config[CONF].pop(RESUMING, None)  # only the first step resumes subgraphs
            self.start.replaying = False
            self.save_checkpoint({"source": "loop"})
            if self.at_breakpoint(self.spec.interrupt_after):
                self.status = "interrupt_after"
                self.prepare_tasks()
                raise GraphInterrupt()

    def tick(self) -> bool:
        """Prepare the next step's tasks; stop at the recursion limit or a breakpoint."""
        self.prepare_tasks()
        if self.step > self.stop or not self.tasks:
            self.status = "out_of_steps" if self.step > self.stop else "done"
            return False
        # tasks that finished before a crash or interrupt get their saved writes back
        if not self.start.replaying and self.pending_writes:
            reuse_pending_writes(self.tasks, self.pending_writes)
            # a node that failed and was handled is done; its handler runs (again)
            for handler in handlers.resumed_handlers(self.tasks, self.pending_writes,
                                                     self.graph.nodes, self.here()):
                self.tasks[handler.id] = handler
        if self.at_breakpoint(self.spec.interrupt_before):
            self.status = "interrupt_before"
            raise GraphInterrupt()
        # a drain stops the run here, once the last step is saved; after the breakpoint check,
        # since a resume passes this step's breakpoints
        if self.spec.config[CONF][RUNTIME].control.drain_requested:
            self.status = "draining"
            return False
        for task in self.tasks.values():
            if "tasks" in self.listeners.modes and not task.node.hidden:
                self.emit("tasks", out.task_payload(task))
        for task in self.tasks.values():
            if task.writes:
                self.output_writes(task, task.writes, cached=True)
        return True

    def at_breakpoint(self, nodes: All | Sequence[str]) -> bool:
        """A breakpoint (interrupt_before/after) lists a task of this step, and the state moved."""
        return bool(nodes) and should_interrupt(self.checkpoint, nodes, self.tasks.values())

    # --- loading and input -----------------------------------------------------------------
    def load(self, input: Any, saved: CheckpointTuple | None, superseded: bool) -> None:
        """Start from the saved checkpoint (or an empty one) with its pending writes."""
        stored = saved is not None  # a stored checkpoint, not a new thread's
        if saved is None:
            saved = CheckpointTuple(self.spec.config, empty_checkpoint(), {"step": -2}, None, [])
        self.checkpoint, self.metadata = saved.checkpoint, saved.metadata
        updated = self.checkpoint.get("updated_channels")
        self.start = Start(input, stored, self.checkpoint["id"], superseded,
                           set(updated) if updated else None)
        conf = {"checkpoint_ns": "", **self.spec.config[CONF], **saved.config.get(CONF, {})}
        self.saved = Saved({**self.spec.config, **saved.config, CONF: conf}, saved.parent_config,
                           dict(self.checkpoint["channel_versions"]))
        self.pending_writes = [(str(t), c, v) for t, c, v in saved.pending_writes or []]
        self.channels = channels_from_checkpoint(self.graph.channels, self.checkpoint)
        self.caches = Caches(StateView(self.channels, key_lists(self.graph, self.spec.output_keys)))
        self.step = self.metadata["step"] + 1
        self.stop = self.step + self.spec.config["recursion_limit"] + 1
        self.updated_channels: set[str] | None = None

    def apply_input(self) -> None:
        """Start the run in one of the four ways of input_case, then let run() step."""
        conf, input = self.spec.config[CONF], self.start.input
        addressed = bool(conf.get("checkpoint_id"))  # the caller named a checkpoint
        case = input_case(input, bool(self.checkpoint["channel_versions"]), addressed,
                          conf.get(RESUMING), self.metadata.get("source"), self.start.superseded)
        rewinds = addressed and case != RESUME_RUN  # back to a named checkpoint, not an answer
        # replaying an old checkpoint reruns its tasks instead of reusing their writes
        self.start.replaying = rewinds or self.start.superseded
        # where per-thread subgraphs replay from, if the run goes back (subgraphs.py)
        since = replay_start(self.metadata, self.saved.parent_config, self.start.id)
        replay = Replay(since) if rewinds and not self.is_nested else None
        if rewinds or case == FRESH:  # interrupts ask again: no answer carries over
            self.pending_writes = [w for w in self.pending_writes if w[1] != RESUME]
        command = []
        if isinstance(input, Command):
            command = self.apply_command(input, forks=case == FORK)
        carried = command if case == FORK else []  # not saved: the fork's copy applies them
        self.delta.loaded([*self.pending_writes, *carried], command,
                         reuses=case == RESUME_RUN and not self.start.replaying)
        if null_writes := [w[1:] for w in (*self.pending_writes, *carried) if w[0] == NULL_TASK_ID]:
            updated = self.apply([InputWrites(null_writes)])
            if self.start.updated is not None:
                self.start.updated |= updated
        share_null_resume(conf, self.pending_writes)  # Command(resume=v): one slot (run_input.py)
        if case == FRESH:
            self.start_fresh()
        else:
            self.continue_from_checkpoint(fork=case == FORK)
        if not self.is_nested:
            conf[RESUMING] = case != FRESH
            conf[REPLAYING] = replay  # per-thread subgraphs go back in time too (subgraphs.py)

    def start_fresh(self) -> None:
        """New input: saved as the "input" checkpoint; unfinished tasks are dropped."""
        if input_writes := self.map_input(self.start.input):
            # tasks left unfinished by the previous run are dropped, as if they had run
            discarded = self.next_tasks(self.start.updated)
            self.updated_channels = self.apply([*discarded.values(), InputWrites(input_writes)])
            # what the checkpoint the run starts from keeps of the input (delta.py)
            if kept := self.delta.took_input(input_writes, self.step,
                                             self.start.stored and not self.start.superseded):
                self.put_writes(str(uuid.uuid5(uuid.UUID(self.checkpoint["id"]), INPUT)), kept)
            self.save_checkpoint({"source": "input"})
        elif RESUMING not in self.spec.config[CONF]:  # a subgraph call may have nothing to add
            raise EmptyInputError(
                f"Received no input for {self.graph.input_channels}: pass a dict of state "
                "values, or None / Command(resume=...) to continue a thread")

    def continue_from_checkpoint(self, fork: bool) -> None:
        """Resume, replay or fork: the loaded checkpoint's next tasks run (a fork saves a copy)."""
        mark_seen(self.checkpoint, INTERRUPT, self.channels)  # breakpoints: only later changes
        if fork:
            self.pending_writes = [w for w in self.pending_writes if w[1] != INTERRUPT]
            self.save_checkpoint({"source": "fork"})
        if "values" in self.listeners.modes:
            self.emit("values", self.read_output())
        self.updated_channels = self.start.updated

    def apply_command(self, cmd: Command, forks: bool) -> list:
        """Command(resume=..., update=..., goto=...) as input: writes of the null task, saved
        now (a fork applies them to its copy instead); checked in run_input.py."""
        conf = self.spec.config[CONF]
        writes = command_writes(cmd, conf, self.spec.saver, self.pending_writes)
        if not forks:
            self.put_writes(NULL_TASK_ID, writes)  # none when only a resume map was given
        return [(NULL_TASK_ID, c, v) for c, v in writes]

    def map_input(self, value: Any) -> list:
        """Input -> writes to the input channel(s) (a StateGraph's START node splits the dict;
        an entrypoint or a single-value state takes any value)."""
        keyed = value is None or isinstance(value, dict) or hasattr(type(value), "__annotations__")
        if not keyed and ROOT not in self.graph.channels and START in self.graph.nodes:
            raise InvalidUpdateError(  # refused before anything is saved
                f"Expected dict, got {value!r}: the graph input must be a dict of state keys")
        writes = input_writes(self.graph.input_channels, value)
        stamp_writes(self.channels, writes)  # an input channel's ids, before it is applied
        return writes

    # --- steps -----------------------------------------------------------------------------
    def next_tasks(self, updated_channels: set[str] | None) -> dict[str, Task]:
        return prepare_next_tasks(
            self.checkpoint, self.pending_writes, self.graph.nodes, self.channels, self.spec.config,
            self.step, trigger_to_nodes=self.graph.trigger_to_nodes,
            updated_channels=updated_channels, view=self.caches.view, stop=self.stop)

    def apply(self, tasks: Iterable[Task | InputWrites]) -> set[str]:
        return apply_writes(self.checkpoint, self.channels, tasks, self.get_next_version,
                            self.graph.trigger_to_nodes, self.caches.view)

    def get_next_version(self, current: Any, channel: None = None) -> Any:
        """The version a changed channel takes: the saver's rule, else counting up from 1."""
        if self.spec.saver is not None:
            return self.spec.saver.get_next_version(current, channel)
        return 1 if current is None else current + 1

    def prepare_tasks(self) -> None:
        self.tasks = self.next_tasks(self.updated_channels)
        # what a task's config says about where it runs (read by subgraphs and node metadata)
        self.spec.config[CONF].update({CHECKPOINT_ID: self.checkpoint["id"], STEP: self.step})
        if self.spec.saver is not None and "checkpoints" in self.listeners.modes:
            self.emit("checkpoints", out.checkpoint_payload(self))

    def commit(self, task: Task, error: BaseException | None) -> Task | None:
        """Record how a task ended: its writes, its interrupt, or its error. A failed node with
        an error handler returns the handler's task, for the runner to run in this step."""
        self.running.discard(task.id)
        handler = None
        if isinstance(error, GraphInterrupt):
            if error.interrupts:  # kept with the answers given so far
                self.put_writes(task.id, [(INTERRUPT, error.interrupts),
                                          *(w for w in task.writes if w[0] == RESUME)])
        elif not isinstance(error, GraphBubbleUp):  # a Command to a parent, a drain: not ours
            if error is not None:
                task.writes.append((ERROR, error))
                if handler := handlers.handler_task(task, error, self.graph.nodes, self.here()):
                    task.writes.append((ERROR_SOURCE_NODE, task.name))  # saved: resume knows
                    self.tasks[handler.id] = handler
                    self.running.add(handler.id)
            elif all(c in CONTROL_WRITES for c, _ in task.writes):
                task.writes.append((NO_WRITES, None))
            self.put_writes(task.id, task.writes)
        return handler

    def here(self) -> Step:
        """Where a task made during the step (an error handler's) runs: this step."""
        return Step(self.checkpoint, self.pending_writes, self.channels, self.spec.config,
                    self.step, self.stop, self.caches.view)

    def put_writes(self, task_id: str, writes: list, cached: bool = False) -> None:
        """Keep a task's writes for this step and save them now (durable before the step ends)."""
        if not writes:
            return
        stamp_writes(self.channels, writes)  # ids given now, so the saved write has them
        self.saved.task_ids.add(task_id)
        if all(c in WRITES_IDX_MAP for c, _ in writes):
            writes = list({c: (c, v) for c, v in writes}.values())  # last one per slot wins
        if task_id == NULL_TASK_ID:
            self.pending_writes = [w for w in self.pending_writes
                                   if w[0] != task_id or w[1] not in WRITES_IDX_MAP]
            writes = sorted(writes, key=lambda w: w[0] in WRITES_IDX_MAP)
            to_save = [w[1:] for w in self.pending_writes if w[0] == task_id] + list(writes)
        else:
            self.pending_writes = [w for w in self.pending_writes if w[0] != task_id]
            to_save = writes
        self.pending_writes.extend((task_id, c, v) for c, v in writes)
        task = self.tasks.get(task_id)
        if self.saves.saves_steps:  # else none are saved, or all at exit (exit_saves)
            # the step's last task (none still running) shares the step's commit
            self.saves.after_task(self.writes_call(task_id, to_save),
                                  last_of_step=task is not None and not self.running)
        if task is not None:
            self.output_writes(task, writes, cached)
            if not cached and self.graph.cache is not None and (
                    entry := caching.entry(task, writes)):  # a node cache entry (caching.py)
                self.saves.cache_set(self.graph.cache, entry)

    def apply_cached(self, tasks: list[Task], wanted: dict, found: dict) -> list[Task]:
        """Tasks found in the node cache take its writes instead of running (caching.py)."""
        for task in caching.take_hits(wanted, found):
            self.running.discard(task.id)
            self.put_writes(task.id, task.writes, cached=True)
        return [t for t in tasks if not t.writes]

    # --- saving (when each save happens is decided in saves.py) ---------------------------
    def writes_call(self, task_id: str, writes: list) -> PutWrites:
        """put_writes' arguments: the writes, against the checkpoint the task ran from."""
        writes = [(c, saved_packet(v, self.channels) if c == TASKS else v) for c, v in writes
                  if getattr(self.channels.get(c), "saved", True)]
        config = {**self.saved.config,
                  CONF: {**self.saved.config[CONF], "checkpoint_id": self.checkpoint["id"]}}
        task = self.tasks.get(task_id)
        return PutWrites(config, writes, task_id, task_path_str(task.path) if task else "")

    def save_checkpoint(self, metadata: CheckpointMetadata) -> None:
        """Snapshot the channels as the step's checkpoint and hand it to the queue."""
        metadata["step"] = self.step
        metadata["parents"] = self.spec.config[CONF].get("checkpoint_map", {})
        self.delta.count(self.metadata, metadata, self.updated_channels)
        self.metadata = metadata
        if not self.saves.saves_steps:  # "exit" only needs the versions until the end
            self.checkpoint = create_checkpoint(self.checkpoint, self.checkpoint["channel_values"],
                                                self.step, updated_channels=self.updated_channels)
        else:
            self.saves.after_step(self.snapshot_and_put())
        self.step += 1

    def snapshot_and_put(self, id: str | None = None) -> Put:
        """Snapshot the channels (reading only those whose version moved since the last stored
        checkpoint) and return put's arguments; its parent is the checkpoint saved last."""
        saved, versions = self.saved, self.checkpoint["channel_versions"]
        new_versions = new_channel_versions(saved.versions, versions)  # what the saver must write
        if self.caches.values_loaded:  # channel_values as the saver gave them: read every channel
            values = channel_values(self.channels, versions)
        else:  # our own last snapshot: read again only the channels whose version moved
            values = changed_values(self.checkpoint, self.channels, new_versions)
        self.checkpoint = create_checkpoint(self.checkpoint, values, self.step,
                                            updated_channels=self.updated_channels, id=id)
        # DeltaChannel snapshots (delta.py) may bump versions: then the saver writes those too
        if self.delta.store(self.checkpoint, self.metadata, saved.versions):
            new_versions = new_channel_versions(saved.versions, self.checkpoint["channel_versions"])
        self.caches.values_loaded = False
        if packets := self.checkpoint["channel_values"].get(TASKS):
            self.checkpoint["channel_values"][TASKS] = [saved_packet(p, self.channels)
                                                        for p in packets]
        config = saved.config  # the checkpoint this one follows (none at first)
        saved.parent_config = config if config[CONF].get("checkpoint_id") else None
        saved.versions = dict(self.checkpoint["channel_versions"])
        saved.config = {**config, CONF: {**config[CONF], "checkpoint_id": self.checkpoint["id"]}}
        # a copy: the next step mutates self.checkpoint while the saver may still be writing
        return Put(config, copy_checkpoint(self.checkpoint), dict(self.metadata), new_versions)

    def exit_saves(self, error: BaseException | None) -> tuple[Put | None, list[PutWrites]]:
        """What "exit" durability saves at the end: the last checkpoint, then its writes."""
        # a subgraph call's checkpoints ("node:task_id") are saved with exit only if it failed
        if not self.saves.saves_at_exit or (self.is_nested and error is None and any(
                NS_END in part for part in self.namespace)):
            return None, []
        # first the DeltaChannel writes the last checkpoint will replay (delta.py)
        self.saved.config = self.delta.at_exit(self.saves, self.saved.config, self.start.id,
                                               self.start.superseded, self.checkpoint,
                                               self.metadata)
        ran = self.checkpoint["id"] != self.start.id  # something ran since the loaded one
        put = self.snapshot_and_put(id=self.checkpoint["id"]) if ran else None
        ours = [w for w in self.pending_writes if w[0] in self.saved.task_ids]  # this run's
        return put, [self.writes_call(task_id, [(c, v) for t, c, v in ours if t == task_id])
                     for task_id in dict.fromkeys(t for t, _, _ in ours)]  # one call per task

    def finish(self, error: BaseException | None) -> bool:
        """At exit: save what 'exit' durability deferred; turn an interrupt into output."""
        self.saves.at_exit(*self.exit_saves(error))
        if isinstance(error, GraphInterrupt) and not self.is_nested:
            # siblings that finished before the interrupt still show in the output
            if self.pending_writes and any(t.writes for t in self.tasks.values()):
                self.emit_values(updated=self.apply(self.tasks.values()))
            if not error.interrupts:
                self.emit("updates", {INTERRUPT: ()})
            return True
        return False

    # --- output ------------------------------------------------------------------------------
    def read_output(self) -> dict:
        return self.caches.view.read(self.spec.output_keys)

    def emit_values(self, updated: set[str]) -> None:
        """Stream the state as "values" when the writes just applied changed an output key."""
        if "values" in self.listeners.modes and not updated.isdisjoint(
                key_list(self.spec.output_keys)):
            self.emit("values", self.read_output())

    def emit(self, mode: str, payload: Any) -> None:
        if mode in self.listeners.modes:
            self.listeners.emit(mode, payload)

    def output_writes(self, task: Task, writes: list, cached: bool = False) -> None:
        """Stream what a task just wrote: its updates, or the interrupt it raised (stream.py)."""
        out.task_output(self, task, writes, cached)

FRESH, RESUME_RUN, REPLAY, FORK = "fresh", "resume", "replay", "fork"


def input_case(input: Any, has_state: bool, addressed: bool, parent_resuming: bool | None,
               source: str | None, superseded: bool) -> str:
    """How a run starts, from its input and the checkpoint its config addresses:

    input          | checkpoint addressed             | case    | runs / is saved first
    ---------------+----------------------------------+---------+------------------------------
    a dict         | any, or the thread has none      | fresh   | START with the input; unfinished
                   |                                  |         | tasks and stale answers dropped /
                   |                                  |         | "input" checkpoint
    None, Command  | the latest (no checkpoint_id),   | resume  | unfinished tasks; finished ones
                   | or Command(resume=...) to any    |         | keep their writes / nothing
    None, Command  | one made by update_state (the    | replay  | all its next tasks again /
                   | thread's latest)                 |         | nothing
    None, Command  | any other by checkpoint_id       | fork    | all its next tasks again / a copy
                   |                                  |         | ("fork") to branch from

    A subgraph call decides by its parent instead (parent_resuming): in the parent's first
    step after a resume it continues its own checkpoint, whatever its input -- unless the
    caller named that checkpoint (checkpoint_map): then it replays or forks it as above.
    """
    continuing = parent_resuming if parent_resuming is not None else (
        input is None or isinstance(input, Command))
    if not (has_state and continuing):
        return FRESH
    answers = isinstance(input, Command) and input.resume is not None
    if not addressed or answers:  # a subgraph call is addressed only by checkpoint_map
        return RESUME_RUN
    if source in ("update", "fork") and not superseded:
        return REPLAY
    return FORK
