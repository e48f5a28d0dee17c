"""The front door of a compiled graph: invoke, stream, get_state, get_state_history, update_state.

Each run builds a PregelLoop (loop.py) and drives it with the sync or async runner (runner.py).
Read loop.py for the algorithm; this module only wires config, streaming and savers together.
Mixed in from side trips: the async twins (aio.py: ainvoke, astream, aget_state, ...),
clear_cache (caching.py), and a graph's questions about itself (introspect.py).
Next: checkpoint/base.py.
"""

from __future__ import annotations

import asyncio
from contextlib import closing
from functools import partial
from typing import Any, Iterator, NamedTuple, Sequence

from lgcheckpoint.cache.base import BaseCache
from lgcheckpoint.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from lgcheckpoint.constants import (
    CHECKPOINTER, CONF, DEFAULT_RECURSION_LIMIT, DURABILITY, NULL_RESUME, PARENT_NULL_RESUME,
    SAVES, ROOT_STREAM, ROOT_STREAM_MODES, RUNTIME, TASK_ID, WRITER,
)
from lgcheckpoint.errors import GraphDrained, GraphRecursionError, refuse_unimplemented
from lgcheckpoint.guard import guarded
from lgcheckpoint.pregel import caching, delta, introspect, live, state, update
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.aio import AsyncTwins
from lgcheckpoint.pregel.caching import CacheClearing
from lgcheckpoint.pregel.detect import CompiledGraph
from lgcheckpoint.pregel.introspect import Introspection
from lgcheckpoint.pregel.loop import PregelLoop
from lgcheckpoint.pregel.calls import SyncCalls
from lgcheckpoint.pregel.builder import (
    ChannelWriteEntry, NodeBuilder, PregelNode, compile_nodes, named_channels,
)
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.runner import task_config
from lgcheckpoint.pregel.saves import SaveQueue, SyncSaveQueue
from lgcheckpoint.pregel.validate import check_checkpointer, validate_graph
from lgcheckpoint.pregel.subgraphs import (
    is_own_run, load_before, locate_run, replay_bound, resolve_saver,
)
from lgcheckpoint.runtime import RunControl, run_runtime
from lgcheckpoint.types import (
    All, CachePolicy, RetryPolicy, StateSnapshot, StateUpdate, current_task,
)
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, renamed_option

STREAM_MODES = ("values", "updates", "checkpoints", "tasks", "debug", "custom", "messages")
# configurable keys a run's metadata repeats, so its nodes (and chat models) see them there
PROPAGATED = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id",
              "graph_id")
__all__ = ["ChannelWriteEntry", "NodeBuilder", "Pregel", "PregelNode"]


class Run(NamedTuple):
    """Everything one invoke/stream needs, prepared the same way for sync and async."""

    config: dict
    saver: BaseCheckpointSaver | None
    modes: list[str]
    stream_mode: Any  # as the caller gave it: one mode or a list (shapes the chunks)
    subgraphs: bool
    durability: str
    chunks: live.Chunks  # appended from any thread; an append wakes a waiting caller
    output_keys: list[str]
    interrupt_before: All | Sequence[str]  # breakpoints: the nodes, or "*" for all
    interrupt_after: All | Sequence[str]
    printed: tuple = ()  # modes printed to the console (debug=True, print_mode=)
    part: Any = None  # version="v2": makes each chunk a typed dict (stream.v2_part)

    def drain(self) -> Iterator[Any]:
        """Chunks collected since the last drain, shaped as the caller asked."""
        many = isinstance(self.stream_mode, (list, tuple))
        wanted = stream_modes(self.stream_mode)
        while self.chunks:
            ns, mode, payload = self.chunks.popleft()
            if mode in self.printed:
                out.print_chunk(ns, mode, payload, self.subgraphs)
            if mode not in wanted:
                continue
            if self.part is not None:
                yield self.part(ns, mode, payload)
            elif self.subgraphs:
                yield (ns, mode, payload) if many else (ns, payload)
            else:
                yield (mode, payload) if many else payload


