"""Asking a compiled graph about itself: its schemas as JSON Schema, its subgraphs; copies of it.

Pregel inherits ``Introspection`` (get_graph, get_input_jsonschema, get_subgraphs, with_config,
copy, batch), whose methods call the functions here, with LangGraph's semantics. JSON Schema
comes from pydantic (as in LangGraph), imported only when asked.
Next: pregel/draw.py.
"""

from __future__ import annotations

import asyncio
import copy as copying
import dataclasses
from typing import TYPE_CHECKING, Annotated, Any, AsyncIterator, Iterator, Sequence, get_args
from typing import get_origin

from lgcheckpoint.constants import CONF, NS_SEP, ROOT
from lgcheckpoint.errors import refuse_unimplemented
from lgcheckpoint.pregel import draw
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel
    from lgcheckpoint.pregel.draw import Graph


def pydantic() -> Any:
    try:
        import pydantic as found
    except ImportError:  # pragma: no cover - pydantic is there wherever LangGraph is
        raise ImportError("JSON Schema of a graph's state needs pydantic: pip install pydantic")
    return found


def json_schema(graph: Pregel, typ: Any, suffix: str) -> dict:
    """A state schema as JSON Schema: a pydantic model's or TypedDict's own, else one field per
    channel (the type a write may have), in a model named after the graph ("LangGraphInput")."""
    pd = pydantic()
    if isinstance(typ, type) and issubclass(typ, pd.BaseModel):
        return typ.model_json_schema()
    if hasattr(typ, "__required_keys__"):  # a TypedDict
        return pd.TypeAdapter(typ).json_schema()
    channels, keys = graph.builder.channels, graph.builder.schemas[typ]  # the schema's keys
    if keys == [ROOT]:
        root = channels[ROOT].UpdateType
        return pd.create_model(graph.name + suffix, __base__=pd.RootModel[root],
                               root=(root, None)).model_json_schema()
    fields = {k: (channels[k].UpdateType, field_default(k, channels[k].UpdateType, typ))
              for k in keys if k in channels}
    return pd.create_model(graph.name + suffix, **fields).model_json_schema()


def field_default(name: str, typ: Any, schema: Any) -> Any:
    """Required (...) unless the dataclass gives a default or the type admits None."""
    if dataclasses.is_dataclass(schema):
        for f in dataclasses.fields(schema):
            if f.name == name and f.default is not dataclasses.MISSING:
                return f.default
            if f.name == name and f.default_factory is not dataclasses.MISSING:
                return f.default_factory()
    if get_origin(typ) is Annotated:  # Annotated[str | None, "note"]: look inside
        typ = get_args(typ)[0]
    optional = get_origin(typ) is not None and type(None) in get_args(typ)
    return None if optional else ...


def channels_model(graph: Pregel, keys: str | list[str], suffix: str) -> Any:
    """A low-level graph's input or output as a pydantic model: one channel's type, or a field
    per channel (None by default); the input takes the type a write has, the output a read's."""
    if getattr(graph, "builder", None) is not None:
        raise AttributeError(f"a compiled StateGraph has no {suffix.lower()}_schema model "
                             f"here: use builder.{suffix.lower()}_schema or "
                             f"get_{suffix.lower()}_jsonschema()")
    pd = pydantic()
    typ = (lambda k: graph.channels[k].UpdateType) if suffix == "Input" else (
        lambda k: graph.channels[k].ValueType)
    if isinstance(keys, str):
        return pd.create_model(graph.name + suffix, __base__=pd.RootModel[typ(keys)])
    return pd.create_model(graph.name + suffix, **{k: (typ(k), None) for k in keys})


def input_jsonschema(graph: Pregel) -> dict:
    if getattr(graph, "builder", None) is None:
        return channels_model(graph, graph.input_channels, "Input").model_json_schema()
    return json_schema(graph, graph.builder.input_schema, "Input")


def output_jsonschema(graph: Pregel) -> dict:
    if getattr(graph, "builder", None) is None:
        return channels_model(graph, graph.output_channels, "Output").model_json_schema()
    return json_schema(graph, graph.builder.output_schema, "Output")


def context_jsonschema(graph: Pregel) -> dict | None:
    """The context schema's JSON Schema; None without one."""
    schema = getattr(graph, "context_schema", None)
    if schema is None:
        return None
    pd = pydantic()
    if isinstance(schema, type) and issubclass(schema, pd.BaseModel):
        return schema.model_json_schema()
    if hasattr(schema, "__required_keys__") or dataclasses.is_dataclass(schema):
        return pd.TypeAdapter(schema).json_schema()
    raise ValueError(f"Invalid context schema {schema!r}: use a pydantic model, TypedDict or "
                     "dataclass")


def config_model(graph: Pregel) -> Any:
    """LangGraph's deprecated config_schema(): a pydantic model whose one field,
    "configurable", has the context schema's type (no field without a context schema)."""
    fields = {"configurable": (graph.context_schema, None)} if graph.context_schema else {}
    return pydantic().create_model(graph.name + "Config", **fields)


