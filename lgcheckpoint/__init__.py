"""lgcheckpoint: LangGraph's durable-execution core, compact enough to read, with viewers to see it.

Start here: ``lgcheckpoint.graph`` builds a graph, ``lgcheckpoint.pregel`` runs it in super-steps,
``lgcheckpoint.checkpoint`` saves what each step did, ``lgcheckpoint.viz`` shows it.
"""

__version__ = "0.1.0"

from lgcheckpoint.graph import END, START, StateGraph  # noqa: E402
from lgcheckpoint.types import (  # noqa: E402
    Command, Interrupt, Overwrite, RetryPolicy, Send, StateSnapshot, interrupt,
)


def __getattr__(name: str):
    """InMemorySaver is imported lazily: the saver lives in its own module."""
    if name == "InMemorySaver":
        from lgcheckpoint.checkpoint.memory import InMemorySaver

        return InMemorySaver
    raise AttributeError(f"module 'lgcheckpoint' has no attribute {name!r}")


__all__ = ["StateGraph", "START", "END", "Command", "Interrupt", "Overwrite", "RetryPolicy",
           "Send", "StateSnapshot", "interrupt", "InMemorySaver"]
