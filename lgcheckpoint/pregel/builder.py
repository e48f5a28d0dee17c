"""The low-level API: build a node from channels, a function and writes, without a StateGraph.

    node = NodeBuilder().subscribe_only("a").do(lambda x: x + x).write_to("b")
    app = Pregel(nodes={"double": node}, channels={"a": EphemeralValue(str), "b": LastValue(str)},
                 input_channels="a", output_channels="b")
    app.invoke("foo")  # "foofoo"

A StateGraph compiles to the same loop with nodes that read state keys and return a dict of
updates (node.py); a ``PregelNode`` instead reads its channels as they are (one channel: its value;
several: a dict) and writes what its ``ChannelWriteEntry`` list says, the result passing through.
Next: pregel/validate.py (how Pregel checks such nodes when it is built).
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any, Callable, NamedTuple, Sequence

from lgcheckpoint.channels import Channel, Topic
from lgcheckpoint.constants import TASKS
from lgcheckpoint.errors import InvalidUpdateError
from lgcheckpoint.pregel.detect import graphs_called, is_graph
from lgcheckpoint.pregel.node import Node, Write, accepts
from lgcheckpoint.types import CachePolicy, RetryPolicy, Send, TimeoutPolicy

PASSTHROUGH = object()  # a write whose value is the node's result
SKIP_WRITE = object()  # a mapper returning this writes nothing


class ChannelWriteEntry(NamedTuple):
    """One write a node makes after it runs."""

    channel: str
    value: Any = PASSTHROUGH  # a fixed value, or PASSTHROUGH: the node's result
    skip_none: bool = False  # True: a None value writes nothing
    mapper: Callable | None = None  # result -> value written


class Chain:
    """Several do() steps run one after the other, each given the previous one's result."""

    def __init__(self, steps: list[Callable]) -> None:
        if any(inspect.iscoroutinefunction(s) or inspect.iscoroutinefunction(
                getattr(s, "__call__", None)) for s in steps):
            raise TypeError("lgcheckpoint does not chain async functions with do(...).do(...): "
                            "combine them in one async function and pass that to do()")
        self.steps = steps

    def __call__(self, value: Any, config: Any = None) -> Any:
        for step in self.steps:
            if not callable(step):  # a compiled graph: runs as a subgraph of the task
                value = step.invoke(value)
            else:
                value = step(value, config=config) if accepts(step, "config") else step(value)
        return value


@dataclass
class PregelNode(Node):
    """A node of the low-level API: reads channels as they are, writes through its entries."""

    writers: list[ChannelWriteEntry | Send] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def channels(self) -> list[str] | str:
        """LangGraph's name for what the node reads: one channel's name, or a list."""
        return self.reads

    @property
    def bound(self) -> Any:
        """LangGraph's name for what the node runs (None: its input passes through)."""
        return self.subgraph if self.subgraph is not None else self.func

    @property
    def subgraphs(self) -> list:
        """The graphs this node runs: its subgraph, or those its do() steps run or call."""
        if not isinstance(self.func, Chain):
            return super().subgraphs
        return [g for step in self.func.steps
                for g in ([step] if is_graph(step) else graphs_called(step))]

    def result_writes(self, result: Any) -> list[Write]:
        """The writes of every entry, in the order they were declared, the node's result
        passing through (update_state writes so too)."""
        if any(isinstance(e, ChannelWriteEntry) and e.channel == TASKS for e in self.writers):
            raise InvalidUpdateError("Cannot write to the reserved channel TASKS")
        writes: list[Write] = []
        for entry in self.writers:
            if isinstance(entry, Send):
                writes.append((TASKS, entry))
                continue
            value = result if entry.value is PASSTHROUGH else entry.value
            if entry.mapper is not None:
                value = entry.mapper(value)
            if value is SKIP_WRITE or (entry.skip_none and value is None):
                continue
            writes.append((entry.channel, value))
        return writes

    def named(self, name: str) -> PregelNode:
        """This node as it runs in one graph under one name (a builder may serve many)."""
        return replace(self, name=name, triggers=list(self.triggers))


