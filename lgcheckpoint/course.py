"""Helpers for the course notebooks: check an exercise, show the source that implements an idea,
and copy the course into a student's folder.

``check(condition, hint)`` prints "right" or "not yet: <hint>" and returns whether it held; a
condition may be a callable, so a check can run before the student has defined their answer.
``show_source("pregel/algo.py: apply_writes")`` displays a function of this package with its file
and line numbers, so every chapter can end by reading the code it explained. Nothing in the
runtime imports this module. ``copy_course(folder)`` is what ``lgcheckpoint course`` runs: the
chapters ship inside the wheel, so a student needs no clone. Next: graph.py (where the reading path
starts)
"""

from __future__ import annotations

import filecmp
import importlib
import inspect
import shutil
from collections.abc import Callable
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
FIRST_CHAPTER = "00_tour.ipynb"
# where the chapters are: inside an installed wheel (setup.py copies them there), else in a clone
COURSE_FOLDERS = (PACKAGE / "course_notebooks", PACKAGE.parent / "notebooks")


def check(condition: bool | Callable[[], bool], hint: str) -> bool:
    """Print "right" when the condition holds, else "not yet: <hint>" (so does a failing call)."""
    try:
        ok = bool(condition() if callable(condition) else condition)
    except Exception as error:  # noqa: BLE001 -- a half-written answer is "not yet", not a traceback
        print(f"not yet: {hint} ({type(error).__name__}: {error})")
        return False
    print("right" if ok else f"not yet: {hint}")
    return ok


class Source:
    """A function's source as the notebook shows it: Markdown (file, lines, code) and plain text."""

    def __init__(self, where: str, first_line: int, code: str):
        self.where, self.first_line, self.code = where, first_line, code

    @property
    def last_line(self) -> int:
        return self.first_line + self.code.count("\n") - (1 if self.code.endswith("\n") else 0)

    def heading(self) -> str:
        return f"lgcheckpoint/{self.where}, lines {self.first_line}-{self.last_line}"

    def _repr_markdown_(self) -> str:
        # plain text, not ```python: JupyterLab's highlight colours fall below 4.5:1 contrast
        return f"**`{self.heading()}`**\n\n```text\n{self.code.rstrip()}\n```"

    def __repr__(self) -> str:
        return f"# {self.heading()}\n{self.code.rstrip()}"


def find_source(spec: str) -> Source:
    """Resolve "path/to/module.py: name" (name may be "Class.method") inside lgcheckpoint."""
    path, sep, name = (part.strip() for part in spec.partition(":"))
    if not sep or not path.endswith(".py") or not name:
        raise ValueError("write the source as 'file.py: name', "
                         f"e.g. 'pregel/algo.py: apply_writes', "
                         f"not {spec!r}")
    file = PACKAGE / path
    if not file.is_file():
        raise ValueError(f"no file lgcheckpoint/{path}; paths are relative to the package, "
                         f"e.g. 'checkpoint/memory.py'")
    module_path = ".".join(file.relative_to(PACKAGE.parent).with_suffix("").parts)
    obj = importlib.import_module(module_path.removesuffix(".__init__"))
    for part in name.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"lgcheckpoint/{path} has no {name!r}")
        obj = getattr(obj, part)
    obj = inspect.unwrap(obj)
    lines, first = inspect.getsourcelines(obj)
    return Source(f"{path}: {name}", first, "".join(lines))


def show_source(*specs: str) -> None:
    """Display each "file.py: name" of lgcheckpoint as a code block headed by its file and lines."""
    # imported here: only notebooks call this, and the package does not depend on IPython
    from IPython.display import display

    for spec in specs:
        display(find_source(spec))


class CourseNotCopied(Exception):
    """The course cannot be copied into that folder; the message says why and what to do."""


def course_files() -> tuple[Path, list[Path]]:
    """The folder the chapters ship in, and the files a student needs: chapters and their data."""
    source = next((f for f in COURSE_FOLDERS if (f / FIRST_CHAPTER).is_file()), None)
    if source is None:
        raise CourseNotCopied("this installation has no course notebooks; reinstall lgcheckpoint "
                              "from its wheel, or run from a clone of the repository")
    chapters = sorted(source.glob("*.ipynb"))
    data = sorted(p for p in (source / "data").rglob("*") if p.is_file())
    return source, [p.relative_to(source) for p in chapters + data]


def copy_course(folder: str | Path) -> list[Path]:
    """Copy the chapters and their data into ``folder``; return the files copied.

    A file already there and identical is left alone, so a second run copies nothing; a file that
    differs (the student's edits) stops the copy before anything is written."""
    if not str(folder).strip():
        raise CourseNotCopied("no folder given (an empty name); give a folder for the course")
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CourseNotCopied(f"{folder} is a file; give a folder for the course")
    source, files = course_files()
    edited = [f for f in files if (folder / f).exists()
              and not filecmp.cmp(source / f, folder / f, shallow=False)]
    if edited:
        names = ", ".join(str(f) for f in edited[:3]) + " …" * (len(edited) > 3)
        raise CourseNotCopied(
            f"{folder} already holds {len(edited)} course file(s) that differ from this "
            f"version's ({names}): your edits are kept and nothing was copied; give another "
            "folder for a fresh copy")
    missing = [f for f in files if not (folder / f).exists()]
    for f in missing:
        (folder / f).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / f, folder / f)
    return missing
