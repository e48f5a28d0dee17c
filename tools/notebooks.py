"""Build the course notebooks from their sources and run them, so their stored outputs are real.

Sources are ``notebooks/src/NN_name.py`` in the "percent" cell format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell (its lines start with ``# ``). Exercises use two more markers:

* ``# %% [check]`` a visible code cell that defines ``check_N()`` (calling
  ``lgcheckpoint.course.check``) and runs it: a student runs it to see "right" or "not yet: hint";
* ``# %% [solution]`` the answer: its source AND its outputs start collapsed in JupyterLab and
  Notebook 7 (the builder makes its first line a "# Solution" comment, because a collapsed cell
  still shows its first line), and its last line calls the same ``check_N()``, so executing the notebook (and nbval)
  proves that every solution passes its check.

We keep this small builder rather than jupytext: jupytext would read the same files, but it spells
a hidden cell as per-cell JSON metadata in every header, and it neither executes, nor gives stable
cell ids, nor refuses a solution without its check; the builder does all four. Usage:

    python tools/notebooks.py            # build and execute every notebook
    python tools/notebooks.py 03 05      # only chapters starting with 03 or 05
"""

import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent / "notebooks"
CELL = re.compile(r"^# %%(?: \[(markdown|check|solution)\])?[^\n]*\n", re.MULTILINE)
CHECK_DEF = re.compile(r"^def (check_\w+)\(", re.MULTILINE)
LIMIT_SECONDS = 60  # every chapter runs in under a minute
HIDDEN = {"source_hidden": True, "outputs_hidden": True}  # JupyterLab / Notebook 7 collapse both
# a collapsed cell still shows its first line: make it this, not the answer's first line
SOLUTION_FIRST_LINE = "# Solution: try the exercise first, then run the check above"


def check_called_by(solution: str) -> str | None:
    """The ``check_N`` a solution's last line calls, or None."""
    last = solution.strip().splitlines()[-1] if solution.strip() else ""
    match = re.fullmatch(r"(check_\w+)\(\)", last.strip())
    return match.group(1) if match else None


def exercise_problems(nb: nbformat.NotebookNode) -> list[str]:
    """What is wrong with a notebook's exercises: a solution without its check, a check never solved."""
    checks = [name for c in nb.cells if "check" in c.metadata.get("tags", [])
              for name in CHECK_DEF.findall(c.source)]
    solved = [check_called_by(c.source) for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    problems = [f"a [solution] cell must end by calling its check_N(), not {s!r}"
                for s in solved if s is None or s not in checks]
    problems += [f"{name} has no [solution] that ends by calling it" for name in checks if name not in solved]
    if not checks:
        problems.append("no exercise: add a [check] cell and a [solution] cell")
    return problems


def parse(source: str) -> nbformat.NotebookNode:
    """Turn a percent-format script into a notebook."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    marks = list(CELL.finditer(source))
    for mark, nxt in zip(marks, marks[1:] + [None]):
        body = source[mark.end(): nxt.start() if nxt else len(source)].strip("\n")
        kind = mark.group(1)
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            if kind == "solution" and not body.startswith(SOLUTION_FIRST_LINE):
                body = f"{SOLUTION_FIRST_LINE}\n{body}"
            cell = nbformat.v4.new_code_cell(body)
            if kind == "solution":
                cell.metadata["jupyter"] = dict(HIDDEN)
                cell.metadata["tags"] = ["solution"]
            if kind == "check":
                cell.metadata["tags"] = ["check"]
            if "NBVAL_RAISES_EXCEPTION" in body:  # nbclient reads the tag, nbval the comment
                cell.metadata.setdefault("tags", []).append("raises-exception")
            nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids keep diffs of the committed notebooks small
    return nb


def build_and_run(src: Path) -> Path:
    """Execute one notebook top to bottom in a fresh kernel and save it with its outputs."""
    nb = parse(src.read_text())
    problems = exercise_problems(nb)
    if problems:
        raise SystemExit(f"{src.name}: " + "; ".join(problems))
    started = time.monotonic()
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    seconds = time.monotonic() - started
    if seconds > LIMIT_SECONDS:
        raise SystemExit(
            f"{src.name} took {seconds:.0f} s; a chapter must run in under {LIMIT_SECONDS} s")
    for cell in nb.cells:
        if "solution" in cell.metadata.get("tags", []) and not passed(cell):
            raise SystemExit(f"{src.name}: a solution did not pass its check:\n{cell.source}\n"
                             f"--- its outputs:\n{cell.outputs}")
    nb.metadata.pop("widgets", None)  # no stored widget state: it is large and nbval ignores it
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # run timestamps only make diffs noisy
    out = ROOT / (src.stem + ".ipynb")
    nbformat.write(nb, out)
    print(f"ran {out.name} in {seconds:.1f} s", flush=True)
    return out


def passed(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell's printed output ends with the line "right" (what ``check`` prints on success)."""
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])  # str, or lines
                   if o.get("output_type") == "stream")
    return text.rstrip().endswith("\nright") or text.strip() == "right"


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for src in sorted((ROOT / "src").glob("*.py")):
        if not wanted or any(src.name.startswith(w) for w in wanted):
            build_and_run(src)
