"""Reserved names: the channels and config keys the runtime uses for its own bookkeeping.

They match LangGraph's spelling, so the checkpoints we write read the same. Next: types.py.
``Send`` and ``Interrupt`` still import from here, as in LangGraph, with a deprecation warning.
"""

from lgcheckpoint import types
from lgcheckpoint.checkpoint.base import (  # noqa: F401  (savers store these names too)
    ERROR, INTERRUPT, NS_END, NS_SEP, RESUME, TASKS,
)
from lgcheckpoint.types import OVERWRITE  # noqa: F401  (an Overwrite's tag: bypass the reducer)
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, warn_deprecated

START = "__start__"  # the input channel, and the pseudo-node that writes the input
END = "__end__"  # the pseudo-node an edge points at to stop
NO_WRITES = "__no_writes__"  # marker write: the task ran and wrote nothing
RETURN = "__return__"  # a functional-API task's result (func.py), saved as a pending write
PREVIOUS = "__previous__"  # an entrypoint's saved value, handed to its next run as `previous`
INPUT = "__input__"  # name of the pseudo-task that carries input and update_state writes
PUSH = "__pregel_push"  # task kind: started by a Send
PULL = "__pregel_pull"  # task kind: started by a channel it subscribes to
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"  # owner of writes that no task made
BRANCH_TO = "branch:to:{}"  # the channel that triggers a node after an edge or a goto
CONF = "configurable"
DEFAULT_RECURSION_LIMIT = 10007  # super-steps a run may take (LangGraph 1.2's; 25 before 1.0)
ERROR_SOURCE_NODE = "__error_source_node__"  # beside a handled ERROR: the node that failed
# langchain tags: a chat model tagged "nostream" is not streamed by stream_mode="messages" (its
# message arrives whole when its node returns it); a run tagged hidden is left out of streams
TAG_NOSTREAM = "nostream"
TAG_HIDDEN = "langsmith:hidden"

# hidden config keys: the runtime's own entries in config["configurable"], set by a run for
# its tasks and the subgraphs they call (a user never passes them; public_config hides them)
TASK_ID = "__lg_task_id"  # the task a config belongs to: a run with it is a subgraph call
CHECKPOINTER = "__lg_checkpointer"  # the parent's saver, inherited by a subgraph without one
DURABILITY = "__lg_durability"  # the parent run's durability, inherited by subgraph calls
SAVES = "__lg_saves"  # the parent run's SaveQueue: a subgraph's saves keep the parent's order
RESUMING = "__lg_resuming"  # first step of a resumed run: subgraph calls continue, not restart
RESUME_MAP = "__lg_resume_map"  # Command(resume={interrupt id: answer}) of this run
NULL_RESUME = "__lg_null_resume"  # [answer] of Command(resume=answer), shared by all tasks
PARENT_NULL_RESUME = "__lg_parent_null_resume"  # the parent's, for a subgraph call's tasks
ROOT_STREAM = "__lg_stream"  # the root run's emit: subgraphs stream to it when subgraphs=True
ROOT_STREAM_MODES = "__lg_stream_modes"  # the modes that root run asked for
WRITER = "__lg_writer"  # the custom stream writer a node gets (get_stream_writer)
CHECKPOINT_ID = "__lg_checkpoint_id"  # the checkpoint the running step started from
STEP = "__lg_step"  # the running step's number (node metadata langgraph_step)
REPLAYING = "__lg_replay"  # a time-travelling root run's Replay, shared by its subgraph calls
RUNTIME = "__lg_runtime"  # the run's Runtime (runtime.py): context=, stream writer
CALL = "__lg_call"  # runs a task call as a PUSH task of the running step (pregel/calls.py)

# special writes that say how a task ended, not what it wrote
CONTROL_WRITES = frozenset((ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME))
# channels and keys a user may not name a node or state key after
ROOT = "__root__"  # the one channel of a state that is a single value (StateGraph(int))
RESERVED = frozenset((START, END, TASKS, INTERRUPT, RESUME, ERROR, NO_WRITES, INPUT))


MOVED_TO_TYPES = ("Send", "Interrupt")  # lived here before LangGraph 1.0


def __getattr__(name: str):
    """``from lgcheckpoint.constants import Send``: warn, then hand over types.Send."""
    if name not in MOVED_TO_TYPES:
        raise AttributeError(f"module 'lgcheckpoint.constants' has no attribute '{name}'")
    warn_deprecated(f"Importing {name} from lgcheckpoint.constants is deprecated. Please use "
                    f"'from lgcheckpoint.types import {name}' instead.",
                    LangGraphDeprecatedSinceV10)
    return getattr(types, name)
