"""A compiled node: which channels trigger it, what it reads, and which writes its result makes.

graph.py builds these from the StateGraph; algo.py schedules them; runner.py calls them.
The writes of one task come in LangGraph's order: state updates, Command gotos, static edges,
joins, then conditional edges. Next: channels/base.py (where a node's writes land).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Callable, Sequence

from lgcheckpoint.constants import BRANCH_TO, END, ROOT, START, TASKS
from lgcheckpoint.errors import InvalidUpdateError, NodeError, ParentCommand
from lgcheckpoint.pregel.detect import graphs_called
from lgcheckpoint.pregel.runnables import as_callable
from lgcheckpoint.types import (
    CachePolicy, Command, RetryPolicy, Send, TimeoutPolicy, update_as_tuples,
)

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

Write = tuple[str, Any]  # (channel, value)
# keyword arguments a node may declare; `error` only typed NodeError (an error handler's)
INJECTABLE = ("config", "writer", "previous", "runtime", "error")


def accepts(fn: Callable, name: str) -> bool:
    """Does the user's callable take a parameter with this name (config, writer, runtime)?"""
    try:
        param = inspect.signature(fn).parameters.get(name)
    except (TypeError, ValueError):
        return False
    if param is not None and name == "error":  # LangGraph injects it by its annotation too
        return param.annotation in (NodeError, "NodeError")
    return param is not None


@dataclass
class Branch:
    """A conditional edge: path(state) names the next node(s), optionally through path_map."""

    path: Callable
    path_map: dict[Any, str] | None
    reads: list[str]  # state keys the path function sees
    mapper: Callable | None  # dict -> schema object (dataclass / pydantic)
    managed: dict[str, Any] = field(default_factory=dict)  # managed values it sees (managed.py)
    # no schema of its own: a dict state also shows the keys the node returned (LangGraph)
    sees_update: bool = True

    def __post_init__(self) -> None:
        self.path = as_callable(self.path)  # a langchain Runnable: invoked (runnables.py)
        self.injects = ("config",) if accepts(self.path, "config") else ()

    def destinations(self, result: Any) -> list[str | Send]:
        """Map what path() returned to node names or Send packets; refuse nonsense."""
        dests = list(result) if isinstance(result, (list, tuple)) else [result]
        if self.path_map is not None:
            try:
                dests = [d if isinstance(d, Send) else self.path_map[d] for d in dests]
            except (KeyError, TypeError) as exc:
                raise KeyError(
                    f"Conditional edge returned {result!r}, which is not a key of its path_map "
                    f"{list(self.path_map)}"
                ) from exc
        if any(d is None or d == START for d in dests):
            raise ValueError("Branch did not return a valid destination")
        if any(isinstance(d, Send) and d.node == END for d in dests):
            raise InvalidUpdateError("Cannot send a packet to the END node")
        return dests


