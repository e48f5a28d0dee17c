"""DeltaChannel: a reducer channel stored as its writes, not as its value.

Next: pregel/delta.py (when a snapshot is stored, how a load replays the writes).
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Sequence

from lgcheckpoint.channels.base import MISSING, Channel, empty_value_of, overwrite_value
from lgcheckpoint.checkpoint.serde.types import DeltaSnapshot
from lgcheckpoint.errors import InvalidUpdateError


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
            stored = empty_value_of(self.typ)
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
            self.value = empty_value_of(self.typ)
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
                self.value = empty_value_of(self.typ) if new is None else copy.copy(new)
                start = i + 1
        if values[start:]:
            self.value = self.reducer(self.value, values[start:])
