"""The values users hand to the runtime and get back: Send, Command, interrupt(), snapshots.

Names and fields follow ``langgraph.types`` so programs port by changing the import.
Next: response_schema.py (an interrupt's answer, checked).
"""

from __future__ import annotations

import contextvars
import pickle
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import (
    Any, Callable, ClassVar, Generic, Literal, NamedTuple, Protocol, Sequence, TypeVar,
    runtime_checkable,
)

from xxhash import xxh3_128_hexdigest

from lgcheckpoint.checkpoint.base import (
    INTERRUPT, NS_SEP, RESUME, BaseCheckpointSaver, RunnableConfig,
)
from lgcheckpoint.response_schema import checked, shown, validator
from lgcheckpoint.warnings import (
    LangGraphDeprecatedSinceV10, LangGraphDeprecatedSinceV11, warn_deprecated,
)

All = Literal["*"]
Durability = Literal["sync", "async", "exit"]
StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "custom", "messages"]
StreamWriter = Callable[[Any], None]  # a node's `writer` parameter: emits one "custom" chunk
# compile(checkpointer=...): a saver; None: a subgraph inherits its parent's; True: a subgraph
# keeps its own history in the parent's saver; False: no checkpoints at all
Checkpointer = BaseCheckpointSaver | bool | None


class Send:
    """A packet for one node: run `node` next step with `arg` as its input (map-reduce)."""

    __slots__ = ("node", "arg", "timeout")

    def __init__(self, /, node: str, arg: Any, *,
                 timeout: float | timedelta | TimeoutPolicy | None = None) -> None:
        self.node, self.arg = node, arg
        # this packet's own limit, over its node's (a number is a run_timeout in seconds)
        self.timeout = TimeoutPolicy.coerce(timeout)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Send) and (self.node, self.arg, self.timeout) == (
            other.node, other.arg, other.timeout)

    def __hash__(self) -> int:
        return hash((self.node, repr(self.arg), self.timeout))

    def __repr__(self) -> str:
        limit = "" if self.timeout is None else f", timeout={self.timeout!r}"
        return f"Send(node={self.node!r}, arg={self.arg!r}{limit})"


N = TypeVar("N")  # the node names a Command may go to, for Command[Literal["a", "b"]]


@dataclass
class Command(Generic[N]):
    """What a node (or a caller) wants next: update state, go to nodes, resume an interrupt."""

    graph: str | None = None  # None = this graph, Command.PARENT = the enclosing graph
    update: Any = None
    resume: Any = None  # a value, or {interrupt_id: value} for several interrupts
    goto: Any = ()  # node name, Send, or a list of them

    PARENT: ClassVar[Literal["__parent__"]] = "__parent__"

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if v)
        return f"Command({parts})"


def update_as_tuples(update: Any) -> list[tuple[str, Any]]:
    """Turn a dict, list of pairs, dataclass or pydantic object into (key, value) writes."""
    if update is None:
        return []
    if isinstance(update, dict):
        return list(update.items())
    if isinstance(update, (list, tuple)) and all(
            isinstance(t, tuple) and len(t) == 2 and isinstance(t[0], str) for t in update):
        return list(update)
    if keys := annotated_keys(type(update)):
        return object_updates(update, keys)
    return [("__root__", update)]


def annotated_keys(cls: type) -> tuple[str, ...]:
    """Field names declared on a class and its bases (dataclass, pydantic, TypedDict)."""
    annotations = [base.__dict__.get("__annotations__") for base in reversed(cls.__mro__)]
    return tuple(dict.fromkeys(k for ann in annotations if isinstance(ann, dict) for k in ann))


def object_updates(obj: Any, keys: Sequence[str]) -> list[tuple[str, Any]]:
    """Writes from a returned state object; a None field counts only if set on purpose."""
    kept = getattr(obj, "model_fields_set", None) or set()
    defaults = {k: f.default for k, f in (getattr(type(obj), "model_fields", None) or {}).items()}
    missing = object()
    values = {k: getattr(obj, k, missing) for k in keys}
    # a None is kept if the field's default is not None, or if it was set explicitly (pydantic)
    return [(k, v) for k, v in values.items() if v is not missing
            and (v is not None or defaults.get(k, missing) is not None or k in kept)]


