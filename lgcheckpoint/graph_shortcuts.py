"""StateGraph's shortcuts, each a sentence in add_node / add_edge: a sequence of nodes, an
entry point, a finish point. End of the side trip from graph.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Sequence

from lgcheckpoint.constants import END, START

if TYPE_CHECKING:
    from lgcheckpoint.graph import StateGraph


class GraphShortcuts:
    """Mixed into StateGraph (self is one)."""

    def add_sequence(self, nodes: Sequence[Callable | tuple[str, Callable]]) -> StateGraph:
        """Add nodes chained by edges, in order."""
        if not nodes:
            raise ValueError("Sequence requires at least one node.")
        previous = None
        for item in nodes:
            name, fn = item if isinstance(item, tuple) else (getattr(item, "__name__", None), item)
            self.add_node(name, fn)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable, path_map: Any = None) -> StateGraph:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph:
        return self.add_edge(key, END)
