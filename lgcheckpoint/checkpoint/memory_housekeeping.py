"""InMemorySaver's housekeeping: delete a run's checkpoints, copy a thread, prune its history.

Each verb works on the three dictionaries under the saver's lock; deleting checkpoints also drops
their writes and the blobs no survivor still uses. Next: checkpoint/sqlite/housekeeping.py.
"""

from __future__ import annotations

from collections.abc import Sequence

from lgcheckpoint.checkpoint.housekeeping import id_list, prune_threads


class InMemoryHousekeeping:
    """Mix into InMemorySaver: delete_for_runs, copy_thread, prune (delete_thread is its own)."""

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints written by these runs (metadata run_id), with their writes."""
        runs = set(id_list(run_ids, "delete_for_runs"))
        if not runs:
            return
        with self._lock:
            for thread_id, namespaces in list(self.storage.items()):
                for ns, checkpoints in list(namespaces.items()):
                    doomed = [cid for cid, saved in checkpoints.items()
                              if self.serde.loads_typed(saved.metadata).get("run_id") in runs]
                    self._drop(thread_id, ns, doomed)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy every namespace's checkpoints, writes and blobs to another thread id (same ids)."""
        with self._lock:
            for ns, checkpoints in list(self.storage.get(source_thread_id, {}).items()):
                target = self.storage[target_thread_id][ns]
                for checkpoint_id, saved in checkpoints.items():
                    metadata = self.serde.loads_typed(saved.metadata)
                    if "thread_id" in metadata:  # the copy belongs to its new thread
                        metadata["thread_id"] = target_thread_id
                        saved = saved._replace(metadata=self.serde.dumps_typed(metadata))
                    target[checkpoint_id] = saved
                target.forget_latest()
            for (thread_id, ns, checkpoint_id), writes in list(self.writes.items()):
                if thread_id == source_thread_id:
                    self.writes[(target_thread_id, ns, checkpoint_id)] = dict(writes)
            for (thread_id, ns, channel, version), blob in list(self.blobs.items()):
                if thread_id == source_thread_id:
                    self.blobs[(target_thread_id, ns, channel, version)] = blob

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Drop history: "keep_latest" keeps each namespace's latest checkpoint (with its writes
        and blobs; it loses its parent link), "delete" removes the threads entirely."""
        thread_ids = prune_threads(thread_ids, strategy)
        with self._lock:
            for thread_id in thread_ids:
                if strategy == "delete":
                    self._delete_thread(thread_id)
                    continue
                finished_calls = self._finished_subgraph_calls(thread_id)
                for ns, checkpoints in list(self.storage.get(thread_id, {}).items()):
                    self._drop(thread_id, ns, [checkpoint_id for checkpoint_id in checkpoints
                                               if ns in finished_calls
                                               or checkpoint_id != checkpoints.latest])

    def _finished_subgraph_calls(self, thread_id: str) -> set[str]:
        """Namespaces of subgraph calls ("node:task_id") started from a root checkpoint that
        keep_latest deletes: they go with it, as in LangGraph's PostgresSaver. A subgraph with
        its own persistent namespace (no ":") keeps its latest checkpoint like the root."""
        namespaces = self.storage.get(thread_id, {})
        roots, calls = namespaces.get(""), set()
        if not roots:  # no root checkpoint: no call started from one
            return calls
        for ns, checkpoints in namespaces.items():
            if ":" in ns:
                head = checkpoints[checkpoints.latest]
                root = self.serde.loads_typed(head.metadata).get("parents", {}).get("")
                if root in roots and root != roots.latest:
                    calls.add(ns)
        return calls

    def _drop(self, thread_id: str, ns: str, doomed: Sequence[str]) -> None:
        """Remove checkpoints, their writes, and the blobs no surviving checkpoint still uses."""
        if not doomed:
            return
        checkpoints = self.storage[thread_id][ns]
        for checkpoint_id in doomed:
            del checkpoints[checkpoint_id]
            self.writes.pop((thread_id, ns, checkpoint_id), None)
        checkpoints.forget_latest()
        if not checkpoints:
            del self.storage[thread_id][ns]
            if not self.storage[thread_id]:
                del self.storage[thread_id]
        # a survivor whose parent is gone becomes a root, as LangGraph's Postgres prune does
        used = set()
        for checkpoint_id, saved in list(checkpoints.items()):
            if saved.parent_id is not None and saved.parent_id not in checkpoints:
                checkpoints[checkpoint_id] = saved._replace(parent_id=None)
            versions = self.serde.loads_typed(saved.checkpoint)["channel_versions"]
            used.update((thread_id, ns, channel, version) for channel, version in versions.items())
        for key in [k for k in self.blobs if k[:2] == (thread_id, ns) and k not in used]:
            del self.blobs[key]

