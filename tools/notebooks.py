"""Build the course notebooks from their sources and run them, so their stored outputs are real.

Sources are ``notebooks/src/NN_name.py`` in the "percent" cell format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell (its lines start with ``# ``). Exercises use two more markers:

* ``# %% [check]`` a visible code cell that defines ``check_N()`` (calling
  ``lgcheckpoint.course.check``) and runs it: a student runs it to see "right" or "not yet: hint";
* ``# %% [solution]`` the answer, whose last line calls the same ``check_N()``.

Run All must not spoil an exercise, so a solution is stored as a *Markdown* cell: a collapsed
``<details>`` block holding the code (Run All never executes Markdown; a student opens it, copies
the code into the answer cell and runs it). The stored notebook is the student's path: executed
without the solutions, so every check above says "not yet" and no later output depends on a
solution. That the solutions are right is proven on a second copy, ``with_solutions(nb)``, where
each solution block is a code cell again: the builder executes it and refuses a solution whose
output does not end in "right", and ``tests/test_notebooks_guard.py`` does the same on the
committed notebooks (nbval runs the stored, student path).

We keep this small builder rather than jupytext: jupytext would read the same files, but it
neither executes, nor gives stable cell ids, nor refuses a solution without its check, nor
stores a solution out of Run All's reach; the builder does all four. Usage:

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
SOLUTION_OPEN = ("<details><summary><b>Solution</b> (try the exercise first; then copy this into "
                 "your answer cell and run the check)</summary>\n\n```python\n")
SOLUTION_CLOSE = "\n```\n\n</details>"


def check_called_by(solution: str) -> str | None:
    """The ``check_N`` a solution's last line calls, or None."""
    last = solution.strip().splitlines()[-1] if solution.strip() else ""
    match = re.fullmatch(r"(check_\w+)\(\)", last.strip())
    return match.group(1) if match else None


def exercise_problems(nb: nbformat.NotebookNode) -> list[str]:
    """What is wrong with a notebook's exercises: a solution without its check, or a check
    never solved."""
    checks = [name for c in nb.cells if "check" in c.metadata.get("tags", [])
              for name in CHECK_DEF.findall(c.source)]
    solutions = [c for c in nb.cells if "solution" in c.metadata.get("tags", [])]
    solved = [check_called_by(solution_code(c)) for c in solutions]
    problems = [f"a [solution] cell must end by calling its check_N(), not {s!r}"
                for s in solved if s is None or s not in checks]
    problems += [f"{name} has no [solution] that ends by calling it"
                 for name in checks if name not in solved]
    if not checks:
        problems.append("no exercise: add a [check] cell and a [solution] cell")
    return problems


def solution_code(cell: nbformat.NotebookNode) -> str:
    """The code inside a stored solution block."""
    text = cell.source
    if not (text.startswith(SOLUTION_OPEN) and text.endswith(SOLUTION_CLOSE)):
        raise ValueError(f"not a solution block built by tools/notebooks.py:\n{text[:200]}")
    return text[len(SOLUTION_OPEN):-len(SOLUTION_CLOSE)]


def with_solutions(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy whose solution blocks are code cells again, cut after the last one: what the
    builder and the guard test execute to prove every solution passes its check."""
    solved = nbformat.from_dict(nb)
    last = max((i for i, c in enumerate(solved.cells) if "solution" in c.metadata.get("tags", [])),
               default=-1)
    solved.cells = solved.cells[:last + 1]
    for i, cell in enumerate(solved.cells):
        if "solution" in cell.metadata.get("tags", []):
            code = nbformat.v4.new_code_cell(solution_code(cell), id=cell.get("id"))
            code.metadata["tags"] = ["solution"]
            solved.cells[i] = code
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return solved


def failed_solutions(nb: nbformat.NotebookNode) -> list[str]:
    """Execute ``with_solutions(nb)``; the solutions whose output does not end with "right"."""
    solved = with_solutions(nb)
    execute(solved)
    return [f"{c.source}\n--- its outputs:\n{c.outputs}" for c in solved.cells
            if "solution" in c.metadata.get("tags", []) and not passed(c)]


def execute(nb: nbformat.NotebookNode) -> float:
    """Run a notebook top to bottom in a fresh kernel, from notebooks/; the seconds it took."""
    started = time.monotonic()
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(ROOT)}}).execute()
    return time.monotonic() - started


def parse(source: str) -> nbformat.NotebookNode:
    """Turn a percent-format script into a notebook."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    marks = list(CELL.finditer(source))
    for mark, nxt in zip(marks, marks[1:] + [None]):
        body = source[mark.end(): nxt.start() if nxt else len(source)].strip("\n")
        kind = mark.group(1)
        if kind == "markdown":
            text = "\n".join(re.sub(r"^# ?", "", line) for line in body.splitlines())
            nb.cells.append(nbformat.v4.new_markdown_cell(text))
        else:
            if kind == "solution":  # Markdown: Run All does not execute it (see the docstring)
                cell = nbformat.v4.new_markdown_cell(SOLUTION_OPEN + body + SOLUTION_CLOSE)
                cell.metadata["tags"] = ["solution"]
                nb.cells.append(cell)
                continue
            cell = nbformat.v4.new_code_cell(body)
            if kind == "check":
                cell.metadata["tags"] = ["check"]
            if "NBVAL_RAISES_EXCEPTION" in body:  # nbclient reads the tag, nbval the comment
                cell.metadata.setdefault("tags", []).append("raises-exception")
            nb.cells.append(cell)
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"  # stable ids keep diffs of the committed notebooks small
    return nb


def build_and_run(src: Path) -> Path:
    """Prove the solutions on a solved copy, then execute the student's notebook and save it."""
    nb = parse(src.read_text())
    problems = exercise_problems(nb)
    if problems:
        raise SystemExit(f"{src.name}: " + "; ".join(problems))
    failed = failed_solutions(nb)
    if failed:
        raise SystemExit(f"{src.name}: a solution did not pass its check:\n" + "\n".join(failed))
    seconds = execute(nb)  # the student's path: Run All, no solution
    if seconds > LIMIT_SECONDS:
        raise SystemExit(
            f"{src.name} took {seconds:.0f} s; a chapter must run in under {LIMIT_SECONDS} s")
    nb.metadata.pop("widgets", None)  # no stored widget state: it is large and nbval ignores it
    for cell in nb.cells:
        cell.metadata.pop("execution", None)  # run timestamps only make diffs noisy
    out = ROOT / (src.stem + ".ipynb")
    nbformat.write(nb, out)
    print(f"ran {out.name} in {seconds:.1f} s", flush=True)
    return out


def passed(cell: nbformat.NotebookNode) -> bool:
    """Whether a cell's printed output ends with the line "right" (``check``'s success)."""
    text = "".join("".join(o.get("text", "")) for o in cell.get("outputs", [])  # str, or lines
                   if o.get("output_type") == "stream")
    return text.rstrip().endswith("\nright") or text.strip() == "right"


if __name__ == "__main__":
    wanted = sys.argv[1:]
    for src in sorted((ROOT / "src").glob("*.py")):
        if not wanted or any(src.name.startswith(w) for w in wanted):
            build_and_run(src)
