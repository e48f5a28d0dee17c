"""Errors a user of lgcheckpoint can meet; each message says what to do next.

Names follow ``langgraph.errors`` so that ``except`` clauses port unchanged. The savers' and the
serializer's errors live with them (checkpoint/errors.py) and are re-exported here.
"""

from dataclasses import dataclass

from lgcheckpoint.checkpoint.errors import (  # noqa: F401
    CheckpointNotFoundError, EmptyChannelError, InvalidCheckpointError, MissingConfigError,
    SaverNotSetUpError, StoreUnavailableError, SyncCallOnEventLoopError, UnsafeTypeError,
)


class InvalidUpdateError(Exception):
    """A node wrote a value that its channel cannot accept (e.g. two writes to a LastValue)."""


class GraphRecursionError(RecursionError):
    """The graph ran more super-steps than ``recursion_limit`` allows."""


class GraphInterrupt(Exception):
    """Raised inside the loop to stop a run at an interrupt; callers see ``__interrupt__``."""

    def __init__(self, interrupts=()):
        super().__init__(interrupts)
        self.interrupts = tuple(interrupts)


class NodeInterrupt(GraphInterrupt):
    """Kept for LangGraph compatibility: raise it from a node to interrupt with a value."""


class ParentCommand(Exception):
    """Carries a ``Command(graph=Command.PARENT)`` out of a subgraph to its parent."""

    def __init__(self, command):
        super().__init__(command)
        self.command = command


# --- node error handlers (pregel/handlers.py) ----------------------------------------------
@dataclass(frozen=True, slots=True)
class NodeError:
    """What an error handler receives as its `error: NodeError` parameter: who failed, and how."""

    node: str  # the name of the node whose task raised
    error: BaseException  # what it raised (after a resume: as the saver gave it back)


class EmptyInputError(Exception):
    """A graph was invoked with empty input."""


def refuse_unimplemented(call: str, options: dict) -> None:
    """An option we do not implement is a TypeError naming it; LangGraph's defaults pass."""
    for name, value in options.items():
        if value not in (None, False, (), "v1"):
            raise TypeError(f"lgcheckpoint does not implement {call}({name}=...): remove it, "
                            "or run this graph on LangGraph")


class ThreadBusyError(RuntimeError):
    """Another run holds the thread (multitask_strategy='reject', or waiting would never end)."""


class StaleResumeError(RuntimeError):
    """Command(resume=...) answers an interrupt that no longer waits: someone answered first."""
