"""Channels hold state between super-steps; a write becomes visible in the next step.

A channel never changes a value it has handed out with checkpoint() (a saver may still be
serializing it in the background): it builds a new one. Each channel answers five questions:
update(values) -> did I change?, get(), is_available(), checkpoint() (what to store) and
from_checkpoint(stored) (a fresh copy). consume() and finish() let barriers reset after a read.
Next: pregel/algo.py (the two rules of a step).
"""

from __future__ import annotations

import collections.abc
import copy
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


class UntrackedValue(Channel):
    """Keeps the last value for the rest of the run but never in a checkpoint (caches, clients)."""

    saved = False

    def __init__(self, typ: Any = Any, guard: bool = True, key: str = "") -> None:
        self.typ, self.guard, self.key, self.value = typ, guard, key, MISSING

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        if len(values) != 1 and self.guard:
            raise InvalidUpdateError(
                f"At key '{self.key}': UntrackedValue(guard=True) can receive only one value per "
                "step; use guard=False to keep the last of several")
        self.value = values[-1]
        return True

    def checkpoint(self) -> Any:
        return MISSING  # create_checkpoint stores only what is not MISSING

    def from_checkpoint(self, stored: Any) -> Channel:
        return self._clone(value=MISSING)  # a resumed run starts without it


def _empty_value_of(typ: Any) -> Any:
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
        self.value = _empty_value_of(typ)

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


class DeltaChannel(Channel):
    """A reducer channel stored as its writes: a checkpoint keeps no value, only every
    ``snapshot_frequency``-th update stores the whole value (a DeltaSnapshot); loading replays
    the writes since the last snapshot (pregel/delta.py). ``reducer(value, [writes]) -> value``
    must give the same result however the writes are batched."""

    def __init__(self, reducer: Callable[[Any, Sequence[Any]], Any], typ: Any = None, *,
                 snapshot_frequency: int = 100, key: str = "") -> None:
        if not isinstance(snapshot_frequency, int) or snapshot_frequency <= 0:
            raise ValueError(
                f"snapshot_frequency must be a positive int, got {snapshot_frequency!r}")
        self.reducer, self.snapshot_frequency, self.key = reducer, snapshot_frequency, key
        self.typ = list if typ is None else typ  # StateGraph passes the annotated type
        self.value = MISSING

    def for_type(self, typ: Any) -> DeltaChannel:
        """The same channel for a state key of type ``typ`` (Annotated[list, DeltaChannel(f)])."""
        return DeltaChannel(self.reducer, typ, snapshot_frequency=self.snapshot_frequency)

    def checkpoint(self) -> Any:
        return MISSING  # never stored as such: pregel/delta.py decides when to store a snapshot

    def from_checkpoint(self, stored: Any) -> DeltaChannel:
        if isinstance(stored, DeltaSnapshot):
            stored = stored.value
        if stored is MISSING or stored is None:  # nothing stored here: pregel/delta.py replays
            stored = _empty_value_of(self.typ)
        return self._clone(value=stored)  # a plain value: the key used to be a reducer channel

    def copy(self) -> DeltaChannel:
        return self._clone(value=copy.copy(self.value))  # its reducer may edit it in place

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        overwrites = [value for value in values if overwrite_value(value)[0]]
        if len(overwrites) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one Overwrite value per super-step.")
        if self.value is MISSING:
            self.value = _empty_value_of(self.typ)
        # the step's writes fold as a load replays them; an Overwrite drops the step's other
        # writes, as in BinaryOperatorAggregate
        self.replay_writes([("", self.key, value) for value in overwrites or values])
        return True

    def replay_writes(self, writes: Sequence[tuple[str, str, Any]]) -> None:
        """Fold stored (task_id, channel, value) writes, oldest first, in one reducer call;
        the last Overwrite among them restarts from its value."""
        values = [v for _, _, v in writes]
        start = 0
        for i, value in enumerate(values):
            is_overwrite, new = overwrite_value(value)
            if is_overwrite:
                self.value = _empty_value_of(self.typ) if new is None else copy.copy(new)
                start = i + 1
        if values[start:]:
            self.value = self.reducer(self.value, values[start:])


class Topic(Channel):
    """A list of values written in the last step (or all steps if accumulate); Send packets."""

    get_builds_value = True  # each read gets its own list: a reader's append stays its own

    def __init__(self, typ: Any = Any, accumulate: bool = False, key: str = "") -> None:
        self.typ, self.accumulate, self.key, self.values = typ, accumulate, key, []
        self.forgets = not accumulate  # a step without writes empties it, unless it accumulates

    @property
    def ValueType(self) -> Any:
        return collections.abc.Sequence[self.typ]

    @property
    def UpdateType(self) -> Any:
        return self.typ | list[self.typ]  # one value, or a list of them

    def checkpoint(self) -> list:
        return self.values

    def from_checkpoint(self, stored: Any) -> Topic:
        return self._clone(values=[] if stored is MISSING else list(stored))

    def update(self, values: Sequence[Any]) -> bool:
        updated = False
        if not self.accumulate:
            updated, self.values = bool(self.values), []
        flat = [v for value in values for v in (value if isinstance(value, list) else [value])]
        if flat:
            self.values = [*self.values, *flat]  # a new list: the stored one is never changed
            updated = True
        return updated

    def get(self) -> list:
        if not self.values:
            raise EmptyChannelError(f"channel '{self.key}' is empty")
        return list(self.values)

    def is_available(self) -> bool:
        return bool(self.values)


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


class AfterFinish:
    """Mixin: readable once nothing else is triggered (defer=True); stored as (value, finished)."""

    finished = False

    def checkpoint(self) -> Any:
        inner = super().checkpoint()  # type: ignore[misc]
        return MISSING if inner is MISSING else (inner, self.finished)

    def from_checkpoint(self, stored: Any) -> Channel:
        inner, finished = (MISSING, False) if stored is MISSING else stored
        restored = super().from_checkpoint(inner)  # type: ignore[misc]
        restored.finished = finished
        return restored

    def get(self) -> Any:
        if not self.finished:
            raise EmptyChannelError(f"channel '{self.key}' waits for the run to finish")
        return super().get()  # type: ignore[misc]

    def is_available(self) -> bool:
        return self.finished and super().is_available()  # type: ignore[misc]

    def consume(self) -> bool:
        if self.is_available():
            self.finished = False
            self.reset()
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and super().is_available():  # type: ignore[misc]
            self.finished = True
            return True
        return False


class LastValueAfterFinish(AfterFinish, LastValue):
    """The trigger of a deferred node."""

    def update(self, values: Sequence[Any]) -> bool:
        if not values:
            return False
        self.finished, self.value = False, values[-1]
        return True

    def reset(self) -> None:
        self.value = MISSING


class NamedBarrierValueAfterFinish(AfterFinish, NamedBarrierValue):
    """The join of a deferred node."""

    def reset(self) -> None:
        self.seen = set()
