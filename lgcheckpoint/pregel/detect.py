"""Which compiled graphs can a node's function run? Found by reading its closure and bytecode.

A node that calls ``sub.invoke(state)`` runs ``sub`` as its subgraph: get_state(subgraphs=True),
get_subgraphs and get_graph(xray=...) need to find it without running the node. We look where a
name in the function can lead: a captured value (closure cell), and in its code every chain of
loads that starts at a captured or global name (``CHAIN.payload.invoke``), following attribute
loads until one reaches a graph. Globals count only in the function's own code; chains on
captured values also in the functions it defines. A subscript (``graphs[0]``), ``self.graph``
of a method and attributes the compiler dropped stay out of reach. Next: pregel/subgraphs.py.
"""

from __future__ import annotations

import dis
from types import CodeType
from typing import Any, Callable, Iterator

ROOT_LOADS = {"LOAD_GLOBAL", "LOAD_DEREF", "LOAD_NAME"}
ATTR_LOADS = {"LOAD_ATTR", "LOAD_METHOD"}


class CompiledGraph:
    """The base of every compiled graph (Pregel, pregel/__init__.py): this module finds graphs
    by it, without importing the module that defines them."""


def is_graph(value: Any) -> bool:
    return isinstance(value, CompiledGraph)


def graphs_called(fn: Callable | None) -> list:
    """The graphs fn can run, first found first; a wrapper with none leads to __wrapped__."""
    seen: set[int] = set()
    while fn is not None and id(fn) not in seen:
        seen.add(id(fn))
        found = list(dict.fromkeys(reachable(fn)))
        if found:
            return found
        fn = getattr(fn, "__wrapped__", None)
    return []


def reachable(fn: Callable) -> Iterator[Any]:
    """Graphs among fn's captured values, then at the end of its chains of loads."""
    fn = getattr(fn, "__func__", fn)  # a bound method: its function (self stays out of reach)
    code: CodeType | None = getattr(fn, "__code__", None)
    if code is None:
        return
    captured = dict(zip(code.co_freevars, cell_values(fn.__closure__ or ())))
    yield from (v for v in captured.values() if is_graph(v))
    yield from chain_ends(code, getattr(fn, "__globals__", {}), captured)
    for nested in nested_code(code):
        yield from chain_ends(nested, {}, captured)


def cell_values(cells: tuple) -> Iterator[Any]:
    """Each cell's value (None for a cell never assigned)."""
    for cell in cells:
        try:
            yield cell.cell_contents
        except ValueError:
            yield None


def nested_code(code: CodeType) -> Iterator[CodeType]:
    """The code of functions defined inside (at any depth)."""
    for const in code.co_consts:
        if isinstance(const, CodeType):
            yield const
            yield from nested_code(const)


def chain_ends(code: CodeType, globals_: dict, captured: dict) -> Iterator[Any]:
    """Follow each `name.attr.attr` load chain in code until it reaches a graph."""
    value: Any = None  # the chain's current value (None: no chain under way)
    for ins in dis.get_instructions(code):
        names = captured if ins.opname == "LOAD_DEREF" else globals_
        if ins.opname in ROOT_LOADS and ins.argval in names:
            value = names[ins.argval]
        elif ins.opname in ATTR_LOADS and value is not None:
            value = getattr(value, ins.argval, None)
        else:
            value = None
        if is_graph(value):
            yield value
            value = None
