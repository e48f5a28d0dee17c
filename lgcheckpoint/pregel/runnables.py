"""Runnable nodes: a langchain Runnable (``prompt | model``, a chat model, a RunnableLambda, a
dict of them) as a node or a conditional edge, told and run without importing langchain-core
until a dict needs it. End of the side trip from pregel/node.py.
"""

from __future__ import annotations

from typing import Any


def is_runnable(value: Any) -> bool:
    """A langchain Runnable (``prompt | model``, a chat model, a RunnableLambda...), told
    without importing langchain."""
    return any(c.__name__ == "Runnable" and c.__module__ == "langchain_core.runnables.base"
               for c in type(value).__mro__)


class RunnableCall:
    """A langchain Runnable as a node or a conditional edge, invoked with the task's config (so
    its callbacks see it: a chat model inside streams to stream_mode="messages"); an async run
    awaits its ainvoke."""

    def __init__(self, runnable: Any) -> None:
        self.runnable, self.__name__ = runnable, runnable.get_name()
        kind = type(runnable)  # what get_graph().to_json() calls it, as LangGraph's drawing does
        self.lc_id = runnable.lc_id() if hasattr(runnable, "lc_id") else [
            *kind.__module__.split("."), kind.__name__]

    def __call__(self, value: Any, config: dict) -> Any:
        return self.runnable.invoke(value, config)

    async def ainvoke(self, value: Any, config: dict) -> Any:  # runner.async_twin finds it
        return await self.runnable.ainvoke(value, config)


def runnable_map(steps: dict) -> Any:
    """A dict as a node, as LangGraph takes it: langchain's RunnableParallel, each key's
    Runnable (or function) run on the node's input."""
    try:
        from langchain_core.runnables import RunnableParallel
    except ImportError:
        raise ImportError('a dict as a node is a langchain RunnableParallel: pip install '
                          '"lgcheckpoint[messages]"') from None
    return RunnableParallel(steps)


def as_callable(value: Any) -> Any:
    """A langchain Runnable as a RunnableCall; anything else as it is."""
    return RunnableCall(value) if is_runnable(value) else value
