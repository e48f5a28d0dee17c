"""Every course chapter has tests a student can run alone: ``pytest --lesson NN``."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = sorted(p.stem for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))


def lesson_marks() -> dict[str, list[str]]:
    """Each name given to @pytest.mark.lesson(...) in tests/, with the files that use it."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "lesson" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found.setdefault(str(node.args[0].value), []).append(path.name)
    return found


def test_the_course_has_its_21_chapters():
    assert [c[:2] for c in CHAPTERS] == [f"{n:02d}" for n in range(21)]


def test_every_chapter_has_a_lesson_test():
    marked = lesson_marks()
    missing = [c for c in CHAPTERS if c not in marked]
    assert not missing, f"mark a test of each with @pytest.mark.lesson(<name>): {missing}"


def test_every_lesson_mark_names_a_chapter():
    unknown = {name: files for name, files in lesson_marks().items() if name not in CHAPTERS}
    assert not unknown, f"a lesson mark must be a notebook's name, e.g. {CHAPTERS[4]!r}: {unknown}"
