"""Command(graph=Command.PARENT): a node (or a subgraph it runs) sends a command up to the graph
that runs it; each task on the way applies it if it is addressed there, or passes it on.
End of the side trip from pregel/node.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from lgcheckpoint.constants import NS_END, NS_SEP
from lgcheckpoint.errors import ParentCommand
from lgcheckpoint.types import Command

if TYPE_CHECKING:
    from lgcheckpoint.pregel.algo import Task


def command_for(task: Task, exc: ParentCommand) -> Command:
    """A Command(graph=...) bubbling up from a subgraph: this task's to apply, else re-raised."""
    cmd = exc.command
    if cmd.graph in (task.ns, names_of(task.ns), task.name):
        return cmd
    if cmd.graph == Command.PARENT:  # address it to the graph that runs this task
        exc.command = replace(cmd, graph=parent_ns(task.ns))
        exc.args = (exc.command,)
    raise exc


def names_of(ns: str) -> str:
    """"a:<id>|1|b:<id>" -> "a|b": a namespace by node names only."""
    return NS_SEP.join(p.split(NS_END)[0] for p in ns.split(NS_SEP) if not p.isdigit())


def parent_ns(ns: str) -> str:
    """The namespace of the task whose graph runs the task `ns`. A numeric part ("a:<id>|1|b:<id>":
    the second graph that task a invoked) tells calls apart; it is no level of its own."""
    parts = ns.split(NS_SEP)
    while parts and parts[-1].isdigit():
        parts.pop()
    parts = parts[:-1]  # the task's own part
    while parts and parts[-1].isdigit():
        parts.pop()
    return NS_SEP.join(parts)
