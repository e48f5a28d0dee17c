"""Print the size of each part of lgcheckpoint: a figure we watch to keep the code compact.

Counts non-blank lines that are not pure comments, per part; docstrings count (they teach).
"""

import signal
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "lgcheckpoint"
PARTS = {
    "runtime": [
        "constants.py",
        "config.py",
        "types.py",
        "errors.py",
        "channels.py",
        "graph.py",
        "managed.py",
        "pregel",
    ],
    "functional API + Runtime": ["func.py", "runtime.py"],  # task calls: pregel/calls.py
    "node caches (memory+sqlite)": ["cache"],
    "checkpoint model": ["checkpoint/base.py", "checkpoint/id.py", "checkpoint/errors.py"],
    "serializer": ["checkpoint/serde"],
    "InMemorySaver": ["checkpoint/memory.py"],
    "SqliteSaver (sync+async)": ["checkpoint/sqlite"],
    "PostgresSaver (sync+async)": ["checkpoint/postgres"],
    "viewers": ["viz"],
    "thread guard": ["guard.py", "checkpoint/locks.py"],
    "cli + tour": ["cli.py", "__main__.py", "tour.py"],
    "course helpers + demos": ["course.py", "course_pictures.py", "demos"],
}


def count(path: Path) -> int:
    files = sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return sum(
        1
        for f in files
        for line in f.read_text().splitlines()
        if line.strip() and not line.strip().startswith("#")
    )


def table() -> dict[str, int]:
    return {part: sum(count(PKG / p) for p in paths) for part, paths in PARTS.items()}


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sizes = table()
    for part, lines in sizes.items():
        print(f"{part:<28} {lines:>6} lines")
    print(f"{'total':<28} {sum(sizes.values()):>6} lines")
