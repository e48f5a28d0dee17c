"""One history model for every viewer, built only from the public saver API.

``load_history(source, config)`` reads ``saver.list(config)`` once and turns each CheckpointTuple
into a ``Step``: where it sits in the lineage (parent, branch), what changed (versions, updated
channels), what was saved while its super-step ran (pending writes, grouped by task) and what runs
next and why (a node is *triggered* when one of its trigger channels holds a value whose version is
newer than the version recorded for that node in ``versions_seen``). It duck-types: LangGraph's
savers and ours give the same shapes, so nothing here imports LangGraph.
Next: ``lineage.py`` draws these steps.
"""

from __future__ import annotations

import asyncio
import reprlib
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from lgcheckpoint.pregel import algo  # task_id, task_path_str: recompute @task call ids
from lgcheckpoint.pregel.handlers import DEFAULT_HANDLER, HANDLER_PATH, HANDLER_PREFIX
from lgcheckpoint.viz.cached import mark_cached
from lgcheckpoint.viz.deltas import is_snapshot, mark_deltas

# special channel names, the same strings LangGraph and lgcheckpoint.checkpoint.base use
ERROR, INTERRUPT, RESUME, SCHEDULED = "__error__", "__interrupt__", "__resume__", "__scheduled__"
ERROR_SOURCE = "__error_source_node__"  # beside a handled __error__: the node that failed
TASKS = "__pregel_tasks"  # Send packets waiting to run as PUSH tasks
RETURN = "__return__"  # what a @task call returned (functional API)
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"  # writes that belong to no task (resume map)
WRITE_KINDS = {ERROR: "error", INTERRUPT: "interrupt", RESUME: "resume", SCHEDULED: "scheduled",
               ERROR_SOURCE: "handled"}
# a viewer reads the newest checkpoints only: a foreign thread may hold 100,000 of them
VIEW_LIMIT = 500


class Trigger(NamedTuple):
    """Why a node runs: this channel moved past the version the node last saw."""

    channel: str
    seen: int  # 0 when the node never saw the channel
    current: int


class TaskWrites(NamedTuple):
    """Everything one task saved before its super-step ended."""

    task_id: str
    name: str  # node name, or "task N" when it cannot be told from the saved data
    regular: list[tuple[str, Any]]  # (channel, value) writes that become channel updates
    errors: list[Any]
    interrupts: list[Any]  # Interrupt objects (duck-typed: .value, .id)
    resumes: list[Any]
    cached: bool = False  # its writes are the node cache's entry for its input (cached.py)
    error_source: str | None = None  # it failed and its node's error handler took the error


@dataclass
class Step:
    """One checkpoint, as the viewers show it."""

    key: str  # "c0".."cN" in chronological order: stable ids for DOT text and tests
    index: int
    checkpoint_id: str
    ns: str  # "" for the root graph, "node:task_id" for a subgraph
    step: int
    source: str  # input / loop / update / fork
    parent: str | None  # key of the parent step
    branch: int = 0  # 0 = the branch that ends at the head; forks get 1, 2, ...
    channel_versions: dict[str, int] = field(default_factory=dict)
    versions_seen: dict[str, dict[str, int]] = field(default_factory=dict)
    updated_channels: list[str] = field(default_factory=list)
    values: dict[str, Any] = field(default_factory=dict)
    tasks: list[TaskWrites] = field(default_factory=list)
    triggered: dict[str, list[Trigger]] = field(default_factory=dict)
    sends: list[str] = field(default_factory=list)  # node names of pending Send packets
    children: list[str] = field(default_factory=list)
    is_head: bool = False
    config: dict = field(default_factory=dict)
    metadata: dict = field(default_factory=dict)

    @property
    def next(self) -> list[str]:
        """Nodes that run in the next super-step: triggered PULL nodes, then Send targets."""
        return sorted(self.triggered) + self.sends

    @property
    def waiting(self) -> list[str]:
        """``next`` minus the tasks that already saved their writes (LangGraph's snapshot.next)."""
        done = Counter(t.name for t in self.tasks if t.regular)  # a node may run as several Sends
        waiting = []
        for name in self.next:
            if done[name]:
                done[name] -= 1
            else:
                waiting.append(name)
        return waiting

    @property
    def interrupts(self) -> list[Any]:
        return [i for t in self.tasks for i in t.interrupts]

    @property
    def errors(self) -> list[Any]:
        return [e for t in self.tasks for e in t.errors]

    @property
    def label(self) -> str:
        return f"{self.key} step {self.step} {self.source}"


