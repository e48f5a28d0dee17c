"""Runtime: what a run hands every node besides its state (context=, the stream writer, previous).

Same names as ``langgraph.runtime``. A run keeps one Runtime in its config (``context=`` of
invoke/stream, checked against the graph's ``context_schema``); each task sees a copy that also
knows where it runs (``execution_info``) and the entrypoint's ``previous`` return value. A node
receives it by declaring a ``runtime`` parameter, or calls ``get_runtime()``.
Stores are out of scope: ``store`` is always None. Next: config.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, replace
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, Callable, Generic, TypeVar

from lgcheckpoint.constants import CHECKPOINT_ID, CONF, PREVIOUS, RUNTIME, WRITER
from lgcheckpoint.types import current_task

if TYPE_CHECKING:
    from lgcheckpoint.pregel.timeouts import AttemptClock

__all__ = ["DEFAULT_RUNTIME", "ExecutionInfo", "RunControl", "Runtime", "get_runtime"]

ContextT = TypeVar("ContextT")


def no_op_writer(_chunk: Any) -> None:
    """The stream writer when nobody streams mode "custom"."""


def no_op_heartbeat() -> None:
    """Progress of a node with an idle timeout (pregel/timeouts.py); elsewhere nothing listens."""


@dataclass(frozen=True, slots=True)
class ExecutionInfo:
    """Where the running task runs: its checkpoint, namespace, task id and attempt."""

    checkpoint_id: str
    checkpoint_ns: str
    task_id: str
    thread_id: str | None = None
    run_id: str | None = None
    node_attempt: int = 1
    node_first_attempt_time: float | None = None

    def patch(self, **overrides: Any) -> ExecutionInfo:
        return replace(self, **overrides)


class RunControl:
    """Asks a run to drain: finish this step, save, stop (GraphDrained); any thread may ask."""

    def __init__(self) -> None:
        self.drain_reason: str | None = None  # None: no drain asked for

    def request_drain(self, reason: str = "shutdown") -> None:
        self.drain_reason = reason

    @property
    def drain_requested(self) -> bool:
        return self.drain_reason is not None


@dataclass(frozen=True)
class Runtime(Generic[ContextT]):
    """The run's context and helpers, as a node sees them."""

    context: ContextT = None  # type: ignore[assignment]  # invoke(..., context=...)
    store: Any = None  # stores (long-term memory) are out of scope: always None
    stream_writer: Callable[[Any], None] = no_op_writer  # emits stream_mode="custom" chunks
    heartbeat: Callable[[], None] = no_op_heartbeat
    previous: Any = None  # the entrypoint's last saved value on this thread
    execution_info: ExecutionInfo | None = None
    server_info: Any = None  # LangGraph Platform only
    control: RunControl | None = None  # the run's drain requests (a run always has one)

    def merge(self, other: Runtime) -> Runtime:
        """``other``'s fields where it sets them, ours elsewhere (a subgraph keeps the context)."""
        return Runtime(
            context=other.context or self.context, store=other.store or self.store,
            stream_writer=other.stream_writer if other.stream_writer is not no_op_writer
            else self.stream_writer,
            heartbeat=other.heartbeat if other.heartbeat is not no_op_heartbeat
            else self.heartbeat,
            previous=self.previous if other.previous is None else other.previous,
            execution_info=other.execution_info or self.execution_info,
            server_info=other.server_info or self.server_info,
            control=other.control or self.control)

    def override(self, **overrides: Any) -> Runtime:
        return replace(self, **overrides)

    def patch_execution_info(self, **overrides: Any) -> Runtime:
        info = self.execution_info
        return replace(self, execution_info=info.patch(**overrides) if info else None)


DEFAULT_RUNTIME = Runtime()  # what a node sees outside any run: no context, no-op helpers


def coerce_context(schema: Any, context: Any) -> Any:
    """A dict given for a dataclass or pydantic context_schema becomes an instance of it."""
    if context is None or schema is None or not isinstance(context, dict):
        return context
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        return schema(**context)
    return context


def run_runtime(config: dict, context_schema: Any, context: Any, control: Any = None) -> Runtime:
    """The Runtime of one run: its context, control (else the parent's), custom stream writer."""
    conf = config[CONF]
    parent = conf.get(RUNTIME) or Runtime()
    writer = conf.get(WRITER) or no_op_writer
    own = Runtime(context=coerce_context(context_schema, context), stream_writer=writer,
                  control=control or parent.control or RunControl())
    return parent.merge(own)


# the open timed attempts (pregel/timeouts.py) this code runs inside, innermost last: a subgraph
# or a @task call started by a timed node runs in a copy of its context, so its output is that
# node's progress
open_clocks: ContextVar[tuple[AttemptClock, ...]] = ContextVar("open_clocks", default=())


def timed_runtime(runtime: Runtime) -> Runtime:
    """A node's Runtime inside timed attempts: heartbeat() is the innermost one's progress,
    custom stream output everyone's (and is dropped once one of them timed out)."""
    clocks = open_clocks.get()
    if not clocks:
        return runtime
    writer = runtime.stream_writer

    def write(chunk: Any) -> None:
        if all(clock.open for clock in clocks):
            for clock in clocks:
                clock.progress()
            writer(chunk)

    return replace(runtime, heartbeat=clocks[-1].heartbeat, stream_writer=write)


def task_runtime(task: Any) -> Runtime:
    """The Runtime a task sees: the run's, plus previous and where the task runs."""
    conf = task.config[CONF]
    base = conf.get(RUNTIME) or Runtime()
    try:  # only an entrypoint graph has the __previous__ channel
        previous = task.local_read([PREVIOUS]).get(PREVIOUS)
    except KeyError:
        previous = None
    info = ExecutionInfo(conf.get(CHECKPOINT_ID) or "", task.ns, task.id, conf.get("thread_id"),
                         task.config.get("run_id"), task.attempt, task.first_attempt_time)
    writer = conf.get(WRITER) or base.stream_writer
    return timed_runtime(replace(base, previous=previous, execution_info=info,
                                 stream_writer=writer))


def get_runtime(context_schema: Any = None) -> Runtime:
    """The Runtime of the node or task running in this thread (context_schema: a type hint)."""
    task = current_task.get(None)
    if task is None:
        raise RuntimeError("get_runtime() can only be called inside a node or task of a running "
                           "graph; declare a `runtime` parameter or call it from there")
    return task_runtime(task)
