"""Where a subgraph's checkpoints go: compile(checkpointer=...) of a graph run inside a node.

    checkpointer | saver                       | namespace of its checkpoints
    -------------+-----------------------------+------------------------------------------------
    None         | the parent's (inherited)    | "node:task_id": one history per call
    False        | none: nothing is saved      | -
    True         | the parent's                | "node" (task ids removed): one history per
                 |                             | thread, continued by every call
    a saver      | the parent's: it wins, even | as None (run as a root graph, it uses its own)
                 | when the parent has none    |

The parent's saver wins so that one saver holds a thread's whole story: a subgraph that kept
its own (an InMemorySaver inside a graph on SQLite) would forget its finished nodes on restart.

A graph invoked inside a node with its own thread_id (or checkpoint_ns / checkpoint_id) is no
subgraph at all: it runs as a root graph on that thread (see is_own_run).
Next: pregel/parent_commands.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lgcheckpoint.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from lgcheckpoint.constants import CHECKPOINTER, CONF, NS_END, NS_SEP, REPLAYING, RESUMING, TASK_ID

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

COORDINATES = ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")


def is_own_run(config: dict) -> bool:
    """Does a config passed to invoke() inside a node name its own checkpoint lineage?"""
    conf = config.get(CONF) or {}
    return any(conf.get(key) for key in COORDINATES)


def resolve_saver(graph: Pregel, conf: dict) -> BaseCheckpointSaver | None:
    """The saver a graph's runs and state methods use, given the run's configurable."""
    if graph.checkpointer is False:
        return None
    if CHECKPOINTER in conf:  # run by a parent (or read through it): the parent's saver wins
        return conf[CHECKPOINTER]
    if graph.checkpointer is True:
        raise RuntimeError("checkpointer=True cannot be used for root graphs: it makes a "
                           "subgraph keep its state per thread; compile the root graph "
                           "with a saver")
    return graph.checkpointer


def locate_run(graph: Pregel, conf: dict) -> None:
    """Where a run's checkpoints are: its own namespace, and the checkpoint the caller named
    for it in checkpoint_map (a subgraph's config from get_state: time travel into it)."""
    conf.update(own_namespace(graph, conf))
    named = (conf.get("checkpoint_map") or {}).get(conf.get("checkpoint_ns", ""))
    if named and not conf.get("checkpoint_id"):
        conf["checkpoint_id"] = named


def own_namespace(graph: Pregel, conf: dict) -> dict:
    """A checkpointer=True graph stores under its namespace without task ids ("outer|child")."""
    if graph.checkpointer is not True:
        return conf
    ns = conf.get("checkpoint_ns", "")
    return {**conf, "checkpoint_ns": NS_SEP.join(p.split(NS_END)[0] for p in ns.split(NS_SEP))}


class Replay:
    """A root run travelling back in time: each per-thread subgraph, the first time it is
    called, resumes from its last checkpoint before the one the root run replays from."""

    def __init__(self, checkpoint_id: str) -> None:
        self.checkpoint_id = checkpoint_id
        self.visited: set[str] = set()  # namespaces already called in this run

    def first_visit(self, ns: str) -> bool:
        stable = ns.rsplit(NS_END, 1)[0]  # the call's namespace without its task id
        first = stable not in self.visited
        self.visited.add(stable)
        return first


def replay_start(metadata: dict, parent_config: dict | None, loaded_id: str) -> str:
    """Per-thread subgraphs replay from before this checkpoint: the loaded one, or for one
    that update_state made, its parent (the subgraphs' later checkpoints predate the edit)."""
    if metadata.get("source") in ("update", "fork") and parent_config:
        return parent_config[CONF]["checkpoint_id"]
    return loaded_id


def replay_bound(conf: dict) -> str | None:
    """For a subgraph call of a time-travelling run, the checkpoint id it loads from before;
    None if the call loads as usual (its latest checkpoint, or the one it names)."""
    replay = conf.get(REPLAYING)
    if replay is None or TASK_ID not in conf or conf.get("checkpoint_id") or (
            not replay.first_visit(conf["checkpoint_ns"])):
        return None
    conf.pop(RESUMING, None)  # the call starts again from its input
    return replay.checkpoint_id


def load_before(saver: BaseCheckpointSaver, config: dict, bound: str) -> CheckpointTuple | None:
    """The latest checkpoint of config's namespace saved before checkpoint `bound`."""
    return next(iter(saver.list(config, before={CONF: {"checkpoint_id": bound}}, limit=1)), None)


async def aload_before(saver: BaseCheckpointSaver, config: dict, bound: str
                       ) -> CheckpointTuple | None:
    async for saved in saver.alist(config, before={CONF: {"checkpoint_id": bound}}, limit=1):
        return saved
    return None
