"""The examples people read first must run, and the front page holds together: the package
docstring and the README's example run, the README's two commands are the ones CI runs, every
link of the README and docs/ leads to a file, and each page the README sends you to is there."""

import doctest
import re
from pathlib import Path

import lgcheckpoint

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# the pages the README's sections moved to, each with the heading a later figure is sent under
DOCS_PAGES = {
    "docs/differences.md": ["## Swapping it in", "## Differences from LangGraph"],
    "docs/measured.md": ["## Measured (", "## How cost grows"],
    "docs/langgraph-suite.md": ["## LangGraph's own tests", "### Parts of issue #18"],
    "docs/mapping.md": ["## How it maps to LangGraph"],
    "docs/reliability.md": ["## Reliability: the faults we survive"],
    "docs/studio.md": ["## The studio: drive a thread live"],
    "docs/reading-path.md": [],  # its content is the reading path's own test's
    "docs/tests.md": ["## Tests and benchmarks"],
    "docs/website.md": [],
    "docs/swap.md": [],
    "docs/messages.md": [],
}


def test_package_docstring_example_runs():
    result = doctest.testmod(lgcheckpoint, verbose=False)
    assert result.attempted >= 10 and result.failed == 0


def test_readme_example_interrupts_and_resumes(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the example writes posts.sqlite in the working directory
    code = re.findall(r"```python\n(.*?)```", README.read_text(), re.S)[0]
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out.strip() == "('approve',)"
    assert (tmp_path / "posts.sqlite").exists()


def test_readme_opens_with_the_two_commands_ci_runs():
    first_block = re.search(r"```bash\n(.*?)```", README.read_text(), re.S).group(1)
    tour, tests = (line.split("  #")[0].rstrip() for line in first_block.splitlines()[:2])
    ci = (ROOT / ".ci" / "run").read_text().split("# --- the README's test command, verbatim ---\n")
    assert tests == ci[1].strip(), "the README's test command is not the one .ci/run runs"
    assert tour.endswith("lgcheckpoint tour") and ".[all]" in tour


def test_every_link_of_the_readme_and_docs_leads_to_a_file():
    broken = []
    for page in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            if not (page.parent / target.split("#")[0]).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, "\n".join(broken)


def test_readme_sends_readers_to_each_docs_page_and_each_page_holds_its_sections():
    readme = README.read_text()
    for page, headings in DOCS_PAGES.items():
        assert f"]({page})" in readme, f"the README does not link {page}"
        text = (ROOT / page).read_text()
        for heading in headings:
            assert re.search(rf"^{re.escape(heading)}", text, re.M), f"{page} lacks '{heading}'"


def test_the_binder_link_has_no_placeholder_owner():
    readme = README.read_text()
    assert "OWNER" not in readme
    link = re.search(r"https://mybinder\.org/v2/gh/(\S+?)/HEAD\?urlpath=lab/tree/(\S+?\.ipynb)",
                     readme)
    assert link and link.group(1) == "<owner>/<repo>" and "replaced by" in readme
    assert (ROOT / link.group(2)).is_file()
