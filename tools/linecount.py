"""Print the size of each part of lgcheckpoint: a figure we watch to keep the code compact.

Counts non-blank lines that are not pure comments, per part; docstrings count (they teach).
``python tools/linecount.py --update-reading-path`` writes the current sizes into
docs/reading-path.md (each module's row, each chain's total): tests/test_reading_path.py
checks them.
"""

import re
import signal
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "lgcheckpoint"
PARTS = {
    "runtime": [
        "constants.py",
        "config.py",
        "types.py",
        "errors.py",
        "response_schema.py",
        "warnings.py",
        "channels",
        "graph.py",
        "graph_checks.py",
        "graph_shortcuts.py",
        "managed.py",
        "state_schema.py",
        "node_defaults.py",
        "pregel",
    ],
    "functional API + Runtime": ["func.py", "runtime.py"],  # task calls: pregel/calls.py
    "node caches (memory+sqlite)": ["cache"],
    "checkpoint model": ["checkpoint/base.py", "checkpoint/id.py", "checkpoint/errors.py",
                         "checkpoint/aio.py", "checkpoint/delta_history.py",
                         "checkpoint/housekeeping.py"],
    "serializer": ["checkpoint/serde"],
    "InMemorySaver": ["checkpoint/memory.py", "checkpoint/memory_history.py",
                      "checkpoint/memory_housekeeping.py"],
    "SqliteSaver (sync+async)": ["checkpoint/sqlite"],
    "PostgresSaver (sync+async)": ["checkpoint/postgres"],
    "viewers": ["viz"],
    "thread guard": ["guard.py", "checkpoint/locks.py"],
    "cli + tour + run": ["cli.py", "__main__.py", "tour.py", "swap.py"],
    "messages + prebuilt (extra)": ["messages.py", "prebuilt"],
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


def update_reading_path(page: Path = PKG.parent / "docs" / "reading-path.md") -> None:
    """Rewrite every size on the reading-path page: module rows first, then each chain's total."""
    text = re.sub(r"^(\| `([\w/]+\.py)` \| )[\d,]+( \|)",
                  lambda m: f"{m[1]}{count(PKG / m[2])}{m[3]}", page.read_text(), flags=re.M)
    parts = re.split(r"(?=^#{2,3} )", text, flags=re.M)
    for i, part in enumerate(parts):
        total = sum(int(n) for n in re.findall(r"^\| `[\w/]+\.py` \| (\d+) \|", part, re.M))
        parts[i] = re.sub(r"^(###? .*?)[\d,]+ lines$", rf"\g<1>{total:,} lines", part, 1, re.M)
        if part.startswith("## The core"):
            parts[i] = re.sub(r"\*\*[\d,]+\*\*", f"**{total:,}**", parts[i], 1)
            core_total = total
    text = re.sub(r"(\*\*core\*\* is \d+ modules, )[\d,]+( lines)", rf"\g<1>{core_total:,}\2",
                  "".join(parts))
    page.write_text(text)


if __name__ == "__main__":
    if sys.argv[1:] == ["--update-reading-path"]:
        update_reading_path()
        sys.exit()
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends the output quietly
    sizes = table()
    for part, lines in sizes.items():
        print(f"{part:<28} {lines:>6} lines")
    print(f"{'total':<28} {sum(sizes.values()):>6} lines")
