"""Build the course notebooks from their sources and run them, so their stored outputs are real.

Sources are ``notebooks/src/NN_name.py`` in the "percent" cell format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell (its lines start with ``# ``), ``# %% [solution]`` a code cell
whose source is hidden in JupyterLab (an exercise's answer). Usage:

    python tools/notebooks.py            # build and execute every notebook
    python tools/notebooks.py 03 05      # only chapters starting with 03 or 05
"""

import re
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent / "notebooks"
CELL = re.compile(r"^# %%(?: \[(markdown|solution)\])?[^\n]*\n", re.M)


def parse(source: str) -> nbformat.NotebookNode:
    """Turn a percent-format script into a notebook."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    marks = list(CELL.finditer(source))
    for mark, nxt in zip(marks, marks[1:] + [None]):
        body = source[mark.end() : nxt.start() if nxt else len(source)].strip("\n")
        kind = mark.group(1)
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            cell = nbformat.v4.new_code_cell(body)
            if kind == "solution":
                cell.metadata["jupyter"] = {"source_hidden": True}
                cell.metadata["tags"] = ["solution"]
            if "NBVAL_RAISES_EXCEPTION" in body:  # nbclient reads the tag, nbval the comment
                cell.metadata.setdefault("tags", []).append("raises-exception")
            nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids keep diffs of the committed notebooks small
    return nb


def build_and_run(src: Path) -> Path:
    """Execute one notebook top to bottom in a fresh kernel and save it with its outputs."""
    nb = parse(src.read_text())
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(ROOT)}}
    ).execute()
    nb.metadata.pop("widgets", None)  # no stored widget state: it is large and nbval ignores it
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # run timestamps only make diffs noisy
    out = ROOT / (src.stem + ".ipynb")
    nbformat.write(nb, out)
    return out


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for src in sorted((ROOT / "src").glob("*.py")):
        if not wanted or any(src.name.startswith(w) for w in wanted):
            print("ran", build_and_run(src).name, flush=True)
