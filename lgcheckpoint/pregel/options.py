"""A run's options, checked and completed: its config (with defaults, and a subgraph call's
config when a node runs a graph), its stream modes, durability and what it prints.
End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lgcheckpoint.constants import (
    CONF, DEFAULT_RECURSION_LIMIT, NULL_RESUME, PARENT_NULL_RESUME, TASK_ID, WRITER,
)
from lgcheckpoint.pregel.algo import Task
from lgcheckpoint.pregel.runner import task_config
from lgcheckpoint.pregel.subgraphs import is_own_run
from lgcheckpoint.types import current_task
from lgcheckpoint.warnings import LangGraphDeprecatedSinceV10, renamed_option

if TYPE_CHECKING:
    from lgcheckpoint.pregel import Pregel

STREAM_MODES = ("values", "updates", "checkpoints", "tasks", "debug", "custom", "messages")
# configurable keys a run's metadata repeats, so its nodes (and chat models) see them there
PROPAGATED = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id",
              "graph_id")


def run_config(config: dict | None) -> dict:
    """A run's own copy of the config, with defaults; inside a node, a subgraph call's config."""
    # checked first: below, the config and its configurable are dicts
    if not isinstance(config, (dict, type(None))) or not isinstance(
            (config or {}).get(CONF) or {}, dict):
        raise TypeError(f"config must be a dict like {{'configurable': {{'thread_id': "
                        f"'1'}}}}, got {config!r}")
    config = {**(config or {})}
    given = config.get(CONF) or {}
    parent = current_task.get(None)
    # the node handed on its own config: the call is a subgraph of it all the same
    own = parent is not None and given.get(TASK_ID) == parent.id
    if parent is not None and (own or not given.get(TASK_ID) and not is_own_run(config)):
        # graph.invoke() inside a node: a subgraph of the running task (the n-th call: "ns|n")
        sub = subgraph_config(parent)
        if own:  # where the node runs is not where its subgraph runs: keep only additions
            given = {k: v for k, v in given.items() if k not in sub[CONF]}
        config = {**sub, **config, CONF: {**sub[CONF], **given}}
    conf = config[CONF] = {**(config.get(CONF) or {})}
    config.setdefault("recursion_limit", DEFAULT_RECURSION_LIMIT)
    if config["recursion_limit"] < 1:
        raise ValueError("recursion_limit must be at least 1")
    config["metadata"] = {**config.get("metadata", {})}
    for key in PROPAGATED:  # as in LangGraph, the run's metadata repeats these (as given)
        if conf.get(key) and key not in config["metadata"]:
            config["metadata"][key] = conf[key]
    if conf.get("checkpoint_ns") and TASK_ID not in conf:
        # a root run always runs the root graph, even given a subgraph's config
        conf.update(checkpoint_ns="", checkpoint_id=None)
    return config


def stream_modes(stream_mode: Any) -> list[str]:
    """The modes asked for, as a list; refuses modes we do not stream."""
    modes = list(stream_mode) if isinstance(stream_mode, (list, tuple)) else [
        stream_mode or "updates"]
    if unknown := [mode for mode in modes if mode not in STREAM_MODES]:
        raise ValueError(f"Unknown stream_mode {unknown[0]!r}: use one of {STREAM_MODES}")
    return modes


def durability_option(options: dict, durability: str | None) -> str | None:
    """LangGraph's deprecated checkpoint_during=True/False means durability "async"/"exit"."""
    if options.get("checkpoint_during", None) is None:  # None: not given (no warning)
        options.pop("checkpoint_during", None)
        return durability
    during = renamed_option(options, "checkpoint_during", "durability", None,
                            LangGraphDeprecatedSinceV10)
    if durability is not None:
        raise ValueError("Cannot use both `checkpoint_during` and `durability`: pass only "
                         "`durability`")
    return "async" if during else "exit"


def print_modes(graph: Pregel, debug: bool | None, print_mode: Any) -> tuple:
    """The stream modes a run prints: debug=True prints updates and values, as in LangGraph."""
    if debug or graph.debug:
        return ("updates", "values")
    return tuple(stream_modes(print_mode)) if print_mode else ()


def subgraph_config(task: Task) -> dict:
    """A child run's config: the task's namespace, the parents' checkpoint ids, the saver."""
    conf = task_config(task)[CONF]  # where the task runs, as its node sees it
    child = {k: v for k, v in conf.items() if k not in ("checkpoint_id", WRITER)}
    calls = task.scratchpad.subgraph_counter  # subgraphs this task called before this one
    task.scratchpad.subgraph_counter += 1
    child["checkpoint_ns"] = f"{task.ns}|{calls}" if calls else task.ns
    child[PARENT_NULL_RESUME] = conf.get(NULL_RESUME)
    return {**task.config, CONF: child}