class Pregel(AsyncTwins, CacheClearing, Introspection, CompiledGraph):
    """A compiled graph: nodes subscribed to channels, run in super-steps."""

    config: dict | None = None  # with_config(): every run's config is merged over this one
    debug: bool = False  # compile(debug=True): every run prints its updates and values
    step_timeout: float | None = None  # seconds a super-step may take, else TimeoutError
    stream_eager: bool = False  # stream while even a lone task runs (entrypoints do: live.py)
    stream_mode: str = "values"  # stream() without a stream_mode (a StateGraph's: "updates")
    retry_policy: tuple = ()  # for nodes (and @task calls) without a retry policy of their own
    cache_policy: CachePolicy | None = None  # likewise, a cache policy

    def __init__(self, *, nodes: dict, channels: dict | None, input_channels: str | list[str],
                 output_channels: str | list[str], stream_channels: Any = None,
                 checkpointer: BaseCheckpointSaver | bool | None = None,
                 interrupt_before_nodes: Any = (), interrupt_after_nodes: Any = (),
                 name: str = "LangGraph", cache: BaseCache | None = None,
                 context_schema: Any = None, config: dict | None = None,
                 debug: bool | None = None, stream_mode: str = "values",
                 retry_policy: RetryPolicy | Sequence[RetryPolicy] = (),
                 cache_policy: CachePolicy | None = None, auto_validate: bool = True,
                 step_timeout: float | None = None, stream_eager: bool = False,
                 **options: Any) -> None:
        context_schema = renamed_option(options, "config_type", "context_schema", context_schema,
                                        LangGraphDeprecatedSinceV10)
        refuse_unimplemented("Pregel", options)  # store=, trigger_to_nodes=...
        self.step_timeout = step_timeout  # pregel/runner.py enforces it
        self.stream_eager = stream_eager
        # NodeBuilders become nodes; nodes without a policy of their own take the graph's
        self.retry_policy = (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(
            retry_policy)
        self.cache_policy = cache_policy
        self.nodes = compile_nodes(nodes, self.retry_policy, cache_policy)
        self.channels = named_channels(channels or {})
        self.checkpointer = check_checkpointer(checkpointer)
        self.cache = cache  # a BaseCache for nodes with a cache policy (pregel/caching.py)
        self.context_schema = context_schema  # the type of invoke(..., context=...)
        self.input_channels, self.output_channels = input_channels, output_channels
        # what stream_mode="values" shows; LangGraph's default: every channel
        self.stream_channels = list(self.channels) if stream_channels is None else stream_channels
        self.stream_mode = stream_mode  # the mode stream() uses when given none
        self.interrupt_before_nodes = interrupt_before_nodes
        self.interrupt_after_nodes = interrupt_after_nodes
        self.name, self.config = name, config
        self.debug = bool(debug)  # None (not given) is False, the class default
        if auto_validate:
            validate_graph(self)  # a channel that does not exist fails here, not mid-run
        # which nodes can a write to this channel wake up?
        self.trigger_to_nodes: dict[str, list[str]] = {}
        for node in self.nodes.values():
            for chan in node.triggers:
                self.trigger_to_nodes.setdefault(chan, []).append(node.name)

    def validate(self) -> Pregel:
        """Check the wiring again (after changing nodes or channels by hand)."""
        validate_graph(self)
        return self

    # --- running -----------------------------------------------------------------------------
    def invoke(self, input: Any, config: dict | None = None, *, stream_mode: str = "values",
               version: str = "v1", **kwargs: Any) -> Any:
        """Run to completion (or to an interrupt) and return the final state (version="v2":
        a GraphOutput of the output and the interrupts)."""
        modes = out.invoke_modes(version, stream_mode)
        kwargs.setdefault("output_keys", self.output_channels)
        chunks = list(self.stream(input, config, stream_mode=modes, version=version, **kwargs))
        return out.collect_output(chunks, stream_mode, version, kwargs.get("subgraphs", False))

    def typed_output(self, values: Any) -> Any:
        """version="v2"'s values: the output as read (a StateGraph builds its type)."""
        return values

    def typed_state(self, values: Any) -> Any:
        """version="v2"'s checkpoint values: the state as read (a StateGraph builds its type)."""
        return values

    @partial(guarded, restore=state.restore)  # one run at a time on a thread (guard.py)
    def stream(self, input: Any, config: dict | None = None, *, stream_mode: Any = None,
               interrupt_before: Any = None, interrupt_after: Any = None,
               durability: str | None = None, subgraphs: bool = False, output_keys: Any = None,
               context: Any = None, control: RunControl | None = None, version: str = "v1",
               **options: Any) -> Iterator[Any]:
        """Run the graph, yielding chunks of the requested stream mode(s) as they come (live.py);
        control=RunControl() lets another thread ask the run to drain (stop between steps);
        version="v2" yields each chunk as a dict {"type", "ns", "data"}."""
        run = self._prepare("stream", config, stream_mode, subgraphs, durability, interrupt_before,
                            interrupt_after, output_keys, context, control, version, options)
        saves, own = self._saves(run, SyncSaveQueue)
        loop = self._loop(input, run, saves, *self._load(run))
        pool: list = []
        calls = SyncCalls(loop, self, pool)  # runs the @task calls a node makes (calls.py)
        error: BaseException | None = None
        try:
            for tasks in loop.run():
                yield from run.drain()
                if self.cache is not None and (keys := caching.wanted(tasks)):
                    tasks = loop.apply_cached(tasks, keys, self.cache.get(tuple(keys)))
                with closing(live.step(self, run, partial(calls.step, tasks), tasks)) as step:
                    for _ in step:  # chunks reach the caller while the step runs
                        yield from run.drain()
                yield from run.drain()
                saves.end_of_step()  # a failed save stops the run here
        except GeneratorExit as exc:  # the caller stopped reading: save what ran, then stop
            self._finish(loop, None)
            if loop.trace is not None:  # langchain callbacks hear it (tracing.py)
                loop.trace.closed(exc)
            saves.close() if own else saves.flush()
            raise
        except BaseException as exc:
            error = exc
        finally:
            if pool:
                pool[0].shutdown(wait=False)
        suppressed = self._finish(loop, error)
        # every queued saver call is done before the caller sees the result
        saves.close() if own else saves.flush()
        yield from run.drain()
        self._raise_outcome(loop, run, error, suppressed)

    def _prepare(self, method: str, config: dict | None, stream_mode: Any, subgraphs: bool,
                 durability: str | None, interrupt_before: Any, interrupt_after: Any,
                 output_keys: Any, context: Any, control: RunControl | None, version: str,
                 options: dict) -> Run:
        """Everything one run needs: its config, saver, durability and stream modes, checked."""
        printed = print_modes(self, options.pop("debug", None), options.pop("print_mode", ()))
        durability = durability_option(options, durability)
        refuse_unimplemented(method, options)  # what is left: options we do not implement
        out.check_version(version)
        if control is not None and not isinstance(control, RunControl):
            raise TypeError(f"control must be a RunControl, got {type(control).__name__}")
        stream_mode = self.stream_mode if stream_mode is None else stream_mode
        config = run_config(introspect.merge_configs(self.config, config) if self.config
                            else config)
        conf = config[CONF]
        saver = self._saver_for(conf)
        if durability not in (None, "sync", "async", "exit"):
            raise ValueError(f"durability must be 'sync', 'async' or 'exit', got {durability!r}")
        durability = durability or conf.get(DURABILITY) or "async"
        conf[DURABILITY] = durability  # subgraph calls inherit it
        # and the context, and the control a drain request reaches them through
        conf[RUNTIME] = run_runtime(config, self.context_schema, context, control)
        # the modes collected: those asked for, then those only printed (debug=True, print_mode=)
        modes = list(dict.fromkeys([*stream_modes(stream_mode), *printed]))
        return Run(config, saver, modes, stream_mode, subgraphs, durability, live.Chunks(),
                   self.stream_channels if output_keys is None else output_keys,
                   self.interrupt_before_nodes if interrupt_before is None else interrupt_before,
                   self.interrupt_after_nodes if interrupt_after is None else interrupt_after,
                   printed, partial(out.v2_part, self) if version == "v2" else None)

    def _saver_for(self, conf: dict) -> BaseCheckpointSaver | None:
        """This graph's saver, or the parent's for a subgraph compiled without one."""
        saver = resolve_saver(self, conf)
        if saver is not None:
            if conf.get("thread_id") is None:
                raise ValueError(
                    "This graph has a checkpointer, so every run needs a thread id: pass "
                    "config={'configurable': {'thread_id': '<any id>'}}")
            conf["thread_id"] = str(conf["thread_id"])
        conf[CHECKPOINTER] = saver  # subgraphs compiled without one inherit it
        locate_run(self, conf)  # checkpointer=True: one history per thread
        return saver

    def _saves(self, run: Run, kind: type[SaveQueue]) -> tuple[SaveQueue, bool]:
        """The run's ordered queue of saver calls (a subgraph shares its parent's); owned?"""
        shared = run.config[CONF].get(SAVES)
        if isinstance(shared, kind) and shared.saver is run.saver and (
                kind is SyncSaveQueue or shared.loop is asyncio.get_running_loop()):
            return shared, False
        run.config[CONF][SAVES] = saves = kind(run.saver, run.durability)
        return saves, True

    def _load(self, run: Run) -> tuple[CheckpointTuple | None, bool]:
        """The checkpoint this run starts from, and whether the thread has moved past it."""
        if run.saver is None:
            return None, False
        if bound := replay_bound(run.config[CONF]):
            saved = load_before(run.saver, run.config, bound)  # a replaying run's call
            return delta.resolve(run.saver, self.channels, saved), False
        saved = delta.resolve(run.saver, self.channels, run.saver.get_tuple(run.config))
        return saved, saved is not None and state.superseded(run.saver, run.config, saved)

    def _loop(self, input: Any, run: Run, saves: SaveQueue, saved: CheckpointTuple | None,
              superseded: bool) -> PregelLoop:
        conf = run.config[CONF]
        # a subgraph also streams to the root run when that run asked for subgraphs=True
        root_emit = conf.get(ROOT_STREAM)
        modes = set(run.modes) | set(conf.get(ROOT_STREAM_MODES, ()))
        if "debug" in modes:
            modes |= {"checkpoints", "tasks"}

        def to_caller(ns: tuple, mode: str, payload: Any) -> None:
            if mode in run.modes:
                run.chunks.append((ns, mode, payload))

        def emit(ns: tuple, mode: str, payload: Any) -> None:
            chunks = [(mode, payload)]
            if "debug" in modes and mode in ("checkpoints", "tasks"):  # also as a debug event
                chunks.append(("debug", out.debug_chunk(mode, loop.step, payload)))
            for chunk_mode, chunk in chunks:
                if root_emit is not None:
                    root_emit(ns, chunk_mode, chunk)
                to_caller(ns, chunk_mode, chunk)

        if run.subgraphs and root_emit is None:
            conf[ROOT_STREAM], conf[ROOT_STREAM_MODES] = to_caller, run.modes
        if "custom" in modes:
            conf[WRITER] = lambda value: emit(loop.namespace, "custom", value)
        loop = PregelLoop(self, input, run, saved=saved, saves=saves, emit=emit, modes=modes,
                          superseded=superseded)
        if "messages" in run.modes:  # chat model tokens: a callback handler (messages_stream.py)
            from lgcheckpoint.pregel import messages_stream

            messages_stream.listen(run.config, lambda ns, chunk: to_caller(ns, "messages", chunk),
                                   run.subgraphs, loop.namespace)
        if run.config.get("callbacks"):  # a langchain run, its tasks its children (tracing.py)
            from lgcheckpoint.pregel import tracing

            loop.trace = tracing.GraphRun(self, input, run.config)
        return loop

    def _finish(self, loop: PregelLoop, error: BaseException | None) -> bool:
        try:
            return loop.finish(error)
        except BaseException:
            if error is None:
                raise
            return False

    def _raise_outcome(self, loop: PregelLoop, run: Run, error: BaseException | None,
                       suppressed: bool) -> None:
        outcome = error if error is not None and not suppressed else self._stopped(loop, run)
        if loop.trace is not None:  # langchain callbacks hear how the run ended (tracing.py)
            loop.trace.end(loop, outcome, error)
        if outcome is not None:
            raise outcome

    def _stopped(self, loop: PregelLoop, run: Run) -> BaseException | None:
        """The error of a run that stopped before its end, if it did."""
        if loop.status == "draining":  # stopped between steps: saved, resumable with None
            return GraphDrained(run.config[CONF][RUNTIME].control.drain_reason)
        if loop.status == "out_of_steps":
            return GraphRecursionError(
                f"Recursion limit of {run.config['recursion_limit']} reached without hitting a "
                "stop condition. You can increase the limit by setting the `recursion_limit` "
                "config key, e.g. invoke(input, {'recursion_limit': 100}).")
        return None

    # --- state outside a run ------------------------------------------------------------------
    def get_state(self, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's latest state (or the checkpoint config names), with what runs next."""
        graph, config, saver = state.locate(self, config)
        return state.snapshot(graph, config, saver.get_tuple(config), saver, recurse=subgraphs,
                              live="checkpoint_id" not in config[CONF])

    def get_state_history(self, config: dict, *, filter: dict | None = None,
                          before: dict | None = None, limit: int | None = None
                          ) -> Iterator[StateSnapshot]:
        """Every checkpoint of the thread, newest first, each as a StateSnapshot."""
        graph, config, saver = state.locate(self, config)
        config = {**config, CONF: {"checkpoint_ns": "", **config[CONF]}}
        # lazily, one tuple at a time: no saver of ours holds a lock or cursor while list() yields
        # (SQLite and Postgres read a page at a time), so a snapshot may read the saver (delta
        # channels), and each tuple is dropped once its snapshot is built
        for saved in saver.list(config, filter=filter, before=before, limit=limit):
            yield state.snapshot(graph, saved.config, saved, saver)

    def update_state(self, config: dict, values: Any, as_node: str | None = None,
                     task_id: str | None = None) -> dict:
        """Write values as if node `as_node` returned them; a new checkpoint (source "update"):
        a bulk update of one superstep of one update."""
        return update.bulk_update_state(self, config, [[StateUpdate(values, as_node, task_id)]])

    def bulk_update_state(self, config: dict, supersteps: Any) -> dict:
        """Apply supersteps of StateUpdate(values, as_node, task_id), one checkpoint each."""
        return update.bulk_update_state(self, config, supersteps)


def run_config(config: dict | None) -> dict:
    """A run's own copy of the config, with defaults; inside a node, a subgraph call's config."""
    # checked first: below, the config and its configurable are dicts
    if not isinstance(config, (dict, type(None))) or not isinstance(
            (config or {}).get(CONF) or {}, dict):
        raise TypeError(f"config must be a dict like {{'configurable': {{'thread_id': "
                        f"'1'}}}}, got {config!r}")
    config = {**(config or {})}
    given = config.get(CONF) or {}
    parent = current_task.get(None)
    # the node handed on its own config: the call is a subgraph of it all the same
    own = parent is not None and given.get(TASK_ID) == parent.id
    if parent is not None and (own or not given.get(TASK_ID) and not is_own_run(config)):
        # graph.invoke() inside a node: a subgraph of the running task (the n-th call: "ns|n")
        sub = subgraph_config(parent)
        if own:  # where the node runs is not where its subgraph runs: keep only additions
            given = {k: v for k, v in given.items() if k not in sub[CONF]}
        config = {**sub, **config, CONF: {**sub[CONF], **given}}
    conf = config[CONF] = {**(config.get(CONF) or {})}
    config.setdefault("recursion_limit", DEFAULT_RECURSION_LIMIT)
    if config["recursion_limit"] < 1:
        raise ValueError("recursion_limit must be at least 1")
    config["metadata"] = {**config.get("metadata", {})}
    for key in PROPAGATED:  # as in LangGraph, the run's metadata repeats these (as given)
        if conf.get(key) and key not in config["metadata"]:
            config["metadata"][key] = conf[key]
    if conf.get("checkpoint_ns") and TASK_ID not in conf:
        # a root run always runs the root graph, even given a subgraph's config
        conf.update(checkpoint_ns="", checkpoint_id=None)
    return config


def stream_modes(stream_mode: Any) -> list[str]:
    """The modes asked for, as a list; refuses modes we do not stream."""
    modes = list(stream_mode) if isinstance(stream_mode, (list, tuple)) else [
        stream_mode or "updates"]
    if unknown := [mode for mode in modes if mode not in STREAM_MODES]:
        raise ValueError(f"Unknown stream_mode {unknown[0]!r}: use one of {STREAM_MODES}")
    return modes


def durability_option(options: dict, durability: str | None) -> str | None:
    """LangGraph's deprecated checkpoint_during=True/False means durability "async"/"exit"."""
    if options.get("checkpoint_during", None) is None:  # None: not given (no warning)
        options.pop("checkpoint_during", None)
        return durability
    during = renamed_option(options, "checkpoint_during", "durability", None,
                            LangGraphDeprecatedSinceV10)
    if durability is not None:
        raise ValueError("Cannot use both `checkpoint_during` and `durability`: pass only "
                         "`durability`")
    return "async" if during else "exit"


def print_modes(graph: Pregel, debug: bool | None, print_mode: Any) -> tuple:
    """The stream modes a run prints: debug=True prints updates and values, as in LangGraph."""
    if debug or graph.debug:
        return ("updates", "values")
    return tuple(stream_modes(print_mode)) if print_mode else ()


def subgraph_config(task: Task) -> dict:
    """A child run's config: the task's namespace, the parents' checkpoint ids, the saver."""
    conf = task_config(task)[CONF]  # where the task runs, as its node sees it
    child = {k: v for k, v in conf.items() if k not in ("checkpoint_id", WRITER)}
    calls = task.scratchpad.subgraph_counter  # subgraphs this task called before this one
    task.scratchpad.subgraph_counter += 1
    child["checkpoint_ns"] = f"{task.ns}|{calls}" if calls else task.ns
    child[PARENT_NULL_RESUME] = conf.get(NULL_RESUME)
    return {**task.config, CONF: child}
