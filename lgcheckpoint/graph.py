"""StateGraph: describe nodes and edges over a typed state, then compile() it into a Pregel graph.

Each state key becomes a channel (Annotated[T, reducer] -> BinaryOperatorAggregate, else
LastValue; how each kind of schema is read: state_schema.py). Each node gets a trigger channel
``branch:to:<node>``; an edge a -> b means "a writes branch:to:b when it finishes";
add_edge([a, b], c) adds a barrier ``join:a+b:c``. Next: pregel/node.py (what compile produces).
"""

from __future__ import annotations

from datetime import timedelta
from types import GenericAlias
from typing import Any, Callable, NamedTuple, Sequence

from lgcheckpoint.cache.base import check_cache
from lgcheckpoint.channels import (
    Channel, EphemeralValue, LastValue, LastValueAfterFinish, NamedBarrierValue,
    NamedBarrierValueAfterFinish,
)
from lgcheckpoint.constants import BRANCH_TO, END, ROOT, START
from lgcheckpoint import graph_checks as checks
from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.graph_shortcuts import GraphShortcuts
from lgcheckpoint.managed import ManagedValueSpec, is_managed_value
from lgcheckpoint.node_defaults import NodeDefaults, WithNodeDefaults
from lgcheckpoint.pregel import Pregel
from lgcheckpoint.pregel.handlers import HANDLER_PREFIX
from lgcheckpoint.pregel.node import Branch, Node
from lgcheckpoint.pregel.runnables import is_runnable, runnable_map
from lgcheckpoint.state_schema import (  # noqa: F401  (re-exported: their home was here)
    allowlisted, channel_for, declares_keys, inferred_input_schema, literal_targets, mapper_for,
    schema_channels, typed, unwrap_required,
)
from lgcheckpoint.types import CachePolicy, RetryPolicy, TimeoutPolicy, TracePolicy
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV05 as SinceV05
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10 as SinceV10
from lgcheckpoint.warnings import renamed_option

__all__ = ["StateGraph", "CompiledStateGraph", "START", "END"]


class NodeSpec(NamedTuple):
    """What add_node recorded, before compile turns it into a Node."""

    func: Callable
    input_schema: Any
    retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = ()  # as given (Node: a tuple)
    defer: bool = False
    ends: tuple[str, ...] | dict[str, str] = ()  # a dict: target -> label of the edge
    cache_policy: CachePolicy | None = None
    timeout: TimeoutPolicy | None = None  # per attempt; async nodes only (pregel/timeouts.py)
    error_handler: str | None = None  # the node that handles its errors (pregel/handlers.py)
    is_error_handler: bool = False  # a handler: node defaults never give it a handler of its own
    trace_policy: TracePolicy | None = None  # what tracers record of its runs (pregel/tracing.py)

    @property
    def runnable(self) -> NodeSpec:
        """LangGraph's name for what runs the node; here the spec itself: .func is the function."""
        return self


class BranchSpec(NamedTuple):
    path: Callable
    path_map: dict[Any, str] | None
    input_schema: Any = None  # `def route(state: Sub)`: it reads Sub's keys, not its node's


