"""Graph lifecycle callbacks (``langgraph.callbacks``): a handler hears a graph stop at an
interrupt and resume from a checkpoint.

A ``GraphCallbackHandler`` passed in a run's ``config["callbacks"]`` (beside any langchain
handler, or inside a callback manager) gets ``on_interrupt`` when the root graph stops at
interrupts and ``on_resume`` when a graph continues a thread; other handlers never see these
events. A handler that raises is logged and skipped, unless its ``raise_error`` is set; an async
handler works in sync and async runs alike. Needs the ``messages`` extra (langchain-core);
pregel/tracing.py sends the events. Next: pregel/tracing.py.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import logging
from dataclasses import dataclass
from typing import Any, Literal, Sequence
from uuid import UUID

try:
    from langchain_core.callbacks import BaseCallbackHandler, BaseCallbackManager
except ImportError as exc:
    if not (exc.name or "").startswith("langchain_core"):
        raise
    raise ImportError('langgraph.callbacks needs langchain-core: '
                      'pip install "lgcheckpoint[messages]"') from None

from lgcheckpoint.types import Interrupt

__all__ = ["GraphCallbackHandler", "GraphInterruptEvent", "GraphLifecycleEvent",
           "GraphLifecycleStatus", "GraphResumeEvent",
           "get_async_graph_callback_manager_for_config",
           "get_sync_graph_callback_manager_for_config"]

logger = logging.getLogger(__name__)
GraphLifecycleStatus = Literal["input", "pending", "done", "interrupt_before", "interrupt_after",
                               "out_of_steps"]


@dataclass(frozen=True)
class GraphInterruptEvent:
    """The graph stopped: the interrupts it stopped at, and where."""

    run_id: UUID | None  # the graph's run, as tracers know it
    status: GraphLifecycleStatus  # the loop's status then
    checkpoint_id: str  # the checkpoint the thread stopped at
    checkpoint_ns: tuple[str, ...]  # () for the root graph
    interrupts: tuple[Interrupt, ...]


@dataclass(frozen=True)
class GraphResumeEvent:
    """A graph continues a thread from a saved checkpoint."""

    run_id: UUID | None
    status: GraphLifecycleStatus
    checkpoint_id: str  # the checkpoint it continues from
    checkpoint_ns: tuple[str, ...]


GraphLifecycleEvent = GraphInterruptEvent | GraphResumeEvent


class GraphCallbackHandler(BaseCallbackHandler):
    """Subclass it and override what you want to hear; pass it in config["callbacks"]."""

    def on_interrupt(self, event: GraphInterruptEvent) -> Any:
        """The graph stopped at one or more interrupts."""

    def on_resume(self, event: GraphResumeEvent) -> Any:
        """The graph continues from a saved checkpoint."""


def graph_handlers(callbacks: Any) -> list[GraphCallbackHandler]:
    """The GraphCallbackHandlers among a config's callbacks: a list, a manager or one handler."""
    if isinstance(callbacks, BaseCallbackManager):
        callbacks = callbacks.handlers
    elif isinstance(callbacks, BaseCallbackHandler):
        callbacks = [callbacks]
    elif callbacks is not None and (isinstance(callbacks, (str, bytes)) or
                                    not isinstance(callbacks, Sequence)):
        raise TypeError("callbacks must be a handler, a list of handlers or a callback manager, "
                        f"got {type(callbacks).__name__}")
    return [h for h in callbacks or () if isinstance(h, GraphCallbackHandler)]


def call_handler(handler: GraphCallbackHandler, method: str, event: GraphLifecycleEvent) -> Any:
    """One handler's method; its error is logged, and raised only if it asks (raise_error)."""
    try:
        return getattr(handler, method)(event)
    except Exception as exc:
        logger.warning("Error in %s.%s callback: %r", type(handler).__name__, method, exc)
        if handler.raise_error:
            raise
        return None


def run_coroutine(coro: Any) -> Any:
    """Await an async handler from sync code: in a thread of its own if a loop runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


class GraphCallbackManager:
    """Sends lifecycle events to the graph handlers of a run (sync; the async twin below)."""

    def __init__(self, handlers: Sequence[GraphCallbackHandler], run_id: UUID | None = None):
        self.handlers, self.run_id = list(handlers), run_id

    def dispatch(self, method: str, event: GraphLifecycleEvent) -> None:
        for handler in self.handlers:
            result = call_handler(handler, method, event)
            if inspect.isawaitable(result):  # an async handler, awaited here
                try:
                    run_coroutine(result)
                except Exception as exc:
                    logger.warning("Error in %s.%s callback: %r", type(handler).__name__,
                                   method, exc)
                    if handler.raise_error:
                        raise

    def on_interrupt(self, event: GraphInterruptEvent) -> None:
        self.dispatch("on_interrupt", event)

    def on_resume(self, event: GraphResumeEvent) -> None:
        self.dispatch("on_resume", event)


class AsyncGraphCallbackManager(GraphCallbackManager):
    """The async twin: awaits each async handler in the caller's loop."""

    async def adispatch(self, method: str, event: GraphLifecycleEvent) -> None:
        for handler in self.handlers:
            result = call_handler(handler, method, event)
            if inspect.isawaitable(result):
                try:
                    await result
                except Exception as exc:
                    logger.warning("Error in %s.%s callback: %r", type(handler).__name__,
                                   method, exc)
                    if handler.raise_error:
                        raise

    async def on_interrupt(self, event: GraphInterruptEvent) -> None:  # type: ignore[override]
        await self.adispatch("on_interrupt", event)

    async def on_resume(self, event: GraphResumeEvent) -> None:  # type: ignore[override]
        await self.adispatch("on_resume", event)


def get_sync_graph_callback_manager_for_config(config: dict, *, run_id: UUID | None = None
                                               ) -> GraphCallbackManager:
    """The graph handlers of config["callbacks"], for one run."""
    return GraphCallbackManager(graph_handlers(config.get("callbacks")), run_id)


def get_async_graph_callback_manager_for_config(config: dict, *, run_id: UUID | None = None
                                                ) -> AsyncGraphCallbackManager:
    """The async twin of get_sync_graph_callback_manager_for_config."""
    return AsyncGraphCallbackManager(graph_handlers(config.get("callbacks")), run_id)