OVERWRITE = "__overwrite__"  # {OVERWRITE: v}, or an Overwrite's "type" field: bypass the reducer


@dataclass
class Overwrite:
    """Write this value to a reducer channel as is, bypassing the reducer."""

    value: Any
    type: str = OVERWRITE  # LangGraph's tag, so the write is known after a JSON round trip


def interrupt_id(ns: str, answered: int) -> str:
    """The id of a task's next interrupt: its namespace hash, plus how many it has answered."""
    return xxh3_128_hexdigest((f"{ns}{NS_SEP}{answered}" if answered else ns).encode())


OLD_INTERRUPT_FIELDS = ("ns", "when", "resumable")  # LangGraph < 0.6 stored these; read, not kept


@dataclass(init=False, slots=True)
class Interrupt:
    """A question a node asked with interrupt(); answer it with Command(resume=...)."""

    value: Any
    id: str  # interrupt_id(task namespace, answers so far)
    response_schema: Any  # JSON Schema of the expected answer, or None (response_schema.py)

    def __init__(self, value: Any, id: str = "placeholder-id", *, response_schema: Any = None,
                 **old: Any) -> None:
        """Old checkpoints name ``ns``/``when``/``resumable``; an old ``ns`` gives the id."""
        if unknown := set(old) - set(OLD_INTERRUPT_FIELDS):
            raise TypeError(f"Interrupt() got unexpected keyword arguments {sorted(unknown)}")
        self.value, self.id, self.response_schema = value, id, response_schema
        if id == "placeholder-id" and isinstance(old.get("ns"), (list, tuple)):
            self.id = xxh3_128_hexdigest("|".join(old["ns"]).encode())

    @classmethod
    def from_ns(cls, value: Any, ns: str, *, response_schema: Any = None) -> Interrupt:
        """The first interrupt of the task with namespace ``ns``."""
        return cls(value, interrupt_id(ns, 0), response_schema=response_schema)

    def __hash__(self) -> int:
        return hash(self.id)

    @property
    def interrupt_id(self) -> str:
        """Deprecated (LangGraph 1.0): the same as ``id``."""
        warn_deprecated("`interrupt_id` is deprecated. Use `id` instead.",
                        LangGraphDeprecatedSinceV10)
        return self.id


@dataclass(frozen=True)
class GraphOutput:
    """What invoke(..., version="v2") returns: the output and the interrupts, apart."""

    value: Any  # the output: a dict, or the output schema's dataclass / pydantic instance
    interrupts: tuple = ()  # the Interrupts the run stopped at

    def __getitem__(self, key: str) -> Any:
        """Deprecated (LangGraph 1.1): v1's result["key"] / result["__interrupt__"]."""
        warn_deprecated(DICT_ACCESS.format("result[key]"), LangGraphDeprecatedSinceV11)
        if key == INTERRUPT:
            return self.interrupts
        if isinstance(self.value, dict):
            return self.value[key]
        try:
            return getattr(self.value, key)
        except AttributeError:
            raise KeyError(key) from None

    def __contains__(self, key: object) -> bool:
        """Deprecated (LangGraph 1.1): v1's "key" in result."""
        warn_deprecated(DICT_ACCESS.format("key in result"), LangGraphDeprecatedSinceV11)
        if key == INTERRUPT:
            return bool(self.interrupts)
        if isinstance(self.value, dict):
            return key in self.value
        return isinstance(key, str) and hasattr(self.value, key)


DICT_ACCESS = ("Accessing GraphOutput via `{}` is deprecated. Use `result.value` to access the "
               "output value directly, or `result.interrupts` for interrupts.")


