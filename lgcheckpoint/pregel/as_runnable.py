"""A compiled graph as a langchain Runnable: ``graph | step``, ``.map()``, ``.with_retry()``, ...

In LangGraph a compiled graph *is* a langchain Runnable. Ours keeps its own class, because the core
never imports langchain-core; ``Pregel`` inherits ``RunnableFace``, whose ``__getattr__`` serves
each name of ``RUNNABLE_API`` from an adapter built on the spot: a small ``Runnable`` subclass that
runs the graph's own ``invoke`` / ``stream`` / ``batch`` and their async twins, so every method
langchain builds on them (``pipe``, ``map``, ``with_retry``, ``astream_log``, ...) works as
langchain wrote it. Names the graph has itself (``with_config``, ``batch``, ``get_graph``) stay
its own. For langchain code that takes a Runnable (``prompt | graph``, ``with_fallbacks([graph])``,
a dict of steps), ``isinstance(graph, Runnable)`` holds as in LangGraph once langchain-core is
loaded: ``RunnableFace`` is registered as a virtual subclass of ``Runnable`` (``abc``) when a graph
is compiled with langchain-core already imported, or the adapter is first built. A graph compiled
before langchain-core was imported, then handed to langchain untouched, is not seen as a Runnable
(``graph.as_runnable()`` always is).
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

# the Runnable methods a LangGraph graph inherits that ours serves through the adapter (each
# returns a langchain object or runs the graph through langchain's machinery)
RUNNABLE_API = frozenset({
    "pipe", "pick", "assign", "map", "bind", "with_retry", "with_fallbacks", "with_listeners",
    "with_alisteners", "with_types", "transform", "atransform", "astream_log",
    "batch_as_completed", "abatch_as_completed", "get_prompts", "as_tool", "config_specs",
    "get_name",
})
OUT_OF_SCOPE = {"astream_events": "astream_events is out of scope for lgcheckpoint (its event "
                                  "stream is LangChain's tracing protocol): use astream(...) with "
                                  "stream_mode, or astream_log"}
INSTALL = 'pip install "lgcheckpoint[messages]"'


class NeedsLangchain(ImportError):
    """A Runnable method asked for without langchain-core installed."""


def register_if_loaded() -> None:
    """Make every compiled graph a virtual langchain Runnable, if langchain-core is loaded
    (called by Pregel.__init__: a check of sys.modules, no import)."""
    base = sys.modules.get("langchain_core.runnables.base")
    if base is not None and not issubclass(RunnableFace, base.Runnable):
        base.Runnable.register(RunnableFace)


def as_runnable(graph: Pregel) -> Any:
    """The graph as a langchain Runnable (the adapter); every call reaches the graph itself."""
    return runnable_class()(graph)


@cache
def runnable_class() -> type:
    """The adapter's class, defined on first use (langchain-core is imported here only)."""
    try:
        from langchain_core.runnables import Runnable
    except ImportError:
        raise NeedsLangchain("a compiled graph is a langchain Runnable only with langchain-core: "
                             + INSTALL) from None

    class GraphRunnable(Runnable):
        """The graph seen by langchain: runs delegate to the graph, the rest is langchain's."""

        def __init__(self, graph: Pregel) -> None:
            self.graph, self.name = graph, graph.name

        def __repr__(self) -> str:
            return f"GraphRunnable({self.graph.name!r})"

        def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
            return self.graph.invoke(input, config, **kwargs)

        async def ainvoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
            return await self.graph.ainvoke(input, config, **kwargs)

        def stream(self, input: Any, config: dict | None = None, **kwargs: Any) -> Iterator:
            yield from self.graph.stream(input, config, **kwargs)

        async def astream(self, input: Any, config: dict | None = None,
                          **kwargs: Any) -> AsyncIterator:
            async for chunk in self.graph.astream(input, config, **kwargs):
                yield chunk

        def batch(self, inputs: list, config: Any = None, **kwargs: Any) -> list:
            return self.graph.batch(inputs, config, **kwargs)

        async def abatch(self, inputs: list, config: Any = None, **kwargs: Any) -> list:
            return await self.graph.abatch(inputs, config, **kwargs)

        def get_input_jsonschema(self, config: dict | None = None) -> dict:
            return self.graph.get_input_jsonschema(config)

        def get_output_jsonschema(self, config: dict | None = None) -> dict:
            return self.graph.get_output_jsonschema(config)

    register_if_loaded()
    return GraphRunnable


class RunnableFace:
    """Mix into Pregel: the Runnable methods LangGraph's graph inherits, served by the adapter."""

    def as_runnable(self) -> Any:
        """This graph as a langchain Runnable, for ``prompt | graph.as_runnable()``."""
        return as_runnable(self)

    def __or__(self, other: Any) -> Any:
        return as_runnable(self) | other

    def __ror__(self, other: Any) -> Any:
        return other | as_runnable(self)

    def __getattr__(self, name: str) -> Any:  # only for names the class does not have
        if name in OUT_OF_SCOPE:
            raise AttributeError(OUT_OF_SCOPE[name])
        if name not in RUNNABLE_API:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        try:
            return getattr(as_runnable(self), name)
        except NeedsLangchain:
            raise NeedsLangchain(f"graph.{name} is langchain's Runnable API: it needs "
                                 f"langchain-core, {INSTALL}") from None
