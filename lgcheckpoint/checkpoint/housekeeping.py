"""Thread housekeeping beyond delete_thread: delete a run's checkpoints, copy a thread, prune.

The loop never calls these; a server cleaning up after runs does. ``Housekeeping`` holds the
contract's three verbs (each saver implements them); the helpers check their arguments the same
way for every saver. Next: checkpoint/memory_housekeeping.py.
"""

from __future__ import annotations

from collections.abc import Sequence

PRUNE_STRATEGIES = ("keep_latest", "delete")


def id_list(ids: Sequence[str], verb: str) -> list[str]:
    """Ids as a list of text; a bare string (a list of one-letter ids) is a TypeError."""
    if isinstance(ids, (str, bytes)):
        raise TypeError(f"{verb}() takes a list of ids, not a single string: "
                        f"use {verb}([{ids!r}])")
    return [str(i) for i in ids]


def prune_threads(thread_ids: Sequence[str], strategy: str) -> list[str]:
    """prune's thread ids, after checking the strategy (a ValueError names the known ones)."""
    if strategy not in PRUNE_STRATEGIES:
        raise ValueError(f"unknown prune strategy {strategy!r}; use one of {PRUNE_STRATEGIES}")
    return id_list(thread_ids, "prune")


class Housekeeping:
    """The saver contract's housekeeping verbs beyond delete_thread (BaseCheckpointSaver's)."""

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints (and their writes) whose metadata run_id is in run_ids."""
        raise NotImplementedError(f"{type(self).__name__} must implement delete_for_runs")

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every checkpoint and write of one thread to another thread id."""
        raise NotImplementedError(f"{type(self).__name__} must implement copy_thread")

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Drop history: keep only each namespace's latest checkpoint, or delete everything."""
        raise NotImplementedError(f"{type(self).__name__} must implement prune")
