"""Channels hold state between super-steps; a write becomes visible in the next step.

A channel never changes a value it has handed out with checkpoint() (a saver may still be
serializing it in the background): it builds a new one. Each channel answers five questions:
update(values) -> did I change?, get(), is_available(), checkpoint() (what to store) and
from_checkpoint(stored) (a fresh copy). consume() and finish() let barriers reset after a read.
Here the channels a StateGraph is made of; the rarer kinds (Topic, UntrackedValue, the deferred
ones) are a side trip (channels/more.py), DeltaChannel another (channels/delta.py).
Next: pregel/algo.py (the two rules of a step).
"""

from __future__ import annotations

import collections.abc
from typing import Any, Callable, Sequence, get_origin

from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot
from lgcheckpoint.constants import OVERWRITE
from lgcheckpoint.errors import EmptyChannelError, InvalidUpdateError
from lgcheckpoint.types import Overwrite

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()  # "no value yet"


class Channel:
    """Base: a named slot whose value changes only at step boundaries."""

    key = ""
    forgets = False  # True: a step that writes nothing to me may clear me (update([]) matters)
    saved = True  # False: neither its value nor writes to it are ever stored (UntrackedValue)
    get_builds_value = False  # True: get() returns a new value each call (pregel/view.py)

    @property
    def ValueType(self) -> Any:  # LangGraph's name, for code that introspects channels
        """The type a read returns."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type one write carries."""
        return self.typ

    def copy(self) -> Channel:
        return self._clone()  # values shared, as from_checkpoint(checkpoint()) shared them

    def from_checkpoint(self, stored: Any) -> Channel:
        """A fresh copy holding `stored` (never the same object: a saver may still read it)."""
        return self._clone(value=stored)

    def checkpoint(self) -> Any:
        return self.value

    def get(self) -> Any:
        if self.value is MISSING:
            raise EmptyChannelError(f"channel '{self.key}' is empty")
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def consume(self) -> bool:
        """A subscriber read me; return True if that changed me."""
        return False

    def finish(self) -> bool:
        """The run is about to end; return True if that changed me."""
        return False

    def _clone(self, **state: Any) -> Channel:
        fresh = object.__new__(type(self))
        fresh.__dict__.update(self.__dict__, **state)
        return fresh


class LastValue(Channel):
    """Keeps the last value written; two writes in one step are a conflict."""

    def __init__(self, typ: Any = Any, key: str = "") -> None:
        self.typ, self.key, self.value = typ, key, MISSING

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) != 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one value per step. Use an "
                "Annotated key to handle multiple values, e.g. Annotated[list, operator.add].")
        self.value = values[-1]
        return True


class EphemeralValue(Channel):
    """Holds a value for exactly one step, then clears itself (triggers, input)."""

    forgets = True

    def __init__(self, typ: Any = Any, guard: bool = True, key: str = "") -> None:
        self.typ, self.guard, self.key, self.value = typ, guard, key, MISSING

    def update(self, values: Sequence[Any]) -> bool:
        if not values:  # a step passed without a write: forget the value
            forgot = self.value is not MISSING
            self.value = MISSING
            return forgot
        if len(values) != 1 and self.guard:
            raise InvalidUpdateError(f"At key '{self.key}': can receive only one value per step")
        self.value = values[-1]
        return True


def empty_value_of(typ: Any) -> Any:
    """A reducer channel starts from the type's empty value (list() for list, ...)."""
    typ = get_origin(typ) or typ
    typ = {collections.abc.Sequence: list, collections.abc.MutableSequence: list,
           collections.abc.Set: set, collections.abc.MutableSet: set,
           collections.abc.Mapping: dict, collections.abc.MutableMapping: dict}.get(typ, typ)
    try:
        return typ()
    except Exception:
        return MISSING


def overwrite_value(value: Any) -> tuple[bool, Any]:
    """(True, v) if value asks to bypass the reducer: Overwrite(v), {"__overwrite__": v}, or
    an Overwrite that lost its class in a JSON round trip: {"type": "__overwrite__", "value": v}."""
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE in value:
            return True, value[OVERWRITE]
        if value.get("type") == OVERWRITE and "value" in value:
            return True, value["value"]
    return False, None


class BinaryOperatorAggregate(Channel):
    """Folds every write into the value with a reducer, e.g. operator.add on lists."""

    def __init__(self, typ: Any, operator: Callable[[Any, Any], Any], key: str = "") -> None:
        self.typ, self.operator, self.key = typ, operator, key
        self.value = empty_value_of(typ)

    def from_checkpoint(self, stored: Any) -> BinaryOperatorAggregate:
        if isinstance(stored, DeltaSnapshot):  # the key was a DeltaChannel when it was stored
            stored = stored.value
        return self._clone(value=self.value if stored is MISSING else stored)

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if self.value is MISSING:
            self.value, values = values[0], values[1:]
        overwritten = False
        for value in values:
            is_overwrite, new = overwrite_value(value)
            if is_overwrite:
                if overwritten:
                    raise InvalidUpdateError(f"At key '{self.key}': Can receive only one "
                                             "Overwrite value per super-step.")
                self.value, overwritten = new, True
            elif not overwritten:
                self.value = self.operator(self.value, value)
        return True


class NamedBarrierValue(Channel):
    """Available once every named writer wrote: the join of add_edge([a, b], c)."""

    def __init__(self, typ: Any, names: set[str], key: str = "") -> None:
        self.typ, self.names, self.key, self.seen = typ, set(names), key, set()

    def checkpoint(self) -> set:
        return self.seen

    def from_checkpoint(self, stored: Any) -> NamedBarrierValue:
        return self._clone(seen=set() if stored is MISSING else set(stored))

    def update(self, values: Sequence[Any]) -> bool:
        updated = False
        for value in values:
            if value not in self.names:
                raise InvalidUpdateError(f"At key '{self.key}': Value {value} not in {self.names}")
            if value not in self.seen:
                self.seen = self.seen | {value}  # a new set: the stored one is never changed
                updated = True
        return updated

    def get(self) -> None:
        if not self.is_available():
            raise EmptyChannelError(f"channel '{self.key}' is still waiting")
        return None

    def is_available(self) -> bool:
        return self.seen == self.names

    def consume(self) -> bool:
        if self.seen == self.names:
            self.seen = set()
            return True
        return False
