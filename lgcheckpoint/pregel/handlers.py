"""Node error handlers: a node that fails, after its retries, hands its error to a handler node.

``add_node("n", fn, error_handler=h)`` adds the node ``__error_handler__n``;
``set_node_defaults(error_handler=h)`` adds ``__default_error_handler__`` for every node without
one (node_defaults.py). The cases, as in LangGraph 1.2:

- n raises and its RetryPolicy gives up: n's task saves ``(ERROR, exc)`` and
  ``(ERROR_SOURCE_NODE, "n")``, and the handler runs at once, in the same step, on n's input
  (the other tasks of the step may still be running). A parameter ``error: NodeError`` receives
  ``NodeError(node="n", error=exc)``. What the handler returns is written as any node's result:
  a state update, or a Command whose goto routes the run on; n's own edges are not taken.
- An interrupt, or a Command(graph=PARENT) leaving a subgraph, is control flow: never handled.
- A handler that raises fails the run: handlers have no handlers.
- A run stopped after n failed (a crash, or the handler's own error) resumes by running the
  handler again with the saved error; n does not run again.

Next: node_defaults.py (one policy for every node).
"""

from __future__ import annotations

from typing import Mapping

from lgcheckpoint.constants import CONF, ERROR, ERROR_SOURCE_NODE, PUSH
from lgcheckpoint.errors import GraphInterrupt, NodeError, ParentCommand
from lgcheckpoint.pregel.algo import Step, Task, make_task
from lgcheckpoint.pregel.node import Node

HANDLER_PREFIX = "__error_handler__"  # + the node's name: the node add_node(error_handler=) adds
DEFAULT_HANDLER = "__default_error_handler__"  # the node set_node_defaults(error_handler=) adds
HANDLER_PATH = "node_error_handler"  # LangGraph's mark in a handler task's path and id


def handler_task(failed: Task, error: BaseException, nodes: Mapping[str, Node],
                 here: Step) -> Task | None:
    """The task that handles a failed task's error, in the same step; None if nothing does."""
    name = failed.node.error_handler
    if name is None or isinstance(error, (GraphInterrupt, ParentCommand)):
        return None
    # a PUSH-like task whose id derives from the failed task's: a resume finds the same id.
    # Its namespace nests under the failed task's ("n:<id>|__error_handler__n"), as LangGraph's
    config = {**failed.config, CONF: {**failed.config[CONF], "checkpoint_ns": failed.ns}}
    task = make_task(here._replace(config=config), nodes[name], failed.input,
                     (*failed.path[:3], HANDLER_PATH, False), (PUSH,),
                     (PUSH, HANDLER_PATH, failed.id))
    task.error = NodeError(failed.name, error)
    return task


def resumed_handlers(tasks: Mapping[str, Task], pending_writes: list, nodes: Mapping[str, Node],
                     here: Step) -> list[Task]:
    """On resume, a task saved as failed-and-handled does not run again; its handler does."""
    handled = {t for t, c, _ in pending_writes if c == ERROR_SOURCE_NODE}
    errors = {t: v for t, c, v in pending_writes if c == ERROR and t in handled}
    handlers = []
    for tid, error in errors.items():
        task = tasks.get(tid)
        if task is None or task.node.error_handler is None:
            continue
        error = error if isinstance(error, BaseException) else Exception(str(error))
        task.writes.append((ERROR, error))  # a task with writes is not run again
        handlers.append(handler_task(task, error, nodes, here))
    return [h for h in handlers if h is not None]
