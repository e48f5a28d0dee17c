"""lgcheckpoint: LangGraph's durable-execution core, compact enough to read, with viewers to see it.

A graph that stops to ask a question, and resumes from its checkpoint::

    >>> import operator
    >>> from typing import Annotated, TypedDict
    >>> from lgcheckpoint import START, Command, InMemorySaver, StateGraph, interrupt
    >>> class State(TypedDict):
    ...     log: Annotated[list, operator.add]
    >>> graph = StateGraph(State)
    >>> _ = graph.add_node("ask", lambda state: {"log": [interrupt("name?")]})
    >>> _ = graph.add_edge(START, "ask")
    >>> app = graph.compile(checkpointer=InMemorySaver())
    >>> thread = {"configurable": {"thread_id": "1"}}
    >>> app.invoke({"log": []}, thread)["__interrupt__"][0].value
    'name?'
    >>> app.invoke(Command(resume="Ada"), thread)
    {'log': ['Ada']}

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


def load_ipython_extension(ipython: object) -> None:
    """``%load_ext lgcheckpoint``: this kernel's ``langgraph`` imports come from lgcheckpoint."""
    from lgcheckpoint.swap import install

    print(install())


def unload_ipython_extension(ipython: object) -> None:
    """``%unload_ext lgcheckpoint``: ``langgraph`` imports find LangGraph again."""
    from lgcheckpoint.swap import uninstall

    uninstall()
