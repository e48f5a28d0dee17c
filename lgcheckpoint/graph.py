"""StateGraph: describe nodes and edges over a typed state, then compile() it into a Pregel graph.

Each state key becomes a channel (Annotated[T, reducer] -> BinaryOperatorAggregate, else
LastValue). Each node gets a trigger channel ``branch:to:<node>``; an edge a -> b means "a writes
branch:to:b when it finishes"; add_edge([a, b], c) adds a barrier ``join:a+b:c``.
Next: pregel/node.py (what compile produces).
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from datetime import timedelta
from types import GenericAlias
from typing import Any, Callable, ClassVar, Literal, NamedTuple, Sequence, get_args, get_origin
from typing import NotRequired, Required, get_type_hints

from lgcheckpoint.cache.base import check_cache
from lgcheckpoint.channels import (
    BinaryOperatorAggregate, Channel, DeltaChannel, EphemeralValue, LastValue,
    LastValueAfterFinish, NamedBarrierValue, NamedBarrierValueAfterFinish,
)
from lgcheckpoint.checkpoint.serde.jsonplus import collect_allowlist
from lgcheckpoint.constants import BRANCH_TO, END, NS_END, NS_SEP, RESERVED, ROOT, START
from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.managed import ManagedValueSpec, is_managed_value, managed_value_of
from lgcheckpoint.pregel import Pregel
from lgcheckpoint.pregel.handlers import DEFAULT_HANDLER, HANDLER_PREFIX
from lgcheckpoint.pregel.node import Branch, Node
from lgcheckpoint.types import CachePolicy, Command, RetryPolicy, TimeoutPolicy
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV05 as SinceV05
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10 as SinceV10
from lgcheckpoint.warnings import renamed_option

__all__ = ["StateGraph", "CompiledStateGraph", "START", "END"]


def schema_channels(schema: Any) -> dict[str, Channel | ManagedValueSpec]:
    """One channel (or managed value) per annotated key of a TypedDict, dataclass or pydantic
    model; a type without keys (int, list, Annotated[list, add]) is a state of one value, channel
    __root__."""
    if not isinstance(schema, type) or schema.__module__ == "builtins":
        return {ROOT: channel_for(ROOT, schema)}
    try:
        hints = get_type_hints(schema, include_extras=True)
    except TypeError:
        hints = {}
    if not hints and not declares_keys(schema):
        raise ValueError(
            f"State schema {schema!r} has no annotated keys: use a TypedDict, dataclass or "
            "pydantic model with one annotated field per state key")
    fields = getattr(schema, "model_fields", None)  # pydantic: only real fields
    return {name: managed_value_of(typ) or channel_for(name, typ) for name, typ in hints.items()
            if get_origin(typ) is not ClassVar and name != "__slots__"
            and (fields is None or name in fields)}


def declares_keys(schema: type) -> bool:
    """A TypedDict, dataclass or pydantic model: its keys are declared, even if there are none."""
    typed_dict = hasattr(schema, "__required_keys__")  # typing's or typing_extensions' TypedDict
    return typed_dict or dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields")


def channel_for(name: str, typ: Any) -> Channel:
    """Annotated[T, reducer] folds writes with the reducer; anything else keeps the last value."""
    typ = unwrap_required(typ)  # Required[Annotated[dict, or_]]: the wrapper only marks the key
    for meta in reversed(getattr(typ, "__metadata__", ())):
        if isinstance(meta, Channel) or isinstance(meta, type) and issubclass(meta, Channel):
            # Annotated[T, Topic(T)] or Annotated[T, Topic]: a fresh channel per graph
            chan = meta.copy() if isinstance(meta, Channel) else meta(typ.__origin__)
            if isinstance(meta, DeltaChannel):  # its empty value comes from the key's type
                chan = meta.for_type(unwrap_required(typ.__origin__))
            chan.key = name
            return chan
    meta = getattr(typ, "__metadata__", ())
    if meta and callable(meta[-1]):
        params = [p for p in inspect.signature(meta[-1]).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) != 2:
            raise ValueError(f"Invalid reducer for key '{name}': expected (a, b) -> c")
        return BinaryOperatorAggregate(typ.__origin__, meta[-1], key=name)
    return LastValue(typ, key=name)


def unwrap_required(typ: Any) -> Any:
    """NotRequired[list] -> list (a TypedDict key's type as its channel sees it)."""
    return typ.__args__[0] if get_origin(typ) in (Required, NotRequired) else typ


def mapper_for(schema: Any) -> Callable | None:
    """Nodes with a dataclass or pydantic state get an instance, not a dict."""
    if dataclasses.is_dataclass(schema) or hasattr(schema, "model_fields"):
        return lambda values: schema(**values)
    return None


def literal_targets(fn: Callable, command_only: bool = False) -> tuple[str, ...] | None:
    """Destinations declared by a return annotation: Literal["a", "b"] or Command[Literal[...]]."""
    try:
        rtn = get_type_hints(getattr(fn, "__call__", fn) if not inspect.isfunction(fn) else fn
                             ).get("return")
    except Exception:
        return None
    if command_only:
        candidates = get_args(rtn) if get_origin(rtn) not in (None, Command) else (rtn,)
        rtn = next((get_args(c)[0] for c in candidates if get_origin(c) is Command), None)
    return get_args(rtn) if get_origin(rtn) is Literal else None


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

    @property
    def runnable(self) -> NodeSpec:
        """LangGraph's name for what runs the node; here the spec itself: .func is the function."""
        return self


@dataclasses.dataclass
class NodeDefaults:
    """set_node_defaults(): what a node gets at compile time when add_node did not say."""

    retry_policy: RetryPolicy | Sequence[RetryPolicy] = ()  # every node, error handlers too
    cache_policy: CachePolicy | None = None  # regular nodes only: a handler's input varies
    error_handler: Callable | None = None  # regular nodes only: handlers never catch handlers
    timeout: TimeoutPolicy | None = None  # every node: a stuck handler is stopped the same way


class BranchSpec(NamedTuple):
    path: Callable
    path_map: dict[Any, str] | None
    input_schema: Any = None  # `def route(state: Sub)`: it reads Sub's keys, not its node's


class StateGraph:
    """A graph whose nodes read and update a shared, typed state."""

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
        if not isinstance(schema, type) and not get_args(schema):  # a value, not a type
            problem = (f"Invalid state_schema: {schema!r}. Expected a type or Annotated[type, "
                       "reducer]: pass the class (a TypedDict, dataclass or pydantic model)")
            if getattr(type(schema), "__hash__", None) is None:  # LangGraph fails here, too
                raise TypeError(problem)
            warnings.warn(problem, UserWarning, stacklevel=3)  # LangGraph warns and goes on
        if schema in self.schemas:
            return
        channels = schema_channels(schema)
        managed = {key: chan for key, chan in channels.items() if is_managed_value(chan)}
        if managed and not allow_managed:
            raise ValueError(
                f"Invalid managed channels detected in {getattr(schema, '__name__', schema)}: "
                f"{', '.join(managed)}. Managed channels are not permitted in Input/Output schema.")
        self.managed.update(managed)
        self.schemas[schema] = list(channels)
        for key, chan in channels.items():
            if key in managed:
                continue
            if key in RESERVED or key.startswith(("branch:", "join:")) or (
                    key == ROOT and list(channels) != [ROOT]):
                raise ValueError(f"State key '{key}' is reserved by the runtime; rename it")
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
                 error_handler: Callable | None = None, **options: Any) -> StateGraph:
        """Add a node: add_node("name", fn) or add_node(fn) (named after the function)."""
        retry_policy = renamed_option(options, "retry", "retry_policy", retry_policy, SinceV05)
        input_schema = renamed_option(options, "input", "input_schema", input_schema, SinceV05)
        refuse_unimplemented("add_node", options)
        timeout = TimeoutPolicy.coerce(timeout)  # a bad value fails here; a sync node at compile
        if not isinstance(node, str):
            node, action = getattr(node, "name", None) or getattr(
                node, "__name__", type(node).__name__), node
        if action is None:
            raise ValueError(f"add_node('{node}') needs a function: add_node('{node}', fn)")
        if not callable(action) and not isinstance(action, Pregel):  # e.g. a langchain Runnable
            raise TypeError(f"add_node('{node}', ...) got a {type(action).__name__}, which is not "
                            "callable: nodes are plain functions here (langchain Runnables are out "
                            f"of scope); pass a function, e.g. add_node('{node}', runnable.invoke)")
        if node in self.nodes:
            raise ValueError(f"Node `{node}` already present.")
        if node in RESERVED or node.startswith("__"):  # START and END among them
            raise ValueError(f"Node name `{node}` is reserved by the runtime; pick another name")
        if NS_SEP in node or NS_END in node:
            raise ValueError(f"'{NS_SEP}' and '{NS_END}' are reserved characters, not allowed in "
                             f"node names: rename `{node}`")
        if input_schema is None and not isinstance(action, Pregel):
            input_schema = self._inferred_input_schema(action)
        if input_schema is not None:
            self._add_schema(input_schema)
        # where a returned Command may go; a dict also names each edge (for get_graph)
        ends = dict(destinations) if isinstance(destinations, dict) else (
            tuple(destinations or ()) or literal_targets(action, True) or ())
        schema = input_schema or self.state_schema  # the keys the node reads
        handler = None
        if error_handler is not None:  # a node of its own, reading what the failed node read
            handler = HANDLER_PREFIX + node  # a name no user node can take (names "__*" are ours)
            self.nodes[handler] = NodeSpec(error_handler, schema, is_error_handler=True)
        self.nodes[node] = NodeSpec(action, schema, retry_policy, defer, ends,
                                    cache_policy, timeout=timeout, error_handler=handler)
        return self

    def set_node_defaults(self, *, retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
                          cache_policy: CachePolicy | None = None,
                          error_handler: Callable | None = None,
                          timeout: float | timedelta | TimeoutPolicy | None = None,
                          **options: Any) -> StateGraph:
        """Policies for every node that add_node left without one, applied at compile time.
        retry_policy and timeout apply to error handlers too; cache_policy and error_handler
        do not."""
        refuse_unimplemented("set_node_defaults", options)
        defaults = self.node_defaults
        if retry_policy is not None:
            defaults.retry_policy = retry_policy
        if cache_policy is not None:
            defaults.cache_policy = cache_policy
        if error_handler is not None:
            defaults.error_handler = error_handler
        if timeout is not None:
            defaults.timeout = TimeoutPolicy.coerce(timeout)
        return self

    def _specs_with_defaults(self) -> dict[str, NodeSpec]:
        """The node specs compile builds: set_node_defaults filled in, per-node values winning."""
        specs, defaults = dict(self.nodes), self.node_defaults
        handler = None
        if defaults.error_handler is not None:
            handler = DEFAULT_HANDLER
            specs[handler] = NodeSpec(defaults.error_handler, self.state_schema,
                                      is_error_handler=True)
        for name, spec in specs.items():
            regular = not spec.is_error_handler
            specs[name] = spec._replace(
                retry_policy=spec.retry_policy or defaults.retry_policy,
                cache_policy=spec.cache_policy or (defaults.cache_policy if regular else None),
                error_handler=spec.error_handler or (handler if regular else None),
                timeout=spec.timeout or defaults.timeout)
        return specs

    def _inferred_input_schema(self, action: Callable) -> Any:
        """A node (or conditional edge) annotated `def f(state: Sub)` reads only Sub's keys, as
        in LangGraph."""
        try:
            fn = action if inspect.isfunction(action) or inspect.ismethod(action) else (
                action.__call__)
            first = next(iter(inspect.signature(fn).parameters))
            hint = get_type_hints(fn).get(first)
            return hint if isinstance(hint, type) and get_type_hints(hint) else None
        except Exception:
            return None

    def add_edge(self, start_key: str | list[str], end_key: str) -> StateGraph:
        """a -> b: b runs after a. [a, b] -> c: c runs once both a and b have run."""
        if END in ([start_key] if isinstance(start_key, str) else start_key):
            raise ValueError("END cannot be a start node")
        if end_key == START:
            raise ValueError("START cannot be an end node")
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
        name = getattr(path, "__name__", None) or "condition"
        if name == "<lambda>":
            name = "condition"
        branches = self.branches.setdefault(source, {})
        if name in branches:
            raise ValueError(f"Branch with name `{name}` already exists for node `{source}`")
        if isinstance(path_map, list):
            path_map = {p: p for p in path_map}
        elif path_map is None and (targets := literal_targets(path)):
            path_map = {t: t for t in targets}
        input_schema = self._inferred_input_schema(path)
        if input_schema is not None:
            self._add_schema(input_schema)
        branches[name] = BranchSpec(path, dict(path_map) if path_map is not None else None,
                                    input_schema)
        return self

    def add_sequence(self, nodes: Sequence[Callable | tuple[str, Callable]]) -> StateGraph:
        """Add nodes chained by edges, in order."""
        if not nodes:
            raise ValueError("Sequence requires at least one node.")
        previous = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (getattr(item, "__name__", None), item)
            self.add_node(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable, path_map: Any = None) -> StateGraph:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph:
        return self.add_edge(key, END)

    def validate(self, interrupt: Sequence[str] = ()) -> None:
        """Refuse graphs that cannot run, naming the culprit."""
        # a join's nodes were checked by add_edge; plain edges and branches are checked here
        sources = {s for s, _ in self.edges} | set(self.branches)
        for source in sources:
            if source not in self.nodes and source != START:
                raise ValueError(f"Found edge starting at unknown node '{source}'")
        if START not in sources:
            raise ValueError("Graph must have an entrypoint: add at least one edge from START "
                             "to another node (add_edge(START, 'first_node'))")
        targets = {t for _, t in self.edges}
        targets |= {t for spec in self.nodes.values() for t in spec.ends}  # Command destinations
        for start, branches in self.branches.items():
            for cond, branch in branches.items():
                for end in (branch.path_map or {}).values():
                    if end not in self.nodes and end != END:
                        raise ValueError(
                            f"At '{start}' node, '{cond}' branch found unknown target '{end}'")
        for target in targets:
            if target not in self.nodes and target != END:
                raise ValueError(f"Found edge ending at unknown node `{target}`")
        for node in interrupt:
            if node not in self.nodes:
                raise ValueError(f"Interrupt node `{node}` not found")

    def compile(self, checkpointer: Any = None, *, interrupt_before: Any = None,
                interrupt_after: Any = None, name: str | None = None, cache: Any = None,
                **options: Any) -> CompiledStateGraph:
        """Check the graph and build the channels and nodes the Pregel loop runs."""
        debug = bool(options.pop("debug", False))  # print each run's updates and values
        refuse_unimplemented("compile", options)  # store=...
        interrupt_before, interrupt_after = interrupt_before or [], interrupt_after or []
        breakpoints = [names for names in (interrupt_before, interrupt_after) if names != "*"]
        self.validate([name for names in breakpoints for name in names])
        checkpointer = self._allowlisted(checkpointer)  # checked by Pregel()
        cache = self._allowlisted(check_cache(cache, "compile"))
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
                              error_handler=spec.error_handler)
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

    def _reads(self, schema: Any) -> tuple[list[str] | str, dict[str, ManagedValueSpec]]:
        """A schema's keys to read (a single-value state's one channel by name, read as the
        value) and its managed values to compute (managed.py)."""
        keys = self.schemas[schema]
        if keys == [ROOT]:
            return ROOT, {}
        return ([k for k in keys if k not in self.managed],
                {k: self.managed[k] for k in keys if k in self.managed})

    def _allowlisted(self, checkpointer: Any) -> Any:
        """Let the saver's (or cache's) serializer rebuild the schemas' types (strict msgpack)."""
        if not hasattr(checkpointer, "with_allowlist"):
            return checkpointer
        schemas = {self.state_schema, self.input_schema, self.output_schema,
                   *(spec.input_schema for spec in self.nodes.values())}
        allow = set().union(*(collect_allowlist(schema) for schema in schemas))
        return checkpointer.with_allowlist(allow) if allow else checkpointer


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


def typed(schema: Any, keys: Any, values: Any) -> Any:
    """values as an instance of a dataclass or pydantic schema (a single-value state: as is)."""
    mapper = mapper_for(schema)
    if mapper is None or not isinstance(values, dict) or keys in (ROOT, [ROOT]):
        return values
    return mapper(values)