class NodeBuilder:
    """Describe a low-level node step by step; Pregel(nodes=...) calls build()."""

    def __init__(self) -> None:
        self._channels: list[str] | str = []  # what the node reads
        self._triggers: list[str] = []  # a new value in any of these runs it
        self._steps: list[Callable] = []
        self._writes: list[ChannelWriteEntry | Send] = []
        self._tags: list[str] = []
        self._metadata: dict[str, Any] = {}
        self._retry_policy: list = []
        self._cache_policy: CachePolicy | None = None
        self._timeout: TimeoutPolicy | None = None  # pregel/timeouts.py

    def subscribe_only(self, channel: str) -> NodeBuilder:
        """Run on a new value of this one channel; the node's input is that value itself."""
        if self._channels:
            raise ValueError("Cannot subscribe to single channels when other channels are "
                             "already subscribed to: use subscribe_to(...) for several")
        self._channels = channel
        self._triggers.append(channel)
        return self

    def subscribe_to(self, *channels: str, read: bool = True) -> NodeBuilder:
        """Run on a new value of any of these; the input is a dict of them (read=False: not)."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot subscribe to channels when subscribed to a single channel")
        if read:
            self._channels.extend(channels)
        self._triggers.extend(channels)
        return self

    def read_from(self, *channels: str) -> NodeBuilder:
        """Also read these channels into the input dict, without running on their changes."""
        if isinstance(self._channels, str):
            raise ValueError("Cannot read additional channels when subscribed to a single "
                             "channel: use subscribe_to(...) to get a dict input")
        self._channels.extend(channels)
        return self

    def do(self, fn: Any) -> NodeBuilder:
        """What the node runs: a function, or a compiled graph; several run in a chain."""
        if not callable(fn) and not hasattr(fn, "invoke"):
            raise TypeError(f"do() expects a function or a compiled graph, got {fn!r}")
        self._steps.append(fn)
        return self

    def write_to(self, *channels: str | ChannelWriteEntry, **kwargs: Any) -> NodeBuilder:
        """Write the result to these channels; name=value writes a value, name=fn fn(result)."""
        self._writes.extend(ChannelWriteEntry(c) if isinstance(c, str) else c for c in channels)
        self._writes.extend(ChannelWriteEntry(k, mapper=v) if callable(v) else
                            ChannelWriteEntry(k, value=v) for k, v in kwargs.items())
        return self

    def meta(self, *tags: str, **metadata: Any) -> NodeBuilder:
        """Tags and metadata kept on the node: get_graph and stream_mode="tasks" show them."""
        self._tags.extend(tags)
        self._metadata.update(metadata)
        return self

    def add_retry_policies(self, *policies: RetryPolicy) -> NodeBuilder:
        """Retry a failed run of the node (the first policy that matches the error decides)."""
        self._retry_policy.extend(policies)
        return self

    def add_cache_policy(self, policy: CachePolicy) -> NodeBuilder:
        """Reuse the node's writes for an input seen before (with Pregel(cache=...))."""
        self._cache_policy = policy
        return self

    def set_timeout(self, timeout: float | timedelta | TimeoutPolicy | None) -> NodeBuilder:
        """Limit each attempt (async functions only; a number is a run_timeout in seconds)."""
        self._timeout = TimeoutPolicy.coerce(timeout)
        return self

    def build(self) -> PregelNode:
        """The node, unnamed until a Pregel takes it under a name."""
        steps = self._steps
        subgraph = steps[0] if len(steps) == 1 and is_graph(steps[0]) else None
        func = None if subgraph is not None or not steps else (
            steps[0] if len(steps) == 1 else Chain(steps))
        reads = self._channels if isinstance(self._channels, str) else list(self._channels)
        return PregelNode("", func, list(self._triggers), reads, frozenset(), subgraph=subgraph,
                          retry_policy=self._retry_policy, cache_policy=self._cache_policy,
                          timeout=self._timeout, writers=list(self._writes),
                          tags=list(self._tags), metadata=dict(self._metadata))


def compile_nodes(nodes: dict, retry_policy: Sequence[RetryPolicy], cache_policy: CachePolicy | None
                  ) -> dict:
    """Pregel(nodes=...): build NodeBuilders, name each low-level node, give it the graph's
    policies if it has none (a StateGraph's nodes come compiled and named)."""
    compiled = {}
    for name, node in nodes.items():
        if isinstance(node, NodeBuilder):
            node = node.build()
        if isinstance(node, PregelNode):
            node = node.named(name)
            node.retry_policy = node.retry_policy or tuple(retry_policy)
            node.cache_policy = node.cache_policy or cache_policy
        elif not isinstance(node, Node):
            raise TypeError(f"Invalid node type {type(node).__name__} for node '{name}': "
                            "expected a NodeBuilder or a PregelNode (NodeBuilder().build())")
        compiled[name] = node
    return compiled


def named_channels(channels: dict) -> dict:
    """The graph's channels, each told its name (for errors), with the Send packets' Topic."""
    if TASKS in channels and not isinstance(channels[TASKS], Topic):
        raise ValueError(f"Channel '{TASKS}' is reserved and cannot be used in the graph")
    channels = {**channels}
    for name, channel in channels.items():
        if isinstance(channel, Channel) and not channel.key:
            channel.key = name
    channels.setdefault(TASKS, Topic(accumulate=False, key=TASKS))
    return channels
