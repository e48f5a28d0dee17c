"""The functional API: @entrypoint turns a function into a one-node graph; @task calls are saved.

Same names as ``langgraph.func``. An entrypoint is a Pregel graph with three channels:
``__start__`` (the input), ``__end__`` (what the function returns) and ``__previous__`` (what it
saves for the next run on the thread, handed back as ``previous``). Each call of a @task
function inside it is a PUSH task of the same step (pregel/calls.py) whose result is saved as a
pending write ``__return__``: when the entrypoint runs again after an interrupt, finished calls
return their saved result instead of running again. Next: runtime.py.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Callable, Generic, Sequence, TypeVar, get_args, get_origin

from lgcheckpoint.cache.base import BaseCache, check_cache
from lgcheckpoint.channels import EphemeralValue, LastValue
from lgcheckpoint.checkpoint.serde.allowlist import collect_allowlist
from lgcheckpoint.constants import END, PREVIOUS, START
from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.pregel import Pregel
from lgcheckpoint.pregel.caching import call_namespace
from lgcheckpoint.pregel.calls import Call, submit
from lgcheckpoint.pregel.node import INJECTABLE, Node, Write, accepts
from lgcheckpoint.pregel.timeouts import sync_timeout_refused
from lgcheckpoint.pregel.validate import check_checkpointer
from lgcheckpoint.types import CachePolicy, RetryPolicy, TimeoutPolicy
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV05 as SinceV05
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10 as SinceV10
from lgcheckpoint.warnings import renamed_option

__all__ = ["entrypoint", "task"]

R, S = TypeVar("R"), TypeVar("S")


def as_policies(retry_policy: RetryPolicy | Sequence[RetryPolicy] | None) -> tuple:
    return (retry_policy,) if isinstance(retry_policy, RetryPolicy) else tuple(retry_policy or ())


def is_async(func: Callable) -> bool:
    """A coroutine function, or an object whose __call__ is one: what a timeout can cancel."""
    return any(inspect.iscoroutinefunction(f) for f in (func, getattr(func, "__call__", None)))


def check_policy(policy: Any, where: str) -> CachePolicy | None:
    if policy is not None and not isinstance(policy, CachePolicy):
        raise TypeError(f"{where}(cache_policy=...) takes a CachePolicy(key_func=..., ttl=...) "
                        f"(lgcheckpoint.types), got {policy!r}")
    return policy


class TaskFunction:
    """A @task function: calling it inside a running graph schedules it and returns a future."""

    def __init__(self, func: Callable, *, name: str | None,
                 retry_policy: Sequence[RetryPolicy], cache_policy: CachePolicy | None,
                 timeout: TimeoutPolicy | None = None) -> None:
        functools.update_wrapper(self, func)
        self.func, self.retry_policy, self.cache_policy = func, retry_policy, cache_policy
        inner = getattr(func, "func", func)  # a functools.partial is named after its function
        self.name = name or getattr(func, "__name__", None) or getattr(
            inner, "__name__", type(func).__name__)
        self.injects = tuple(n for n in INJECTABLE if accepts(func, n))
        if timeout is not None and not is_async(func):
            raise sync_timeout_refused(self.name, "Task")
        self.timeout = timeout  # each call's attempts (pregel/timeouts.py)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """A future (``.result()``) in sync code, an awaitable in async code."""
        injects = tuple(n for n in self.injects if n not in kwargs)
        return submit(Call(self.func, self.name, args, kwargs, self.retry_policy, injects,
                           self.cache_policy, self.timeout))

    def clear_cache(self, cache: BaseCache) -> None:
        """Forget this task's cached results (a task without a cache policy has none)."""
        if self.cache_policy is not None:
            cache.clear((call_namespace(self.func),))

    async def aclear_cache(self, cache: BaseCache) -> None:
        if self.cache_policy is not None:
            await cache.aclear((call_namespace(self.func),))


def task(__func_or_none__: Callable | None = None, *, name: str | None = None,
         retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
         cache_policy: CachePolicy | None = None,
         timeout: float | timedelta | TimeoutPolicy | None = None, **kwargs: Any) -> Any:
    """Decorate a function whose calls are saved: @task or @task(name=..., retry_policy=...)."""
    retry_policy = renamed_option(kwargs, "retry", "retry_policy", retry_policy, SinceV05)
    refuse_unimplemented("task", kwargs)
    check_policy(cache_policy, "task")
    timeout = TimeoutPolicy.coerce(timeout)  # a bad value fails at once, not at the first call

    def decorator(func: Callable) -> TaskFunction:
        return TaskFunction(func, name=name, retry_policy=as_policies(retry_policy),
                            cache_policy=cache_policy, timeout=timeout)

    return decorator(__func_or_none__) if __func_or_none__ is not None else decorator


