"""How a state schema becomes channels: a TypedDict, dataclass or pydantic model, key by key.

graph.py asks this module what each key of a schema is (a channel with a reducer, a last value,
a managed value), how a node receives its state (a dict or an instance), which keys a node's
annotation says it reads, where its return annotation says it may go, and which of the schemas'
types the saver's serializer must be allowed to rebuild. End of the side trip from graph.py.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable, ClassVar, Literal, get_args, get_origin
from typing import NotRequired, Required, get_type_hints

from lgcheckpoint.channels import BinaryOperatorAggregate, Channel, DeltaChannel, LastValue
from lgcheckpoint.checkpoint.serde.jsonplus import collect_allowlist
from lgcheckpoint.constants import ROOT
from lgcheckpoint.managed import ManagedValueSpec, managed_value_of
from lgcheckpoint.types import Command


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


def inferred_input_schema(action: Callable) -> Any:
    """A node (or conditional edge) annotated `def f(state: Sub)` reads only Sub's keys, as in
    LangGraph."""
    try:
        fn = action if inspect.isfunction(action) or inspect.ismethod(action) else (
            action.__call__)
        first = next(iter(inspect.signature(fn).parameters))
        hint = get_type_hints(fn).get(first)
        return hint if isinstance(hint, type) and get_type_hints(hint) else None
    except Exception:
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


def allowlisted(checkpointer: Any, schemas: set[Any]) -> Any:
    """Let the saver's (or cache's) serializer rebuild the schemas' types (strict msgpack)."""
    if not hasattr(checkpointer, "with_allowlist"):
        return checkpointer
    allow = set().union(*(collect_allowlist(schema) for schema in schemas))
    return checkpointer.with_allowlist(allow) if allow else checkpointer


def typed(schema: Any, keys: Any, values: Any) -> Any:
    """values as an instance of a dataclass or pydantic schema (a single-value state: as is):
    what version="v2" streams for a StateGraph."""
    mapper = mapper_for(schema)
    if mapper is None or not isinstance(values, dict) or keys in (ROOT, [ROOT]):
        return values
    return mapper(values)
