"""The course is checked, not just executed: every notebook runs under nbval, outputs compared."""

import json
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
sys.path.insert(0, str(ROOT / "tools"))
from notebooks import parse  # noqa: E402


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
    assert any("solution" in c["metadata"].get("tags", []) for c in cells), (
        "end with exercises + solution"
    )
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
