"""The front door of a compiled graph: invoke, stream, get_state, get_state_history, update_state.

Each run builds a PregelLoop (loop.py) and drives it with the sync or async runner (runner.py).
Read loop.py for the algorithm; this module only wires config, streaming and savers together.
Mixed in from side trips: get_state and get_state_history (state.py), update_state
(update.py), the async twins (aio.py: ainvoke, astream, aget_state, ...), clear_cache
(caching.py), a graph's questions about itself (introspect.py), and langchain's Runnable
methods (as_runnable.py: ``graph | step``, ``.map()``, ``.with_retry()``, ...); a run's
options are checked and completed in options.py.
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
    CHECKPOINTER, CONF, DURABILITY, SAVES, ROOT_STREAM, ROOT_STREAM_MODES, RUNTIME, WRITER,
)
from lgcheckpoint.errors import GraphDrained, GraphRecursionError, refuse_unimplemented
from lgcheckpoint.guard import guarded
from lgcheckpoint.pregel import caching, delta, introspect, live, state
from lgcheckpoint.pregel import stream as out
from lgcheckpoint.pregel.aio import AsyncTwins
from lgcheckpoint.pregel.as_runnable import RunnableFace, register_if_loaded
from lgcheckpoint.pregel.caching import CacheClearing
from lgcheckpoint.pregel.detect import CompiledGraph
from lgcheckpoint.pregel.introspect import Introspection
from lgcheckpoint.pregel.loop import PregelLoop
from lgcheckpoint.pregel.options import durability_option, print_modes, run_config, stream_modes
from lgcheckpoint.pregel.calls import SyncCalls
from lgcheckpoint.pregel.builder import (
    ChannelWriteEntry, NodeBuilder, PregelNode, compile_nodes, named_channels,
)
from lgcheckpoint.pregel.saves import SaveQueue, SyncSaveQueue
from lgcheckpoint.pregel.state import StateReading
from lgcheckpoint.pregel.validate import check_checkpointer, validate_graph
from lgcheckpoint.pregel.update import StateUpdating
from lgcheckpoint.pregel.subgraphs import load_before, locate_run, replay_bound, resolve_saver
from lgcheckpoint.runtime import RunControl, run_runtime
from lgcheckpoint.types import All, CachePolicy, RetryPolicy
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, renamed_option

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
        """Chunks collected since the last drain, shaped as the caller asked (stream.py)."""
        if not self.chunks:  # most drains (three a step) find none
            return
        many = isinstance(self.stream_mode, (list, tuple))
        wanted = stream_modes(self.stream_mode)
        while self.chunks:
            ns, mode, payload = self.chunks.popleft()
            if mode in self.printed:
                out.print_chunk(ns, mode, payload, self.subgraphs)
            if mode in wanted:
                yield out.shaped(ns, mode, payload, many, self.subgraphs, self.part)


class Pregel(StateReading, StateUpdating, AsyncTwins, CacheClearing, Introspection,
             RunnableFace, out.TypedValues, CompiledGraph):
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
        register_if_loaded()  # isinstance(graph, Runnable), as in LangGraph (as_runnable.py)
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
            if loop.listeners.trace is not None:  # langchain callbacks hear it (tracing.py)
                loop.listeners.trace.closed(exc)
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

            loop.listeners.trace = tracing.GraphRun(self, input, run.config)
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
        if loop.listeners.trace is not None:  # langchain callbacks hear how it ended (tracing.py)
            loop.listeners.trace.end(loop, outcome, error)
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
