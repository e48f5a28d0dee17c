"""Helpers a node may call while it runs: its config and the custom stream writer.

Same names as ``langgraph.config``. They read the task that runs in this thread or asyncio
task (set by pregel/runner.py), so they only work inside a node; nothing in the engine
imports this module, so it may import the runner.
Next: managed.py.
"""

from __future__ import annotations

from typing import Any, Callable

from lgcheckpoint.pregel.runner import task_config
from lgcheckpoint.runtime import task_runtime
from lgcheckpoint.types import current_task


def _task() -> Any:
    task = current_task.get(None)
    if task is None:
        raise RuntimeError("Called get_config / get_stream_writer outside of a running node")
    return task


def get_config() -> dict:
    """The config of the running node (thread_id, checkpoint_ns, metadata, ...)."""
    return task_config(_task())


def get_stream_writer() -> Callable[[Any], None]:
    """A function that emits its argument as a chunk of stream_mode="custom"."""
    return task_runtime(_task()).stream_writer  # the runtime's: a timed node's counts as progress
