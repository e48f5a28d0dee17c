"""More channels: the kinds a StateGraph uses only for some features, each a small subclass.

Topic collects a step's writes as a list (the Send packets of ``__pregel_tasks``, or
``Annotated[list, Topic]``); UntrackedValue is never stored; the AfterFinish variants wait
until nothing else is triggered (``add_node(defer=True)``).
End of the side trip from channels/base.py.
"""

from __future__ import annotations

import collections.abc
from typing import Any, Sequence

from lgcheckpoint.channels.base import MISSING, Channel, LastValue, NamedBarrierValue
from lgcheckpoint.errors import EmptyChannelError, InvalidUpdateError


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
