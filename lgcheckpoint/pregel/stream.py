"""What each stream mode shows: the chunk shapes of updates, tasks, checkpoints and debug.

Functions from loop state to plain dicts, in LangGraph's shapes (task_output also emits what a
task wrote). Next: pregel/debug.py.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from lgcheckpoint.constants import CONF, CONTROL_WRITES, ERROR, INTERRUPT, PUSH, RETURN, START
from lgcheckpoint.pregel.algo import Task, key_list
from lgcheckpoint.pregel.debug import task_event
from lgcheckpoint.types import GraphOutput, PregelTask

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel
    from lgcheckpoint.pregel.loop import PregelLoop


def updates_payload(keys: list[str] | str, task: Task, writes: list, cached: bool = False
                    ) -> dict:
    """{node: {key: value}} for one task; repeated keys become a list of single-key dicts;
    a single-value state shows the value itself, a @task call what it returned."""
    mine = [(c, v) for c, v in writes if c in key_list(keys)]
    returned = [v for c, v in writes if c == RETURN]
    if returned:
        value: Any = returned[0]
    elif not mine:
        value = None
    elif isinstance(keys, str):
        value = mine[-1][1] if len(mine) == 1 else [v for _, v in mine]
    elif len({c for c, _ in mine}) < len(mine):  # a key written twice
        value = [{c: v} for c, v in mine]
    else:
        value = dict(mine)
    payload = {task.name: value}
    if cached:
        payload["__metadata__"] = {"cached": True}
    return payload


def task_output(loop: PregelLoop, task: Task, writes: list, cached: bool = False) -> None:
    """Stream what a task just wrote: its updates, or the interrupt it raised."""
    if task.node.hidden:
        return
    if writes[0][0] == INTERRUPT:
        if task.path[0] == PUSH and task.path[-1] is True:  # a task call: its caller tells
            return
        interrupts = tuple(i for c, v in writes if c == INTERRUPT for i in v)
        loop.emit("updates", {INTERRUPT: interrupts})
        if "values" in loop.listeners.modes:
            values = loop.read_output()  # a single-value state's value is left out
            loop.emit("values", {**(values if isinstance(values, dict) else {}),
                                 INTERRUPT: interrupts})
    elif writes[0][0] != ERROR and "updates" in loop.listeners.modes:
        loop.emit("updates", updates_payload(loop.spec.output_keys, task, writes, cached))
    if not cached and "tasks" in loop.listeners.modes:
        loop.emit("tasks", task_result_payload(loop.graph, task, writes))


def task_payload(task: Task) -> dict:
    """A task about to run (stream_mode="tasks"), with the caller's metadata (debug.py)."""
    return task_event(task)


def result_writes(writes: list, keys: Any = None) -> Any:
    """Writes as {channel: value}, or {channel: {"$writes": [...]}} when written twice; a
    single-value state's (``keys`` is its one channel name) as that value."""
    if isinstance(keys, str) and writes:
        return writes[-1][1]
    by_channel: dict[str, list] = defaultdict(list)
    for chan, value in writes:
        by_channel[chan].append(value)
    return {chan: values[0] if len(values) == 1 else {"$writes": values}
            for chan, values in by_channel.items()}


def task_result_payload(graph: Pregel, task: Task, writes: list) -> dict:
    """A task that finished (stream_mode="tasks"): its result, error and interrupts."""
    return {
        "id": task.id, "name": task.name,
        "error": next((v for c, v in writes if c == ERROR), None),
        "result": result_writes([(c, v) for c, v in writes  # never unwrapped, as LangGraph's
                                 if c in key_list(graph.stream_channels) or c == RETURN]),
        "interrupts": [interrupt_dict(i) for c, v in writes if c == INTERRUPT for i in v],
    }


def interrupt_dict(interrupt: Any) -> dict:
    return {"value": interrupt.value, "id": interrupt.id,
            "response_schema": getattr(interrupt, "response_schema", None)}


def with_checkpoint_map(config: dict | None, metadata: dict | None) -> dict | None:
    """A config that also names the checkpoints of all enclosing graphs (for subgraphs)."""
    if config is None or not (parents := (metadata or {}).get("parents")):
        return config
    conf = config[CONF]
    return {**config, CONF: {**conf, "checkpoint_map": {
        **parents, conf["checkpoint_ns"]: conf["checkpoint_id"]}}}


def public_config(config: dict | None) -> dict | None:
    """Only the configurable keys a user may see (no runtime internals)."""
    if config is None:
        return None
    return {CONF: {k: v for k, v in config.get(CONF, {}).items() if not k.startswith("__")}}


def tasks_with_writes(tasks: list[Task], pending_writes: list, states: dict, graph: Pregel,
                      live: bool = False) -> tuple[PregelTask, ...]:
    """Tasks as get_state reports them: each with its error, interrupts, result and state."""
    out = []
    for task in tasks:
        mine = [(c, v) for t, c, v in pending_writes if t == task.id]
        output = [(c, v) for c, v in mine if c not in CONTROL_WRITES]
        error = next((v for c, v in mine if c == ERROR), None)  # as stored (savers keep a repr)
        interrupts = tuple(i for c, v in mine if c == INTERRUPT
                           for i in (v if isinstance(v, (list, tuple)) else [v]))
        if live and output:
            interrupts = ()
        shown = [(c, v) for c, v in output if c in key_list(graph.stream_channels)]
        result = result_writes(shown, graph.stream_channels) if output else None
        if returned := [v for c, v in output if c == RETURN]:
            result = returned[0]  # a @task call's return value
        out.append(PregelTask(task.id, task.name, task.path, error, interrupts,
                              states.get(task.id), result))
    return tuple(out)


