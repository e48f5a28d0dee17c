"""Managed values: state keys computed for each step from the recursion limit, never stored.

``remaining_steps: RemainingSteps`` in a state schema is not a channel: a node (or conditional
edge) that reads it gets ``stop - step`` in its input, fresh at every step, and no checkpoint
ever holds it. A run stops at step ``stop`` (pregel/loop.py sets ``stop = first step +
recursion_limit + 1``), so a loop can end itself before GraphRecursionError. A node that
returns a managed key writes nothing to the state (the write is saved, then ignored with a
warning, as in LangGraph). End of the side trip from pregel/runner.py.
"""

from __future__ import annotations

from inspect import isclass
from typing import Annotated, Any, Mapping, NamedTuple, Protocol, get_args, get_origin


class StepWindow(Protocol):
    """Where a task runs: its step and the step the run stops at (a task's Scratchpad)."""

    step: int
    stop: int


class Window(NamedTuple):
    """A step window outside a run (update_state's conditional edges see step .. step + 2)."""

    step: int
    stop: int


class ManagedValue:
    """A value computed from where a task runs; subclasses say how (``get``)."""

    @staticmethod
    def get(scratchpad: StepWindow) -> Any:
        raise NotImplementedError


class RemainingStepsManager(ManagedValue):
    @staticmethod
    def get(scratchpad: StepWindow) -> int:
        """Steps left before the recursion limit (0: this step is past the limit)."""
        return scratchpad.stop - scratchpad.step


class IsLastStepManager(ManagedValue):
    @staticmethod
    def get(scratchpad: StepWindow) -> bool:
        """True in the last step the recursion limit allows."""
        return scratchpad.step == scratchpad.stop - 1


RemainingSteps = Annotated[int, RemainingStepsManager]
IsLastStep = Annotated[bool, IsLastStepManager]

ManagedValueSpec = type[ManagedValue]


def is_managed_value(value: Any) -> bool:
    return isclass(value) and issubclass(value, ManagedValue)


def managed_value_of(typ: Any) -> ManagedValueSpec | None:
    """The manager of an annotation (``RemainingSteps``, also inside NotRequired[...])."""
    meta = getattr(typ, "__metadata__", ())
    if meta and is_managed_value(get_origin(meta[-1]) or meta[-1]):
        return get_origin(meta[-1]) or meta[-1]
    if get_origin(typ) is not None and (args := get_args(typ)):  # Required[...], NotRequired[...]
        return managed_value_of(args[0])
    return None


def read_managed(managed: Mapping[str, ManagedValueSpec], where: StepWindow) -> dict[str, Any]:
    """The managed values a node or edge reads, for the step it runs in."""
    return {key: spec.get(where) for key, spec in managed.items()}


__all__ = ["IsLastStep", "RemainingSteps", "ManagedValue", "is_managed_value"]
