"""A task about to run, as stream_mode="tasks" and "debug" show it: map_debug_tasks.

Besides its id, name, input and triggers, a task event carries what the caller said about the
run: the config's metadata without the keys the runtime sets itself (thread_id,
langgraph_step, ...), and its tags without the ``seq:step:N`` bookkeeping tags, both under
"metadata" and only when something is left. A task tagged ``langsmith:hidden`` is not shown.
Same module and function name as LangGraph (``langgraph.pregel.debug``). Next: pregel/live.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from lgcheckpoint.constants import TAG_HIDDEN

HIDDEN_TAG = TAG_HIDDEN  # LangGraph's "langsmith:hidden"
# where a task runs is already in its own fields and namespace; not repeated as metadata
RUNTIME_METADATA_KEYS = frozenset({
    "thread_id", "checkpoint_id", "checkpoint_ns", "checkpoint_map", "langgraph_step",
    "langgraph_node", "langgraph_triggers", "langgraph_path", "langgraph_checkpoint_ns",
})


def map_debug_tasks(tasks: Iterable[Any]) -> Iterator[dict]:
    """One "task" event per task that is not hidden."""
    return (task_event(task) for task in tasks
            if HIDDEN_TAG not in ((task.config or {}).get("tags") or []))


def task_event(task: Any) -> dict:
    """{"id", "name", "input", "triggers"} plus "metadata" when the caller gave any."""
    event = {"id": task.id, "name": task.name, "input": task.input, "triggers": task.triggers}
    if metadata := caller_metadata(task.config, getattr(task, "node", None)):
        event["metadata"] = metadata
    return event


def caller_metadata(config: dict | None, node: Any = None) -> dict:
    """The run's metadata and tags as the caller gave them (a copy: later changes don't show),
    then the node's own (a low-level node's NodeBuilder().meta(...))."""
    config = config or {}
    given = {**(config.get("metadata") or {}), **getattr(node, "metadata", {})}
    metadata = {key: value for key, value in given.items() if key not in RUNTIME_METADATA_KEYS}
    tags = [*(config.get("tags") or []), *getattr(node, "tags", [])]
    if tags := [tag for tag in tags if not tag.startswith("seq:step")]:
        metadata["tags"] = tags
    return metadata