def _default_retry_on(exc: BaseException) -> bool:
    """Retry what looks transient; programming errors fail at once (LangGraph's rule)."""
    if isinstance(exc, ConnectionError):
        return True
    status = getattr(getattr(exc, "response", None), "status_code", None)
    if isinstance(status, int):
        return 500 <= status < 600
    return not isinstance(exc, (ValueError, TypeError, ArithmeticError, ImportError, LookupError,
                                NameError, SyntaxError, RuntimeError, ReferenceError,
                                StopIteration, StopAsyncIteration, OSError))


@dataclass(frozen=True)
class TimeoutPolicy:
    """How long one attempt of an async node may run: in all, and without showing progress.

    Seconds (or timedeltas). Progress that refreshes ``idle_timeout``: ``runtime.heartbeat()``,
    and with ``refresh_on="auto"`` also custom stream output and @task calls. pregel/timeouts.py
    enforces it; a timed-out attempt raises NodeTimeoutError, which RetryPolicy retries.
    """

    run_timeout: float | timedelta | None = None  # wall clock; never refreshed
    idle_timeout: float | timedelta | None = None  # refreshed by progress
    refresh_on: Literal["auto", "heartbeat"] = "auto"  # "heartbeat": only heartbeat() refreshes

    @classmethod
    def coerce(cls, value: float | timedelta | TimeoutPolicy | None) -> TimeoutPolicy | None:
        """A policy in positive float seconds; a bare number is a run_timeout; None stays None."""
        if value is None:
            return None
        policy = value if isinstance(value, TimeoutPolicy) else cls(run_timeout=value)
        if policy.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run = positive_seconds(policy.run_timeout, "run_timeout")
        idle = positive_seconds(policy.idle_timeout, "idle_timeout")
        if run is None and idle is None:
            return None
        if all(v is None or type(v) is float for v in (policy.run_timeout, policy.idle_timeout)):
            return policy  # already in float seconds: the same instance
        return cls(run_timeout=run, idle_timeout=idle, refresh_on=policy.refresh_on)


def positive_seconds(value: float | timedelta | None, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, timedelta)):
        raise TypeError(f"{field} takes seconds (a number) or a timedelta, got {value!r}")
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{field} must be greater than 0")
    return seconds


class RetryPolicy(NamedTuple):
    """How to retry a failing node: exponential backoff with optional jitter."""

    initial_interval: float = 0.5  # seconds before the first retry
    backoff_factor: float = 2.0  # each wait is this many times the last
    max_interval: float = 128.0
    max_attempts: int = 3  # including the first try
    jitter: bool = True  # add up to 1 s of randomness so retries do not stampede
    retry_on: (type[BaseException] | Sequence[type[BaseException]]
               | Callable[[BaseException], bool]) = _default_retry_on


class StateUpdate(NamedTuple):
    """One update of bulk_update_state: values written as if node `as_node` returned them."""

    values: dict[str, Any] | None
    as_node: str | None = None
    task_id: str | None = None  # the task whose writes these are (default: the node's next)


def frozen(obj: Any, depth: int = 10) -> Any:
    """A hashable stand-in for a node input: dicts as sorted pairs, lists as tuples."""
    if isinstance(obj, Hashable) or depth <= 0:
        return obj
    if isinstance(obj, Mapping):  # key order must not change the cache key
        return tuple(sorted((k, frozen(v, depth - 1)) for k, v in obj.items()))
    if isinstance(obj, Sequence):
        return tuple(frozen(v, depth - 1) for v in obj)
    if hasattr(obj, "tobytes"):  # numpy arrays and the like
        return (type(obj).__name__, obj.tobytes(), getattr(obj, "shape", None))
    return obj


def default_cache_key(*args: Any, **kwargs: Any) -> bytes:
    """The input pickled (protocol 5) after freezing: LangGraph's default, so keys agree."""
    return pickle.dumps((frozen(args), frozen(kwargs)), protocol=5, fix_imports=False)