@dataclass
class History:
    """A thread's checkpoints in one namespace, oldest first, plus the nodes' trigger channels."""

    thread_id: str
    ns: str
    steps: list[Step]
    node_triggers: dict[str, list[str]]
    channels: list[str]  # every channel ever versioned: state keys first, then by first appearance
    subgraphs: dict[str, History] = field(default_factory=dict)  # ns -> history of a subgraph
    truncated: bool = False  # older checkpoints exist that were not read (``limit``)

    def __getitem__(self, key: str | int) -> Step:
        if isinstance(key, int):
            return self.steps[key]
        index = int(key[1:]) if key[:1] == "c" and key[1:].isdigit() else -1
        if 0 <= index < len(self.steps):  # keys are c0..cN in order: no search needed
            return self.steps[index]
        last = len(self.steps) - 1
        raise KeyError(f"no checkpoint {key!r} in this history; keys are c0..c{last}")

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def head(self) -> Step | None:
        return next((s for s in self.steps if s.is_head), None)

    def branch_steps(self, key: str | None = None) -> list[Step]:
        """The chain from the root to ``key`` (default: the head), oldest first."""
        chain, step = [], self[key] if key else self.head
        while step is not None:
            chain.append(step)
            step = self[step.parent] if step.parent else None
        return chain[::-1]


def version_number(version: Any) -> int:
    """Integer part of a channel version: "000…0007.8213" -> 7 (ints pass through)."""
    if version is None:
        return 0
    if isinstance(version, (int, float)):
        return int(version)
    return int(str(version).split(".", 1)[0])


def resolve_saver(source: Any) -> Any:
    """A compiled graph's checkpointer, or the saver itself."""
    if hasattr(source, "list") and hasattr(source, "get_tuple"):
        return source
    saver = getattr(source, "checkpointer", None)
    if saver is None or saver is True or not hasattr(saver, "list"):
        raise TypeError(
            f"cannot read checkpoints from {type(source).__name__}: pass a saver (InMemorySaver, "
            "SqliteSaver, PostgresSaver) or a graph compiled with compile(checkpointer=saver)"
        )
    return saver


def load_history(source: Any, config: dict, graph: Any = None, ns: str = "",
                 limit: int | None = None) -> History:
    """Read a thread's checkpoints from a saver (or a compiled graph) and build the model;
    ``limit`` reads only the newest ones (c0 is then the oldest one read)."""
    thread = thread_config(config)
    saver = resolve_saver(source)
    try:
        tuples = list(saver.list(thread, limit=limit))
    except (NotImplementedError, asyncio.InvalidStateError) as error:  # an async saver
        raise TypeError(
            f"{type(saver).__name__} cannot be read synchronously here: use "
            "`history = await aload_history(saver, config)` and pass `history` to the viewer"
        ) from error
    return assemble(tuples, thread, graph or graph_of(source), ns)


async def aload_history(source: Any, config: dict, graph: Any = None, ns: str = "",
                        limit: int | None = None) -> History:
    """The same model read through an async saver's ``alist``."""
    thread = thread_config(config)
    tuples = [t async for t in resolve_saver(source).alist(thread, limit=limit)]
    return assemble(tuples, thread, graph or graph_of(source), ns)


def thread_config(config: dict) -> dict:
    """Only the thread: we read every checkpoint of every namespace in it."""
    thread_id = (config or {}).get("configurable", {}).get("thread_id")
    if thread_id is None:
        raise ValueError('config needs a thread: {"configurable": {"thread_id": "..."}}')
    return {"configurable": {"thread_id": thread_id}}


def graph_of(source: Any) -> Any:
    return source if hasattr(source, "get_graph") else None


def assemble(tuples: list[Any], thread: dict, graph: Any, ns: str) -> History:
    """Split the thread's tuples by namespace: ``ns`` is the history, those below it subgraphs."""
    thread_id = str(thread["configurable"]["thread_id"])
    by_ns: dict[str, list[Any]] = {}
    for t in tuples:
        by_ns.setdefault(t.config["configurable"].get("checkpoint_ns", ""), []).append(t)
    history = build_history(thread_id, ns, by_ns.get(ns, []), graph)
    for sub_ns, sub_tuples in sorted(by_ns.items()):
        if sub_ns != ns and (not ns or sub_ns.startswith(ns + "|")):
            history.subgraphs[sub_ns] = build_history(thread_id, sub_ns, sub_tuples, None)
    return history


