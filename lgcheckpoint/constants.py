"""Reserved names: the channels and config keys the runtime uses for its own bookkeeping.

They match LangGraph's spelling, so the checkpoints we write read the same. Next: types.py.
"""

from lgcheckpoint.checkpoint.base import ERROR, INTERRUPT, RESUME, SCHEDULED  # noqa: F401

START = "__start__"  # the input channel, and the pseudo-node that writes the input
END = "__end__"  # the pseudo-node an edge points at to stop
TASKS = "__pregel_tasks"  # Topic channel holding Send packets for the next step
NO_WRITES = "__no_writes__"  # marker write: the task ran and wrote nothing
RETURN = "__return__"
INPUT = "__input__"  # name of the pseudo-task that carries input and update_state writes
PUSH = "__pregel_push"  # task kind: started by a Send
PULL = "__pregel_pull"  # task kind: started by a channel it subscribes to
NS_SEP = "|"  # joins namespaces of nested graphs: "outer:id|inner:id"
NS_END = ":"  # separates a node name from its task id in a namespace
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"  # owner of writes that no task made
BRANCH_TO = "branch:to:{}"  # the channel that triggers a node after an edge or a goto
CONF = "configurable"

# special writes that say how a task ended, not what it wrote
CONTROL_WRITES = frozenset((ERROR, INTERRUPT, RESUME))
# channels and keys a user may not name a node or state key after
RESERVED = frozenset((START, END, TASKS, INTERRUPT, RESUME, ERROR, NO_WRITES, INPUT))
