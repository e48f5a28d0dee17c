"""Chapters as a student runs them: JupyterLab in headless Debian chromium, outputs cleared,
then Restart & Run All, once per chapter (one server for the file); what depends on the theme is
then checked in the page's theme and again after switching the page to the other (light, Dark).
- Chapter 15: the studio widget must still be alive: a click on Step moves the thread, or says
  on its status line why it cannot (then the second click moves it); in both themes its tables
  fit or scroll and its status and frame read at WCAG AA.
- Chapter 00: in both themes the 13-channel version table fits its output or scrolls (it was cut
  at 1,008 px); no solution ran and the solution stays closed.
Screenshots: test-artifacts/course-{15-studio,00-table,00-exercise}-{light,dark}.png."""

from __future__ import annotations

import json
import os
import re
import shutil
import urllib.request
from pathlib import Path

import pytest

from tests.browser_checks import (
    assert_contrast, assert_tables_fit_or_scroll, keep_screenshot, switch_theme, themes_in_order,
)
from tests.test_browser import ARGS, ARTIFACTS, CHROMIUM, TOKEN, running_lab

pytestmark = pytest.mark.browser
NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"

ALL_RUN_JS = """
() => {
  const panel = window.jupyterapp.shell.currentWidget;
  const cells = panel.content.model.cells;
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type === "code" && !cell.executionCount) return false;
  }
  return panel.sessionContext.session.kernel.status === "idle";
}
"""

# the printed text of every code cell of the open notebook, with its tags (from the model: a
# cell scrolled out of view may not be rendered)
OUTPUTS_JS = """
() => {
  const cells = window.jupyterapp.shell.currentWidget.content.model.cells, found = [];
  for (let i = 0; i < cells.length; i++) {
    const cell = cells.get(i);
    if (cell.type !== "code") continue;
    let text = "";
    for (let j = 0; j < cell.outputs.length; j++) {
      text += [].concat(cell.outputs.get(j).toJSON().text || "").join("");
    }
    found.push({tags: cell.getMetadata("tags") || [], text});
  }
  return found;
}
"""


@pytest.fixture(scope="module")
def running_course(tmp_path_factory):
    """JupyterLab over a copy of notebooks/ (chapters and their data), one for the file."""
    if not Path(CHROMIUM).exists():
        reason = "NO CHROMIUM at /usr/bin/chromium: apt-get install chromium"
        if os.environ.get("CI"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    tmp_path = tmp_path_factory.mktemp("course-lab")
    root = tmp_path / "root"
    shutil.copytree(NOTEBOOKS, root, ignore=shutil.ignore_patterns("src"))
    with running_lab(root, tmp_path / "home") as url:
        yield url


@pytest.fixture
def course_lab(running_course):
    """The file's JupyterLab; after the test its kernels are shut down (an idle kernel per
    chapter would only hold memory while the next test runs)."""
    yield running_course
    api = f"{running_course}/api/sessions?token={TOKEN}"
    for session in json.load(urllib.request.urlopen(api, timeout=10)):
        urllib.request.urlopen(urllib.request.Request(
            f"{running_course}/api/sessions/{session['id']}?token={TOKEN}", method="DELETE"),
            timeout=30)


def restart_and_run_all(page, lab_url: str, name: str) -> None:
    """Open a chapter, clear its stored outputs, then Restart & Run All (accepting the dialog)."""
    page.goto(f"{lab_url}/lab/tree/{name}.ipynb?reset&token={TOKEN}")
    page.wait_for_function("() => window.jupyterapp?.shell.currentWidget?.sessionContext"
                           "?.session?.kernel?.status === 'idle'", timeout=90000)
    # not awaited: the command's promise ends only when the whole notebook has run
    page.evaluate("() => { window.jupyterapp.commands.execute("
                  "'notebook:clear-all-cell-outputs'); }")
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:restart-run-all'); }")
    page.locator(".jp-Dialog .jp-mod-accept").click(timeout=30000)
    page.wait_for_function(ALL_RUN_JS, timeout=180000, polling=500)


def test_chapter_15_studio_is_alive_after_restart_and_run_all(course_lab):
    """Run once, Step clicked once (or twice); then tables, contrast and a screenshot in both
    themes, switched in the page."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            errors: list[str] = []
            page.on("pageerror", lambda e: errors.append(str(e)))
            restart_and_run_all(page, course_lab, "15_studio")
            studio = page.locator(".lgc-studio").first
            studio.scroll_into_view_if_needed()
            status = studio.locator(".lgc-status")
            status.wait_for(timeout=30000)
            before = status.inner_text()
            studio.locator("button.lgc-step").click()
            page.wait_for_function("([el, old]) => el.innerText !== old",
                                   arg=[status.element_handle(), before], timeout=60000)
            said = status.inner_text()
            # the widget was drawn before the later cells moved the thread: the first click
            # may be refused with that reason; then the view is redrawn and Step moves it
            assert said.startswith(("step: head", "refused:")), said
            if said.startswith("refused:"):
                assert "moved on since this view was drawn" in said, said
                studio.locator("button.lgc-step").click()
                page.wait_for_function("([el]) => el.innerText.startsWith('step: head')",
                                       arg=[status.element_handle()], timeout=60000)
                said = status.inner_text()
            head = int(re.search(r"head c(\d+)", said).group(1))
            assert head == 7, said  # Run All ends at c6 (the fork, stepped once): it moved
            for theme in themes_in_order(page):
                switch_theme(page, theme)
                studio.scroll_into_view_if_needed()
                assert_tables_fit_or_scroll(page, ".lgc-studio table.lgc-table")
                assert_contrast(page, [".lgc-studio .lgc-status", ".lgc-studio .lgc-frame"])
                page.wait_for_timeout(500)
                keep_screenshot(studio, ARTIFACTS / f"course-15-studio-{theme}.png")
            assert errors == [], errors
        finally:
            browser.close()


def test_chapter_00_version_table_fits_or_scrolls_after_restart_and_run_all(course_lab):
    """Run once; the table and the closed solution checked and shot in both themes, switched in
    the page; what the checks printed is read once."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1400})
            restart_and_run_all(page, course_lab, "00_tour")
            # no solution ran: every check says "not yet", nothing printed "right"
            cells = page.evaluate(OUTPUTS_JS)
            assert not [c for c in cells if c["text"].strip() == "right"], cells
            checks = [c["text"] for c in cells if "check" in c["tags"]]
            assert len(checks) == 2 and all(t.startswith("not yet") for t in checks), checks
            table = page.locator(".jp-OutputArea-output table.lgc-table").first
            solution = page.locator(".jp-MarkdownCell details").first  # closed, not run
            for theme in themes_in_order(page):
                switch_theme(page, theme)
                table.scroll_into_view_if_needed()
                found = assert_tables_fit_or_scroll(page, ".jp-OutputArea-output table.lgc-table")
                print(f"chapter 00 version tables ({theme}): {found}")
                page.wait_for_timeout(300)
                keep_screenshot(page.locator(".jp-OutputArea-output:has(table.lgc-table)").first,
                                ARTIFACTS / f"course-00-table-{theme}.png")
                solution.scroll_into_view_if_needed()
                assert solution.get_attribute("open") is None
                page.wait_for_timeout(300)
                keep_screenshot(page, ARTIFACTS / f"course-00-exercise-{theme}.png")
        finally:
            browser.close()