def build_history(thread_id: str, ns: str, tuples: list[Any], graph: Any = None) -> History:
    """Turn one namespace's CheckpointTuples (any order) into linked, annotated Steps."""
    tuples = sorted(tuples, key=lambda t: t.checkpoint["id"])  # uuid6 ids sort by time
    keys = {t.checkpoint["id"]: f"c{i}" for i, t in enumerate(tuples)}
    steps = [make_step(i, t, keys) for i, t in enumerate(tuples)]
    first = {}  # channel -> index of the first checkpoint that has it
    for s in steps:
        for ch in s.channel_versions:
            first.setdefault(ch, s.index)
    channels = sorted(first, key=lambda ch: (channel_group(ch), first[ch], ch))
    node_triggers = graph_triggers(graph) or infer_triggers(steps, channels)
    by_key = {s.key: s for s in steps}
    for s in steps:
        if s.parent in by_key:
            by_key[s.parent].children.append(s.key)
        parent = by_key.get(s.parent)
        if not s.updated_channels:  # update/fork checkpoints may not record it: diff the parent
            s.updated_channels = changed_channels(s, parent)
        s.triggered = triggered_nodes(s, node_triggers)
    if steps:
        steps[-1].is_head = True
    assign_branches(steps, by_key)
    name_tasks(steps, tuples, graph)
    mark_deltas(steps, by_key, graph)  # a DeltaChannel between snapshots stores no value
    mark_cached(steps, graph)
    truncated = any(t.parent_config and s.parent is None for s, t in zip(steps, tuples))
    return History(thread_id, ns, steps, node_triggers, channels, truncated=truncated)


def make_step(index: int, t: Any, keys: dict[str, str]) -> Step:
    """The fields that come straight from one CheckpointTuple."""
    ck, md = t.checkpoint, dict(t.metadata or {})
    parent_id = (t.parent_config or {}).get("configurable", {}).get("checkpoint_id")
    values = dict(in_channel_order(ck.get("channel_values")))
    return Step(
        key=keys[ck["id"]], index=index, checkpoint_id=ck["id"],
        ns=t.config["configurable"].get("checkpoint_ns", ""),
        step=md.get("step", -1), source=md.get("source", "?"),
        parent=keys.get(parent_id) if parent_id else None,
        channel_versions={c: version_number(v)
                          for c, v in in_channel_order(ck.get("channel_versions"))},
        versions_seen={n: {c: version_number(v) for c, v in seen.items()}
                       for n, seen in ck.get("versions_seen", {}).items()},
        updated_channels=sorted(ck.get("updated_channels") or []),
        values=values,
        sends=[getattr(p, "node", "?") for p in values.get(TASKS) or []],
        config=t.config, metadata=md,
        tasks=group_writes(t.pending_writes or []),
    )


def channel_group(channel: str) -> int:
    """Sort state keys first, then __start__, routing channels, other internals. Savers return
    dicts in different key orders (Postgres JSONB sorts by length), so we never rely on theirs."""
    if not channel.startswith("__") and ":" not in channel:
        return 0
    return 1 if channel == "__start__" else 2 if channel_target(channel) else 3


def in_channel_order(mapping: dict | None) -> list[tuple[str, Any]]:
    return sorted((mapping or {}).items(), key=lambda kv: (channel_group(kv[0]), kv[0]))


def group_writes(pending: list[tuple[str, str, Any]]) -> list[TaskWrites]:
    """Group (task_id, channel, value) writes per task and by kind, keeping first-seen order."""
    grouped: dict[str, TaskWrites] = {}
    for task_id, channel, value in pending:
        tw = grouped.setdefault(task_id, TaskWrites(task_id, "", [], [], [], []))
        kind = WRITE_KINDS.get(channel)
        if kind == "error":
            tw.errors.append(value)
        elif kind == "interrupt":  # a list of Interrupt objects
            tw.interrupts.extend(value if isinstance(value, (list, tuple)) else [value])
        elif kind == "resume":
            tw.resumes.append(value)
        elif kind == "handled":  # not state: says the task's error went to its node's handler
            grouped[task_id] = tw._replace(error_source=value)
        elif kind is None:
            tw.regular.append((channel, value))
    return list(grouped.values())


