"""Errors a user of lgcheckpoint can meet; each message says what to do next.

Names follow ``langgraph.errors`` so that ``except`` clauses port unchanged. The savers' and the
serializer's errors live with them (checkpoint/errors.py), ``GraphInterrupt`` beside
``interrupt()`` in types.py; all are re-exported here. Next: pregel/timeouts.py.
"""

from dataclasses import dataclass

from lgcheckpoint.checkpoint.errors import (  # noqa: F401
    CheckpointNotFoundError, EmptyChannelError, InvalidCheckpointError, MissingConfigError,
    SaverNotSetUpError, StoreUnavailableError, SyncCallOnEventLoopError, UnsafeTypeError,
)
from lgcheckpoint.response_schema import is_invalid_resume, mark_invalid_resume  # noqa: F401
from lgcheckpoint.types import (  # noqa: F401  (interrupt() raises GraphInterrupt)
    GraphBubbleUp, GraphInterrupt, Interrupt,
)
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, warn_deprecated


class InvalidUpdateError(Exception):
    """A node wrote a value that its channel cannot accept (e.g. two writes to a LastValue)."""


class GraphRecursionError(RecursionError):
    """The graph ran more super-steps than ``recursion_limit`` allows."""


class NodeInterrupt(GraphInterrupt):
    """Deprecated (LangGraph 1.0; use types.interrupt): raise it in a node to stop with a value."""

    def __init__(self, value, id=None):
        warn_deprecated("NodeInterrupt is deprecated. Please use `lgcheckpoint.types.interrupt` "
                        "instead.", LangGraphDeprecatedSinceV10)
        super().__init__((Interrupt(value) if id is None else Interrupt(value, id),))


class GraphDrained(GraphBubbleUp):
    """The run stopped between two steps because RunControl.request_drain() was called: the
    last step is saved, and invoking the graph again with None on that thread resumes it."""

    def __init__(self, reason: str = "shutdown") -> None:
        super().__init__(f"Graph drained: {reason}")
        self.reason = reason


class ParentCommand(GraphBubbleUp):
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