@dataclass
class Node:
    """Everything the loop needs to schedule and run one node."""

    name: str
    func: Callable | None  # None for START, which only forwards the input
    triggers: list[str]  # a newer version of any of these schedules the node
    reads: list[str] | str  # state keys read into the input (START reads its one channel)
    output_keys: frozenset[str]  # keys a returned dict may write
    mapper: Callable | None = None  # dict -> schema object, for dataclass / pydantic inputs
    edges: list[str] = field(default_factory=list)  # trigger channels of static successors
    joins: list[str] = field(default_factory=list)  # join channels to sign with our name
    branches: list[Branch] = field(default_factory=list)
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = ()  # made a tuple
    ends: tuple[str, ...] | dict = ()  # where a returned Command may go (for get_graph)
    subgraph: Pregel | None = None  # a compiled graph used as this node
    hidden: bool = False  # START: not streamed, never an interrupt target
    managed: dict[str, Any] = field(default_factory=dict)  # managed values read (managed.py)
    cache_policy: CachePolicy | None = None  # an input seen before is not run (pregel/caching.py)
    injects: tuple[str, ...] | None = None  # INJECTABLE names it declares (None: look them up)
    timeout: TimeoutPolicy | None = None  # for each attempt (async nodes only: pregel/timeouts.py)
    error_handler: str | None = None  # the node that runs if this one fails (handlers.py)
    trace_policy: Any = None  # a TracePolicy: what tracers record of its runs (tracing.py)

    def __post_init__(self) -> None:
        # a langchain Runnable: invoked with the task's config, as LangGraph does (runnables.py)
        self.func = as_callable(self.func)
        fn = self.func  # None (START) and a subgraph (not callable) accept nothing, are not async
        if self.injects is None:
            self.injects = tuple(name for name in INJECTABLE if accepts(fn, name))
        self.is_async = any(inspect.iscoroutinefunction(f)
                            for f in (fn, getattr(fn, "__call__", None)))
        self.timeout = TimeoutPolicy.coerce(self.timeout)  # a sync one is refused: validate.py
        # retry_policy= takes one RetryPolicy or several (the first that matches an error wins)
        one = isinstance(self.retry_policy, RetryPolicy)
        self.retry_policy = (self.retry_policy,) if one else tuple(self.retry_policy or ())

    def copy(self, update: dict) -> Node:
        """A copy with some fields replaced (LangGraph's PregelNode.copy)."""
        return replace(self, **update)

    @property
    def bound(self) -> Callable | None:
        """The node's function (LangGraph's PregelNode.bound)."""
        return self.func

    def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """Run the node's function alone, outside a run (LangGraph's PregelNode.invoke): an
        object with its own invoke (a prebuilt ToolNode) runs that; a function gets config=."""
        if hasattr(self.func, "invoke"):
            return self.func.invoke(input, config, **kwargs)
        if other := [name for name in self.injects if name != "config"]:
            raise TypeError(f"node '{self.name}' takes {other}, which only a run provides: "
                            "invoke the graph instead")
        return self.func(input, **({"config": config or {}} if self.injects else {}))

    @property
    def subgraphs(self) -> list:
        """The graphs this node runs: its subgraph, or those its function calls (detect.py)."""
        if self.subgraph is not None:
            return [self.subgraph]
        return graphs_called(self.func)

    @property
    def inner_graph(self) -> Pregel | None:
        """The graph this node runs that keeps state (one compiled with checkpointer=False
        keeps none)."""
        return next((g for g in self.subgraphs if g.checkpointer is not False), None)

    def update_writes(self, result: Any) -> list[Write]:
        """State updates in a node's return value: dict, Command, state object, or None."""
        if result is None:
            return []
        items: list[Any] = list(result) if isinstance(result, (list, tuple)) and any(
            isinstance(r, Command) for r in result) else [result]
        if self.output_keys == {ROOT}:  # a single-value state: each result is an update itself
            return [(ROOT, i.update if isinstance(i, Command) else i) for i in items
                    if not isinstance(i, (Command, Send)) or isinstance(i, Command) and (
                        i.update is not None and i.graph != Command.PARENT)]
        writes: list[Write] = []
        for item in items:
            if isinstance(item, Command):
                if item.graph != Command.PARENT:
                    writes.extend(update_as_tuples(item.update))
            elif isinstance(item, dict):
                writes.extend(item.items())
            elif isinstance(item, (str, bytes, int, float, list, tuple, set)) or (
                    not hasattr(type(item), "__annotations__")):  # a plain value, not a state
                raise InvalidUpdateError(
                    f"Expected dict, got {item!r}: the graph input must be a dict of state keys"
                    if self.hidden else f"Expected dict, got {item!r}: node '{self.name}' must "
                    "return a dict of state updates (or None, a Command, or a state object)")
            else:
                writes.extend(update_as_tuples(item))
        return [(k, v) for k, v in writes if k in self.output_keys]

    def control_writes(self, result: Any) -> list[Write]:
        """Where a returned Command (or Send) sends control next."""
        if isinstance(result, Send):
            return [(TASKS, result)]
        items = result if isinstance(result, (list, tuple)) else [result]
        commands = [item for item in items if isinstance(item, Command)]
        if parent := next((c for c in commands if c.graph == Command.PARENT), None):
            raise ParentCommand(parent)
        return [w for cmd in commands for w in branch_writes(goto_targets(cmd.goto))]

    def result_writes(self, result: Any) -> list[Write]:
        """Every write but conditional edges: updates, gotos, then edges and joins (always)."""
        static = [(chan, None) for chan in self.edges] + [(chan, self.name) for chan in self.joins]
        return [*self.update_writes(result), *self.control_writes(result), *static]


def goto_targets(goto: Any) -> list[str | Send]:
    """Command.goto as a list: a node name, a Send, or a list of them."""
    targets = [goto] if isinstance(goto, (str, Send)) else list(goto)
    for target in targets:
        if not isinstance(target, (str, Send)):
            raise TypeError(f"In Command.goto, expected Send/str, got {type(target).__name__}")
    return targets


def branch_writes(dests: list[str | Send]) -> list[Write]:
    """Turn destinations into trigger writes and Send packets (END writes nothing)."""
    return [(TASKS, d) if isinstance(d, Send) else (BRANCH_TO.format(d), None)
            for d in dests if d != END]
