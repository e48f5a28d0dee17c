"""SQLite driver errors in plain words: what went wrong and what to do, for both front doors.

Next: checkpoint/sqlite/aio.py.
"""

from __future__ import annotations

import sqlite3

from lgcheckpoint.checkpoint.errors import InvalidCheckpointError, StoreUnavailableError
from lgcheckpoint.checkpoint.sqlite.sql import BUSY_TIMEOUT_MS

_AIOSQLITE_CLOSED = ("Connection closed", "no active connection")


def explain(exc: Exception) -> Exception | None:
    """A clearer error for a driver error (what went wrong, what to do), or None to keep it."""
    text = str(exc)
    closed = isinstance(exc, sqlite3.ProgrammingError) and "closed" in text
    if closed or text in _AIOSQLITE_CLOSED:
        return RuntimeError("the saver's SQLite connection is closed: use the saver inside its "
                            "`with ...from_conn_string(...)` block, or pass an open connection")
    if "same thread" in text:
        return RuntimeError(f"{text}: open the connection with sqlite3.connect(..., "
                            "check_same_thread=False); the saver's lock makes that safe")
    if "no such table" in text:
        return RuntimeError(f"{text}: the checkpoint tables are missing; call saver.setup() "
                            "(or leave is_setup False so the saver makes them) on a writable file")
    if "readonly database" in text:
        return PermissionError(f"{text}: the SQLite file is read-only; open a writable copy to "
                               "save checkpoints (reading works)")
    if "malformed JSON" in text:
        return InvalidCheckpointError(f"a stored metadata value is not valid JSON ({text}); "
                                      "the file is corrupt or was written by another program")
    if "unable to open database file" in text:  # the file is open: it is the -wal/-shm beside it
        return PermissionError(f"{text}: SQLite cannot create the -wal/-shm files beside the "
                               "database; the file or its folder is read-only. Make them writable "
                               "to save checkpoints (a WAL-mode file writes beside itself even "
                               "to read)")
    if "disk is full" in text or "disk I/O error" in text:
        return StoreUnavailableError(
            f"{text}: the disk holding the SQLite file is full or failing; this write was rolled "
            "back, earlier checkpoints are intact. Free space, then resume the thread with "
            "graph.invoke(None, config)")
    if "database is locked" in text:
        return TimeoutError(f"{text}: another process held the write lock for longer than the "
                            f"busy timeout ({BUSY_TIMEOUT_MS // 1000} s unless PRAGMA busy_timeout "
                            "was changed); run again when it lets go")
    return None
