"""Errors a user of lgcheckpoint can meet; each message says what to do next.

Names follow ``langgraph.errors`` so that ``except`` clauses port unchanged. The savers' and the
serializer's errors live with them (checkpoint/errors.py) and are re-exported here.
"""

from dataclasses import dataclass

from lgcheckpoint.checkpoint.errors import (  # noqa: F401
    CheckpointNotFoundError, EmptyChannelError, InvalidCheckpointError, MissingConfigError,
    SaverNotSetUpError, StoreUnavailableError, SyncCallOnEventLoopError, UnsafeTypeError,
)
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, warn_deprecated


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
    """Deprecated (LangGraph 1.0; use types.interrupt): raise it in a node to stop with a value."""

    def __init__(self, value, id=None):
        from lgcheckpoint.types import Interrupt  # types imports this module

        warn_deprecated("NodeInterrupt is deprecated. Please use `lgcheckpoint.types.interrupt` "
                        "instead.", LangGraphDeprecatedSinceV10)
        super().__init__((Interrupt(value) if id is None else Interrupt(value, id),))


class ParentCommand(Exception):
    """Carries a ``Command(graph=Command.PARENT)`` out of a subgraph to its parent."""

    def __init__(self, command):
        super().__init__(command)
        self.command = command


class EmptyInputError(Exception):
    """A graph was invoked with empty input."""


def refuse_unimplemented(call: str, options: dict) -> None:
    """An option we do not implement is a TypeError naming it; LangGraph's defaults pass."""
    for name, value in options.items():
        if value not in (None, False, (), "v1"):
            raise TypeError(f"lgcheckpoint does not implement {call}({name}=...): remove it, "
                            "or run this graph on LangGraph")


INVALID_RESUME_MARK = "_lgcheckpoint_invalid_resume"  # set on the error, so any class can carry it


def mark_invalid_resume(error: BaseException) -> None:
    """Tag an error as "the resume value did not match the interrupt's response_schema"."""
    setattr(error, INVALID_RESUME_MARK, True)


def is_invalid_resume(error: BaseException) -> bool:
    """Was ``error`` raised because an answer did not fit ``interrupt(response_schema=...)``?"""
    return getattr(error, INVALID_RESUME_MARK, False) is True


class ThreadBusyError(RuntimeError):
    """Another run holds the thread (multitask_strategy='reject', or waiting would never end)."""


class StaleResumeError(RuntimeError):
    """Command(resume=...) answers an interrupt that no longer waits: someone answered first."""


# --- node failures: timeouts and cancellation (pregel/timeouts.py raises them) -----------------
class NodeTimeoutError(Exception):
    """An attempt of a node ran past its TimeoutPolicy. Not a TimeoutError (an OSError), so
    the default RetryPolicy retries it."""

    def __init__(self, node: str, elapsed: float, *, kind: str,
                 idle_timeout: float | None = None, run_timeout: float | None = None) -> None:
        if kind not in ("idle", "run"):
            raise ValueError("kind must be 'idle' or 'run'")
        timeout = idle_timeout if kind == "idle" else run_timeout
        if timeout is None:
            raise ValueError(f"{kind}_timeout is required when kind='{kind}'")
        limit = ("idle timeout of {:.3f}s without making progress" if kind == "idle"
                 else "run timeout of {:.3f}s").format(timeout)
        super().__init__(f"Node '{node}' exceeded its {limit} (elapsed: {elapsed:.3f}s).")
        self.node, self.elapsed, self.kind, self.timeout = node, elapsed, kind, timeout
        self.idle_timeout, self.run_timeout = idle_timeout, run_timeout  # both, as configured


class NodeCancelledError(Exception):
    """A node's own code raised asyncio.CancelledError: a failure of that node, not a stop of
    the run (the runner cancels tasks itself when a sibling fails)."""

    def __init__(self, node: str, message: str | None = None) -> None:
        super().__init__(message or f"Node {node!r} raised asyncio.CancelledError")
        self.node = node


@dataclass(frozen=True)
class NodeError:
    """Which node failed and with what error (what a node error handler is told)."""

    node: str
    error: BaseException