class EntrypointNode(Node):
    """The entrypoint's one node: its return value goes to __end__, its saved value to
    __previous__ (they differ only for entrypoint.final)."""

    def result_writes(self, result: Any) -> list[Write]:
        if isinstance(result, entrypoint.final):
            return [(END, result.value), (PREVIOUS, result.save)]
        return [(END, result), (PREVIOUS, result)]


class EntrypointGraph(Pregel):
    """An entrypoint's graph: it also describes its input, output and context as JSON schema."""

    def get_input_jsonschema(self, config: dict | None = None) -> dict:
        return json_schema(self.channels[START].typ, "LangGraphInput")

    def get_output_jsonschema(self, config: dict | None = None) -> dict:
        return json_schema(self.channels[END].typ, "LangGraphOutput")

    def get_context_jsonschema(self) -> dict | None:
        return None if self.context_schema is None else json_schema(self.context_schema)


def json_schema(typ: Any, title: str | None = None) -> dict:
    """A type's JSON schema, through pydantic (a test dependency, imported only here)."""
    try:
        from pydantic import TypeAdapter
    except ImportError as exc:
        raise ImportError("JSON schemas need pydantic: pip install pydantic") from exc
    schema = TypeAdapter(typ).json_schema()
    return {**schema, "title": title} if title else schema


class entrypoint:  # noqa: N801 - LangGraph's name
    """Decorate a function taking one input into a graph: invoke, stream, get_state, resume."""

    @dataclass
    class final(Generic[R, S]):  # noqa: N801
        """Return ``value`` to the caller but save ``save`` as the next run's ``previous``."""

        value: R
        save: S

    def __init__(self, checkpointer: Any = None, store: Any = None,
                 cache: BaseCache | None = None, context_schema: Any = None,
                 cache_policy: CachePolicy | None = None,
                 retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 timeout: float | timedelta | TimeoutPolicy | None = None,
                 **kwargs: Any) -> None:
        context_schema = renamed_option(kwargs, "config_schema", "context_schema",
                                        context_schema, SinceV10)
        retry_policy = renamed_option(kwargs, "retry", "retry_policy", retry_policy, SinceV05)
        refuse_unimplemented("entrypoint", {"store": store, **kwargs})
        self.timeout = TimeoutPolicy.coerce(timeout)  # the function's attempts, not its tasks
        self.checkpointer = check_checkpointer(checkpointer)
        self.context_schema = context_schema
        self.cache = check_cache(cache, "entrypoint")
        self.cache_policy = check_policy(cache_policy, "entrypoint")
        self.retry_policy = as_policies(retry_policy)

    def __call__(self, func: Callable) -> Pregel:
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("Generators are not supported in the Functional API.")
        params = list(inspect.signature(func).parameters.values())
        if not params:
            raise ValueError("Entrypoint function must have at least one parameter")
        input_type, output_type, save_type = self.types(params[0], func)
        node = EntrypointNode(func.__name__, func, [START], START, frozenset(),
                              retry_policy=self.retry_policy, cache_policy=self.cache_policy,
                              timeout=self.timeout)
        graph = EntrypointGraph(
            nodes={node.name: node},
            channels={START: EphemeralValue(input_type, key=START),
                      END: LastValue(output_type, key=END),
                      PREVIOUS: LastValue(save_type, key=PREVIOUS)},
            checkpointer=self.allowlisted(self.checkpointer, input_type, output_type, save_type),
            input_channels=START, output_channels=END, stream_channels=END, stream_mode="updates",
            stream_eager=True, context_schema=self.context_schema,
            cache=self.allowlisted(self.cache, input_type, output_type, save_type))
        # task calls without their own retry or cache policy use the entrypoint's
        graph.retry_policy, graph.cache_policy = self.retry_policy, self.cache_policy
        return graph

    def types(self, first: inspect.Parameter, func: Callable) -> tuple[Any, Any, Any]:
        """Input, return and saved types, from the annotations (-> entrypoint.final[R, S])."""
        empty = inspect.Parameter.empty
        input_type = Any if first.annotation is empty else first.annotation
        returns = inspect.signature(func).return_annotation
        if returns is empty or returns is entrypoint.final:
            return input_type, Any, Any
        if get_origin(returns) is entrypoint.final:
            args = get_args(returns)
            if len(args) != 2:
                raise TypeError("Annotate both values of entrypoint.final: "
                                "-> entrypoint.final[ReturnType, SaveType]")
            return input_type, *args
        return input_type, returns, returns

    def allowlisted(self, saver: Any, *schemas: Any) -> Any:
        """Let the saver's (or cache's) serializer rebuild the annotated types (strict msgpack)."""
        if not hasattr(saver, "with_allowlist"):
            return saver
        allow = set().union(*(collect_allowlist(s) for s in (*schemas, self.context_schema)
                              if s is not None and s is not Any))
        return saver.with_allowlist(allow) if allow else saver
