"""docs/reading-path.md and the modules' "Next:" pointers must agree, so the path cannot rot.

The page has a core chain, then side trips, each a chain that starts at its hook in the core,
each chain a table (one row per module, with its size as tools/linecount.py counts it); then a
"Beside the path" list. Every module of the package is in exactly one of them; each module's
docstring says ``Next:`` the row after it in its chain; the core's last row says nothing, a side
trip's last row says "side trip from <its hook>"; a module beside the path may point anywhere
that exists, but never round in a circle; and a size on the page is within 10 % of the file's.
"""

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "lgcheckpoint"
PAGE = ROOT / "docs" / "reading-path.md"
sys.path.insert(0, str(ROOT / "tools"))
from linecount import count  # noqa: E402

SIZE_TOLERANCE = 0.10
ROW = re.compile(r"^\| `([\w/]+\.py)` \| (\d[\d,]*) \|", re.M)
TRIP = re.compile(r"^### (.+?): from `([\w/]+\.py)`.*?([\d,]+) lines$", re.M)


def section(title: str) -> str:
    """The page's "## title" section, up to the next "## " heading."""
    text = PAGE.read_text()
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def rows(text: str) -> list[tuple[str, int]]:
    """A table's rows in reading order: (module path inside the package, lines)."""
    return [(module, int(lines.replace(",", ""))) for module, lines in ROW.findall(text)]


def core() -> list[tuple[str, int]]:
    return rows(section("The core"))


def trips() -> list[tuple[str, str, int, list[tuple[str, int]]]]:
    """Each side trip: (name, its hook in the core, its stated size, its rows)."""
    text = section("Side trips")
    heads = list(TRIP.finditer(text))
    assert len(heads) == text.count("\n### "), "a side trip's heading lost its hook or size"
    ends = [h.start() for h in heads[1:]] + [len(text)]
    return [(h[1], h[2], int(h[3].replace(",", "")), rows(text[h.end():end]))
            for h, end in zip(heads, ends)]


def chains() -> list[list[str]]:
    """The core, then every side trip, as lists of modules."""
    return [[m for m, _ in core()]] + [[m for m, _ in trip_rows] for *_, trip_rows in trips()]


def beside_list() -> list[str]:
    """The modules named in the "Beside the path" list."""
    return re.findall(r"`([\w/]+\.py)`", section("Beside the path"))


def package_modules() -> list[str]:
    """Every module of the package, as a path inside it."""
    return sorted(str(f.relative_to(PKG)) for f in PKG.rglob("*.py"))


def docstring(module: str) -> str:
    return ast.get_docstring(ast.parse((PKG / module).read_text())) or ""


def next_pointer(module: str) -> str | None:
    """The first path after "Next:" in a module's docstring, as written (or None)."""
    found = re.search(r"Next:\s*`*([\w./]+\.py)", docstring(module))
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


def test_every_module_is_on_a_chain_or_beside_it_once():
    on_chains = [module for chain in chains() for module in chain]
    listed = on_chains + beside_list()
    assert 10 <= len(core()) <= 14, "the core should be about a dozen modules (or was not found)"
    assert len(trips()) >= 10, "the side trips were not found or lost their headings"
    assert sorted(set(listed)) == sorted(listed), "a module is listed twice"
    missing = sorted(set(package_modules()) - set(listed))
    unknown = sorted(set(listed) - set(package_modules()))
    assert not missing, f"add these to docs/reading-path.md, on a chain or beside it: {missing}"
    assert not unknown, f"docs/reading-path.md names modules that do not exist: {unknown}"


def test_each_side_trip_starts_from_a_module_of_the_core():
    core_modules = {module for module, _ in core()}
    for name, hook, _, trip_rows in trips():
        assert hook in core_modules, f"side trip {name!r} starts from {hook}, not a core module"
        assert trip_rows, f"side trip {name!r} has no rows"


def test_each_next_pointer_names_the_following_row():
    for chain in chains():
        for module, following in zip(chain, chain[1:]):
            pointer = next_pointer(module)
            assert pointer, f"{module} has no 'Next:' line; it should name {following}"
            assert resolve(module, pointer) == following, (
                f"{module} says Next: {pointer}, docs/reading-path.md's next row is {following}"
            )
        last = chain[-1]
        assert next_pointer(last) is None, f"{last} ends a chain; its 'Next:' leads nowhere new"


def test_a_side_trip_ends_by_naming_its_hook():
    for name, hook, _, trip_rows in trips():
        last = trip_rows[-1][0]
        said = re.search(r"side trip from `*([\w./]+\.py)", docstring(last))
        assert said and resolve(last, said.group(1)) == hook, (
            f"{last} ends the side trip {name!r}: its docstring should say "
            f"'End of the side trip from {hook}.'"
        )


def test_modules_beside_the_path_lead_back_without_a_circle():
    on_chains = {module for chain in chains() for module in chain}
    for start in beside_list():
        seen, module = [start], start
        while module not in on_chains and (pointer := next_pointer(module)):
            target = resolve(module, pointer)
            assert target, f"{module} says Next: {pointer}, which does not exist"
            if not (PKG / target).is_file():
                break  # a notebook or another file outside the package
            assert target not in seen, f"'Next:' pointers go round in a circle: {seen + [target]}"
            seen.append(target)
            module = target


def test_sizes_on_the_page_are_current():
    tables = [core()] + [trip_rows for *_, trip_rows in trips()]
    wrong = [
        f"{module}: the page says {lines}, tools/linecount.py counts {count(PKG / module)}"
        for table in tables for module, lines in table
        if abs(count(PKG / module) - lines) > SIZE_TOLERANCE * count(PKG / module)
    ]
    stated = int(re.search(r"^\| \*\*core\*\* \| \*\*([\d,]+)\*\*", section("The core"),
                           re.M)[1].replace(",", ""))
    totals = [("the core", stated, [m for m, _ in core()])] + [
        (f"side trip {name!r}", size, [m for m, _ in trip_rows])
        for name, _, size, trip_rows in trips()]
    wrong += [
        f"{what}: the page says {lines} lines, tools/linecount.py counts {actual}"
        for what, lines, modules in totals
        if abs((actual := sum(count(PKG / m) for m in modules)) - lines) > SIZE_TOLERANCE * actual
    ]
    assert not wrong, "update docs/reading-path.md:\n" + "\n".join(wrong)
