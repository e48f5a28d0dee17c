"""Errors a user of lgcheckpoint can meet; each message says what to do next.

Names follow ``langgraph.errors`` so that ``except`` clauses port unchanged.
"""

import asyncio


class EmptyChannelError(Exception):
    """Read of a channel that has never been written."""


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


class EmptyInputError(Exception):
    """A graph was invoked with empty input."""


class InvalidCheckpointError(ValueError):
    """A stored checkpoint or write could not be read back (corrupt, tampered or from an unknown format)."""


class CheckpointNotFoundError(KeyError):
    """A ``checkpoint_id`` in the config names no checkpoint of that thread."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "checkpoint not found"


class MissingConfigError(KeyError):
    """A config lacks a key the checkpointer needs (thread_id; checkpoint_id for put_writes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "config is missing a required key"


class UnsafeTypeError(InvalidCheckpointError):
    """A stored value names a type the serializer may not build; the message says how to allow it."""


class SaverNotSetUpError(RuntimeError):
    """A saver's tables do not exist yet: call ``saver.setup()`` once on that database."""


class SyncCallOnEventLoopError(asyncio.InvalidStateError, RuntimeError):
    """An async saver's sync method was called on its own event loop, where it would deadlock."""
