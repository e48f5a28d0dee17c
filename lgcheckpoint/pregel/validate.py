"""Check a Pregel's wiring when it is built: every channel a node, input or output names exists.

A graph built by hand with the low-level API (builder.py) is checked as LangGraph checks it, so a
typo in a channel name fails at construction, not in the middle of a run.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver
from lgcheckpoint.constants import ERROR, INPUT, INTERRUPT, NO_WRITES, RESUME
from lgcheckpoint.pregel.timeouts import runs_async, sync_timeout_refused

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

# names the loop writes itself: neither a node nor a channel may take them
RESERVED_NAMES = frozenset((INPUT, INTERRUPT, RESUME, ERROR, NO_WRITES))


def as_list(names: str | Sequence[str] | None) -> list[str]:
    """One channel name, several, or none, as a list."""
    return [] if names is None else [names] if isinstance(names, str) else list(names)


def validate_graph(graph: Pregel) -> None:
    """Refuse reserved names and channels that do not exist; an unread input channel; a
    timeout on a sync node (a thread cannot be cancelled: pregel/timeouts.py)."""
    channels, nodes = graph.channels, graph.nodes
    for name, node in nodes.items():
        if node.timeout is not None and not (node.is_async or node.subgraph is not None
                                             or runs_async(node.func)):
            raise sync_timeout_refused(name, func=node.func)
    known = f"not in known channels: {sorted(channels)!r}"
    for kind, names in (("Channel", channels), ("Node", nodes)):
        for name in names:
            if name in RESERVED_NAMES:
                raise ValueError(f"{kind} name '{name}' is reserved: choose another name")
    subscribed = {chan for node in nodes.values() for chan in node.triggers}
    for name, node in nodes.items():
        for chan in as_list(node.reads):
            if chan not in channels and chan not in node.managed:
                raise ValueError(f"Node {name} reads channel '{chan}' {known}")
    inputs = as_list(graph.input_channels)
    for kind, names in (("Subscribed", sorted(subscribed)), ("Input", inputs)):
        for chan in names:
            if chan not in channels:
                raise ValueError(f"{kind} channel '{chan}' {known}")
    if inputs and subscribed.isdisjoint(inputs):
        raise ValueError(f"None of the input channels {graph.input_channels} is subscribed to "
                         "by any node: subscribe a node to one of them")
    for chan in as_list(graph.output_channels) + as_list(graph.stream_channels):
        if chan not in channels:
            raise ValueError(f"Output channel '{chan}' {known}")
    for names in (graph.interrupt_before_nodes, graph.interrupt_after_nodes):
        for name in [] if names == "*" else names:
            if name not in nodes:
                raise ValueError(f"Node {name} not in nodes: interrupt before/after one of "
                                 f"{sorted(nodes)}")


def check_checkpointer(checkpointer: Any) -> BaseCheckpointSaver | bool | None:
    """A saver, or None / True / False (none; a subgraph's per-thread or no state)."""
    if checkpointer is None or isinstance(checkpointer, (bool, BaseCheckpointSaver)):
        return checkpointer
    raise TypeError(f"Invalid checkpointer provided. Expected an instance of BaseCheckpointSaver "
                    f"(e.g. InMemorySaver()), True, False, or None. Received "
                    f"{type(checkpointer).__name__}.")
