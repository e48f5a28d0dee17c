"""The course is checked, not just executed: every notebook runs under nbval and compares outputs,
every exercise has a check a student runs, and every solution is out of sight and passes its check."""

import json
import sys
from pathlib import Path

import nbformat
import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "tools"))
from notebooks import HIDDEN, exercise_problems, parse, passed


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
    problems = exercise_problems(parse((ROOT / "notebooks" / "src" / (path.stem + ".py")).read_text()))
    assert not problems, f"{path.name}: " + "; ".join(problems)
    headings = [c for c in nb["cells"] if c["cell_type"] == "markdown"
                and "".join(c["source"]).lstrip().startswith("### Exercise")]
    checks = tagged(cells, "check")
    assert len(headings) == len(checks), (
        f"{path.name}: {len(headings)} '### Exercise' headings but {len(checks)} [check] cells")
    for cell in checks:
        assert not cell["metadata"].get("jupyter"), "a check cell is for the student: keep it visible"
    for cell in tagged(cells, "solution"):
        hidden = cell["metadata"].get("jupyter", {})
        assert all(hidden.get(k) is True for k in HIDDEN), (
            f"{path.name}: a solution's source or output is visible by default:\n{''.join(cell['source'])}")
        assert passed(nbformat.from_dict(cell)), (
            f"{path.name}: this solution's stored output does not end with 'right':\n"
            f"{''.join(cell['source'])}")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_every_chapter_shows_a_picture_and_ends_in_the_source(path):
    nb = json.loads(path.read_text())
    pngs = [o for c in code_cells(path) for o in c.get("outputs", []) if "image/png" in o.get("data", {})]
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


def test_a_solution_is_hidden_with_its_output_and_opens_with_a_comment():
    solution = tagged(parse(EXERCISE).cells, "solution")[0]
    assert solution.metadata["jupyter"] == HIDDEN
    assert solution.source.splitlines()[0].startswith("# Solution")
    assert not exercise_problems(parse(EXERCISE))


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