class StateGraph(GraphShortcuts, WithNodeDefaults):
    """A graph whose nodes read and update a shared, typed state (set_node_defaults():
    node_defaults.py; what a schema's keys are: state_schema.py; the checks: graph_checks.py;
    add_sequence, set_entry_point...: graph_shortcuts.py)."""

    __class_getitem__ = classmethod(GenericAlias)  # StateGraph[State, Context, Input, Output]

    def __init__(self, state_schema: Any, context_schema: Any = None, *,
                 input_schema: Any = None, output_schema: Any = None, **old: Any) -> None:
        """``old``: LangGraph's deprecated names input=, output=, config_schema= (warned)."""
        input_schema = renamed_option(old, "input", "input_schema", input_schema, SinceV05)
        output_schema = renamed_option(old, "output", "output_schema", output_schema, SinceV05)
        context_schema = renamed_option(old, "config_schema", "context_schema", context_schema,
                                        SinceV10)
        refuse_unimplemented("StateGraph", old)
        self.state_schema = state_schema
        self.context_schema = context_schema  # the type of invoke(..., context=...): runtime.py
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.channels: dict[str, Channel] = {}
        self.managed: dict[str, ManagedValueSpec] = {}  # keys computed per step (managed.py)
        self.schemas: dict[Any, list[str]] = {}
        self.nodes: dict[str, NodeSpec] = {}
        # plain sets, as in LangGraph: a node's edge writes follow set order (hash-dependent)
        self.edges: set[tuple[str, str]] = set()
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.branches: dict[str, dict[str, BranchSpec]] = {}
        self.node_defaults = NodeDefaults()
        self._add_schema(state_schema)
        for schema in (self.input_schema, self.output_schema):
            self._add_schema(schema, allow_managed=False)

    def _add_schema(self, schema: Any, allow_managed: bool = True) -> None:
        checks.schema_is_a_type(schema)
        if schema in self.schemas:
            return
        channels = schema_channels(schema)
        managed = {key: chan for key, chan in channels.items() if is_managed_value(chan)}
        if not allow_managed:
            checks.no_managed_keys(schema, managed)
        self.managed.update(managed)
        self.schemas[schema] = list(channels)
        for key, chan in channels.items():
            if key in managed:
                continue
            checks.state_key(key, channels)
            # a key declared twice keeps its reducer, wherever that was declared
            old = self.channels.get(key)
            if old is None or (isinstance(old, LastValue) and not isinstance(chan, LastValue)):
                self.channels[key] = chan

    def add_node(self, node: str | Callable, action: Callable | None = None, *,
                 retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                 input_schema: Any = None, defer: bool = False,
                 destinations: Sequence[str] | dict[str, str] | None = None,
                 cache_policy: CachePolicy | None = None,
                 timeout: float | timedelta | TimeoutPolicy | None = None,
                 error_handler: Callable | None = None, trace_policy: TracePolicy | None = None,
                 **options: Any) -> StateGraph:
        """Add a node: add_node("name", fn) or add_node(fn) (named after the function)."""
        retry_policy = renamed_option(options, "retry", "retry_policy", retry_policy, SinceV05)
        input_schema = renamed_option(options, "input", "input_schema", input_schema, SinceV05)
        refuse_unimplemented("add_node", options)
        timeout = TimeoutPolicy.coerce(timeout)  # a bad value fails here; a sync node at compile
        if not isinstance(node, str):
            node, action = node.get_name() if is_runnable(node) else getattr(
                node, "name", None) or getattr(node, "__name__", type(node).__name__), node
        if action is None:
            raise ValueError(f"add_node('{node}') needs a function: add_node('{node}', fn)")
        if isinstance(action, dict):  # {key: Runnable or function}, each run on the input
            action = runnable_map(action)
        checks.new_node(self.nodes, node, action)  # a callable, under a name free to take
        if input_schema is None and not isinstance(action, Pregel):
            input_schema = inferred_input_schema(action)
        if input_schema is not None:
            self._add_schema(input_schema)
        # where a returned Command may go; a dict also names each edge (for get_graph)
        ends = dict(destinations) if isinstance(destinations, dict) else (
            tuple(destinations or ()) or literal_targets(action, True) or ())
        schema = input_schema or self.state_schema  # the keys the node reads
        handler = None
        if error_handler is not None:  # a node of its own, reading what the failed node read
            handler = HANDLER_PREFIX + node  # a name no user node can take (names "__*" are ours)
            self.nodes[handler] = self._handler_spec(error_handler, schema)
        self.nodes[node] = NodeSpec(action, schema, retry_policy, defer, ends,
                                    cache_policy, timeout=timeout, error_handler=handler,
                                    trace_policy=trace_policy)
        return self

    def add_edge(self, start_key: str | list[str], end_key: str) -> StateGraph:
        """a -> b: b runs after a. [a, b] -> c: c runs once both a and b have run."""
        checks.edge_ends(start_key, end_key)
        if isinstance(start_key, str):
            self.edges.add((start_key, end_key))
            return self
        for node in [*start_key, end_key]:  # a join is checked now, a plain edge at compile
            if node not in self.nodes and node != END:
                raise ValueError(f"Need to add_node `{node}` first")
        self.waiting_edges.add((tuple(start_key), end_key))
        return self

    def add_conditional_edges(self, source: str, path: Callable,
                              path_map: dict[Any, str] | list[str] | None = None) -> StateGraph:
        """After `source`, run whatever path(state) returns (a name, a list, END or Sends)."""
        name = getattr(path, "name" if is_runnable(path) else "__name__", None) or "condition"
        if name == "<lambda>":
            name = "condition"
        branches = self.branches.setdefault(source, {})
        if name in branches:
            raise ValueError(f"Branch with name `{name}` already exists for node `{source}`")
        if isinstance(path_map, list):
            path_map = {p: p for p in path_map}
        elif path_map is None and (targets := literal_targets(path)):
            path_map = {t: t for t in targets}
        input_schema = inferred_input_schema(path)
        if input_schema is not None:
            self._add_schema(input_schema)
        branches[name] = BranchSpec(path, dict(path_map) if path_map is not None else None,
                                    input_schema)
        return self

    def validate(self, interrupt: Sequence[str] = ()) -> None:
        """Refuse graphs that cannot run, naming the culprit (graph_checks.py)."""
        checks.edges(self, interrupt)

    def compile(self, checkpointer: Any = None, *, interrupt_before: Any = None,
                interrupt_after: Any = None, name: str | None = None, cache: Any = None,
                **options: Any) -> CompiledStateGraph:
        """Check the graph and build the channels and nodes the Pregel loop runs."""
        debug = bool(options.pop("debug", False))  # print each run's updates and values
        refuse_unimplemented("compile", options)  # store=...
        interrupt_before, interrupt_after = interrupt_before or [], interrupt_after or []
        breakpoints = [names for names in (interrupt_before, interrupt_after) if names != "*"]
        self.validate([name for names in breakpoints for name in names])
        # the saver's (and cache's) serializer may rebuild the schemas' types
        schemas = {self.state_schema, self.input_schema, self.output_schema,
                   *(spec.input_schema for spec in self.nodes.values())}
        checkpointer = allowlisted(checkpointer, schemas)  # checked by Pregel()
        cache = allowlisted(check_cache(cache, "compile"), schemas)
        # Pregel() tells each channel its name and adds TASKS, Send's Topic (named_channels)
        channels: dict[str, Channel] = {**self.channels, START: EphemeralValue(self.input_schema)}
        nodes = {START: Node(START, None, [START], START, frozenset(
            k for k in self.schemas[self.input_schema] if k not in self.managed), hidden=True)}
        # a node may return a managed key: the write is saved, then ignored (as in LangGraph)
        every_key = frozenset(self.channels) | frozenset(self.managed)
        for key, spec in self._specs_with_defaults().items():
            trigger = BRANCH_TO.format(key)
            channels[trigger] = LastValueAfterFinish() if spec.defer else (
                EphemeralValue(guard=False))
            subgraph = spec.func if isinstance(spec.func, Pregel) else None
            reads, managed = self._reads(spec.input_schema)
            nodes[key] = Node(key, spec.func, [trigger], reads, every_key,
                              mapper_for(spec.input_schema), retry_policy=spec.retry_policy,
                              ends=spec.ends, subgraph=subgraph, managed=managed,
                              cache_policy=spec.cache_policy, timeout=spec.timeout,
                              error_handler=spec.error_handler,
                              trace_policy=spec.trace_policy)
        for start, end in self.edges:
            if end != END:
                nodes[start].edges.append(BRANCH_TO.format(end))
        for starts, end in self.waiting_edges:
            if end != END:
                chan_name = f"join:{'+'.join(starts)}:{end}"
                deferred = self.nodes[end].defer  # waits until nothing else is left to run
                barrier = NamedBarrierValueAfterFinish if deferred else NamedBarrierValue
                channels[chan_name] = barrier(str, set(starts))
                nodes[end].triggers.append(chan_name)
                for start in starts:
                    nodes[start].joins.append(chan_name)
        for start, branches in self.branches.items():
            node_schema = self.nodes[start].input_schema if start in self.nodes else (
                self.state_schema)
            for spec in branches.values():
                schema = spec.input_schema or node_schema
                reads, managed = self._reads(schema)
                nodes[start].branches.append(Branch(
                    spec.path, spec.path_map, reads, mapper_for(schema), managed,
                    sees_update=spec.input_schema is None))
        return CompiledStateGraph(
            builder=self, nodes=nodes, channels=channels, checkpointer=checkpointer,
            input_channels=START, output_channels=self._reads(self.output_schema)[0],
            stream_channels=self._reads(self.state_schema)[0] if ROOT in self.channels else list(
                self.channels), interrupt_before_nodes=interrupt_before,
            interrupt_after_nodes=interrupt_after, name=name or "LangGraph", cache=cache,
            stream_mode="updates", context_schema=self.context_schema, debug=debug)

    def _handler_spec(self, handler: Callable, schema: Any) -> NodeSpec:
        """An error handler is a node of its own, reading what the failed node read."""
        return NodeSpec(handler, schema, is_error_handler=True)

    def _reads(self, schema: Any) -> tuple[list[str] | str, dict[str, ManagedValueSpec]]:
        """A schema's keys to read (a single-value state's one channel by name, read as the
        value) and its managed values to compute (managed.py)."""
        keys = self.schemas[schema]
        if keys == [ROOT]:
            return ROOT, {}
        return ([k for k in keys if k not in self.managed],
                {k: self.managed[k] for k in keys if k in self.managed})


class CompiledStateGraph(Pregel):
    """A compiled StateGraph: run it with invoke/stream, inspect it with get_state."""

    def __init__(self, *, builder: StateGraph, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.builder = builder

    def typed_output(self, values: Any) -> Any:
        """version="v2": a dataclass or pydantic output schema gets an instance."""
        return typed(self.builder.output_schema, self.output_channels, values)

    def typed_state(self, values: Any) -> Any:
        """version="v2" checkpoints: a dataclass or pydantic state schema gets an instance."""
        return typed(self.builder.state_schema, self.stream_channels, values)
