"""Sphinx configuration of the course website: built by tools/website.py, why Sphinx in
docs/website.md.

The source folder is the repository itself, so docs/*.md and the notebooks are read where they
are (only the files in include_patterns); the front page docs/site/index.md includes the README.
Notebooks are shown with the outputs they store (nothing is executed), pictures as PNG; the API
reference lists every module of the package, from its docstrings (see api_modules)."""

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

project = "lgcheckpoint"
author = "the lgcheckpoint authors"
extensions = ["myst_nb", "sphinx.ext.autodoc"]
root_doc = "docs/site/index"
include_patterns = ["docs/*.md", "docs/site/*.md", "notebooks/*.ipynb"]
exclude_patterns = [".venv", "build", "dist"]

nb_execution_mode = "off"  # the course as stored: every picture the notebook keeps, no kernel
# a viewer stores a PNG beside its widget, SVG or HTML: the website shows the PNG (a widget needs a
# kernel; the PNG is what every static reader of the notebook sees)
nb_mime_priority_overrides = [
    ("html", "application/vnd.jupyter.widget-view+json", None),
    ("html", "application/vnd.jupyter.widget-state+json", None),
    ("html", "image/png", 1),
]
myst_heading_anchors = 3  # links to a heading of another page, as GitHub renders them

autodoc_member_order = "bysource"  # a module reads top to bottom, so does its reference
# the page contents list the API page's 125 modules, not its 2,400 functions and classes:
# that list was too long to read, and copying it into every page's sidebar was more than a
# third of the build time
toc_object_entries = False
# each object once, where it is defined (a re-export, e.g. the deprecated pregel/types.py, is not
# documented again)
autodoc_default_options = {"members": True, "ignore-module-all": True}
# an annotation such as `type` names several attributes of that name; its link is a guess either way
suppress_warnings = ["ref.python"]

html_theme = "sphinx_book_theme"
html_static_path = ["_static"]
html_css_files = ["site.css"]  # long names in the page contents wrap
html_title = "lgcheckpoint: how LangGraph's checkpoints work"
html_theme_options = {"show_toc_level": 2, "home_page_in_toc": True,
                      "max_navbar_depth": 1}  # the sidebar lists pages, not their sections


def github_repository() -> str | None:
    """owner/repo of the clone's GitHub remote, so the Binder button fits whoever hosts it."""
    try:
        url = subprocess.run(["git", "-C", str(ROOT), "remote", "get-url", "origin"],
                             capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    for prefix in ("https://github.com/", "git@github.com:", "ssh://git@github.com/"):
        if url.startswith(prefix):
            return url.removeprefix(prefix).removesuffix(".git")
    return None


if repository := github_repository():
    html_theme_options |= {
        "repository_url": f"https://github.com/{repository}",
        "repository_branch": "HEAD",
        "launch_buttons": {"binderhub_url": "https://mybinder.org", "notebook_interface":
                           "jupyterlab"},
    }


def api_modules() -> list[str]:
    """Every module of the package, in path order: the reference is complete by construction."""
    package = ROOT / "lgcheckpoint"
    names = []
    for path in sorted(package.rglob("*.py")):
        if path.name == "__main__.py":  # `python -m lgcheckpoint`: importing it runs the CLI
            continue
        parts = path.relative_to(ROOT).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def fill_api_page(app, docname: str, source: list[str]) -> None:
    """docs/site/api.md holds a marker; it becomes one automodule directive per module."""
    if docname == "docs/site/api":
        # autodoc writes reStructuredText, so each directive sits in an eval-rst block
        blocks = "\n".join(f"## `{name}`\n\n```{{eval-rst}}\n.. automodule:: {name}\n```\n"
                           for name in api_modules())
        source[0] = source[0].replace("<!-- modules -->", blocks)


def docstring_as_written(app, what, name, obj, options, lines: list[str]) -> None:
    """Docstrings here are plain text for readers of the source (aligned tables, indented code):
    shown as written, in a literal block, never reinterpreted as reStructuredText."""
    if lines:
        lines[:] = [".. code-block:: text", "", *("    " + line for line in lines), ""]


def fold_solutions(app, docname: str, source: list[str]) -> None:
    """A chapter's solutions stay folded, as in JupyterLab: a reader opens one on purpose."""
    if docname.startswith("notebooks/"):
        notebook = json.loads(source[0])
        for cell in notebook["cells"]:
            tags = cell.get("metadata", {}).get("tags", [])
            if "solution" in tags and "hide-cell" not in tags:
                cell["metadata"]["tags"] = [*tags, "hide-cell"]
        source[0] = json.dumps(notebook)


def setup(app):
    app.connect("source-read", fill_api_page)
    app.connect("source-read", fold_solutions)
    app.connect("autodoc-process-docstring", docstring_as_written)