def subgraph_task_states(tasks: list, config: dict) -> dict:
    """For tasks that run a subgraph, the config that addresses the child's checkpoints."""
    return {task.id: {CONF: {"thread_id": config[CONF]["thread_id"], "checkpoint_ns": task.ns}}
            for task in tasks if task.node.inner_graph is not None}


def checkpoint_payload(loop: PregelLoop) -> dict:
    """stream_mode="checkpoints": the checkpoint just made, shaped like get_state's output."""
    config = {**loop.saved.config, CONF: {
        **loop.saved.config[CONF], "checkpoint_id": loop.checkpoint["id"]}}
    tasks = list(loop.tasks.values())
    return {
        "config": public_config(with_checkpoint_map(config, loop.metadata)),
        "parent_config": public_config(with_checkpoint_map(loop.saved.parent_config,
                                                           loop.metadata)),
        "values": loop.caches.view.read(loop.graph.stream_channels),
        "metadata": loop.metadata,
        "next": [t.name for t in tasks],
        "tasks": [checkpoint_task(t) for t in tasks_with_writes(
            tasks, loop.pending_writes, subgraph_task_states(tasks, config), loop.graph)],
    }


def checkpoint_task(t: PregelTask) -> dict:
    """A task as stream_mode="checkpoints" lists it: its error, else its result (if it has one)
    and its interrupts."""
    if t.error:
        return {"id": t.id, "name": t.name, "error": t.error, "state": t.state}
    result = {"result": t.result} if t.result else {}
    return {"id": t.id, "name": t.name, **result,
            "interrupts": tuple(interrupt_dict(i) for i in t.interrupts), "state": t.state}


def debug_chunk(mode: str, step: int, payload: Any) -> dict:
    """stream_mode="debug" wraps checkpoints and tasks events with a type and a timestamp."""
    kind = "checkpoint" if mode == "checkpoints" else (
        "task_result" if "result" in payload else "task")
    return {"step": step - 1 if mode == "checkpoints" else step,
            "timestamp": datetime.now(timezone.utc).isoformat(), "type": kind,
            "payload": payload}


def print_chunk(ns: tuple, mode: str, payload: Any, subgraphs: bool) -> None:
    """debug=True / print_mode=: one line per chunk, "[mode] payload" ("[graph=ns]" inside)."""
    where = [f"[graph={ns}]"] if subgraphs and ns else []
    print(" ".join([f"[{mode}]", *where, repr(payload)]))


def v2_part(graph: Any, ns: tuple, mode: str, payload: Any) -> dict:
    """version="v2": a chunk as {"type", "ns", "data"}; values typed, their interrupts apart."""
    if mode == "values":
        if not isinstance(payload, dict):
            return {"type": mode, "ns": ns, "data": payload, "interrupts": ()}
        data = graph.typed_output({k: v for k, v in payload.items() if k != INTERRUPT})
        return {"type": mode, "ns": ns, "data": data, "interrupts": payload.get(INTERRUPT, ())}
    if mode in ("checkpoints", "debug"):
        # a debug event wraps the checkpoint payload; the first one (next: __start__) stays a dict
        inner = payload.get("payload") if payload.get("type") == "checkpoint" else payload
        if isinstance((inner or {}).get("values"), dict) and START not in inner.get("next", ()):
            inner["values"] = graph.typed_state(inner["values"])
    return {"type": mode, "ns": ns, "data": payload}


def shaped(ns: tuple, mode: str, payload: Any, many: bool, subgraphs: bool,
           part: Callable | None) -> Any:
    """One chunk as stream() yields it: the payload, with its mode if several were asked for,
    its namespace with subgraphs=True; version="v2": a typed dict (v2_part)."""
    if part is not None:
        return part(ns, mode, payload)
    if subgraphs:
        return (ns, mode, payload) if many else (ns, payload)
    return (mode, payload) if many else payload


class TypedValues:
    """Mixed into Pregel: the values version="v2" streams, as read; a StateGraph's compiled
    graph overrides both to build its schemas' types (graph.py)."""

    def typed_output(self, values: Any) -> Any:
        """version="v2"'s values: the output as read (a StateGraph builds its type)."""
        return values

    def typed_state(self, values: Any) -> Any:
        """version="v2"'s checkpoint values: the state as read (a StateGraph builds its type)."""
        return values


def check_version(version: str) -> None:
    if version not in ("v1", "v2"):
        raise ValueError(f"version must be 'v1' or 'v2', got {version!r}")


def invoke_modes(version: str, stream_mode: Any) -> Any:
    """The modes invoke streams: v1's "values" also needs "updates", where interrupts arrive
    (v2's values parts carry them)."""
    check_version(version)
    return ["updates", "values"] if stream_mode == "values" and version == "v1" else stream_mode


def collect_output(chunks: list, stream_mode: Any, version: str, subgraphs: bool) -> Any:
    """invoke's result: the last values chunk, plus any interrupts raised on the way; with
    version "v2", a GraphOutput of the (typed) output and the interrupts, kept apart."""
    if stream_mode != "values":
        return chunks
    if version == "v2":
        latest, interrupts = None, []
        for part in chunks:
            latest = part["data"]
            interrupts.extend(part["interrupts"])
        return GraphOutput(latest, tuple(interrupts))
    latest, interrupts = None, []
    for chunk in chunks:
        mode, payload = chunk[-2], chunk[-1]
        if subgraphs and chunk[0]:
            continue
        if mode == "updates" and isinstance(payload, dict) and (
                found := payload.get("__interrupt__")) is not None:
            interrupts.extend(found)
        elif mode == "values":
            latest = payload
    if interrupts:
        return {**(latest if isinstance(latest, dict) else {}), "__interrupt__": interrupts}
    return latest