def changed_channels(step: Step, parent: Step | None) -> list[str]:
    """Channels whose version differs from the parent's."""
    before = parent.channel_versions if parent else {}
    return sorted(c for c, v in step.channel_versions.items() if before.get(c) != v)


def graph_triggers(graph: Any) -> dict[str, list[str]]:
    """Trigger channels per node from a compiled graph (graph.nodes[name].triggers), if any."""
    nodes = getattr(graph, "nodes", None)
    if not isinstance(nodes, dict):
        return {}
    out = {name: list(getattr(n, "triggers", []) or []) for name, n in nodes.items()}
    return out if any(out.values()) else {}


def infer_triggers(steps: list[Step], channels: list[str]) -> dict[str, list[str]]:
    """Without a graph: a node's triggers are the keys of its versions_seen entries, plus the
    channels named after it (branch:to:X, join:a+b:X)."""
    triggers: dict[str, set[str]] = {}
    for s in steps:
        for node, seen in s.versions_seen.items():
            if is_node(node):
                triggers.setdefault(node, set()).update(seen)
    for ch in channels:
        target = channel_target(ch)
        if target:
            triggers.setdefault(target, set()).add(ch)
    return {n: sorted(t) for n, t in sorted(triggers.items())}


def is_node(name: str) -> bool:
    """versions_seen also holds bookkeeping entries (__input__, __interrupt__): not nodes."""
    return name == "__start__" or not name.startswith("__")


def channel_target(channel: str) -> str | None:
    """The node a routing channel feeds: branch:to:X -> X, join:a+b:X -> X."""
    if channel.startswith("branch:to:"):
        return channel[len("branch:to:"):]
    if channel.startswith("join:"):
        return channel.rsplit(":", 1)[-1]
    return None


def is_available(channel: str, values: dict[str, Any]) -> bool:
    """A channel can trigger only when it holds a value; a join only when every source arrived."""
    if channel not in values:
        return False
    if channel.startswith("join:"):
        value = values[channel]
        seen = value[0] if isinstance(value, tuple) else value
        return set(seen or ()) >= set(channel.split(":")[1].split("+"))
    return True


def triggered_nodes(step: Step, node_triggers: dict[str, list[str]]) -> dict[str, list[Trigger]]:
    """Nodes that run next: a trigger channel holds a value newer than what the node saw."""
    out: dict[str, list[Trigger]] = {}
    for node, channels in node_triggers.items():
        seen = step.versions_seen.get(node, {})
        why = [Trigger(ch, seen.get(ch, 0), step.channel_versions[ch]) for ch in channels
               if ch in step.channel_versions and step.channel_versions[ch] > seen.get(ch, 0)
               and is_available(ch, step.values)]
        if why:
            out[node] = why
    return out


def assign_branches(steps: list[Step], by_key: dict[str, Step]) -> None:
    """Branch 0 is the chain that ends at the head; every other leaf starts a new branch."""
    for s in steps:
        s.branch = -1
    leaves = [s for s in reversed(steps) if not s.children]  # newest leaf first = the head
    for number, leaf in enumerate(leaves):
        step = leaf
        while step is not None and step.branch == -1:
            step.branch = number
            step = by_key.get(step.parent)
    for s in steps:
        s.branch = max(s.branch, 0)


def name_tasks(steps: list[Step], tuples: list[Any], graph: Any) -> None:
    """Give each task with pending writes its node name: the only node that could have run (a
    triggered node or Send target); when several could, ask the graph's get_state. A @task
    call (it wrote ``__return__``) gets its function's name when its id can be recomputed."""
    called = called_names(steps)
    for s, t in zip(steps, tuples):
        if not s.tasks:
            continue
        candidates = set(s.triggered) | set(s.sends)
        names = names_from_graph(graph, t.config) if len(candidates) > 1 else {}
        calls = call_names(s, called, len(s.tasks))
        handlers = handler_names(s)
        for i, tw in enumerate(s.tasks):
            if tw.task_id == NULL_TASK_ID:
                name = "(no task)"
            elif tw.task_id in calls:
                name = calls[tw.task_id]
            elif tw.task_id in handlers:
                name = handlers[tw.task_id]
            elif any(c == RETURN for c, _ in tw.regular):  # a call no later checkpoint names
                name = "@task call"
            elif len(candidates) == 1:  # one node could have run (maybe as several Sends)
                name = next(iter(candidates))
            else:
                name = names.get(tw.task_id, f"task {i + 1}")
            s.tasks[i] = tw._replace(name=name)
        s.tasks.sort(key=task_order)  # savers return writes in different orders; ids are random


