"""Work that several pytest-xdist workers would each repeat, done once per test run.

A browser test file is split over workers (tests/conftest.py, ONE_UNIT_EACH), and each worker
would build the file's module fixtures again; ``once`` lets the first build a folder and the
others wait for it and read it. Without workers it is an ordinary temporary folder."""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import Callable


def once(tmp_path_factory, name: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name`` of this test run, filled by ``make(folder)`` exactly once (a failed
    ``make`` is tried again by the next worker, and fails the same way)."""
    base = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        base = base.parent  # the run's folder, shared by its workers (one per run)
    folder, done = base / name, base / f"{name}.done"
    with open(base / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the others wait here until the first has finished
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a failed try left
            folder.mkdir()
            make(folder)
            done.touch()
    return folder
