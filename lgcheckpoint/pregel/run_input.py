"""A run's input as writes: a dict's values to the input channels; a Command's resume answers,
state update and goto as writes of the null task (``PregelLoop.apply_command`` saves them),
after the checks that make a resume unambiguous. End of the side trip from pregel/loop.py.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lgcheckpoint.constants import (
    BRANCH_TO, CONTROL_WRITES, INTERRUPT, NULL_RESUME, NULL_TASK_ID, PARENT_NULL_RESUME, RESUME,
    RESUME_MAP, START, TASKS,
)
from lgcheckpoint.errors import EmptyInputError, InvalidUpdateError
from lgcheckpoint.pregel.node import goto_targets
from lgcheckpoint.types import Command, Send, update_as_tuples

if TYPE_CHECKING:
    from lgcheckpoint.checkpoint.base import BaseCheckpointSaver

logger = logging.getLogger(__name__)


def input_writes(input_channels: str | list[str], value: Any) -> list:
    """The writes an input makes: one input channel takes the value itself; several, the
    dict's values by key (other keys are left out with a warning, as in LangGraph)."""
    if value is None:
        return []
    if isinstance(input_channels, str):
        return [(input_channels, value)]
    if not isinstance(value, dict):
        raise TypeError(f"Expected the input to be a dict with keys among {input_channels}, "
                        f"got {type(value).__name__}")
    for key in value:
        if key not in input_channels:
            logger.warning(f"Input channel {key} not found in {input_channels}")
    return [(k, v) for k, v in value.items() if k in input_channels]


def command_writes(cmd: Command, conf: dict, saver: BaseCheckpointSaver | None,
                   pending_writes: list) -> list:
    """The (channel, value) writes of Command(resume=..., update=..., goto=...) given as input;
    a resume map ({interrupt id: answer}) goes to the run's config instead."""
    if cmd.graph == Command.PARENT:
        raise InvalidUpdateError("There is no parent graph")
    # {interrupt id: answer}: each interrupt gets its own answer
    resume_map = isinstance(cmd.resume, dict) and all(is_interrupt_id(k) for k in cmd.resume)
    if cmd.resume is not None:
        if not saver:
            raise RuntimeError("Cannot use Command(resume=...) without checkpointer: "
                               "compile(checkpointer=InMemorySaver()) and pass a thread_id")
        if resume_map:
            conf[RESUME_MAP] = cmd.resume
        elif len(pending_interrupts(pending_writes)) > 1:
            raise RuntimeError(
                "When there are multiple pending interrupts, you must specify the interrupt "
                "id when resuming: Command(resume={interrupt.id: value, ...})")
    # unlike a node's goto, the input's keeps END (LangGraph saves that write too)
    writes = [(TASKS, t) if isinstance(t, Send) else (BRANCH_TO.format(t), START)
              for t in goto_targets(cmd.goto)]
    if cmd.resume is not None and not resume_map:
        writes.append((RESUME, cmd.resume))
    writes.extend(update_as_tuples(cmd.update))
    if not writes and not resume_map:
        raise EmptyInputError("Received empty Command input")
    return writes


def pending_interrupts(pending_writes: list) -> set[str]:
    """Ids of interrupts still waiting for an answer (their task never finished)."""
    finished = {t for t, c, _ in pending_writes if c not in CONTROL_WRITES}
    return {i.id for t, c, v in pending_writes
            if c == INTERRUPT and t not in finished for i in v}


def is_interrupt_id(key: Any) -> bool:
    """Interrupt ids are 32 lowercase hex digits (an xxh3-128 digest)."""
    return isinstance(key, str) and len(key) == 32 and all(c in "0123456789abcdef" for c in key)


def share_null_resume(conf: dict, pending_writes: list) -> None:
    """Command(resume=v) answers the first interrupt that asks; tasks share one slot."""
    answer = [v for t, c, v in pending_writes if t == NULL_TASK_ID and c == RESUME]
    conf[NULL_RESUME] = answer[:1] or conf.get(PARENT_NULL_RESUME)  # none: the parent's
