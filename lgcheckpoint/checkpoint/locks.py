"""Thread locks that other processes see: the storage half of the thread guard (guard.py).

A run holds its thread's lock from start to end. Each saver kind gets the lock its database can
share between processes, and every lock is released by the operating system or the server when
its holder dies (a SIGKILLed run never leaves a thread locked):

- **Postgres**: a session advisory lock, ``pg_try_advisory_lock(key)``, with key = a 64-bit hash
  of ``thread_id`` and ``checkpoint_ns`` ("", the root graph), taken only on a connection the
  caller gave and only for the run (the saver does it: ``postgres/__init__.py``). On a saver's
  single connection, every run of the process shares that session, and a session may take the
  same lock twice — so the guard's in-process lock, keyed by that connection, keeps two runs of
  one process apart there, and the advisory lock keeps other processes out. On a pool, the run
  borrows one connection for its whole length, holds the lock on it and sends its own statements
  through it (a run needs one pooled connection, never two: more runs than connections wait for
  the pool, none deadlocks), then unlocks and gives it back. Nothing stays open after a run.
- **SQLite file**: a POSIX record lock (``fcntl.lockf``) on one byte of ``<database>-threadlock``,
  a file beside the database, at an offset hashed from the thread. Why not a row in a side table
  held under ``BEGIN IMMEDIATE``: that holds SQLite's single write lock for the whole run, so a run
  on *another* thread of the same file could not save a checkpoint until it ended, and a lease row
  outlives a killed process. A record lock blocks only the same thread, vanishes with its process,
  and leaves LangGraph's tables untouched. The file stays empty; removing it while no run is
  active is harmless. SQLite and this lock both need a local file system (SQLite's WAL needs one).
  A folder we cannot write holds no lock file; no run can save a checkpoint there either, so the
  in-process lock is enough.
- **InMemory, ":memory:", other savers**: nothing here; the guard's in-process lock is the lock.

POSIX record locks belong to a process, not to a file handle, so the guard keeps its own
in-process lock as well and opens each lock file once per process (closing any handle on it
would drop all of the process's locks on that file). End of the side trip from pregel/__init__.py.
"""

from __future__ import annotations

import errno
import hashlib
import os
import sqlite3
import threading
from typing import Any, ClassVar

TRY_LOCK_SQL = "SELECT pg_try_advisory_lock(%s) AS locked"  # run by the Postgres savers
UNLOCK_SQL = "SELECT pg_advisory_unlock(%s)"
LOCK_FILE_SUFFIX = "-threadlock"


def thread_key(thread_id: str, checkpoint_ns: str = "") -> int:
    """A signed 64-bit number for the thread (Postgres advisory keys are bigint)."""
    digest = hashlib.blake2b(f"{thread_id}\x00{checkpoint_ns}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


class NoLocks:
    """The database is private to this process: the in-process lock is all there is."""

    identity: Any = None

    def try_lock(self, key: int) -> bool:
        return True

    def unlock(self, key: int) -> None:
        pass


class FileLocks:
    """One byte per thread in a lock file beside the SQLite database; one per file per process."""

    _open: ClassVar[dict[str, FileLocks | NoLocks]] = {}  # realpath -> locks, for the process
    _open_lock = threading.Lock()

    def __init__(self, path: str) -> None:
        self.identity = ("sqlite", path)
        self.fd = os.open(path + LOCK_FILE_SUFFIX, os.O_RDWR | os.O_CREAT, 0o666)

    @classmethod
    def for_database(cls, path: str) -> FileLocks | NoLocks:
        """The process's lock file for this database (made once, never closed)."""
        path = os.path.realpath(path)
        with cls._open_lock:
            if path not in cls._open:
                try:
                    cls._open[path] = cls(path)
                except OSError as exc:
                    if not isinstance(exc, PermissionError) and exc.errno != errno.EROFS:
                        raise
                    fallback = NoLocks()  # a read-only folder: see the module docstring
                    fallback.identity = ("sqlite", path)
                    return fallback
            return cls._open[path]

    def try_lock(self, key: int) -> bool:
        import fcntl  # POSIX only; the guard refuses a SQLite file elsewhere

        try:
            fcntl.lockf(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, key & ((1 << 62) - 1))
            return True
        except (BlockingIOError, PermissionError):  # EAGAIN / EACCES: another process has it
            return False

    def unlock(self, key: int) -> None:
        import fcntl

        fcntl.lockf(self.fd, fcntl.LOCK_UN, 1, key & ((1 << 62) - 1))


class AdvisoryLocks:
    """Postgres advisory locks, taken through the saver on a connection the caller gave it."""

    def __init__(self, saver: Any) -> None:
        self.try_lock, self.unlock = saver.try_advisory_lock, saver.advisory_unlock
        # runs on one connection share its session, which may take a lock twice: the guard's
        # in-process lock keeps them apart (runs on other connections are apart in Postgres)
        self.identity = ("postgres", id(saver.conn))


def locks_for(saver: Any, sqlite_path: str = "") -> FileLocks | AdvisoryLocks | NoLocks | None:
    """The cross-process locks for a saver's database; None when the saver kind is not known."""
    conn = getattr(saver, "conn", None)
    if isinstance(conn, sqlite3.Connection):
        path = conn.execute("PRAGMA database_list").fetchone()[2]
        return FileLocks.for_database(path) if path else NoLocks()
    module = type(conn).__module__
    if module.startswith("aiosqlite"):  # its path is read by an await: see guard.alocks_for
        return FileLocks.for_database(sqlite_path) if sqlite_path else NoLocks()
    if hasattr(saver, "try_advisory_lock"):
        return AdvisoryLocks(saver)
    if type(saver).__name__ == "InMemorySaver":
        return NoLocks()
    return None
