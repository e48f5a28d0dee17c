"""SQLite's housekeeping statements: delete a run's checkpoints, copy a thread, prune its history.

Each verb is a list of statements the front doors run in one transaction; ids are bound as one
JSON array. End of the side trip from checkpoint/base.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from lgcheckpoint.checkpoint.housekeeping import id_list, prune_threads
from lgcheckpoint.checkpoint.sqlite.sql import COLUMNS, KEY, REST, WRITE_REST, Query

_IN_LIST = "IN (SELECT value FROM json_each(?))"  # one bound JSON array instead of N placeholders
_OF_RUNS = f"json_extract(CAST(metadata AS TEXT), '$.run_id') {_IN_LIST}"
_NOT_LATEST = ("checkpoint_id < (SELECT MAX(checkpoint_id) FROM checkpoints AS newest "
               "WHERE newest.thread_id = checkpoints.thread_id "
               "AND newest.checkpoint_ns = checkpoints.checkpoint_ns)")


def delete_for_runs(run_ids: Sequence[str]) -> list[Query]:
    """Delete the checkpoints whose metadata run_id is listed, with their writes."""
    runs = (json.dumps(id_list(run_ids, "delete_for_runs")),)
    return [
        Query(f"DELETE FROM writes WHERE ({KEY}) IN (SELECT {KEY} FROM checkpoints "
              f"WHERE {_OF_RUNS})", runs),
        Query(f"DELETE FROM checkpoints WHERE {_OF_RUNS}", runs),
    ]


def copy_thread(source_thread_id: str, target_thread_id: str) -> list[Query]:
    """Copy a thread's rows under a new thread_id (ids, parents and writes unchanged)."""
    ids = (str(target_thread_id), str(source_thread_id))
    return [
        Query(f"INSERT OR REPLACE INTO checkpoints ({COLUMNS}) SELECT ?, checkpoint_ns, "
              f"checkpoint_id, {REST} FROM checkpoints WHERE thread_id = ?", ids),
        Query(f"INSERT OR REPLACE INTO writes ({KEY}, {WRITE_REST}) SELECT ?, checkpoint_ns, "
              f"checkpoint_id, {WRITE_REST} FROM writes WHERE thread_id = ?", ids),
    ]


def prune(thread_ids: Sequence[str], strategy: str) -> list[Query]:
    """Delete whole threads, or all but each namespace's newest checkpoint (left parentless)."""
    threads = (json.dumps(prune_threads(thread_ids, strategy)),)
    if strategy == "delete":
        return [Query(f"DELETE FROM {table} WHERE thread_id {_IN_LIST}", threads)
                for table in ("writes", "checkpoints")]
    # writes go with the checkpoints deleted; writes of a checkpoint not yet published stay
    return [
        Query(f"DELETE FROM writes WHERE ({KEY}) IN (SELECT {KEY} FROM checkpoints "
              f"WHERE thread_id {_IN_LIST} AND {_NOT_LATEST})", threads),
        Query(f"DELETE FROM checkpoints WHERE thread_id {_IN_LIST} AND {_NOT_LATEST}", threads),
        Query("UPDATE checkpoints SET parent_checkpoint_id = NULL "
              f"WHERE thread_id {_IN_LIST}", threads),
    ]
