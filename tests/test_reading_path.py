"""The README's reading order and the modules' "Next:" pointers must agree, so the path cannot rot.

The README section "Read the source in this order" has a table (one row per module, with its size
as tools/linecount.py counts it) and a "Beside the path" list. Every module of the package is in
exactly one of them; each table module's docstring says ``Next:`` the row after it (the last
says nothing); a module beside the path may point anywhere that exists, but never round in a
circle; and a size in the table is within 10 % of the file's.
"""

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "lgcheckpoint"
sys.path.insert(0, str(ROOT / "tools"))
from linecount import count  # noqa: E402

SIZE_TOLERANCE = 0.10


def reading_section() -> str:
    """The README's "Read the source in this order" section, up to the next heading."""
    text = (ROOT / "README.md").read_text()
    start = text.index("## Read the source in this order")
    end = text.index("\n## ", start + 1)
    return text[start:end]


def path_table() -> list[tuple[str, int]]:
    """The table's rows in reading order: (module path inside the package, lines)."""
    rows = re.findall(r"^\| `([\w/]+\.py)` \| (\d[\d,]*) \|", reading_section(), re.M)
    return [(module, int(lines.replace(",", ""))) for module, lines in rows]


def beside_list() -> list[str]:
    """The modules named in the "Beside the path" list that follows the table."""
    section = reading_section()
    beside = section[section.index("Beside the path") :]
    return re.findall(r"`([\w/]+\.py)`", beside)


def package_modules() -> list[str]:
    """Every module of the package, as a path inside it."""
    return sorted(str(f.relative_to(PKG)) for f in PKG.rglob("*.py"))


def next_pointer(module: str) -> str | None:
    """The first path after "Next:" in a module's docstring, as written (or None)."""
    doc = ast.get_docstring(ast.parse((PKG / module).read_text())) or ""
    found = re.search(r"Next:\s*`*([\w./]+\.py)", doc)
    return found.group(1) if found else None


def resolve(module: str, pointer: str) -> str | None:
    """A pointer names a path from the package root, or from the module's folder or one above it."""
    pointer = pointer.removeprefix("lgcheckpoint/")
    folder = Path(module).parent
    for base in (Path("."), folder, *folder.parents):
        candidate = base / pointer
        if (PKG / candidate).is_file():
            return candidate.as_posix()
    return pointer if (ROOT / pointer).is_file() else None  # outside the package: notebooks/...


def test_every_module_is_on_the_path_or_beside_it_once():
    on_path = [module for module, _ in path_table()]
    listed = on_path + beside_list()
    assert len(on_path) > 40, "the README table was not found or lost its rows"
    assert sorted(set(listed)) == sorted(listed), "a module is listed twice"
    missing = sorted(set(package_modules()) - set(listed))
    unknown = sorted(set(listed) - set(package_modules()))
    assert not missing, f"add these to the README's reading path or beside it: {missing}"
    assert not unknown, f"the README names modules that do not exist: {unknown}"


def test_each_next_pointer_names_the_following_row():
    on_path = [module for module, _ in path_table()]
    for module, following in zip(on_path, on_path[1:]):
        pointer = next_pointer(module)
        assert pointer, f"{module} has no 'Next:' line; it should name {following}"
        assert resolve(module, pointer) == following, (
            f"{module} says Next: {pointer}, the README's next row is {following}"
        )
    last = on_path[-1]
    assert next_pointer(last) is None, f"{last} ends the path; its 'Next:' leads nowhere new"


def test_modules_beside_the_path_lead_back_without_a_circle():
    on_path = {module for module, _ in path_table()}
    for start in beside_list():
        seen, module = [start], start
        while module not in on_path and (pointer := next_pointer(module)):
            target = resolve(module, pointer)
            assert target, f"{module} says Next: {pointer}, which does not exist"
            if not (PKG / target).is_file():
                break  # a notebook or another file outside the package
            assert target not in seen, f"'Next:' pointers go round in a circle: {seen + [target]}"
            seen.append(target)
            module = target


def test_sizes_in_the_table_are_current():
    wrong = [
        f"{module}: README says {lines}, tools/linecount.py counts {count(PKG / module)}"
        for module, lines in path_table()
        if abs(count(PKG / module) - lines) > SIZE_TOLERANCE * count(PKG / module)
    ]
    assert not wrong, "update the README's reading table:\n" + "\n".join(wrong)
