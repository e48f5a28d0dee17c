"""Errors of the checkpoint layer: savers and the serializer; each message says what to do next.

The checkpoint layer does not depend on the runtime (as in LangGraph, where it is its own package);
``lgcheckpoint.errors`` re-exports these names.
"""

import asyncio


class EmptyChannelError(Exception):
    """Read of a channel that has never been written."""


class InvalidCheckpointError(ValueError):
    """A stored checkpoint or write could not be read back (corrupt, tampered, unknown format)."""


class CheckpointNotFoundError(KeyError):
    """A ``checkpoint_id`` in the config names no checkpoint of that thread."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "checkpoint not found"


class MissingConfigError(KeyError, ValueError):
    """A config lacks a key the checkpointer needs (thread_id; checkpoint_id for put_writes)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "config is missing a required key"


class UnsafeTypeError(InvalidCheckpointError):
    """A stored value names a type the serializer may not build; the message says how to allow."""


class SaverNotSetUpError(RuntimeError):
    """A saver's tables do not exist yet: call ``saver.setup()`` once on that database."""


class StoreUnavailableError(RuntimeError):
    """The database failed or went away during a saver call; what was committed is intact."""


class SyncCallOnEventLoopError(asyncio.InvalidStateError, RuntimeError):
    """An async saver's sync method was called on its own event loop, where it would deadlock."""