def called_names(steps: list[Step]) -> set[str]:
    """Functions that ran as @task calls: versions_seen records each with no channel seen."""
    return {name for s in steps for name, seen in s.versions_seen.items()
            if not seen and is_node(name) and name != "__start__"}


def call_names(step: Step, called: set[str], count: int) -> dict[str, str]:
    """task_id -> name for the calls the step's nodes made: a call's id hashes the checkpoint
    id, the step, the caller's namespace ("node:task_id"), its path and the call's number."""
    out = {}
    for caller in step.triggered:
        path = algo.task_path_str(("__pregel_pull", caller))
        for tw in step.tasks:  # which of the step's tasks is the caller: try each
            for name in called:
                for n in range(count):
                    ns = f"{caller}:{tw.task_id}|{name}"
                    out[algo.task_id(step.checkpoint_id, ns, str(step.step + 1), name,
                                "__pregel_push", path, str(n))] = name
    return out


def handler_names(step: Step) -> dict[str, str]:
    """task_id -> handler node name: a handler's id hashes the id of the task that failed."""
    out, parent = {}, f"{step.ns}|" if step.ns else ""
    for tw in (t for t in step.tasks if t.error_source is not None):
        for handler in (HANDLER_PREFIX + str(tw.error_source), DEFAULT_HANDLER):
            ns = f"{parent}{tw.error_source}:{tw.task_id}|{handler}"  # nested under the failed
            out[algo.task_id(step.checkpoint_id, ns, str(step.step + 1), handler,
                             "__pregel_push", HANDLER_PATH, tw.task_id)] = handler
    return out


def task_order(tw: TaskWrites) -> tuple:
    """Order tasks by what they are and wrote, so every saver and run shows the same text."""
    return (tw.name, [(c, short(v)) for c, v in tw.regular], [short(e) for e in tw.errors],
            [short(i) for i in tw.interrupts])


def names_from_graph(graph: Any, config: dict) -> dict[str, str]:
    """task_id -> node name, from the graph's own get_state at this checkpoint (public API)."""
    if graph is None or not hasattr(graph, "get_state"):
        return {}
    try:
        return {task.id: task.name for task in graph.get_state(config).tasks}
    except Exception:  # noqa: BLE001 - a graph that cannot read this checkpoint: fall back
        return {}


BOUNDED = reprlib.Repr()  # its cost is bounded by these limits, not by the value's size
BOUNDED.maxlevel, BOUNDED.maxdict, BOUNDED.maxlist, BOUNDED.maxtuple = 4, 6, 8, 8
BOUNDED.maxstring = BOUNDED.maxother = 200


def short(value: Any, width: int = 40) -> str:
    """A one-line repr for labels and cells, without memory addresses; a 100 MB string or a
    value nested 10,000 deep costs no more than a small one."""
    if isinstance(value, (str, bytes)) and len(value) > 4 * width:
        value = value[: 4 * width]  # cut before repr: never copy a huge value
    if is_packet(value):
        text = f"Send({value.node})"
    elif is_snapshot(value):  # a DeltaChannel's whole value, stored every N updates
        text = f"snapshot {BOUNDED.repr(value.value)}"
    elif type(value).__name__ == "Interrupt":  # its id is random: leave it out
        text = f"Interrupt({short(getattr(value, 'value', None), width)})"
    elif type(value) in (list, tuple) and any(is_packet(v) or type(v).__name__ == "Interrupt"
                                              for v in value):
        inner = ", ".join(short(v, width) for v in value)
        text = f"[{inner}]" if isinstance(value, list) else f"({inner})"
    else:
        text = BOUNDED.repr(value)
        if " object at 0x" in text:
            text = f"<{type(value).__name__}>"
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def is_packet(value: Any) -> bool:
    """A Send (LangGraph's or ours): a node name and its argument."""
    return hasattr(value, "node") and hasattr(value, "arg")
