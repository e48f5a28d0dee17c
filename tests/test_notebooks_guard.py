"""The course is checked, not just executed: every notebook runs under nbval and compares
outputs, every exercise has a check a student runs, and every solution is out of sight, out of
Run All's reach (a closed Markdown block, see tools/notebooks.py), and passes its check when
executed in its place."""

import json
import sys
from pathlib import Path

import nbformat
import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "tools"))
from notebooks import (  # noqa: E402 - tools/ on the path
    SOLUTION_OPEN,
    exercise_problems,
    failed_solutions,
    parse,
    solution_code,
    with_solutions,
)


def code_cells(path):
    return [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]


def test_the_test_command_runs_nbval_strictly_over_notebooks():
    opts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "notebooks" in opts["testpaths"]
    assert "--nbval " in opts["addopts"] + " " and "--nbval-lax" not in opts["addopts"]
    assert "--nbval-sanitize-with" in opts["addopts"]


def test_there_is_a_course():
    assert len(NOTEBOOKS) >= 1, "notebooks/ has no executed notebooks"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_is_executed_checked_and_in_sync(path):
    nb = json.loads(path.read_text())
    cells = code_cells(path)
    assert all(c["execution_count"] is not None for c in cells), "commit notebooks executed"
    assert "widgets" not in nb["metadata"], "strip stored widget state (tools/notebooks.py does)"
    ignored = [c for c in cells if "NBVAL_IGNORE_OUTPUT" in "".join(c["source"])]
    assert len(ignored) * 4 <= len(cells), f"{len(ignored)}/{len(cells)} cells ignore their output"
    src = ROOT / "notebooks" / "src" / (path.stem + ".py")
    assert src.exists(), f"{src} is the source of {path.name}"
    expected = [c.source for c in parse(src.read_text()).cells]
    assert ["".join(c["source"]) for c in nb["cells"]] == expected, (
        f"{path.name} is out of date: run python tools/notebooks.py {path.name[:2]}"
    )


def test_every_source_has_its_notebook():
    built = {p.stem for p in NOTEBOOKS}
    missing = [s.name for s in (ROOT / "notebooks" / "src").glob("*.py") if s.stem not in built]
    assert not missing, f"sources without an executed notebook: {missing}"


def tagged(cells, tag):
    return [c for c in cells if tag in c["metadata"].get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_exercise_has_a_check_and_a_hidden_solution_that_passes_it(path):
    nb = json.loads(path.read_text())
    cells = code_cells(path)
    source = ROOT / "notebooks" / "src" / (path.stem + ".py")
    problems = exercise_problems(parse(source.read_text()))
    assert not problems, f"{path.name}: " + "; ".join(problems)
    headings = [c for c in nb["cells"] if c["cell_type"] == "markdown"
                and "".join(c["source"]).lstrip().startswith("### Exercise")]
    checks = tagged(cells, "check")
    assert len(headings) == len(checks), (
        f"{path.name}: {len(headings)} '### Exercise' headings but {len(checks)} [check] cells")
    for cell in checks:
        assert not cell["metadata"].get("jupyter"), (
            "a check cell is for the student: keep it visible")
    # Run All runs no solution: none is a code cell, each is a closed <details> block
    assert not tagged(cells, "solution"), f"{path.name}: a solution is a code cell"
    solutions = tagged(nb["cells"], "solution")
    assert len(solutions) == len(checks)
    for cell in solutions:
        assert "".join(cell["source"]).startswith(SOLUTION_OPEN) and "<details open" not in \
            "".join(cell["source"]), f"{path.name}: a solution is shown open"
    # so after Run All every check says "not yet" and no cell printed a solution's "right"
    for cell in checks:
        said = "".join("".join(o.get("text", "")) for o in cell.get("outputs", []))
        assert said.startswith("not yet"), f"{path.name}: a check said {said!r} after Run All"
    right = [c for c in cells if any("".join(o.get("text", "")).strip() == "right"
                                     for o in c.get("outputs", []))]
    assert not right, f"{path.name}: a cell printed 'right' after Run All"


SOLVED = [pytest.param(p, id=p.name, marks=pytest.mark.lesson(p.stem)) for p in NOTEBOOKS]


@pytest.mark.parametrize("path", SOLVED)
def test_every_solution_passes_its_check_when_run_in_its_place(path):
    """What nbval cannot see: each committed solution block, made a code cell again in place,
    is executed with the cells above it and its check must say "right"."""
    failed = failed_solutions(nbformat.read(path, as_version=4))
    assert not failed, f"{path.name}: " + "\n".join(failed)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_chapter_shows_a_picture_and_ends_in_the_source(path):
    nb = json.loads(path.read_text())
    outputs = [o for c in code_cells(path) for o in c.get("outputs", [])]
    pngs = [o for o in outputs if "image/png" in o.get("data", {})]
    assert pngs, f"{path.name}: no picture stored as image/png (viewers and plt.show() give one)"
    read = [i for i, c in enumerate(nb["cells"]) if c["cell_type"] == "markdown"
            and "Read it in the source" in "".join(c["source"])]
    assert read, f"{path.name}: no 'Read it in the source' section"
    assert any("show_source(" in "".join(c["source"]) for c in nb["cells"][read[0]:]
               if c["cell_type"] == "code"), f"{path.name}: 'Read it in the source' shows no source"


# --- the guard and the builder themselves refuse what they should ------------------------------
EXERCISE = """# %% [markdown]
# ### Exercise 1 · Add
# %%
answer = None
# %% [check]
def check_1():
    check(lambda: answer == 2, "add 1 and 1")
check_1()
# %% [solution]
answer = 1 + 1
check_1()
"""


def test_a_solution_is_a_closed_markdown_block_that_becomes_code_only_to_be_checked():
    runnable = "# %%\nfrom lgcheckpoint.course import check\n" + EXERCISE
    nb = parse(runnable)
    solution = tagged(nb.cells, "solution")[0]
    assert solution.cell_type == "markdown"  # Run All executes no Markdown
    assert solution.source.startswith("<details><summary><b>Solution</b>")
    assert solution_code(solution) == "answer = 1 + 1\ncheck_1()"
    solved = tagged(with_solutions(nb).cells, "solution")[0]
    assert solved.cell_type == "code" and solved.source == "answer = 1 + 1\ncheck_1()"
    assert not exercise_problems(nb)
    assert failed_solutions(nb) == []
    wrong = parse(runnable.replace("answer = 1 + 1", "answer = 3"))
    assert len(failed_solutions(wrong)) == 1  # a solution that does not pass is caught


def test_the_builder_refuses_a_solution_without_its_check():
    no_check = EXERCISE.replace("check_1()\n", "print(answer)\n").replace(
        "def check_1():", "def check_one():")
    assert any("must end by calling" in p for p in exercise_problems(parse(no_check)))
    unsolved = EXERCISE.split("# %% [solution]")[0]
    assert any("no [solution]" in p for p in exercise_problems(parse(unsolved)))


def test_check_says_right_or_not_yet_and_show_source_finds_functions(capsys):
    from lgcheckpoint.course import check, find_source

    assert check(lambda: 1 + 1 == 2, "hint") is True
    assert check(lambda: undefined_name, "define it") is False  # noqa: F821
    assert capsys.readouterr().out.splitlines() == [
        "right", "not yet: define it (NameError: name 'undefined_name' is not defined)"]
    source = find_source("pregel/algo.py: apply_writes")
    assert source.code.startswith("def apply_writes(") and source.first_line > 1
    with pytest.raises(ValueError, match="has no 'nothing_here'"):
        find_source("pregel/algo.py: nothing_here")