def subgraphs(graph: Pregel, namespace: str | None = None, recurse: bool = False
              ) -> Iterator[tuple[str, Pregel]]:
    """(namespace, graph) of each node that runs a graph; `namespace` picks one ("a|b")."""
    for name, node in graph.nodes.items():
        if namespace is not None and namespace != name and not namespace.startswith(name + NS_SEP):
            continue
        inner = node.inner_graph
        if inner is None:
            continue
        if name == namespace:
            yield name, inner
            return
        if namespace is None:
            yield name, inner
        if recurse:
            rest = None if namespace is None else namespace[len(name) + 1:]
            yield from ((f"{name}{NS_SEP}{n}", g) for n, g in subgraphs(inner, rest, recurse))


def copy(graph: Pregel, update: dict | None = None) -> Pregel:
    """A shallow copy with some attributes replaced (name, checkpointer, config...)."""
    clone = copying.copy(graph)
    clone.__dict__.update(update or {})
    return clone


def merge_configs(*configs: dict | None) -> dict:
    """Later configs win key by key; configurable and metadata merge, tags add up."""
    merged: dict = {}
    for config in configs:
        for key, value in (config or {}).items():
            if key in (CONF, "metadata") and value is not None:
                merged[key] = {**merged.get(key, {}), **value}
            elif key == "tags" and value is not None:
                merged[key] = sorted({*merged.get(key, []), *value})
            elif value is not None:
                merged[key] = value
    return merged


def with_config(graph: Pregel, config: dict | None = None, **kwargs: Any) -> Pregel:
    """A copy whose runs start from this config (the run's own config is merged over it)."""
    return copy(graph, {"config": merge_configs(graph.config, config, kwargs)})


def configs_for(inputs: list, config: dict | list | None) -> list:
    if isinstance(config, (list, tuple)):
        if len(config) != len(inputs):
            raise ValueError("batch() got a list of configs: give one per input")
        return list(config)
    return [config] * len(inputs)


def batch(graph: Pregel, inputs: list, config: Any = None, *, return_exceptions: bool = False,
          **kwargs: Any) -> list:
    """invoke() each input in turn; with return_exceptions, an error is that input's result."""
    results = []
    for value, cfg in zip(inputs, configs_for(inputs, config)):
        try:
            results.append(graph.invoke(value, cfg, **kwargs))
        except Exception as exc:
            if not return_exceptions:
                raise
            results.append(exc)
    return results


async def abatch(graph: Pregel, inputs: list, config: Any = None, *,
                 return_exceptions: bool = False, **kwargs: Any) -> list:
    """ainvoke() every input at once (asyncio.gather)."""
    runs = [graph.ainvoke(value, cfg, **kwargs)
            for value, cfg in zip(inputs, configs_for(inputs, config))]
    return list(await asyncio.gather(*runs, return_exceptions=return_exceptions))


class Introspection:
    """Pregel's methods about itself: get_graph, schemas, subgraphs, copies, batch (mixed in)."""

    def get_graph(self, config: dict | None = None, *, xray: bool | int = False) -> Graph:
        """Nodes and edges, for drawing (draw.py); xray draws subgraphs inside their node."""
        return draw.get_graph(self, config, xray=xray)

    @property
    def input_schema(self) -> Any:
        """A low-level graph's input as a pydantic model (a StateGraph's: builder.input_schema)."""
        return channels_model(self, self.input_channels, "Input")

    @property
    def output_schema(self) -> Any:
        return channels_model(self, self.output_channels, "Output")

    def get_input_jsonschema(self, config: dict | None = None) -> dict:
        return input_jsonschema(self)

    def get_output_jsonschema(self, config: dict | None = None) -> dict:
        return output_jsonschema(self)

    def get_context_jsonschema(self) -> dict | None:
        return context_jsonschema(self)

    def config_schema(self, *, include: Sequence[str] | None = None) -> Any:
        """Deprecated (LangGraph 1.0): a pydantic model, the context schema as "configurable"."""
        warn_deprecated("`config_schema` is deprecated. Use `get_context_jsonschema` for the "
                        "relevant schema instead.", LangGraphDeprecatedSinceV10)
        refuse_unimplemented("config_schema", {"include": include})
        return config_model(self)

    def get_config_jsonschema(self, *, include: Sequence[str] | None = None) -> dict:
        """Deprecated (LangGraph 1.0): config_schema() as JSON Schema."""
        warn_deprecated("`get_config_jsonschema` is deprecated. Use `get_context_jsonschema` "
                        "instead.", LangGraphDeprecatedSinceV10)
        refuse_unimplemented("get_config_jsonschema", {"include": include})
        return config_model(self).model_json_schema()

    def get_subgraphs(self, *, namespace: str | None = None, recurse: bool = False
                      ) -> Iterator[tuple[str, Pregel]]:
        """(namespace, graph) for each node that runs a graph (py)."""
        return subgraphs(self, namespace, recurse)

    async def aget_subgraphs(self, *, namespace: str | None = None, recurse: bool = False
                             ) -> AsyncIterator[tuple[str, Pregel]]:
        for found in subgraphs(self, namespace, recurse):
            yield found

    def copy(self, update: dict | None = None) -> Pregel:
        return copy(self, update)

    def with_config(self, config: dict | None = None, **kwargs: Any) -> Pregel:
        return with_config(self, config, **kwargs)

    def batch(self, inputs: list, config: Any = None, **kwargs: Any) -> list:
        return batch(self, inputs, config, **kwargs)

    async def abatch(self, inputs: list, config: Any = None, **kwargs: Any) -> list:
        return await abatch(self, inputs, config, **kwargs)