@dataclass
class CachePolicy:
    """Cache a node's writes by its input: the same input later reuses them (pregel/caching.py)."""

    key_func: Callable[..., str | bytes] = default_cache_key  # node input -> key (hashed)
    ttl: int | None = None  # seconds an entry lives; None: until the cache is cleared


@dataclass(frozen=True)
class TracePolicy:
    """What tracers record of a node's run: each processor maps the real input (or output) to
    the value recorded. The node, the other callbacks and the streams see the real one; a
    processor that raises records the real value (pregel/tracing.py)."""

    process_inputs: Callable[[Any], Any] | None = None
    process_outputs: Callable[[Any], Any] | None = None


def omit_payload(_value: Any) -> dict:
    """A TracePolicy processor that records nothing of the value (the run and its timing stay)."""
    return {}


class CacheKey(NamedTuple):
    """Where a task's writes are cached: (namespace, key) in the cache, and for how long."""

    ns: tuple[str, ...]  # ("__pregel_ns_writes", "module.function", node name)
    key: str  # xxh3-128 hex digest of key_func(input)
    ttl: int | None


class PregelTask(NamedTuple):
    """A task of the next step, as get_state reports it."""

    id: str
    name: str
    path: tuple
    error: Exception | None = None
    interrupts: tuple = ()
    state: Any = None  # a subgraph's config, or its StateSnapshot with subgraphs=True
    result: Any = None


class StateSnapshot(NamedTuple):
    """A thread's state at one checkpoint: values, what runs next, and how it came to be."""

    values: Any
    next: tuple[str, ...]
    config: RunnableConfig
    metadata: Any
    created_at: str | None
    parent_config: RunnableConfig | None
    tasks: tuple[PregelTask, ...]
    interrupts: tuple[Interrupt, ...] = ()


class GraphBubbleUp(Exception):
    """Base of what a task raises to carry something up to the loop, never a failure: an
    interrupt, a drain, a Command for the parent graph. Code that catches errors re-raises it."""


class GraphInterrupt(GraphBubbleUp):
    """What interrupt() raises: it carries the Interrupts out of the node to the loop, which
    stops the run; callers see them as ``__interrupt__``."""

    def __init__(self, interrupts=()):
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


# the task running in this thread or asyncio task (set by pregel/runner.py)
current_task: contextvars.ContextVar[Any] = contextvars.ContextVar("lgcheckpoint_task")


def interrupt(value: Any, *, response_schema: Any = None) -> Any:
    """Pause the graph and surface `value`; on resume, return the answer (checked against
    `response_schema` when it is a class: see response_schema.py)."""
    task = current_task.get(None)
    if task is None:
        raise RuntimeError("interrupt() can only be called inside a node of a running graph "
                           "(compiled with a checkpointer, so the graph can resume later)")
    adapter = validator(response_schema)
    pad = task.scratchpad
    idx = pad.interrupt_counter
    pad.interrupt_counter += 1
    # answered before: replay the answer, and remember all answers so far
    if idx < len(pad.resume):
        answer = checked(adapter, pad.resume[idx])  # an answer that does not fit is not saved
        task.writes.append((RESUME, pad.resume[: idx + 1]))
        return answer
    # answered just now by Command(resume=value)
    answer = pad.null_resume.pop() if pad.null_resume else None  # one answer, first asker
    if answer is not None:
        valid = checked(adapter, answer)
        pad.resume.append(answer)  # saved as given; validated again on every replay
        task.writes.append((RESUME, list(pad.resume)))
        return valid
    asked = Interrupt(value, interrupt_id(pad.ns, len(pad.resume)),
                      response_schema=shown(response_schema, adapter))
    raise GraphInterrupt((asked,))



@runtime_checkable
class PregelExecutableTask(Protocol):
    """What every task the loop runs has (LangGraph's name; ours is pregel/algo.py's Task)."""

    id: str
    name: str
    path: tuple  # where it comes from: (PULL, node), a Send, a @task call
    input: Any
    config: dict
    triggers: Sequence[str]
    writes: list  # what it wrote, as (channel, value)
